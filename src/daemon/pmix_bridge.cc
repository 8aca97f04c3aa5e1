#include "daemon/pmix_bridge.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace grove {

PmixBridge::PmixBridge(DaemonRuntime& runtime, const Log& log, DirectoriesFn directories)
    : runtime_(runtime),
      log_(log),
      directories_(std::move(directories)),
      collectives_(runtime.self()),
      fences_(runtime.self(), runtime.engine().config().max_payload) {}

PmixBridge::~PmixBridge() {
  // The server first: requests still pending are then dropped as libpmix
  // finalizes, not answered one by one as the maps below go.
  server_.reset();
}

Result<std::unique_ptr<PmixBridge>> PmixBridge::create(
    event_base* base, DaemonRuntime& runtime, const Log& log, const std::string& tmpdir,
    DirectoriesFn directories, bool verify_clients, std::int64_t handshake_timeout_ms,
    std::int64_t call_timeout_ms, hwloc_topology* topology) {
  std::unique_ptr<PmixBridge> bridge(new PmixBridge(runtime, log, std::move(directories)));
  bridge->base_ = base;
  bridge->topology_ = topology;
  PmixBridge* self = bridge.get();
  PmixServerOptions options;
  options.tmpdir = tmpdir;
  options.daemon_vpid = runtime.self();
  options.verify_clients = verify_clients;
  options.handshake_timeout_ms = handshake_timeout_ms;
  options.call_timeout_ms = call_timeout_ms;
  options.topology = topology;
  auto server = PmixServer::create(
      base, options, [self](PmixRequest request) { self->on_request(std::move(request)); });
  if (!server) return Error{"PMIx server: " + server.error().message};
  bridge->server_ = std::move(*server);
  // Every PMIx fence, connect and group is named in a job's scope.
  bridge->fence_claim_ =
      runtime.own_fences("pmix:", [self](const FenceDone& done) { self->on_fence_done(done); });
  return bridge;
}

bool PmixBridge::targets_here(const PmixEvent& event) const {
  // libpmix 4.2's server records a group for every PMIX_GROUP_CONSTRUCT_COMPLETE
  // it is handed, members or not, and only a destruct among the members'
  // daemons removes it: on the others the record outlived its job, and a later
  // group of the same name expanded to its old members too, so that group's
  // fence waited there forever.
  if (event.range != PmixEvent::kRangeCustom || event.targets.empty()) return true;
  for (const EventProc& target : event.targets) {
    const JobSpec* job = job_by_nspace(target.nspace);
    if (job == nullptr) return true;  // not a job's name: let libpmix judge
    for (const RankPlacement& placement : job->ranks) {
      if (placement.daemon == runtime_.self() &&
          (target.rank == EventProc::kWholeJob || target.rank == placement.rank))
        return true;
    }
  }
  return false;
}

const JobSpec* PmixBridge::job_by_nspace(const std::string& nspace) const {
  auto found = by_nspace_.find(nspace);
  if (found != by_nspace_.end()) return &jobs_.at(found->second);
  auto launched = launched_.find(nspace);  // a job with no ranks here
  return launched == launched_.end() ? nullptr : &launched->second;
}

void PmixBridge::note_job(const JobSpec& spec) {
  launched_[spec.nspace] = spec;
}

void PmixBridge::on_fence(PmixFenceCall call) {
  if (!call.others.empty()) {
    // Across jobs: named from the participants in nspace order, so every
    // daemon names it alike whatever order its clients listed them in.
    call.others[call.nspace] = std::move(call.ranks);
    call.nspace = call.others.begin()->first;
    call.ranks = call.others.begin()->second;
  }
  PmixFenceBook::Call fence;
  std::vector<Vpid> hosts;
  // One participating job's daemons; false if it is not running.
  auto add_participants = [&](const std::string& nspace, const std::vector<std::uint32_t>& ranks) {
    const JobSpec* participant = job_by_nspace(nspace);
    if (participant == nullptr) {
      log_.error("fence names the job %s, which is not running", nspace.c_str());
      return false;
    }
    if (ranks.empty()) {
      for (const RankPlacement& placement : participant->ranks)
        hosts.push_back(placement.daemon);
    } else {
      for (std::uint32_t rank : ranks) {
        if (rank < participant->ranks.size()) hosts.push_back(participant->ranks[rank].daemon);
      }
    }
    fence.jobs.push_back({participant->job, nspace, ranks});
    // Across jobs, the newest placement: a daemon renewed after it hosts
    // no participant (one renewed before it may host the newer job's).
    fence.placed_epoch = fence.jobs.size() == 1
                             ? participant->placed_epoch
                             : std::max(fence.placed_epoch, participant->placed_epoch);
    return true;
  };
  // The common fence, one job's, copies nothing.
  bool known = call.others.empty() ? add_participants(call.nspace, call.ranks) : true;
  for (const auto& [nspace, ranks] : call.others)
    known = known && add_participants(nspace, ranks);
  if (!known) {
    call.answer(kPmixErrorNotFound, {});
    return;
  }
  fence.hosts = VpidSet::from_list(std::move(hosts));
  fence.timeout_seconds = call.timeout_seconds;
  fence.data = std::move(call.data);
  begin_fence(std::move(fence), FenceWaiter{std::move(call.answer), Timer(), nullptr});
}

