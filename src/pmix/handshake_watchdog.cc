#include "pmix/handshake_watchdog.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "os/proc_files.h"

namespace grove {
namespace {

// The text of a small /proc file, read with one call (no stream machinery:
// this runs up to a hundred times a second).
std::string read_small(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char text[256];
  ssize_t got;
  do {
    got = read(fd, text, sizeof text - 1);
  } while (got < 0 && errno == EINTR);
  close(fd);
  return got > 0 ? std::string(text, static_cast<std::size_t>(got)) : std::string();
}

int milliseconds_rounded_up(TimeNs ns) {
  return static_cast<int>(std::min<TimeNs>((ns + 999'999) / 1'000'000, 60'000));
}

}  // namespace

HandshakeWatchdog::HandshakeWatchdog(HandshakeWatchdogOptions options, CutReport report)
    : options_(std::move(options)),
      report_(std::move(report)),
      watch_(geteuid(), options_.cut_other_users, options_.timeout_ns) {
  for (const ListeningSocket& listener : options_.listeners)
    ports_.insert(listener.port);
}

Result<std::unique_ptr<HandshakeWatchdog>> HandshakeWatchdog::start(
    HandshakeWatchdogOptions options, CutReport report) {
  std::unique_ptr<HandshakeWatchdog> dog(
      new HandshakeWatchdog(std::move(options), std::move(report)));
  dog->epoll_ = Fd(epoll_create1(EPOLL_CLOEXEC));
  dog->wake_ = Fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!dog->epoll_.valid() || !dog->wake_.valid())
    return Error{std::string("handshake watchdog: ") + std::strerror(errno)};
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.fd = dog->wake_.get();
  if (epoll_ctl(dog->epoll_.get(), EPOLL_CTL_ADD, dog->wake_.get(), &wake) != 0)
    return Error{std::string("handshake watchdog: epoll: ") + std::strerror(errno)};
  for (const ListeningSocket& listener : dog->options_.listeners) {
    // Edge-triggered: woken once per arrival, never held awake by a
    // connection libpmix has not accepted yet.
    epoll_event arrival{};
    arrival.events = EPOLLIN | EPOLLET;
    arrival.data.fd = listener.fd;
    if (epoll_ctl(dog->epoll_.get(), EPOLL_CTL_ADD, listener.fd, &arrival) != 0)
      return Error{std::string("handshake watchdog: epoll on a PMIx listener: ") +
                   std::strerror(errno)};
  }
  dog->thread_ = std::thread([raw = dog.get()] { raw->run(); });
  return dog;
}

HandshakeWatchdog::~HandshakeWatchdog() {
  stopping_.store(true);
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    (void)!write(wake_.get(), &one, sizeof one);
    thread_.join();
  }
}

void HandshakeWatchdog::run() {
  TimeNs busy_until = 0;
  while (!stopping_.load()) {
    const TimeNs now = monotonic_now_ns();
    const bool busy = watch_.timing() || now < busy_until;
    const TimeNs interval = busy ? options_.busy_interval_ns : options_.idle_interval_ns;
    epoll_event events[8];
    const int ready = epoll_wait(epoll_.get(), events, 8, milliseconds_rounded_up(interval));
    if (stopping_.load()) return;
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.fd == wake_.get()) continue;
      busy_until = monotonic_now_ns() + options_.busy_for_ns;  // a connection arrived
    }
    look(monotonic_now_ns());
  }
}

std::vector<StalledHandshake> HandshakeWatchdog::stalled_now() const {
  std::vector<StalledHandshake> stalled;
  for (const std::string& task : directory_entries("/proc/self/task")) {
    std::optional<int> fd = blocked_read_fd(read_small("/proc/self/task/" + task + "/syscall"));
    if (!fd) continue;
    std::optional<ServerConnection> connection = server_connection(*fd, ports_);
    if (!connection || connection->answered) continue;
    StalledHandshake entry{connection->fd, connection->inode, std::nullopt, connection->peer};
    if (connection->client) entry.client_uid = connection->client->uid;
    stalled.push_back(std::move(entry));
  }
  return stalled;
}

void HandshakeWatchdog::look(TimeNs now) {
  bool other_user = false;
  for (const HandshakeCut& found : watch_.observe(stalled_now(), now)) {
    other_user = other_user || found.reason == CutReason::other_user;
    cut(found);
  }
  // Where one stranger waits, more may be queued behind it (a flood): they
  // go now, not one per look.
  if (other_user) cut_other_users_waiting();
}

void HandshakeWatchdog::cut_other_users_waiting() {
  const uid_t self = geteuid();
  const ServerConnections held = server_connections(ports_, {});
  // What libpmix has closed since it was shut is forgotten.
  std::erase_if(shut_, [&](std::uint64_t inode) { return held.held.count(inode) == 0; });
  for (const ServerConnection& connection : held.connections) {
    // Answered connections are the client gate's (it may be refusing one).
    if (connection.answered || !connection.client || connection.client->uid == self) continue;
    StalledHandshake entry{connection.fd, connection.inode, connection.client->uid,
                           connection.peer};
    cut(HandshakeCut{entry, CutReason::other_user, 0});
  }
}

void HandshakeWatchdog::cut(const HandshakeCut& found) {
  // Shut already (libpmix has not closed it yet): not again, nor reported twice.
  if (shut_.count(found.connection.inode) != 0) return;
  if (!shut_down(found.connection.fd, found.connection.inode)) return;
  if (shut_.size() >= kShutRemembered) shut_.clear();  // a flood's: forgotten in bulk
  shut_.insert(found.connection.inode);
  if (report_) report_(found);
}

}  // namespace grove
