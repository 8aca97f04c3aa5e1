#include "pmix/handshake_watch.h"

#include <sys/syscall.h>

#include <charconv>
#include <set>

namespace grove {

std::optional<int> blocked_read_fd(std::string_view text) {
  // "NR ARG0 ARG1 ...", the arguments in hex with a 0x prefix.
  long number = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data() + text.size() || *end != ' ') return std::nullopt;
  bool reads = number == SYS_read || number == SYS_recvfrom || number == SYS_recvmsg;
#ifdef SYS_recv
  reads = reads || number == SYS_recv;
#endif
  if (!reads) return std::nullopt;
  std::string_view rest(end + 1, static_cast<std::size_t>(text.data() + text.size() - end - 1));
  if (rest.substr(0, 2) != "0x") return std::nullopt;
  rest.remove_prefix(2);
  unsigned long fd = 0;
  auto [fd_end, fd_error] = std::from_chars(rest.data(), rest.data() + rest.size(), fd, 16);
  if (fd_error != std::errc() || fd > 0x7fffffffUL) return std::nullopt;
  if (fd_end != rest.data() + rest.size() && *fd_end != ' ' && *fd_end != '\n') return std::nullopt;
  return static_cast<int>(fd);
}

std::string_view cut_reason_text(CutReason reason) {
  switch (reason) {
    case CutReason::other_user:
      return "another user's connection";
    case CutReason::too_slow:
      return "its handshake took too long";
  }
  return "?";
}

std::vector<HandshakeCut> HandshakeWatch::observe(const std::vector<StalledHandshake>& stalled,
                                                  TimeNs now) {
  std::vector<HandshakeCut> cuts;
  std::set<std::uint64_t> seen;
  for (const StalledHandshake& connection : stalled) {
    if (!seen.insert(connection.inode).second) continue;  // two threads on one
    const TimeNs since = since_.try_emplace(connection.inode, now).first->second;
    const TimeNs stalled_ns = now > since ? now - since : 0;
    if (cut_other_users_ && connection.client_uid && *connection.client_uid != self_) {
      cuts.push_back(HandshakeCut{connection, CutReason::other_user, stalled_ns});
    } else if (timeout_ns_ > 0 && stalled_ns >= timeout_ns_) {
      cuts.push_back(HandshakeCut{connection, CutReason::too_slow, stalled_ns});
    }
  }
  std::erase_if(since_, [&](const auto& entry) { return seen.count(entry.first) == 0; });
  for (const HandshakeCut& cut : cuts)
    since_.erase(cut.connection.inode);
  return cuts;
}

}  // namespace grove
