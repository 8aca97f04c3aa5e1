// The handshake watchdog: a thread blocked reading a connection that sends
// nothing (libpmix 4.2's handshake read) is freed by shutting that
// connection down, another user's at once and this user's past the bound.
// The rules are driven with made-up observations; the watchdog itself with
// real loopback sockets and a real blocked thread, no PMIx.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "pmix/handshake_watchdog.h"
#include "support/loopback.h"

using namespace grove;
using grove::test::connect_loopback;
using grove::test::listen_loopback;

namespace {

constexpr TimeNs kMs = 1'000'000;

StalledHandshake stalled(std::uint64_t inode, std::optional<uid_t> uid) {
  return StalledHandshake{static_cast<int>(inode), inode, uid, "127.0.0.1:1"};
}

// libpmix's way: accept, then a blocking receive of the 16-byte header.
// Returns what the receive returned.
ssize_t accept_and_read_header(int listener) {
  int fd = accept(listener, nullptr, nullptr);
  if (fd < 0) return -2;
  char header[16];
  ssize_t got = recv(fd, header, sizeof header, MSG_WAITALL);
  close(fd);
  return got;
}

// A watchdog on `listener` that records what it cuts.
struct Recorder {
  std::mutex mutex;
  std::condition_variable reported;
  std::vector<HandshakeCut> cuts;
  HandshakeWatchdog::CutReport report() {
    return [this](const HandshakeCut& cut) {
      std::lock_guard lock(mutex);
      cuts.push_back(cut);
      reported.notify_all();
    };
  }
  std::vector<HandshakeCut> taken() {
    std::lock_guard lock(mutex);
    return cuts;
  }
  // The cuts once `count` are reported (or the deadline passed): a reader
  // freed by the first cut may run before the watchdog's sweep ends.
  std::vector<HandshakeCut> taken_once(std::size_t count) {
    std::unique_lock lock(mutex);
    reported.wait_for(lock, std::chrono::seconds(20), [&] { return cuts.size() >= count; });
    return cuts;
  }
};

HandshakeWatchdogOptions options_for(int listener, std::uint16_t port, TimeNs timeout_ns) {
  HandshakeWatchdogOptions options;
  options.listeners.push_back(ListeningSocket{listener, 0, port});
  options.timeout_ns = timeout_ns;
  return options;
}

}  // namespace

TEST_CASE("the descriptor a thread is blocked reading is read off its syscall line",
          "[handshake_watchdog]") {
  const std::string recv_line = std::to_string(SYS_recvfrom) +
                                " 0x15 0x7f1103b1e7e0 0x10 0x100 0x0 0x0 0x7f1103b1e730 "
                                "0x7f1103f28974\n";
  CHECK(blocked_read_fd(recv_line) == 0x15);
  CHECK(blocked_read_fd(std::to_string(SYS_read) + " 0x7 0x1 0x2 0x0 0x0 0x0 0x1 0x2") == 7);
  CHECK(blocked_read_fd(std::to_string(SYS_recvmsg) + " 0x0 0x1 0x2 0x0 0x0 0x0 0x1 0x2") == 0);
  // Waiting for events, running, or not in a call at all: nothing.
  CHECK_FALSE(blocked_read_fd(std::to_string(SYS_epoll_wait) + " 0x4 0x5645 0x20 0x1f0 0 0 1 2"));
  CHECK_FALSE(blocked_read_fd("running\n"));
  CHECK_FALSE(blocked_read_fd("-1 0x7ffcbb79b900 0x7f1103f26f36\n"));
  CHECK_FALSE(blocked_read_fd(""));
  CHECK_FALSE(blocked_read_fd(std::to_string(SYS_read) + " 15"));  // not hex
  CHECK_FALSE(blocked_read_fd(std::to_string(SYS_read) + " 0xffffffffff 0x1"));
}

TEST_CASE("another user's stalled handshake is cut at once, this user's past the bound",
          "[handshake_watchdog]") {
  HandshakeWatch watch(0, true, 1000 * kMs);
  auto cuts = watch.observe({stalled(10, 65534), stalled(11, 0)}, 5000 * kMs);
  REQUIRE(cuts.size() == 1);
  CHECK(cuts[0].connection.inode == 10);
  CHECK(cuts[0].reason == CutReason::other_user);
  CHECK(watch.timing());  // inode 11 is being timed
  CHECK(watch.observe({stalled(11, 0)}, 5999 * kMs).empty());
  cuts = watch.observe({stalled(11, 0)}, 6000 * kMs);
  REQUIRE(cuts.size() == 1);
  CHECK(cuts[0].reason == CutReason::too_slow);
  CHECK(cuts[0].stalled_ns == 1000 * kMs);
  CHECK_FALSE(watch.timing());
}