void PmixBridge::begin_fence(PmixFenceBook::Call fence, FenceWaiter waiter) {
  // Joins the signature's next round: the engine's generation + 1.
  const std::string signature = PmixFenceBook::signature_of(fence.jobs);
  const std::uint64_t round = runtime_.engine().fence_generation(signature) + 1;
  log_.verbose("daemon", 2, "PMIx fence %s: %zu bytes in", signature.c_str(), fence.data.size());
  PmixFenceBook::Begun begun = fences_.begin(std::move(fence), round);
  fence_waiters_.emplace(begun.id, std::move(waiter));
  drive(std::move(begun.outbox));
}

void PmixBridge::spawn_job(SpawnMessage message, SpawnDone done) {
  forward(pmix_tags::spawn, std::move(message), std::move(done), awaiting_.other_spawns);
}

void PmixBridge::fence_job(const std::string& nspace, Bytes data, JobFenceDone done) {
  const JobSpec* job = job_by_nspace(nspace);
  if (job == nullptr) {
    done(pmix_fence::Outcome::job_ended, {});
    return;
  }
  PmixFenceBook::Call fence;
  std::vector<Vpid> hosts;
  for (const RankPlacement& placement : job->ranks)
    hosts.push_back(placement.daemon);
  fence.jobs.push_back({job->job, nspace, {}});
  fence.placed_epoch = job->placed_epoch;
  fence.hosts = VpidSet::from_list(std::move(hosts));
  fence.data = std::move(data);
  begin_fence(std::move(fence), FenceWaiter{PmixAnswer<Bytes>(), Timer(), std::move(done)});
}

namespace {

int pmix_status_of(pmix_fence::Outcome outcome) {
  using pmix_fence::Outcome;
  switch (outcome) {
    case Outcome::released:
      return kPmixSuccess;
    case Outcome::timed_out:
      return kPmixErrorTimeout;
    case Outcome::rank_gone:
    case Outcome::job_ended:
      return kPmixProcTerminated;
    case Outcome::unreachable:
      return kPmixErrorUnreachable;
    case Outcome::too_large:
      return kPmixErrorOutOfResource;
    case Outcome::undecodable:
      return kPmixError;
  }
  return kPmixError;
}

}  // namespace

void PmixBridge::drive(pmix_fence::Outbox outbox) {
  for (pmix_fence::Effect& effect : outbox) {
    std::visit(
        [&](auto& step) {
          using Step = std::decay_t<decltype(step)>;
          if constexpr (std::is_same_v<Step, pmix_fence::Answer>) {
            auto waiter = fence_waiters_.find(step.id);
            if (waiter == fence_waiters_.end()) return;
            if (JobFenceDone done = std::move(waiter->second.other_front_end)) {
              fence_waiters_.erase(waiter);
              done(step.outcome, std::move(step.aggregate));
              return;
            }
            PmixAnswer<Bytes> answer = std::move(waiter->second.answer);
            fence_waiters_.erase(waiter);  // and its timer
            if (step.outcome == pmix_fence::Outcome::released) {
              log_.verbose("daemon", 2, "PMIx fence %llu: %zu bytes out",
                           static_cast<unsigned long long>(step.id), step.aggregate.size());
            }
            answer(pmix_status_of(step.outcome), std::move(step.aggregate));
          } else if constexpr (std::is_same_v<Step, pmix_fence::Contribute>) {
            runtime_.contribute(std::move(step.request));
          } else if constexpr (std::is_same_v<Step, pmix_fence::ArmTimer>) {
            auto waiter = fence_waiters_.find(step.id);
            if (waiter == fence_waiters_.end()) return;
            const std::uint64_t id = step.id;
            waiter->second.timeout = Timer(base_, [this, id] { drive(fences_.timed_out(id)); });
            waiter->second.timeout.arm(step.delay_ms);
          } else if constexpr (std::is_same_v<Step, pmix_fence::Notice>) {
            log_.error("%s", step.text.c_str());
            if (step.problem) runtime_.report_problem(step.text);
          } else {
            static_assert(sizeof(Step) == 0, "a PMIx fence effect without a driver");
          }
        },
        effect);
  }
}

