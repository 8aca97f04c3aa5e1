// os/io_watch.h: a watch fires while its fd is ready and it is enabled; a
// one-shot watch needs enabling again; a callback may drop its own watch.
// Pipes on a real loop.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "os/event_loop.h"
#include "os/fd.h"
#include "os/io_watch.h"
#include "os/timer.h"

using namespace grove;

namespace {

struct Pipe {
  Fd read, write;
  Pipe() {
    int ends[2];
    REQUIRE(pipe2(ends, O_CLOEXEC) == 0);
    read = Fd(ends[0]);
    write = Fd(ends[1]);
    REQUIRE(set_nonblocking(read.get()));
    REQUIRE(set_nonblocking(write.get()));
  }
};

}  // namespace

TEST_CASE("a persistent read watch fires while there is input, and not while disabled",
          "[io_watch]") {
  EventLoop loop;
  Pipe pipe;
  std::string got;
  IoWatch reader(loop.base(), pipe.read.get(), IoReady::read, IoRepeat::persist, [&] {
    char buffer[2];  // small: one write takes several readiness callbacks
    ssize_t n = ::read(pipe.read.get(), buffer, sizeof buffer);
    if (n > 0) got.append(buffer, static_cast<std::size_t>(n));
    if (got.size() >= 6) loop.exit();
  });
  CHECK(static_cast<bool>(reader));
  CHECK(reader.fd() == pipe.read.get());
  CHECK_FALSE(reader.enabled());
  REQUIRE(::write(pipe.write.get(), "abcdef", 6) == 6);
  // Made disabled: the input waits.
  Timer give_up(loop.base(), [&] { loop.exit(); });
  give_up.arm(20);
  loop.run();
  CHECK(got.empty());
  reader.enable();
  CHECK(reader.enabled());
  give_up.arm(2000);
  loop.run();
  CHECK(got == "abcdef");
  reader.disable();
  CHECK_FALSE(reader.enabled());
}

TEST_CASE("a one-shot write watch fires once per enable", "[io_watch]") {
  EventLoop loop;
  Pipe pipe;
  int fired = 0;
  IoWatch writable(loop.base(), pipe.write.get(), IoReady::write, IoRepeat::once, [&] { ++fired; });
  writable.enable();
  loop.run();  // an empty pipe is writable at once; then nothing is pending
  CHECK(fired == 1);
  CHECK_FALSE(writable.enabled());
  writable.enable();
  loop.run();
  CHECK(fired == 2);
}

TEST_CASE("a watch's callback may drop its own watch", "[io_watch]") {
  EventLoop loop;
  Pipe pipe;
  bool saw_end = false;
  IoWatch reader;
  reader = IoWatch(loop.base(), pipe.read.get(), IoReady::read, IoRepeat::persist, [&] {
    char buffer[16];
    if (::read(pipe.read.get(), buffer, sizeof buffer) == 0) {
      reader = IoWatch();  // end of input: the watch goes while it runs
      saw_end = true;
    }
  });
  reader.enable();
  pipe.write.reset();
  loop.run();  // returns once the watch is gone
  CHECK(saw_end);
  CHECK_FALSE(static_cast<bool>(reader));
  // An empty watch may be enabled and disabled: nothing happens.
  reader.enable();
  reader.disable();
  CHECK_FALSE(reader.enabled());
}

TEST_CASE("a watch moved elsewhere keeps watching", "[io_watch]") {
  EventLoop loop;
  Pipe pipe;
  int fired = 0;
  IoWatch first(loop.base(), pipe.read.get(), IoReady::read, IoRepeat::once, [&] { ++fired; });
  first.enable();
  IoWatch moved = std::move(first);
  REQUIRE(::write(pipe.write.get(), "x", 1) == 1);
  loop.run();
  CHECK(fired == 1);
  CHECK(moved.fd() == pipe.read.get());
}
