// grove_pmix_test_node: one "daemon" of a two-daemon DVM for the PMIx tests.
// libpmix allows one server per process, so the two-server test runs two of
// these, joined by a socketpair that stands in for grove's RML:
//
//   grove_pmix_test_node --vpid V --peer-fd FD --tmpdir DIR --client PATH
//                        --rounds K --mode collect|barrier|no-collect
//                        --deadline-ms MS [--client-timing 0|1]
//
// The job "grove.test.two" has four ranks: 0 and 1 on daemon 0 (node0), 2 and
// 3 on daemon 1 (node1). Each node runs one PmixServer, forks its two
// pmix_fence_client ranks (their output goes to this process's stdout and
// stderr), and wires the hooks to its peer: a fence completes when both
// servers' blobs are in (concatenated in vpid order); a direct-modex request
// is answered by the peer's fetch_local_modex. A node stays up until its own
// clients are done and its peer says the same, then prints
//   node V: fence_nb N, dmodex asked A, served S, clients ok C/2, blob bytes first F last L
// and exits 0 if its clients all exited 0.
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client_launch.h"
#include "os/event_handles.h"
#include "pmix/server.h"

namespace grove::pmix_test {
namespace {

constexpr const char* kNspace = "grove.test.two";
constexpr std::uint32_t kRanksPerNode = 2;

struct NodeOptions {
  std::uint32_t vpid = 0;
  int peer_fd = -1;
  std::string tmpdir;
  std::string client;
  int rounds = 3;
  std::string mode = "collect";
  long deadline_ms = 60000;
  bool client_timing = false;
};

enum class MessageKind : std::uint8_t { fence = 1, dmodex_request = 2, dmodex_reply = 3, done = 4 };

struct Message {
  MessageKind kind = MessageKind::done;
  std::uint64_t id = 0;
  std::uint32_t rank = 0;
  std::int32_t status = 0;
  std::vector<std::byte> payload;
};

constexpr std::size_t kHeaderBytes = 1 + 8 + 4 + 4 + 4;

void put_le(std::vector<std::byte>& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
}

std::uint64_t get_le(const unsigned char* in, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return value;
}

std::vector<std::byte> encode(const Message& message) {
  std::vector<std::byte> out;
  put_le(out, static_cast<std::uint8_t>(message.kind), 1);
  put_le(out, message.id, 8);
  put_le(out, message.rank, 4);
  put_le(out, static_cast<std::uint32_t>(message.status), 4);
  put_le(out, message.payload.size(), 4);
  out.insert(out.end(), message.payload.begin(), message.payload.end());
  return out;
}

PmixJob two_node_job() {
  PmixJob job;
  job.nspace = kNspace;
  job.size = 2 * kRanksPerNode;
  job.universe_size = job.size;
  job.node_hostnames = {"node0", "node1"};
  for (std::uint32_t rank = 0; rank < job.size; ++rank) {
    PmixProcPlacement proc;
    proc.rank = rank;
    proc.daemon_vpid = rank / kRanksPerNode;
    proc.node_id = rank / kRanksPerNode;
    proc.local_rank = static_cast<std::uint16_t>(rank % kRanksPerNode);
    proc.node_rank = proc.local_rank;
    job.procs.push_back(proc);
  }
  return job;
}

class Node {
 public:
  explicit Node(NodeOptions options) : options_(std::move(options)) {}
  int run();

 private:
  void on_request(PmixRequest request);
  void send(const Message& message);
  void on_message(Message message);
  void try_complete_fence(std::uint64_t sequence);
  Status spawn_clients(const PmixJob& job);
  static void on_read(bufferevent* bev, void* arg);
  static void on_event(bufferevent* bev, short what, void* arg);

  struct FenceSlot {
    std::optional<PmixFenceCall> own;
    std::optional<std::vector<std::byte>> peer;
  };

