// The control socket against clients that misbehave: one that trickles its
// request in a byte at a time, one that keeps sending after its request, one
// that repeats a key. Each costs the controller a bounded wait and bounded
// memory, and the server goes on answering others. A real ControlServer on
// a real event loop, with raw Unix-socket clients.
#include <event2/event.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <vector>

#include "control/control_request.h"
#include "control/control_socket.h"
#include "support/temp_dir.h"

using namespace grove;
using grove::test::TempDir;

namespace {

int connect_to(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return fd;
}

// Runs the loop in steps of `step` until `done` or `steps` have passed;
// `each` runs between steps.
bool run_until(event_base* base, const std::function<bool()>& done, int steps,
               const std::function<void()>& each = {}) {
  for (int i = 0; i < steps && !done(); ++i) {
    timeval step{0, 20'000};
    event_base_loopexit(base, &step);
    event_base_dispatch(base);
    if (each) each();
  }
  return done();
}

// Whether the server has closed `fd` (reads what is there; false while open).
bool closed_by_server(int fd, std::string* read_back = nullptr) {
  char buffer[4096];
  for (;;) {
    ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got == 0) return true;
    if (got < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
    if (read_back != nullptr) read_back->append(buffer, static_cast<std::size_t>(got));
  }
}

struct Served {
  EventBasePtr base{event_base_new()};
  TempDir dir{"grove-control"};
  std::unique_ptr<ControlServer> server;
  int requests = 0;
  explicit Served(std::chrono::milliseconds timeout) {
    auto made = ControlServer::create(
        base.get(), dir.path() + "/control.sock",
        [this](const nlohmann::json& request, ReplyFn reply, PartialFn) {
          ++requests;
          reply(nlohmann::json{{"ok", true}, {"cmd", request.value("cmd", "")}});
        },
        timeout);
    REQUIRE(made);
    server = std::move(*made);
  }
};

}  // namespace

TEST_CASE("a request that trickles in is cut at the request deadline, not kept alive by its bytes",
          "[control_socket]") {
  Served served(std::chrono::milliseconds(300));
  const int slow = connect_to(served.server->path());
  const std::string request = R"({"cmd":"status","padding":")" + std::string(200, 'x') + "\"}\n";
  std::size_t sent = 0;
  // A byte every step (20 ms): the whole line would take 4 s; the deadline
  // is 300 ms.
  const bool cut = run_until(
      served.base.get(), [&] { return closed_by_server(slow); }, 500,
      [&] {
        if (sent < request.size() && send(slow, request.data() + sent, 1, MSG_NOSIGNAL) == 1)
          ++sent;
      });
  CHECK(cut);
  CHECK(sent < request.size());
  CHECK(served.requests == 0);
  close(slow);
}

TEST_CASE(
    "what a client sends after its request is thrown away, and a client that keeps sending "
    "is dropped",
    "[control_socket]") {
  EventBasePtr base(event_base_new());
  TempDir dir("grove-control");
  // A handler that keeps every request open (as a running job's does).
  std::vector<ReplyFn> held;
  auto server = ControlServer::create(
      base.get(), dir.path() + "/control.sock",
      [&](const nlohmann::json&, ReplyFn reply, PartialFn) { held.push_back(std::move(reply)); });
  REQUIRE(server);
  const int client = connect_to((*server)->path());
  const std::string line = "{\"cmd\":\"run\"}\n";
  REQUIRE(send(client, line.data(), line.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(line.size()));
  REQUIRE(run_until(
      base.get(), [&] { return held.size() == 1; }, 50));
  // A little more is tolerated (and dropped)...
  const std::string chatter(1000, 'y');
  REQUIRE(send(client, chatter.data(), chatter.size(), MSG_NOSIGNAL) == 1000);
  run_until(
      base.get(), [] { return false; }, 5);
  CHECK_FALSE(closed_by_server(client));
  CHECK((*server)->clients() == 1);
  // ...a stream is not: the connection goes before its bytes pile up.
  const std::string flood(64 * 1024, 'z');
  std::size_t flooded = 0;
  const bool dropped = run_until(
      base.get(), [&] { return (*server)->clients() == 0; }, 200,
      [&] {
        ssize_t n = send(client, flood.data(), flood.size(), MSG_NOSIGNAL);
        if (n > 0) flooded += static_cast<std::size_t>(n);
      });
  CHECK(dropped);
  CHECK(flooded < 16u * 1024 * 1024);
  close(client);
}

TEST_CASE("a request with a repeated key is refused, whichever value would have won",
          "[control_socket]") {
  Served served(std::chrono::seconds(10));
  const int client = connect_to(served.server->path());
  const std::string line = R"({"cmd":"status","cmd":"stop"})"
                           "\n";
  REQUIRE(send(client, line.data(), line.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(line.size()));
  std::string answer;
  REQUIRE(run_until(
      served.base.get(), [&] { return closed_by_server(client, &answer); }, 100));
  CHECK(served.requests == 0);
  CHECK_THAT(answer, Catch::Contains("the key 'cmd' repeats"));
  close(client);

  // Nested objects count too; the same key in two objects is fine.
  CHECK_FALSE(parse_control_json(R"({"cmd":"run","env":{"A":"1","A":"2"}})"));
  CHECK(parse_control_json(R"({"cmd":"run","a":{"x":1},"b":{"x":2}})"));
  auto fine = parse_control_json(R"({"cmd":"status"})");
  REQUIRE(fine);
  CHECK((*fine)["cmd"] == "status");
}
