#include "jobs/host/rank_stdin.h"

#include <unistd.h>

#include <cerrno>

namespace grove {

RankStdin::RankStdin(event_base* base, Fd write_end) : pipe_(std::move(write_end)) {
  set_nonblocking(pipe_.get());
  writable_ = IoWatch(base, pipe_.get(), IoReady::write, IoRepeat::once, [this] { flush(); });
}

RankStdin::~RankStdin() {
  writable_ = IoWatch();
  auto queue = std::move(queue_);
  for (Chunk& chunk : queue)
    chunk.done(false);
}

void RankStdin::write(std::string data, bool eof, Done done) {
  if (!pipe_.valid()) {
    done(false);
    return;
  }
  queue_.push_back(Chunk{std::move(data), 0, eof, std::move(done)});
  if (queue_.size() == 1) flush();
}

void RankStdin::flush() {
  while (!queue_.empty()) {
    Chunk& chunk = queue_.front();
    while (chunk.written < chunk.data.size()) {
      const ssize_t wrote = ::write(pipe_.get(), chunk.data.data() + chunk.written,
                                    chunk.data.size() - chunk.written);
      if (wrote > 0) {
        chunk.written += static_cast<std::size_t>(wrote);
      } else if (wrote < 0 && errno == EINTR) {
        continue;
      } else if (wrote < 0 && errno == EAGAIN) {
        writable_.enable();  // the rank has not read yet
        return;
      } else {
        close_pipe();  // EPIPE: the rank closed its stdin or ended
        return;
      }
    }
    Chunk finished = std::move(chunk);
    queue_.pop_front();
    if (finished.eof) {
      close_pipe();
      finished.done(false);
      return;
    }
    finished.done(true);
  }
}

void RankStdin::close_pipe() {
  writable_ = IoWatch();
  pipe_.reset();
  auto queue = std::move(queue_);
  queue_.clear();
  for (Chunk& chunk : queue)
    chunk.done(false);
}

}  // namespace grove
