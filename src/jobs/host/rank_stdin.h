// One rank's stdin pipe, written by its daemon with what grove run forwards
// (--stdin): chunks queue in order, go into the pipe as the rank reads, and
// each reports when it is all in the pipe, or that the rank has stopped
// reading. Nothing is dropped while the rank reads; at most what grove run
// sends before that report is held (it waits for it).
#pragma once

#include <deque>
#include <functional>
#include <string>

#include "os/fd.h"
#include "os/io_watch.h"

namespace grove {

class RankStdin {
 public:
  // `open`: the rank still reads (its end of the pipe is open).
  using Done = std::function<void(bool open)>;

  // `write_end`: the daemon's end of the rank's stdin pipe.
  RankStdin(event_base* base, Fd write_end);
  // Reports every chunk still queued as not read.
  ~RankStdin();
  RankStdin(const RankStdin&) = delete;
  RankStdin& operator=(const RankStdin&) = delete;

  // Queues `data`; with `eof` the pipe closes once it is written. `done` runs
  // from the event loop, or at once if the pipe is already closed.
  void write(std::string data, bool eof, Done done);

 private:
  struct Chunk {
    std::string data;
    std::size_t written = 0;
    bool eof = false;
    Done done;
  };
  // Writes what the pipe takes; reports finished chunks.
  void flush();
  void close_pipe();

  Fd pipe_;
  IoWatch writable_;  // once, while the pipe is full
  std::deque<Chunk> queue_;
};

}  // namespace grove