bool PmixBridge::on_broadcast(std::uint16_t tag, std::span<const std::byte> payload) {
  if (tag == pmix_tags::event) {
    auto event = wire_decode<PmixEvent>(payload);
    if (!event) {
      log_.error("%s", event.error().message.c_str());
    } else if (event->origin != runtime_.self() && targets_here(*event)) {
      // The origin's clients had it already; a daemon none of whose ranks it
      // targets must not hand it to libpmix either, which acts on some
      // events beyond delivering them (below).
      if (Status notified = server_->notify(*event); !notified)
        log_.error("PMIx event %d: %s", event->code, notified.error().message.c_str());
    }
    return true;
  }
  if (tag != job_tags::ranks_gone) return false;
  auto gone = wire_decode<RanksGone>(payload);
  if (!gone) {
    log_.error("%s", gone.error().message.c_str());
    return true;
  }
  // A job with no ranks here may still take part in a connect or group of
  // another's that has: its departed ranks count for those too.
  const bool known = jobs_.count(gone->job) != 0 ||
                     std::any_of(launched_.begin(), launched_.end(),
                                 [&](const auto& entry) { return entry.second.job == gone->job; });
  if (!known) return true;
  std::vector<PmixFenceBook::GoneRank> ranks;
  for (const GoneRank& rank : gone->ranks) {
    PmixFenceBook::GoneRank& left = ranks.emplace_back();
    left.rank = rank.rank;
    for (const FenceRound& round : rank.released)
      left.released[round.signature] = round.round;
  }
  drive(fences_.ranks_gone(gone->job, ranks));
  drive(collectives_.ranks_gone(fences_));
  return true;
}

void PmixBridge::on_fence_done(const FenceDone& done) {
  drive(collectives_.collective_done(done));
  drive(fences_.fence_done(done));
}

void PmixBridge::on_direct_modex(PmixDirectModexCall call) {
  const JobSpec* job = job_by_nspace(call.nspace);
  if (job == nullptr || call.rank >= job->ranks.size()) {
    call.answer(kPmixErrorNotFound, {});
    return;
  }
  Vpid host = job->ranks[call.rank].daemon;
  if (host == runtime_.self()) {
    // The server answers fetch_local_modex once (or drops it as it goes).
    auto answer = std::make_shared<PmixAnswer<Bytes>>(std::move(call.answer));
    server_->fetch_local_modex(
        call.nspace, call.rank,
        [answer](int status, std::vector<std::byte> blob) { (*answer)(status, std::move(blob)); });
    return;
  }
  const std::uint64_t id = awaiting_.next_handle++;
  awaiting_.modex.emplace(id, std::move(call.answer));
  runtime_.send_control(host, pmix_tags::modex_request,
                        encode(ModexRequest{id, call.nspace, call.rank}));
}

