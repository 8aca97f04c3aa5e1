// Barriers and departures: a job's round of PMI-1 barrier_in / PMI-2
// kvs-fence on this daemon, which becomes one contribution to the DVM's
// fence once every local rank of the job is in it or gone.
#include "pmi/pmi_server.h"

namespace grove::pmi {

void Server::enter_barrier(Conn& conn, Job& job, Outbox& out) {
  const bool v2 = conn.decoder.wire() == Wire::v2;
  if (job.in_barrier.count(conn.rank) != 0) {
    fail(conn, v2 ? "kvs-fence-response" : "barrier_out", "this rank is in a barrier already", out);
    return;
  }
  job.in_barrier[conn.rank] = {conn.id, conn.thrid};
  maybe_contribute(job, out);
}

void Server::maybe_contribute(Job& job, Outbox& out) {
  if (job.fencing || job.in_barrier.empty()) return;
  std::size_t accounted = job.in_barrier.size();
  for (std::uint32_t rank : job.departed)
    accounted += job.in_barrier.count(rank) == 0 ? 1 : 0;
  if (accounted < job.facts.local_ranks) return;
  job.fencing = true;
  out.push_back(effect::Contribute{job.facts.job, encode_puts(job.unfenced)});
  job.unfenced.clear();
}

Outbox Server::fence_done(std::uint32_t job_id, bool released, std::string_view others,
                          const std::string& why) {
  Outbox out;
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return out;
  Job& state = job->second;
  state.fencing = false;
  std::string failure = why;
  if (released) {
    auto puts = decode_puts(others);
    if (puts) {
      for (auto& [key, value] : *puts)
        state.kvs[std::move(key)] = std::move(value);
    } else {
      released = false;
      failure = puts.error().message;
    }
  }
  if (!released) {
    out.push_back(effect::Notice{"PMI: the barrier of job " + std::to_string(job_id) +
                                 " failed: " + failure});
  }
  auto waiting = std::move(state.in_barrier);
  state.in_barrier.clear();
  for (auto& [rank, waiter] : waiting) {
    auto conn = conns_.find(waiter.first);
    if (conn == conns_.end()) continue;
    const bool v2 = conn->second.decoder.wire() == Wire::v2;
    conn->second.thrid = v2 ? waiter.second : std::string();
    const std::string name = v2 ? "kvs-fence-response" : "barrier_out";
    if (released) {
      reply(conn->second, name, {}, out);
    } else {
      fail(conn->second, name, failure, out);
    }
  }
  return out;
}

void Server::depart(std::uint32_t job_id, std::uint32_t rank, Outbox& out) {
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return;
  Job& state = job->second;
  if (!state.departed.insert(rank).second) return;
  // A rank that ended inside a barrier is answered by nobody; the others'
  // round goes on without it (the DVM's fence says whether it can).
  if (!state.fencing) state.in_barrier.erase(rank);
  maybe_contribute(state, out);
}

Outbox Server::closed(ConnId id) {
  Outbox out;
  auto found = conns_.find(id);
  if (found == conns_.end()) return out;
  const std::uint32_t job = found->second.job, rank = found->second.rank;
  conns_.erase(found);
  auto state = jobs_.find(job);
  if (state != jobs_.end()) {
    std::erase_if(state->second.node_waits,
                  [id](const auto& wait) { return wait.second.first == id; });
  }
  depart(job, rank, out);
  return out;
}

Outbox Server::rank_exited(std::uint32_t job, std::uint32_t rank) {
  Outbox out;
  depart(job, rank, out);
  return out;
}

void Server::job_ended(std::uint32_t job) {
  jobs_.erase(job);
}

std::optional<std::string> Server::owed_finalize(std::uint32_t job_id, std::uint32_t rank) const {
  auto job = jobs_.find(job_id);
  if (job == jobs_.end() || job->second.initialized.count(rank) == 0 ||
      job->second.finalized.count(rank) != 0)
    return std::nullopt;
  return job->second.speaks_v2.count(rank) != 0 ? "PMI2_Finalize" : "PMI_Finalize";
}

}  // namespace grove::pmi
