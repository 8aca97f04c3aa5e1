#include "pmix/client_gate.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <deque>
#include <sstream>

#include "os/proc_files.h"

namespace grove {
namespace {

// A runaway fork tree under one rank must not stall PMIx's progress thread.
constexpr std::size_t kMaxProcessesSearched = 4096;

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t'))
      ++at;
    std::size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t')
      ++end;
    if (end > at) fields.push_back(line.substr(at, end - at));
    at = end;
  }
  return fields;
}

template <typename T>
bool parse_decimal(std::string_view text, T& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

std::string proc_dir(pid_t pid) {
  return pid == 0 ? std::string("/proc/self") : "/proc/" + std::to_string(pid);
}

}  // namespace

std::vector<TcpSocketEntry> parse_proc_net_tcp(std::string_view text) {
  // "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ..."
  std::vector<TcpSocketEntry> entries;
  bool header = true;
  while (!text.empty()) {
    std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string_view> fields = fields_of(line);
    if (fields.size() < 10) continue;
    TcpSocketEntry entry;
    entry.local = std::string(fields[1]);
    entry.remote = std::string(fields[2]);
    if (!parse_decimal(fields[7], entry.uid) || !parse_decimal(fields[9], entry.inode)) continue;
    if (std::from_chars(fields[3].data(), fields[3].data() + fields[3].size(), entry.state, 16)
            .ec != std::errc())
      continue;
    if (entry.local.find(':') == std::string::npos || entry.remote.find(':') == std::string::npos)
      continue;
    entries.push_back(std::move(entry));
  }
  return entries;
}

namespace {

// The port of an endpoint as /proc/net/tcp prints it ("0100007F:1F90").
std::optional<std::uint16_t> endpoint_port(std::string_view endpoint) {
  const std::size_t colon = endpoint.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  unsigned port = 0;
  auto [end, error] =
      std::from_chars(endpoint.data() + colon + 1, endpoint.data() + endpoint.size(), port, 16);
  if (error != std::errc() || end != endpoint.data() + endpoint.size() || port > 65535)
    return std::nullopt;
  return static_cast<std::uint16_t>(port);
}

constexpr unsigned kTcpEstablished = 1;
constexpr unsigned kTcpSynSent = 2;

}  // namespace

bool unanswered_connection(const std::vector<TcpSocketEntry>& table,
                           const std::set<std::uint64_t>& client_inodes,
                           const std::set<std::uint16_t>& ports,
                           const std::set<std::uint64_t>& admitted) {
  for (const TcpSocketEntry& client : table) {
    if (client.inode == 0 || client_inodes.count(client.inode) == 0) continue;
    if (client.state != kTcpEstablished && client.state != kTcpSynSent) continue;
    auto port = endpoint_port(client.remote);
    if (!port || ports.count(*port) == 0) continue;
    // Its server end: not accepted yet (no inode), or accepted and not
    // admitted, is a handshake still waiting for its answer.
    bool answered = false;
    for (const TcpSocketEntry& server : table) {
      if (server.local == client.remote && server.remote == client.local) {
        answered = server.inode != 0 && admitted.count(server.inode) != 0;
        break;
      }
    }
    if (!answered) return true;
  }
  return false;
}

std::set<std::uint64_t> socket_inodes_of(pid_t pid) {
  std::set<std::uint64_t> inodes;
  const std::string fd_dir = proc_dir(pid) + "/fd";
  constexpr std::string_view prefix = "socket:[";
  for (const std::string& fd : directory_entries(fd_dir)) {
    char target[64];
    ssize_t length = readlink((fd_dir + "/" + fd).c_str(), target, sizeof target - 1);
    if (length <= 0) continue;
    std::string_view link(target, static_cast<std::size_t>(length));
    if (link.size() < prefix.size() + 2 || link.substr(0, prefix.size()) != prefix ||
        link.back() != ']')
      continue;
    std::uint64_t inode = 0;
    if (parse_decimal(link.substr(prefix.size(), link.size() - prefix.size() - 1), inode))
      inodes.insert(inode);
  }
  return inodes;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  const std::string task_dir = proc_dir(pid) + "/task";
  for (const std::string& task : directory_entries(task_dir)) {
    std::istringstream list(read_whole_file(task_dir + "/" + task + "/children"));
    pid_t child = 0;
    while (list >> child)
      children.push_back(child);
  }
  return children;
}

std::set<std::uint64_t> tree_socket_inodes(pid_t root) {
  std::set<std::uint64_t> inodes;
  std::deque<pid_t> processes{root};
  std::size_t searched = 0;
  while (!processes.empty() && searched++ < kMaxProcessesSearched) {
    const pid_t process = processes.front();
    processes.pop_front();
    inodes.merge(socket_inodes_of(process));
    for (pid_t child : children_of(process))
      processes.push_back(child);
  }
  return inodes;
}

ClientGate::~ClientGate() {
  for (int end : sink_)
    if (end >= 0) close(end);
}

