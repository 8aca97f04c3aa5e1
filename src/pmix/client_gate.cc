#include "pmix/client_gate.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace grove {
namespace {

// A runaway fork tree under one rank must not stall PMIx's progress thread.
constexpr std::size_t kMaxProcessesSearched = 4096;

std::string read_whole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

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

std::vector<std::string> directory_entries(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  closedir(dir);
  return names;
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
    entry.established = fields[3] == "01";
    entry.listening = fields[3] == "0A";
    if (!parse_decimal(fields[7], entry.uid) || !parse_decimal(fields[9], entry.inode)) continue;
    if (entry.local.find(':') == std::string::npos || entry.remote.find(':') == std::string::npos)
      continue;
    entries.push_back(std::move(entry));
  }
  return entries;
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
    std::istringstream list(read_whole(task_dir + "/" + task + "/children"));
    pid_t child = 0;
    while (list >> child)
      children.push_back(child);
  }
  return children;
}

std::uint16_t endpoint_port(const std::string& endpoint) {
  std::size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos) return 0;
  unsigned value = 0;
  auto [end, error] =
      std::from_chars(endpoint.data() + colon + 1, endpoint.data() + endpoint.size(), value, 16);
  if (error != std::errc() || end != endpoint.data() + endpoint.size() || value > 65535) return 0;
  return static_cast<std::uint16_t>(value);
}

// What the kernel says, read once per decision.
struct ClientGate::Snapshot {
  std::vector<TcpSocketEntry> entries;
  std::unordered_map<std::uint64_t, const TcpSocketEntry*> by_inode;
  // Server ends (in this process, on a PMIx port, not listening) not yet
  // admitted, by (local, remote) endpoint pair.
  std::map<std::pair<std::string, std::string>, std::uint64_t> waiting;
  // Live sockets by (local, remote) endpoint pair.
  std::map<std::pair<std::string, std::string>, const TcpSocketEntry*> by_endpoints;
};

namespace {

std::vector<TcpSocketEntry> read_tcp_tables() {
  std::vector<TcpSocketEntry> entries = parse_proc_net_tcp(read_whole("/proc/net/tcp"));
  for (TcpSocketEntry& entry : parse_proc_net_tcp(read_whole("/proc/net/tcp6")))
    entries.push_back(std::move(entry));
  return entries;
}

// Puts a closed socket in place of the descriptor that holds `inode`:
// libpmix then reads end-of-file and drops the peer as lost without reading
// anything it sent.
void cut_connections(const std::set<std::uint64_t>& inodes) {
  if (inodes.empty()) return;
  const std::string fd_dir = "/proc/self/fd";
  for (const std::string& name : directory_entries(fd_dir)) {
    char target[64];
    ssize_t length = readlink((fd_dir + "/" + name).c_str(), target, sizeof target - 1);
    if (length <= 0) continue;
    target[length] = '\0';
    std::uint64_t inode = 0;
    if (std::sscanf(target, "socket:[%" SCNu64 "]", &inode) != 1 || inodes.count(inode) == 0)
      continue;
    int fd = -1;
    if (!parse_decimal(std::string_view(name), fd)) continue;
    struct stat held {};
    if (fstat(fd, &held) != 0 || held.st_ino != inode) continue;  // closed meanwhile
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      shutdown(fd, SHUT_RDWR);
      continue;
    }
    close(pair[1]);
    if (dup3(pair[0], fd, O_CLOEXEC) < 0) shutdown(fd, SHUT_RDWR);
    close(pair[0]);
  }
}

}  // namespace

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

ClientGate::Snapshot ClientGate::take_snapshot(const std::set<std::uint16_t>& ports) {
  Snapshot snapshot;
  snapshot.entries = read_tcp_tables();
  const std::set<std::uint64_t> ours = socket_inodes_of(0);
  for (auto it = admitted_.begin(); it != admitted_.end();) {
    it = ours.count(*it) != 0 ? std::next(it) : admitted_.erase(it);
  }
  for (const TcpSocketEntry& entry : snapshot.entries) {
    if (entry.inode == 0) continue;  // no socket holds it any more
    snapshot.by_inode[entry.inode] = &entry;
    snapshot.by_endpoints[{entry.local, entry.remote}] = &entry;
    // Any state but listening: a stranger may have half-closed its end.
    if (!entry.listening && ports.count(endpoint_port(entry.local)) != 0 &&
        ours.count(entry.inode) != 0 && admitted_.count(entry.inode) == 0)
      snapshot.waiting[{entry.local, entry.remote}] = entry.inode;
  }
  return snapshot;
}

