// A locked queue drained on the thread of one event base. Any thread may
// post; the owning base runs the handler for each message, in posting order,
// from its own loop and never inside post(). The wakeup from another thread
// is an eventfd watched by a persistent read event on the owning base, so
// posting from another thread never calls into that base: a base needs no
// libevent thread support to receive messages. A post from the owning thread
// itself (the transport on the main base telling the main thread of a frame)
// only marks a second, fd-less event active: no eventfd write, read or extra epoll_wait,
// three system calls fewer per frame a daemon receives.
#pragma once

#include <event2/event.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "os/event_handles.h"
#include "util/result.h"

namespace grove {

template <typename Message>
class Mailbox {
 public:
  using Handler = std::function<void(Message&)>;

  static Result<std::unique_ptr<Mailbox>> create(event_base* base, Handler handler) {
    std::unique_ptr<Mailbox> mailbox(new Mailbox(std::move(handler)));
    mailbox->wake_fd_ = Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!mailbox->wake_fd_.valid()) {
      return Error{std::string("eventfd: ") + std::strerror(errno)};
    }
    mailbox->wake_event_.reset(event_new(base, mailbox->wake_fd_.get(), EV_READ | EV_PERSIST,
                                         &Mailbox::on_wake, mailbox.get()));
    if (!mailbox->wake_event_ || event_add(mailbox->wake_event_.get(), nullptr) != 0) {
      return Error{"cannot add a mailbox event to the event base"};
    }
    mailbox->local_event_.reset(event_new(base, -1, 0, &Mailbox::on_local, mailbox.get()));
    if (!mailbox->local_event_) return Error{"cannot make a mailbox event"};
    return mailbox;
  }

  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  void post(Message message) {
    bool was_empty = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      was_empty = queue_.empty();
      queue_.push_back(std::move(message));
      ++posted_;
    }
    if (was_empty) wake();
  }

  void post_all(std::vector<Message> messages) {
    if (messages.empty()) return;
    bool was_empty = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      was_empty = queue_.empty();
      for (Message& message : messages)
        queue_.push_back(std::move(message));
      posted_ += messages.size();
    }
    if (was_empty) wake();
  }

  // Wakeups of the owning loop: from another thread (an eventfd write, a
  // thread hop) and from the owning thread itself (an event made active).
  // A post that finds messages already queued wakes nothing.
  std::uint64_t cross_thread_wakes() const {
    return cross_thread_wakes_.load(std::memory_order_relaxed);
  }
  std::uint64_t local_wakes() const { return local_wakes_.load(std::memory_order_relaxed); }
  // Messages posted, from any thread.
  std::uint64_t posted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return posted_;
  }

  // Handles every message posted so far, now (owning thread only).
  void drain() {
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    std::uint64_t count = 0;
    ssize_t ignored = ::read(wake_fd_.get(), &count, sizeof count);
    (void)ignored;  // EAGAIN after a spurious wakeup is fine
    take_and_handle();
  }

 private:
  explicit Mailbox(Handler handler) : handler_(std::move(handler)) {}

  void take_and_handle() {
    std::vector<Message> batch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      batch.swap(queue_);
    }
    for (Message& message : batch)
      handler_(message);
  }

  // A poster that finds the queue non-empty skips the wakeup: the one that
  // made it non-empty has woken (or is about to wake) the drain, and the
  // drain clears the eventfd before it takes the queue.
  // The owning thread is known from its first drain; until then every
  // wakeup goes through the eventfd, which is right from any thread. The
  // owner's own wakeup is a second event, never tied to the eventfd: the
  // eventfd's event always reads it, so a write is never left unread (which
  // would make every pass of the loop return at once).
  void wake() {
    if (owner_.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
      local_wakes_.fetch_add(1, std::memory_order_relaxed);
      event_active(local_event_.get(), EV_TIMEOUT, 0);
      return;
    }
    cross_thread_wakes_.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t one = 1;
    ssize_t ignored = ::write(wake_fd_.get(), &one, sizeof one);
    (void)ignored;  // only EAGAIN at a counter near 2^64: already readable
  }

  static void on_wake(evutil_socket_t, short, void* arg) { static_cast<Mailbox*>(arg)->drain(); }
  static void on_local(evutil_socket_t, short, void* arg) {
    static_cast<Mailbox*>(arg)->take_and_handle();
  }

  Handler handler_;
  std::atomic<std::thread::id> owner_{};
  std::atomic<std::uint64_t> cross_thread_wakes_{0};
  std::atomic<std::uint64_t> local_wakes_{0};
  mutable std::mutex mutex_;
  std::vector<Message> queue_;
  std::uint64_t posted_ = 0;  // under mutex_
  Fd wake_fd_;
  EventPtr wake_event_;   // freed before wake_fd_ is closed
  EventPtr local_event_;  // made active by the owning thread's own posts
};

}  // namespace grove
