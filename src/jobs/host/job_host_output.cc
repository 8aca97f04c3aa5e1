// The ranks' stdout and stderr: read from their pipes a line at a time,
// passed to the controller, and paused while it has not acknowledged a
// window's worth (backpressure reaches the ranks, not this daemon's memory).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "jobs/host/job_host.h"
#include "jobs/host/job_host_rank.h"

namespace grove {

void JobHost::on_readable(Rank& rank, int which) {
  char buffer[65536];
  ssize_t got = read(rank.pipes[which].get(), buffer, sizeof buffer);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  const auto stream = which == 0 ? OutputStream::out : OutputStream::err;
  if (got <= 0) {
    if (!rank.partial[which].empty()) {
      std::string last = std::move(rank.partial[which]);
      rank.partial[which].clear();
      emit_output(rank, stream, last + "\n");
    }
    rank.watches[which] = IoWatch();
    rank.pipes[which].reset();
    rank.closed[which] = true;
    maybe_report(rank);
    return;
  }
  std::string& text = rank.partial[which];
  text.append(buffer, static_cast<std::size_t>(got));
  std::size_t end = text.rfind('\n');
  if (end == std::string::npos) {
    if (text.size() < (1u << 20)) return;
    end = text.size() - 1;  // a megabyte without a newline: pass it on anyway
  }
  std::string lines = text.substr(0, end + 1);
  text.erase(0, end + 1);
  emit_output(rank, stream, std::move(lines));
}

void JobHost::emit_output(Rank& rank, OutputStream stream, std::string text) {
  OutputFlow& flow = flows_[rank.job];
  flow.unacked += text.size();
  const std::uint32_t job = rank.job;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  report(JobOutput{job, rank.rank, stream, std::move(text),
                   std::chrono::duration_cast<std::chrono::microseconds>(now).count()});
  // Backpressure: what the controller has not passed on stays in the ranks'
  // pipes (and then in the ranks), not in this daemon's or its memory.
  if (output_window_ != 0 && !flow.paused && !flow.unbounded && flow.unacked >= output_window_) {
    flow.paused = true;
    log_.verbose("daemon", 2, "job %u: %llu bytes of output unacknowledged; pausing its pipes", job,
                 static_cast<unsigned long long>(flow.unacked));
    set_job_reading(job, false);
  }
}

bool JobHost::log_output(std::uint32_t job, std::uint32_t rank, OutputStream stream,
                         std::string text) {
  auto found = ranks_.find({job, rank});
  if (found == ranks_.end()) return false;
  emit_output(*found->second, stream, std::move(text));
  return true;
}

void JobHost::on_output_ack(std::uint32_t job, std::uint64_t bytes) {
  auto found = flows_.find(job);
  if (found == flows_.end()) return;
  OutputFlow& flow = found->second;
  flow.unacked -= std::min(bytes, flow.unacked);
  if (flow.paused && flow.unacked < output_window_ / 2) {
    flow.paused = false;
    set_job_reading(job, true);
  }
}

void JobHost::set_job_reading(std::uint32_t job, bool reading) {
  for (auto& [key, rank] : ranks_) {
    if (key.first != job) continue;
    for (IoWatch& watch : rank->watches) {
      if (reading) {
        watch.enable();
      } else {
        watch.disable();
      }
    }
  }
}

}  // namespace grove
