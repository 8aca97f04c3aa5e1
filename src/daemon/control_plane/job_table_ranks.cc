// The job table's inputs from the daemons: ranks started, exited, aborted,
// lost with their daemon; their output and its pace; grove run's input.
#include "daemon/control_plane/job_table.h"
#include "daemon/control_plane/job_table_job.h"

namespace grove {

using namespace job_table;

Outbox JobTable::on_started(const RanksStarted& started) {
  Job* job = find(started.job);
  if (job == nullptr) return {};
  for (std::uint32_t rank : started.ranks) {
    if (rank < job->spec.ranks.size()) job->started.insert(rank);
  }
  // PMIx_Spawn returns once the job runs everywhere, as under PRRTE: a
  // spawner that connects to it at once finds it registered with its PMIx
  // server (answered earlier, libpmix 4.2 on one daemon sometimes released
  // half of a PMIx_Connect and never the rest).
  if (!job->spawn_answer || job->started.size() != job->spec.ranks.size()) return {};
  Outbox out{AnswerSpawn{*job->spawn_answer, job->spec.nspace, ok_status()}};
  job->spawn_answer.reset();
  return out;
}

Outbox JobTable::on_exit(const RankExit& exit, std::int64_t now_s) {
  Job* found = find(exit.job);
  if (found == nullptr) return {};
  Job& job = *found;
  if (!job.finished.insert(exit.rank).second) return {};
  Outbox out{RankExited{job.spec.nspace, exit.rank}};
  const std::string rank = "rank " + std::to_string(exit.rank);
  switch (exit.kind) {
    case ExitKind::exited:
      if (exit.status != 0) {
        const std::string why = rank + " exited with status " + std::to_string(exit.status);
        if (!job.end.failed)
          report_failure(job, exit.rank, RankFailure::exited, exit.status, why, out);
        fail(job, exit.status, why, out);
      } else {
        // Other ranks may run on: the daemons hear of it (a fence
        // including it must end with an error, not wait).
        job.gone_unsent.push_back(GoneRank{exit.rank, exit.released});
        if (!job.timers.gone_gathering) {
          job.timers.gone_gathering = true;
          out.push_back(ArmTimer{job.id, TimerKind::gone_gathering, kGoneGatheringMs});
        }
      }
      break;
    case ExitKind::signaled: {
      const std::string why =
          rank + " was killed by signal " + std::to_string(exit.status) + " (" + exit.message + ")";
      // A rank killed because its job was already ending is no news (nor
      // is any other way of ending then).
      if (!job.end.failed)
        report_failure(job, exit.rank, RankFailure::signaled, exit.status, why, out);
      fail(job, 128 + exit.status, why, out);
      break;
    }
    case ExitKind::failed_start: {
      const std::string why = rank + " never started: " + exit.message;
      report_failure(job, exit.rank, RankFailure::never_started, 127, why, out);
      fail(job, 127, why, out);
      break;
    }
    case ExitKind::left_without_finalize: {
      // As PRRTE does: a rank that joined PMIx and left without finalizing
      // may hold up every fence of its job, so the job ends now.
      const std::string why = rank + " exited with status " + std::to_string(exit.status) +
                              " without calling " +
                              (exit.message.empty() ? std::string("PMIx_Finalize") : exit.message);
      if (!job.end.failed) {
        report_failure(job, exit.rank, RankFailure::left_without_finalize, exit.status, why, out);
      }
      fail(job, exit.status != 0 ? exit.status : 1, why, out);
      break;
    }
  }
  maybe_finish(exit.job, now_s, out);
  return out;
}

Outbox JobTable::on_abort(const JobAbort& abort) {
  Job* job = find(abort.job);
  if (job == nullptr) return {};
  const std::string why = "rank " + std::to_string(abort.rank) + " called " + abort.call +
                          " with status " + std::to_string(abort.status) +
                          (abort.message.empty() ? "" : ": " + abort.message);
  Outbox out;
  report_failure(*job, abort.rank, RankFailure::aborted, abort.status, why, out);
  fail(*job, abort.status == 0 ? 1 : abort.status, why, out);
  return out;
}

Outbox JobTable::on_daemon_lost(Vpid vpid, const std::string& description, std::int64_t now_s) {
  Outbox out;
  std::vector<std::uint32_t> touched;
  for (auto& [id, job] : jobs_) {
    bool hosted = false;
    for (const RankPlacement& rank : job->spec.ranks) {
      if (rank.daemon != vpid) continue;
      hosted = true;
      job->finished.insert(rank.rank);  // its ranks died with it
    }
    settle_stdin(*job, vpid, out);
    if (!hosted) continue;
    fail(*job, 1, description + ", which hosted ranks of this job, was lost", out);
    touched.push_back(id);
  }
  for (std::uint32_t id : touched)
    maybe_finish(id, now_s, out);
  return out;
}

Outbox JobTable::on_output(const JobOutput& output, Vpid from) {
  const OutputAck done{output.job, output.text.size()};
  Job* job = find(output.job);
  if (job == nullptr) return {AckOutput{from, done}};  // nobody to hold it for
  job->withheld[from] += done.bytes;
  const std::optional<Requester> cli = cli_of(*job);
  Outbox out;
  if (!cli) {
    flush_acks(*job, out);
    return out;
  }
  nlohmann::json event{{"event", "output"},
                       {"rank", output.rank},
                       {"stream", output.stream == OutputStream::out ? "out" : "err"},
                       {"text", output.text},
                       {"time_us", output.read_at_us}};
  // A spawned job's output is marked with its job: the CLI knows of
  // spawned jobs by their output alone.
  if (!job->cli) event["job"] = job->id;
  out.push_back(CliEvent{*cli, std::move(event), false});
  out.push_back(CheckCliQueue{job->id, *cli});
  return out;
}

Outbox JobTable::cli_queue(std::uint32_t id, std::optional<std::size_t> queued) {
  Job* job = find(id);
  if (job == nullptr) return {};
  Outbox out;
  // The CLI keeps up (or is gone, and the output with it): the daemons may
  // read on. Else the acknowledgements wait until the CLI has read, and a
  // daemon stops reading once its window is full: grove run sets the pace.
  if (!queued || *queued <= config_.output_window) {
    flush_acks(*job, out);
  } else if (!job->timers.ack_poll) {
    job->timers.ack_poll = true;
    out.push_back(ArmTimer{id, TimerKind::ack_poll, kAckPollMs});
  }
  return out;
}

void JobTable::flush_acks(Job& job, Outbox& out) {
  if (job.timers.ack_poll) {
    job.timers.ack_poll = false;
    out.push_back(CancelTimer{job.id, TimerKind::ack_poll});
  }
  for (const auto& [vpid, bytes] : job.withheld)
    out.push_back(AckOutput{vpid, OutputAck{job.id, bytes}});
  job.withheld.clear();
}

Outbox JobTable::forward_stdin(std::uint32_t id, std::string data, bool eof, Requester requester) {
  Job* job = find(id);
  if (job == nullptr || job->end.failed) return {AnswerStdin{requester, false}};
  std::set<Vpid> daemons;
  for (const RankPlacement& rank : job->spec.ranks) {
    if (job->spec.reads_stdin(rank.rank) && !job->finished.contains(rank.rank))
      daemons.insert(rank.daemon);
  }
  if (daemons.empty()) return {AnswerStdin{requester, false}};
  const std::uint64_t seq = ++job->stdin_seq;
  job->stdin_pending[seq] = Job::PendingStdin{daemons, false, requester};
  Outbox out;
  for (Vpid daemon : daemons)
    out.push_back(SendStdin{daemon, JobStdin{id, seq, data, eof}});
  return out;
}

Outbox JobTable::on_stdin_ack(Vpid from, const StdinAck& ack) {
  Job* job = find(ack.job);
  if (job == nullptr) return {};
  auto chunk = job->stdin_pending.find(ack.seq);
  if (chunk == job->stdin_pending.end() || chunk->second.waiting.erase(from) == 0) return {};
  chunk->second.open = chunk->second.open || ack.open;
  if (!chunk->second.waiting.empty()) return {};
  Outbox out{AnswerStdin{chunk->second.requester, chunk->second.open}};
  job->stdin_pending.erase(chunk);
  return out;
}

void JobTable::settle_stdin(Job& job, std::optional<Vpid> lost, Outbox& out) {
  for (auto chunk = job.stdin_pending.begin(); chunk != job.stdin_pending.end();) {
    if (lost) chunk->second.waiting.erase(*lost);
    if (lost && !chunk->second.waiting.empty()) {
      ++chunk;
      continue;
    }
    out.push_back(AnswerStdin{chunk->second.requester, lost && chunk->second.open});
    chunk = job.stdin_pending.erase(chunk);
  }
}

}  // namespace grove
