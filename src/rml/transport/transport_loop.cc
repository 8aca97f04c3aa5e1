#include "rml/transport/transport_loop.h"

#include <pthread.h>

#include <string>
#include <system_error>

#include "rml/transport/connection.h"

namespace grove {

TransportLoop::TransportLoop(event_base* base, const LoopSettings& settings,
                             Mailbox<MainEvent>& main, std::size_t index)
    : base_(base), settings_(settings), main_(main), index_(index) {}

std::unique_ptr<TransportLoop> TransportLoop::on_main_base(event_base* base,
                                                           const LoopSettings& settings,
                                                           Mailbox<MainEvent>& main,
                                                           std::size_t index) {
  return std::unique_ptr<TransportLoop>(new TransportLoop(base, settings, main, index));
}

Result<std::unique_ptr<TransportLoop>> TransportLoop::start_worker(const LoopSettings& settings,
                                                                   Mailbox<MainEvent>& main,
                                                                   std::size_t index) {
  EventBasePtr base(event_base_new());
  if (!base) return Error{"cannot create the event base of worker " + std::to_string(index)};
  std::unique_ptr<TransportLoop> loop(new TransportLoop(base.get(), settings, main, index));
  loop->owned_base_ = std::move(base);
  TransportLoop* raw = loop.get();
  auto tasks = Mailbox<LoopTask>::create(raw->base_, [raw](LoopTask& task) { raw->handle(task); });
  if (!tasks) return tasks.error();
  loop->tasks_ = std::move(*tasks);
  try {
    // Runs until a StopLoop task breaks the loop; idle is not a reason to stop.
    loop->thread_ = std::thread([raw] {
      std::string name = "grove-rml-" + std::to_string(raw->index_);
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      event_base_loop(raw->base_, EVLOOP_NO_EXIT_ON_EMPTY);
    });
  } catch (const std::system_error& error) {
    return Error{"cannot start worker thread " + std::to_string(index) + ": " + error.what()};
  }
  return loop;
}

TransportLoop::~TransportLoop() {
  if (thread_.joinable()) {
    tasks_->post(StopLoop{});
    thread_.join();
  }
  // The thread is gone (or never existed): the connections can go on this one.
  connections_.clear();
}

void TransportLoop::submit(LoopTask task) {
  if (tasks_) {
    tasks_->post(std::move(task));
    return;
  }
  handle(task);
}

void TransportLoop::handle(LoopTask& task) {
  std::visit([this](auto& each) { handle_task(each); }, task);
}

void TransportLoop::handle_task(AdoptSocket& task) {
  auto connection = Connection::accept(*this, task.id, std::move(task.fd), task.remote);
  if (!connection) {
    settings_.log->error_limited("rml: taking a connection",
                                 "rml: cannot take the connection "
                                 "from %s: %s",
                                 task.remote.to_string().c_str(),
                                 connection.error().message.c_str());
    return;  // the main thread never knew it
  }
  connections_.emplace(task.id, std::move(*connection));
}

void TransportLoop::handle_task(OpenConnection& task) {
  auto connection = Connection::connect(*this, task.id, task.peer, task.endpoint, task.address);
  if (!connection) {
    settings_.log->error("rml: cannot connect to vpid %u at %s: %s", task.peer,
                         task.endpoint.to_string().c_str(), connection.error().message.c_str());
    notify_main(ConnectionClosed{task.id});
    return;
  }
  connections_.emplace(task.id, std::move(*connection));
}

void TransportLoop::handle_task(WriteFrame& task) {
  auto found = connections_.find(task.id);
  if (found == connections_.end()) {
    // Closed meanwhile; the main thread hears of it (or already has).
    settings_.log->verbose("rml", 3, "dropping a frame for closed connection %llu",
                           static_cast<unsigned long long>(task.id));
    return;
  }
  if (auto sent = found->second->send(std::move(task.bytes)); !sent) {
    close(task.id, CloseSeverityKind::error,
          "closing connection with " + found->second->describe() + ": " + sent.error().message);
  }
}

void TransportLoop::handle_task(CloseConnection& task) {
  close(task.id, CloseSeverityKind::quiet, {});
}

void TransportLoop::handle_task(StopLoop&) {
  event_base_loopbreak(base_);
}

void TransportLoop::close(ConnectionId id, CloseSeverityKind severity, const std::string& reason) {
  auto found = connections_.find(id);
  if (found == connections_.end()) return;
  std::unique_ptr<Connection> doomed = std::move(found->second);
  connections_.erase(found);
  const bool main_knows = doomed->outgoing() || doomed->authenticated();
  switch (severity) {
    case CloseSeverityKind::quiet:
      return;  // the main thread asked; it has already forgotten the connection
    case CloseSeverityKind::notice:
      settings_.log->verbose("rml", 1, "%s", reason.c_str());
      break;
    case CloseSeverityKind::error:
      // Anyone who can reach the port can open a connection that never
      // authenticates, in a loop: those lines are limited, a peer's are not.
      if (main_knows) {
        settings_.log->error("rml: %s", reason.c_str());
      } else {
        settings_.log->error_limited("rml: an unauthenticated connection", "rml: %s",
                                     reason.c_str());
      }
      break;
  }
  if (main_knows) notify_main(ConnectionClosed{id});
}

}  // namespace grove