  NodeOptions options_;
  EventBasePtr base_;
  BufferEventPtr peer_;
  std::unique_ptr<PmixServer> server_;
  std::vector<ChildProcess> clients_;
  std::map<std::uint64_t, FenceSlot> fences_;
  std::uint64_t next_fence_ = 0;
  std::size_t fence_upcalls_ = 0;
  std::size_t fence_bytes_first_ = 0;  // this server's blob in the first fence
  std::size_t fence_bytes_last_ = 0;   // ... and in the last
  std::map<std::uint64_t, PmixAnswer<std::vector<std::byte>>> dmodex_answers_;
  std::uint64_t next_dmodex_ = 1;
  std::size_t dmodex_asked_ = 0;
  std::size_t dmodex_served_ = 0;
  bool sent_done_ = false;
  bool peer_done_ = false;
  bool peer_lost_ = false;
};

void Node::on_request(PmixRequest request) {
  if (auto* call = std::get_if<PmixFenceCall>(&request)) {
    ++fence_upcalls_;
    fence_bytes_first_ = fence_upcalls_ == 1 ? call->data.size() : fence_bytes_first_;
    fence_bytes_last_ = call->data.size();
    std::uint64_t sequence = next_fence_++;
    send(Message{MessageKind::fence, sequence, 0, 0, call->data});
    fences_[sequence].own = std::move(*call);
    try_complete_fence(sequence);
  } else if (auto* modex = std::get_if<PmixDirectModexCall>(&request)) {
    ++dmodex_asked_;
    const std::uint64_t id = next_dmodex_++;
    send(Message{MessageKind::dmodex_request, id, modex->rank, 0, {}});
    dmodex_answers_.emplace(id, std::move(modex->answer));
  }
  // Anything else is dropped: a request's client is answered NOT-SUPPORTED.
}

void Node::try_complete_fence(std::uint64_t sequence) {
  FenceSlot& slot = fences_[sequence];
  if (!slot.own || !slot.peer) return;
  std::vector<std::byte> aggregate = options_.vpid == 0 ? slot.own->data : *slot.peer;
  const std::vector<std::byte>& second = options_.vpid == 0 ? *slot.peer : slot.own->data;
  aggregate.insert(aggregate.end(), second.begin(), second.end());
  slot.own->answer(kPmixSuccess, std::move(aggregate));
  fences_.erase(sequence);
}

void Node::on_message(Message message) {
  switch (message.kind) {
    case MessageKind::fence:
      fences_[message.id].peer = std::move(message.payload);
      try_complete_fence(message.id);
      return;
    case MessageKind::dmodex_request: {
      ++dmodex_served_;
      std::uint64_t id = message.id;
      std::uint32_t rank = message.rank;
      server_->fetch_local_modex(
          kNspace, rank, [this, id, rank](int status, std::vector<std::byte> blob) {
            send(Message{MessageKind::dmodex_reply, id, rank, status, std::move(blob)});
          });
      return;
    }
    case MessageKind::dmodex_reply: {
      auto answer = dmodex_answers_.find(message.id);
      if (answer == dmodex_answers_.end()) {
        std::fprintf(stderr, "node: a direct-modex reply to no request (%llu)\n",
                     static_cast<unsigned long long>(message.id));
        return;
      }
      answer->second(message.status, std::move(message.payload));
      dmodex_answers_.erase(answer);
      return;
    }
    case MessageKind::done:
      peer_done_ = true;
      return;
  }
}

void Node::send(const Message& message) {
  std::vector<std::byte> bytes = encode(message);
  bufferevent_write(peer_.get(), bytes.data(), bytes.size());
}

void Node::on_read(bufferevent* bev, void* arg) {
  Node& node = *static_cast<Node*>(arg);
  evbuffer* input = bufferevent_get_input(bev);
  while (evbuffer_get_length(input) >= kHeaderBytes) {
    unsigned char header[kHeaderBytes];
    evbuffer_copyout(input, header, kHeaderBytes);
    std::size_t length = get_le(header + 17, 4);
    if (evbuffer_get_length(input) < kHeaderBytes + length) return;
    evbuffer_drain(input, kHeaderBytes);
    Message message;
    message.kind = static_cast<MessageKind>(header[0]);
    message.id = get_le(header + 1, 8);
    message.rank = static_cast<std::uint32_t>(get_le(header + 9, 4));
    message.status = static_cast<std::int32_t>(get_le(header + 13, 4));
    message.payload.resize(length);
    evbuffer_remove(input, message.payload.data(), length);
    node.on_message(std::move(message));
  }
}

void Node::on_event(bufferevent*, short what, void* arg) {
  if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) != 0) static_cast<Node*>(arg)->peer_lost_ = true;
}

Status Node::spawn_clients(const PmixJob& job) {
  for (const PmixProcPlacement& proc : job.procs) {
    if (proc.daemon_vpid != options_.vpid) continue;
    Result<std::vector<std::string>> env =
        register_client_env(base_.get(), *server_, kNspace, proc.rank);
    if (!env) return env.error();
    std::vector<std::string> argv = {options_.client, "--rounds", std::to_string(options_.rounds)};
    if (options_.mode == "barrier") argv.push_back("--barrier");
    if (options_.mode == "no-collect") argv.push_back("--no-collect");
    if (options_.client_timing) argv.push_back("--timing");
    Result<ChildProcess> child = spawn_child(argv, *env, STDOUT_FILENO, STDERR_FILENO);
    if (!child) return child.error();
    clients_.push_back(*child);
  }
  return ok_status();
}