TEST_CASE("a handshake that moved on is forgotten: a later stall is timed afresh",
          "[handshake_watchdog]") {
  HandshakeWatch watch(0, true, 1000 * kMs);
  CHECK(watch.observe({stalled(11, 0)}, 0).empty());
  CHECK(watch.observe({}, 900 * kMs).empty());  // read meanwhile
  CHECK_FALSE(watch.timing());
  CHECK(watch.observe({stalled(11, 0)}, 1500 * kMs).empty());
  CHECK(watch.observe({stalled(11, 0)}, 2400 * kMs).empty());
  CHECK(watch.observe({stalled(11, 0)}, 2500 * kMs).size() == 1);
  // An owner the kernel did not name is timed like this user's.
  CHECK(watch.observe({stalled(12, std::nullopt)}, 3000 * kMs).empty());
  CHECK(watch.observe({stalled(12, std::nullopt)}, 4000 * kMs).size() == 1);
}

TEST_CASE("without client verification, or with no bound, the watch cuts accordingly less",
          "[handshake_watchdog]") {
  HandshakeWatch unverified(0, false, 1000 * kMs);
  CHECK(unverified.observe({stalled(10, 65534)}, 0).empty());
  CHECK(unverified.observe({stalled(10, 65534)}, 1000 * kMs).size() == 1);  // too slow still
  HandshakeWatch unbounded(0, true, 0);
  CHECK(unbounded.observe({stalled(11, 0)}, 0).empty());
  CHECK(unbounded.observe({stalled(11, 0)}, 3600'000 * kMs).empty());
  CHECK(unbounded.observe({stalled(10, 65534)}, 0).size() == 1);
}

TEST_CASE("a thread blocked reading a silent connection is freed once it has waited the bound",
          "[handshake_watchdog]") {
  std::uint16_t port = 0;
  const int listener = listen_loopback(port);
  REQUIRE(listener >= 0);
  Recorder recorder;
  auto dog = HandshakeWatchdog::start(options_for(listener, port, 200 * kMs), recorder.report());
  REQUIRE(dog);

  // A connection that sends its header in time is left alone.
  auto prompt = std::async(std::launch::async, accept_and_read_header, listener);
  const int talker = connect_loopback(port);
  REQUIRE(talker >= 0);
  REQUIRE(send(talker, "0123456789abcdef", 16, 0) == 16);
  CHECK(prompt.get() == 16);

  // A silent one holds the reader until the watchdog shuts it down.
  auto held = std::async(std::launch::async, accept_and_read_header, listener);
  const int silent = connect_loopback(port);
  REQUIRE(silent >= 0);
  const bool freed = held.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  close(silent);  // frees the reader in any case, so a failure ends here too
  CHECK(freed);
  CHECK(held.get() == 0);  // end-of-file, as for a closed connection
  close(talker);
  const std::vector<HandshakeCut> cuts = recorder.taken_once(1);
  REQUIRE(cuts.size() == 1);
  CHECK(cuts[0].reason == CutReason::too_slow);
  CHECK(cuts[0].stalled_ns >= 200 * kMs);
  CHECK(cuts[0].connection.client_uid == geteuid());
  dog->reset();
  close(listener);
}

TEST_CASE("another user's silent connection is cut at once, with the others waiting behind it",
          "[handshake_watchdog]") {
  if (geteuid() != 0) {
    WARN("skipped: connecting as another user needs root");
    return;
  }
  std::uint16_t port = 0;
  const int listener = listen_loopback(port);
  REQUIRE(listener >= 0);
  Recorder recorder;
  // No bound for this user: only the other user's connections may be cut.
  auto dog = HandshakeWatchdog::start(options_for(listener, port, 0), recorder.report());
  REQUIRE(dog);

  // The stranger: two connections as nobody, kept until told to leave.
  int ready[2], leave[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(leave) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(ready[0]);
    close(leave[1]);
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(1);
    const int first = connect_loopback(port), second = connect_loopback(port);
    char byte = first >= 0 && second >= 0 ? 1 : 0;
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    if (read(leave[0], &byte, 1) < 0) _exit(1);
    _exit(0);
  }
  close(ready[1]);
  close(leave[0]);
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);
  REQUIRE(byte == 1);
  // The first waits in this process, accepted and unread; the reader blocks
  // on the second. Both go in the same sweep.
  const int queued = accept(listener, nullptr, nullptr);
  REQUIRE(queued >= 0);
  auto held = std::async(std::launch::async, accept_and_read_header, listener);
  const bool freed = held.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  const std::vector<HandshakeCut> cuts = recorder.taken_once(2);
  char unread[16];
  const ssize_t queued_read = recv(queued, unread, sizeof unread, MSG_DONTWAIT);
  close(leave[1]);  // the child leaves, freeing the reader in any case
  CHECK(freed);
  CHECK(held.get() == 0);
  CHECK(queued_read == 0);  // shut down too
  int status = 0;
  waitpid(child, &status, 0);
  close(ready[0]);
  close(queued);
  REQUIRE(cuts.size() == 2);
  for (const HandshakeCut& cut : cuts) {
    CHECK(cut.reason == CutReason::other_user);
    CHECK(cut.connection.client_uid == 65534u);
  }
  dog->reset();
  close(listener);
}