bool PmixBridge::on_control(Vpid from, std::uint16_t tag, const Bytes& payload) {
  if (tag == pmix_tags::modex_request) {
    auto request = wire_decode<ModexRequest>(payload);
    if (!request) return true;
    const std::uint64_t requester_handle = request->handle;
    if (job_by_nspace(request->nspace) == nullptr) {
      // Ended here (or never heard of): libpmix would park the request for
      // a commit that cannot come.
      runtime_.send_control(from, pmix_tags::modex_reply,
                            encode(ModexReply{requester_handle, kPmixErrorNotFound, {}}));
      return true;
    }
    server_->fetch_local_modex(
        request->nspace, request->rank,
        [this, from, requester_handle](int status, std::vector<std::byte> blob) {
          runtime_.send_control(from, pmix_tags::modex_reply,
                                encode(ModexReply{requester_handle, status, std::move(blob)}));
        });
    return true;
  }
  if (tag == pmix_tags::publish_reply) {
    if (from != kControllerVpid) return true;
    if (auto reply = wire_decode<PublishReply>(payload)) {
      if (auto answer = take_forwarded(awaiting_.publish, reply->handle))
        (*answer)(pmix_publish_status(reply->status));
    }
    return true;
  }
  if (tag == pmix_tags::lookup_reply) {
    if (from != kControllerVpid) return true;
    if (auto reply = wire_decode<LookupReply>(payload)) {
      if (auto answer = take_forwarded(awaiting_.lookup, reply->handle)) {
        (*answer)(reply->timed_out ? kPmixErrorTimeout : pmix_publish_status(reply->status),
                  std::move(reply->found));
      }
    }
    return true;
  }
  if (tag == pmix_tags::spawn_reply) {
    if (from != kControllerVpid) return true;
    if (auto reply = wire_decode<SpawnReply>(payload)) {
      if (auto answer = take_forwarded(awaiting_.spawn, reply->handle))
        (*answer)(reply->ok ? kPmixSuccess : kPmixErrorJobFailedToLaunch, reply->nspace);
      if (auto done = take_forwarded(awaiting_.other_spawns, reply->handle))
        (*done)(reply->ok, reply->ok ? reply->nspace : reply->error);
    }
    return true;
  }
  if (tag == pmix_tags::modex_reply) {
    auto reply = wire_decode<ModexReply>(payload);
    if (!reply) return true;
    auto request = awaiting_.modex.find(reply->handle);
    if (request == awaiting_.modex.end()) return true;  // answered already
    PmixAnswer<Bytes> answer = std::move(request->second);
    awaiting_.modex.erase(request);
    answer(reply->status, std::move(reply->blob));
    return true;
  }
  return false;
}

void PmixBridge::on_abort(const std::string& nspace, std::uint32_t rank, int status,
                          const std::string& message) {
  auto found = by_nspace_.find(nspace);
  if (found == by_nspace_.end()) return;
  runtime_.send_control(kControllerVpid, job_tags::aborted,
                        encode(JobAbort{found->second, rank, status, message}));
}

void PmixBridge::classify_exit(RankExit& exit) {
  // The connect (and any finalize) were posted before the rank could exit,
  // but the loop may not have handled them yet.
  server_->handle_pending_upcalls();
  const bool owed = unfinalized_.erase({exit.job, exit.rank}) != 0;
  if (owed && exit.kind == ExitKind::exited) exit.kind = ExitKind::left_without_finalize;
  // What this rank took part in, for the daemons whose fences include it.
  auto job = jobs_.find(exit.job);
  if (job == jobs_.end()) return;
  for (auto& [signature, round] :
       runtime_.engine().released_fence_rounds(pmix_fence_scope(job->second.nspace)))
    exit.released.push_back(FenceRound{std::move(signature), round});
}

std::set<pid_t> PmixBridge::handshakes_pending(const std::vector<pid_t>& ranks) {
  return server_->handshakes_pending(ranks).value_or(std::set<pid_t>{});
}

void PmixBridge::forget_job(std::uint32_t job, const std::string& nspace) {
  std::erase_if(unfinalized_, [&](const auto& entry) { return entry.first == job; });
  // libpmix 4.2 keeps every request it handed up until the host answers it,
  // whatever becomes of the job (a tracker and a reference on the client,
  // each): every fence and collective that names the job is answered now.
  // One that belongs to a running job (ranks that connected to this one)
  // can no longer complete either: its ranks hear PMIX_PROC_TERMINATED
  // instead of waiting for ever.
  drive(fences_.job_ended(job, nspace));
  drive(collectives_.job_ended(nspace));
  // Requests of the job still at the controller: their answers go now (a
  // late reply then finds nothing).
  forget_forwarded(awaiting_.publish, nspace, kPmixProcTerminated);
  forget_forwarded(awaiting_.lookup, nspace, kPmixProcTerminated);
  forget_forwarded(awaiting_.spawn, nspace, kPmixErrorJobFailedToLaunch);
  for (auto entry = awaiting_.other_spawns.begin(); entry != awaiting_.other_spawns.end();) {
    if (entry->second.nspace != nspace) {
      ++entry;
      continue;
    }
    SpawnDone done = std::move(entry->second.answer);
    entry = awaiting_.other_spawns.erase(entry);
    done(false, "the spawning job has ended");
  }
  runtime_.end_fence_scope(pmix_fence_scope(nspace));
  launched_.erase(nspace);
  if (registering_.count(job) != 0) ended_while_registering_.insert(job);
  auto found = jobs_.find(job);
  if (found == jobs_.end()) return;
  server_->deregister_job(found->second.nspace, [this, nspace](Status done) {
    if (!done) log_.error("%s", done.error().message.c_str());
  });
  by_nspace_.erase(found->second.nspace);
  jobs_.erase(found);
}

}  // namespace grove