void ClientGate::remove_connection(const ServerConnection& connection) {
  const int fd = connection.fd;
  const std::uint64_t server_inode = connection.inode;
  if (!connection.answered) {
    swap_for_closed(fd, server_inode);
    return;
  }
  // libpmix 4.2 has made this connection a client of the rank it claims
  // (the host's refusal is only logged). Were it to see it close, it would
  // count the rank as gone: one local process fewer in every later fence of
  // the job (the real rank's fence then completes without its peers) and a
  // finalize reported for a rank still running. So it never closes: its
  // descriptor becomes one end of a silent socket this gate holds open,
  // which neither delivers a request nor ends. Its client is cut off all the
  // same (the server end it was talking to is closed by the swap).
  if (!still_holds(fd, server_inode)) return;
  if (sink_[0] < 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sink_) != 0) {
    sink_[0] = sink_[1] = -1;
    shut_down(fd, server_inode);
    return;
  }
  if (dup3(sink_[0], fd, O_CLOEXEC) < 0) shut_down(fd, server_inode);
}

void ClientGate::add_listen_port(std::uint16_t port) {
  std::lock_guard lock(mutex_);
  listen_ports_.insert(port);
}

void ClientGate::expect(const std::string& nspace, std::uint32_t rank, pid_t pid) {
  std::lock_guard lock(mutex_);
  expected_[{nspace, rank}] = pid;
}

void ClientGate::forget(const std::string& nspace, std::uint32_t rank) {
  std::lock_guard lock(mutex_);
  expected_.erase({nspace, rank});
}

void ClientGate::forget_job(const std::string& nspace) {
  std::lock_guard lock(mutex_);
  expected_.erase(expected_.lower_bound({nspace, 0}), expected_.upper_bound({nspace, UINT32_MAX}));
}

std::vector<ServerConnection> ClientGate::waiting_connections(
    const std::set<std::uint16_t>& ports) {
  // admitted_ is written on this thread only: reading it here needs no lock.
  ServerConnections found = server_connections(ports, admitted_);
  std::lock_guard lock(admitted_mutex_);
  std::erase_if(admitted_, [&](std::uint64_t inode) { return found.held.count(inode) == 0; });
  return std::move(found.connections);
}

bool ClientGate::connected_from_tree(pid_t root, const std::vector<ServerConnection>& waiting) {
  std::map<std::uint64_t, std::uint64_t> server_of;  // client inode -> server inode
  for (const ServerConnection& connection : waiting) {
    if (connection.client) server_of[connection.client->inode] = connection.inode;
  }
  if (server_of.empty()) return false;
  // Breadth first from the rank's process: a wrapper (a shell, a launcher
  // script) may have started the process that connects.
  std::deque<pid_t> processes{root};
  std::size_t searched = 0;
  while (!processes.empty() && searched++ < kMaxProcessesSearched) {
    const pid_t process = processes.front();
    processes.pop_front();
    for (std::uint64_t inode : socket_inodes_of(process)) {
      auto server = server_of.find(inode);
      if (server == server_of.end()) continue;
      std::lock_guard lock(admitted_mutex_);
      admitted_.insert(server->second);
      return true;
    }
    for (pid_t child : children_of(process))
      processes.push_back(child);
  }
  return false;
}

void ClientGate::cut_foreign(std::vector<ServerConnection>& waiting) {
  const uid_t ours = geteuid();
  std::erase_if(waiting, [&](const ServerConnection& connection) {
    if (connection.client && connection.client->uid == ours) return false;
    remove_connection(connection);
    return true;
  });
}

void ClientGate::cut_strangers(const std::vector<ServerConnection>& waiting,
                               const Expected& expected) {
  std::set<std::uint64_t> ours_started;  // socket inodes held by ranks started here
  for (const auto& [rank, pid] : expected)
    ours_started.merge(tree_socket_inodes(pid));
  for (const ServerConnection& connection : waiting) {
    if (!connection.client || ours_started.count(connection.client->inode) == 0)
      remove_connection(connection);
  }
}

std::optional<std::string> ClientGate::admit(const std::string& nspace, std::uint32_t rank) {
  Expected expected;
  std::set<std::uint16_t> ports;
  {
    std::lock_guard lock(mutex_);
    expected = expected_;
    ports = listen_ports_;
  }
  std::vector<ServerConnection> waiting = waiting_connections(ports);
  // Another user's connection is cut whatever it claims, before anything is
  // admitted: it can never take a waiting rank's place.
  cut_foreign(waiting);

  std::string why;
  auto found = expected.find({nspace, rank});
  if (ports.empty()) {
    why = "the PMIx server's port is not known yet";
  } else if (found == expected.end()) {
    why = "no process was started as this rank here";
  } else if (connected_from_tree(found->second, waiting)) {
    return std::nullopt;
  } else {
    why = "no new connection to this daemon comes from the process started as this rank (pid " +
          std::to_string(found->second) + ") or its descendants";
  }
  cut_strangers(waiting, expected);
  return why;
}

std::set<pid_t> ClientGate::handshakes_pending(const std::vector<pid_t>& roots) {
  std::set<pid_t> pending;
  std::set<std::uint16_t> ports;
  {
    std::lock_guard lock(mutex_);
    ports = listen_ports_;
  }
  if (ports.empty() || roots.empty()) return pending;
  std::vector<TcpSocketEntry> table = parse_proc_net_tcp(read_whole_file("/proc/net/tcp"));
  for (TcpSocketEntry& entry : parse_proc_net_tcp(read_whole_file("/proc/net/tcp6")))
    table.push_back(std::move(entry));
  std::set<std::uint64_t> admitted;
  {
    std::lock_guard lock(admitted_mutex_);
    admitted = admitted_;
  }
  for (pid_t root : roots) {
    std::set<std::uint64_t> held = tree_socket_inodes(root);
    if (!held.empty() && unanswered_connection(table, held, ports, admitted)) pending.insert(root);
  }
  return pending;
}

}  // namespace grove