bool ClientGate::connected_from_tree(pid_t root, const Snapshot& snapshot) {
  // Breadth first from the rank's process: a wrapper (a shell, a launcher
  // script) may have started the process that connects.
  std::deque<pid_t> processes{root};
  std::size_t searched = 0;
  while (!processes.empty() && searched++ < kMaxProcessesSearched) {
    const pid_t process = processes.front();
    processes.pop_front();
    for (std::uint64_t inode : socket_inodes_of(process)) {
      auto client_end = snapshot.by_inode.find(inode);
      if (client_end == snapshot.by_inode.end()) continue;
      auto server_end =
          snapshot.waiting.find({client_end->second->remote, client_end->second->local});
      if (server_end == snapshot.waiting.end()) continue;
      admitted_.insert(server_end->second);
      return true;
    }
    for (pid_t child : children_of(process))
      processes.push_back(child);
  }
  return false;
}

void ClientGate::cut_foreign(Snapshot& snapshot) {
  const uid_t ours = geteuid();
  std::set<std::uint64_t> foreign;
  std::vector<std::pair<std::string, std::string>> unseen;  // client end missing
  for (const auto& [endpoints, server_inode] : snapshot.waiting) {
    auto client_end = snapshot.by_endpoints.find({endpoints.second, endpoints.first});
    if (client_end == snapshot.by_endpoints.end()) {
      unseen.push_back(endpoints);
    } else if (client_end->second->uid != ours) {
      foreign.insert(server_inode);
    }
  }
  if (!unseen.empty()) {
    // The tables are read in pieces and may have moved under us: look again
    // before calling a connection's client end gone.
    std::map<std::pair<std::string, std::string>, TcpSocketEntry> again;
    for (TcpSocketEntry& entry : read_tcp_tables()) {
      if (entry.inode != 0) again[{entry.local, entry.remote}] = std::move(entry);
    }
    for (const auto& endpoints : unseen) {
      auto client_end = again.find({endpoints.second, endpoints.first});
      if (client_end == again.end() || client_end->second.uid != ours)
        foreign.insert(snapshot.waiting.at(endpoints));
    }
  }
  cut_connections(foreign);
  std::erase_if(snapshot.waiting,
                [&](const auto& entry) { return foreign.count(entry.second) != 0; });
}

void ClientGate::cut_strangers(Snapshot& snapshot, const Expected& expected) {
  std::set<std::uint64_t> ours_started;  // socket inodes held by ranks started here
  for (const auto& [rank, pid] : expected) {
    std::deque<pid_t> processes{pid};
    std::size_t searched = 0;
    while (!processes.empty() && searched++ < kMaxProcessesSearched) {
      const pid_t process = processes.front();
      processes.pop_front();
      ours_started.merge(socket_inodes_of(process));
      for (pid_t child : children_of(process))
        processes.push_back(child);
    }
  }
  std::set<std::uint64_t> strangers;
  for (const auto& [endpoints, server_inode] : snapshot.waiting) {
    auto client_end = snapshot.by_endpoints.find({endpoints.second, endpoints.first});
    if (client_end == snapshot.by_endpoints.end() ||
        ours_started.count(client_end->second->inode) == 0)
      strangers.insert(server_inode);
  }
  cut_connections(strangers);
}

std::optional<std::string> ClientGate::admit(const std::string& nspace, std::uint32_t rank) {
  Expected expected;
  std::set<std::uint16_t> ports;
  {
    std::lock_guard lock(mutex_);
    expected = expected_;
    ports = listen_ports_;
  }
  Snapshot snapshot = take_snapshot(ports);
  // Another user's connection is cut whatever it claims, before anything is
  // admitted: it can never take a waiting rank's place.
  cut_foreign(snapshot);

  std::string why;
  auto found = expected.find({nspace, rank});
  if (ports.empty()) {
    why = "the PMIx server's port is not known yet";
  } else if (found == expected.end()) {
    why = "no process was started as this rank here";
  } else if (connected_from_tree(found->second, snapshot)) {
    return std::nullopt;
  } else {
    why = "no new connection to this daemon comes from the process started as this rank (pid " +
          std::to_string(found->second) + ") or its descendants";
  }
  cut_strangers(snapshot, expected);
  return why;
}

}  // namespace grove
