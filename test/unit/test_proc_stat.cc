// read_proc_stat against this very process, whose answers the test knows.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "os/proc_stat.h"

using namespace grove;

TEST_CASE("read_proc_stat gives a process's state, parent, group and start", "[proc_stat]") {
  const auto self = read_proc_stat(getpid());
  REQUIRE(self);
  CHECK(self->state == 'R');  // it is reading its own stat
  CHECK(self->parent == getppid());
  CHECK(self->group == getpgrp());
  CHECK(self->start_ticks > 0);
  CHECK(read_proc_stat(getpid())->start_ticks == self->start_ticks);

  // A child that has exited and is not yet reaped: a zombie of ours.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  siginfo_t info{};
  REQUIRE(waitid(P_PID, child, &info, WEXITED | WNOWAIT) == 0);
  const auto zombie = read_proc_stat(child);
  REQUIRE(zombie);
  CHECK(zombie->state == 'Z');
  CHECK(zombie->parent == getpid());
  CHECK(zombie->start_ticks >= self->start_ticks);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  CHECK_FALSE(read_proc_stat(child));  // gone
}
