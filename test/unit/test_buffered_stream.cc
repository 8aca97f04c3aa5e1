// os/unix_listener.h and os/buffered_stream.h, the control socket's two
// halves: a listener hands over each connection; a stream reads lines,
// queues writes, says when its output drained and when the peer left. A
// real loop with raw Unix-socket clients.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "os/buffered_stream.h"
#include "os/event_loop.h"
#include "os/timer.h"
#include "os/unix_listener.h"
#include "support/temp_dir.h"

using namespace grove;
using grove::test::TempDir;

namespace {

Fd connect_to(const std::string& path) {
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  REQUIRE(connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return fd;
}

// Runs the loop until `done`, for at most two seconds.
bool run_until(EventLoop& loop, const std::function<bool()>& done) {
  for (int step = 0; step < 100 && !done(); ++step) {
    loop.exit(20);
    loop.run();
  }
  return done();
}

}  // namespace

TEST_CASE("a listener hands over connections; a stream reads lines and writes back",
          "[buffered_stream]") {
  TempDir dir;
  EventLoop loop;
  const std::string path = dir.path() + "/s.sock";
  std::unique_ptr<BufferedStream> stream;
  std::optional<std::string> line;
  int drained = 0;
  bool closed = false;
  auto listener = UnixListener::listen(loop.base(), path, 4, [&](Fd connection) {
    BufferedStream::Callbacks callbacks;
    callbacks.readable = [&] {
      if (!line) line = stream->read_line();
    };
    callbacks.drained = [&] { ++drained; };
    callbacks.closed = [&] { closed = true; };
    stream = std::make_unique<BufferedStream>(loop.base(), std::move(connection), callbacks);
    stream->enable_read();
  });
  REQUIRE(listener);
  Fd client = connect_to(path);
  REQUIRE(write(client.get(), "hel", 3) == 3);
  REQUIRE(run_until(loop, [&] { return stream && stream->input_size() == 3; }));
  CHECK_FALSE(line);  // no newline yet
  REQUIRE(write(client.get(), "lo\nrest", 7) == 7);
  REQUIRE(run_until(loop, [&] { return line.has_value(); }));
  CHECK(*line == "hello");
  CHECK(stream->discard_input() == 4);  // "rest"
  CHECK(stream->input_size() == 0);

  stream->write("answer\n");
  CHECK(stream->queued() == 7);  // the loop sends it, not write()
  REQUIRE(run_until(loop, [&] { return drained == 1; }));
  CHECK(stream->queued() == 0);
  char buffer[16] = {};
  CHECK(read(client.get(), buffer, sizeof buffer) == 7);
  CHECK(std::string(buffer) == "answer\n");

  client.reset();
  REQUIRE(run_until(loop, [&] { return closed; }));
}

TEST_CASE("a stream's callback may destroy the stream", "[buffered_stream]") {
  TempDir dir;
  EventLoop loop;
  const std::string path = dir.path() + "/s.sock";
  std::unique_ptr<BufferedStream> stream;
  bool accepted = false;
  auto listener = UnixListener::listen(loop.base(), path, 4, [&](Fd connection) {
    accepted = true;
    BufferedStream::Callbacks callbacks;
    callbacks.readable = [&] { stream.reset(); };  // the first bytes end it
    stream = std::make_unique<BufferedStream>(loop.base(), std::move(connection), callbacks);
    stream->enable_read();
  });
  REQUIRE(listener);
  Fd client = connect_to(path);
  REQUIRE(write(client.get(), "x", 1) == 1);
  REQUIRE(run_until(loop, [&] { return accepted && !stream; }));
  char byte;
  CHECK(read(client.get(), &byte, 1) == 0);  // closed with the stream
}

TEST_CASE("a stream with reading disabled leaves its input unread", "[buffered_stream]") {
  TempDir dir;
  EventLoop loop;
  const std::string path = dir.path() + "/s.sock";
  std::unique_ptr<BufferedStream> stream;
  int reads = 0;
  auto listener = UnixListener::listen(loop.base(), path, 4, [&](Fd connection) {
    BufferedStream::Callbacks callbacks;
    callbacks.readable = [&] { ++reads; };
    stream = std::make_unique<BufferedStream>(loop.base(), std::move(connection), callbacks);
  });
  REQUIRE(listener);
  Fd client = connect_to(path);
  REQUIRE(write(client.get(), "x\n", 2) == 2);
  REQUIRE(run_until(loop, [&] { return stream != nullptr; }));
  run_until(loop, [] { return false; });  // two seconds of nothing read
  CHECK(reads == 0);
  CHECK(stream->input_size() == 0);
  stream->enable_read();
  REQUIRE(run_until(loop, [&] { return reads == 1; }));
  CHECK(stream->read_line() == "x");
}

TEST_CASE("a listener that cannot bind says why", "[buffered_stream]") {
  EventLoop loop;
  auto listener = UnixListener::listen(loop.base(), "/nonexistent-dir/s.sock", 4, [](Fd) {});
  REQUIRE_FALSE(listener);
  CHECK(listener.error().message == std::strerror(ENOENT));
  const std::string long_path(200, 'x');
  auto too_long = UnixListener::listen(loop.base(), long_path, 4, [](Fd) {});
  REQUIRE_FALSE(too_long);
  CHECK(too_long.error().message == std::strerror(ENAMETOOLONG));
}
