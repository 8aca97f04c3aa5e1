// A locked queue drained on the thread of one event base. Any thread may
// post; the owning base runs the handler for each message, in posting order,
// from its own loop and never inside post(). The wakeup is an eventfd watched
// by a persistent read event on the owning base, so posting from another
// thread never calls into that base: a base needs no libevent thread support
// to receive messages.
#pragma once

#include <event2/event.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
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
    }
    if (was_empty) wake();
  }

  // Handles every message posted so far, now (owning thread only).
  void drain() {
    std::uint64_t count = 0;
    ssize_t ignored = ::read(wake_fd_.get(), &count, sizeof count);
    (void)ignored;  // EAGAIN after a spurious wakeup is fine
    std::vector<Message> batch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      batch.swap(queue_);
    }
    for (Message& message : batch)
      handler_(message);
  }

 private:
  explicit Mailbox(Handler handler) : handler_(std::move(handler)) {}

  // A poster that finds the queue non-empty skips the wakeup: the one that
  // made it non-empty has woken (or is about to wake) the drain, and the
  // drain clears the eventfd before it takes the queue.
  void wake() {
    const std::uint64_t one = 1;
    ssize_t ignored = ::write(wake_fd_.get(), &one, sizeof one);
    (void)ignored;  // only EAGAIN at a counter near 2^64: already readable
  }

  static void on_wake(evutil_socket_t, short, void* arg) { static_cast<Mailbox*>(arg)->drain(); }

  Handler handler_;
  std::mutex mutex_;
  std::vector<Message> queue_;
  Fd wake_fd_;
  EventPtr wake_event_;  // freed before wake_fd_ is closed
};

}  // namespace grove
