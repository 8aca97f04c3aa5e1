// Test harness for the TCP transport: several transports in one process on
// 127.0.0.1, sharing one main event base, each with its own log file. Every
// wait is bounded by a deadline.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "os/event_handles.h"
#include "rml/frame.h"
#include "rml/transport/tcp_transport.h"
#include "support/subprocess.h"
#include "util/log.h"
#include "util/param_registry.h"

namespace grove::testing {

using namespace std::chrono_literals;

inline constexpr std::chrono::milliseconds kDeadline = 10s;

// A main event base created after libevent's thread support is on.
EventBasePtr make_base();

// Runs the base until done() holds or the timeout passes; true if done().
// done() is re-checked at least every 10 ms.
bool run_until(event_base* base, const std::function<bool()>& done,
               std::chrono::milliseconds timeout = kDeadline);
// Runs the base for a fixed time (to show that nothing more happens).
void run_for(event_base* base, std::chrono::milliseconds duration);

std::vector<std::byte> test_secret(std::uint8_t fill);

// A frame whose payload is a pattern derived from op_id, so a receiver can
// check every byte.
std::vector<std::byte> make_frame(Vpid sender, std::uint16_t tag, TopologyKind topology,
                                  std::uint64_t op_id, std::size_t payload_size);

struct NodeOptions {
  int worker_threads = 0;
  std::vector<std::byte> secret = test_secret(1);
  std::uint64_t max_payload = std::uint64_t{16} << 20;
  int rml_verbose = 0;
  std::uint32_t handshake_timeout_ms = 10000;
  bool listen = true;
  FrameProtection protection = FrameProtection::integrity;
  std::uint64_t send_queue_limit = std::uint64_t{512} << 20;
  std::uint32_t send_queue_timeout_ms = 10000;
};

struct Received {
  Vpid from = 0;
  std::vector<std::byte> frame;
};

// One transport with everything its callbacks saw.
class Node {
 public:
  Node(event_base* base, Vpid vpid, const NodeOptions& options = {});
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  TcpTransport& transport() { return *transport_; }
  void destroy_transport() { transport_.reset(); }
  Vpid vpid() const { return vpid_; }
  const Endpoint& endpoint() const { return endpoint_; }
  std::string log_text() const;

  std::vector<Received> received;
  std::vector<Vpid> lost;
  std::vector<std::thread::id> callback_threads;
  // Set to send from inside on_frame (re-entrancy checks).
  std::function<void(Vpid, const std::vector<std::byte>&)> on_frame_hook;

 private:
  Vpid vpid_;
  std::FILE* log_file_;
  ParamRegistry params_;
  std::unique_ptr<Log> log_;
  std::unique_ptr<TcpTransport> transport_;
  Endpoint endpoint_;
};

// Every node learns every other node's endpoint.
void connect_all(const std::vector<Node*>& nodes);

// A plain blocking TCP client for hostile-peer tests.
class RawClient {
 public:
  explicit RawClient(const Endpoint& server);
  void write_bytes(std::span<const std::byte> bytes);
  // Appends whatever has arrived without blocking; false once the server closed.
  bool poll_read();
  bool closed() const { return closed_; }
  const std::vector<std::byte>& bytes_read() const { return read_; }
  // "127.0.0.1:<local port>": how the server names this client.
  std::string local_address() const;

 private:
  Fd fd_;
  std::vector<std::byte> read_;
  bool closed_ = false;
};

// How many times a needle occurs in a text: test/support's, for these tests too.
using grove::test::count_occurrences;

}  // namespace grove::testing