int Node::run() {
  // The clients must not inherit the link to the peer.
  ::fcntl(options_.peer_fd, F_SETFD, FD_CLOEXEC);
  base_.reset(event_base_new());
  peer_.reset(bufferevent_socket_new(base_.get(), options_.peer_fd, BEV_OPT_CLOSE_ON_FREE));
  if (!base_ || !peer_) return 1;
  bufferevent_setcb(peer_.get(), on_read, nullptr, on_event, this);
  bufferevent_enable(peer_.get(), EV_READ | EV_WRITE);
  PmixServerOptions server_options;
  server_options.tmpdir = options_.tmpdir;
  server_options.daemon_vpid = options_.vpid;
  server_options.verify_clients = false;  // as in one_daemon.cc
  Result<std::unique_ptr<PmixServer>> server = PmixServer::create(
      base_.get(), server_options, [this](PmixRequest request) { on_request(std::move(request)); });
  if (!server) {
    std::fprintf(stderr, "node %u: %s\n", options_.vpid, server.error().message.c_str());
    return 1;
  }
  server_ = std::move(*server);
  PmixJob job = two_node_job();
  job.this_node_id = options_.vpid;
  Status ready = wait_for_answer(base_.get(), [&](PmixServer::StatusDone done) {
    server_->register_job(job, std::move(done));
  });
  if (ready) ready = spawn_clients(job);
  ChildGuard guard(clients_);
  if (!ready) {
    std::fprintf(stderr, "node %u: %s\n", options_.vpid, ready.error().message.c_str());
    return 1;
  }
  bool finished = run_loop_until(
      base_.get(),
      [&] {
        bool clients_done = true;
        for (ChildProcess& child : clients_)
          clients_done = poll_child(child) && clients_done;
        if (clients_done && !sent_done_) {
          send(Message{MessageKind::done, 0, 0, 0, {}});
          sent_done_ = true;
        }
        evbuffer* output = bufferevent_get_output(peer_.get());
        return clients_done && (peer_done_ || peer_lost_) && evbuffer_get_length(output) == 0;
      },
      std::chrono::milliseconds(options_.deadline_ms));
  int clients_ok = 0;
  for (ChildProcess& child : clients_) {
    kill_child(child);
    clients_ok += child.signal == 0 && child.exit_code == 0 ? 1 : 0;
  }
  std::printf(
      "node %u: fence_nb %zu, dmodex asked %zu, served %zu, clients ok %d/%zu, blob bytes first "
      "%zu last %zu%s\n",
      options_.vpid, fence_upcalls_, dmodex_asked_, dmodex_served_, clients_ok, clients_.size(),
      fence_bytes_first_, fence_bytes_last_, finished ? "" : ", deadline passed");
  std::fflush(stdout);
  server_.reset();
  return finished && clients_ok == static_cast<int>(clients_.size()) ? 0 : 1;
}

std::optional<NodeOptions> parse(int argc, char** argv) {
  NodeOptions options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string name = argv[i];
    std::string value = argv[i + 1];
    if (name == "--vpid") {
      options.vpid = static_cast<std::uint32_t>(std::strtoul(value.c_str(), nullptr, 10));
    } else if (name == "--peer-fd") {
      options.peer_fd = std::atoi(value.c_str());
    } else if (name == "--tmpdir") {
      options.tmpdir = value;
    } else if (name == "--client") {
      options.client = value;
    } else if (name == "--rounds") {
      options.rounds = std::atoi(value.c_str());
    } else if (name == "--mode") {
      options.mode = value;
    } else if (name == "--deadline-ms") {
      options.deadline_ms = std::atol(value.c_str());
    } else if (name == "--client-timing") {
      options.client_timing = value == "1";
    } else {
      return std::nullopt;
    }
  }
  if (options.vpid > 1 || options.peer_fd < 0 || options.tmpdir.empty() || options.client.empty()) {
    return std::nullopt;
  }
  return options;
}

}  // namespace
}  // namespace grove::pmix_test

int main(int argc, char** argv) {
  std::optional<grove::pmix_test::NodeOptions> options = grove::pmix_test::parse(argc, argv);
  if (!options) {
    std::fprintf(stderr,
                 "usage: grove_pmix_test_node --vpid 0|1 --peer-fd FD --tmpdir DIR --client PATH "
                 "[--rounds K] [--mode collect|barrier|no-collect] [--deadline-ms MS] "
                 "[--client-timing 0|1]\n");
    return 2;
  }
  grove::pmix_test::Node node(std::move(*options));
  return node.run();
}
