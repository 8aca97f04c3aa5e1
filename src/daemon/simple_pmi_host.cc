#include "daemon/simple_pmi_host.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "jobs/host/rank_spawn.h"
#include "pmi/process_mapping.h"

namespace grove {
namespace {

std::string outcome_text(pmix_fence::Outcome outcome) {
  using pmix_fence::Outcome;
  switch (outcome) {
    case Outcome::released:
      return "released";
    case Outcome::timed_out:
      return "the barrier timed out";
    case Outcome::rank_gone:
      return "a rank of the job left before entering the barrier";
    case Outcome::job_ended:
      return "the job has ended";
    case Outcome::unreachable:
      return "a daemon hosting ranks of the job was lost";
    case Outcome::too_large:
      return "the ranks' puts do not fit in one frame";
    case Outcome::undecodable:
      return "the barrier's data did not decode";
  }
  return "the barrier failed";
}

std::string as_text(const Bytes& bytes) {
  if (bytes.empty()) return {};
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace

SimplePmiHost::SimplePmiHost(event_base* base, DaemonRuntime& runtime, const Log& log,
                             PmixBridge& bridge)
    : base_(base), runtime_(runtime), log_(log), bridge_(bridge) {
  sweeper_ = Timer(base_, [this] { sweep(); });
}

SimplePmiHost::~SimplePmiHost() = default;

pmi::JobFacts SimplePmiHost::facts_of(const JobSpec& spec, Vpid self) {
  pmi::JobFacts facts;
  facts.job = spec.job;
  facts.kvsname = spec.nspace;
  facts.size = static_cast<std::uint32_t>(spec.ranks.size());
  facts.universe_size = facts.size;
  facts.spawner = spec.parent_nspace;
  facts.accepts = spec.mpi == "pmi1"   ? pmi::Accepts::v1
                  : spec.mpi == "pmi2" ? pmi::Accepts::v2
                                       : pmi::Accepts::both;
  // MPICH reads the mapping to find which ranks share memory, and elects
  // one rank per node to share node attributes (PMI-2's, kept per daemon):
  // a node is a daemon, as it is to PMIx. Daemons sharing a host (grove
  // start --local N) are then nodes of their own, whose ranks talk over
  // MPICH's network module, not its shared memory.
  std::vector<std::string> nodes;
  nodes.reserve(spec.ranks.size());
  for (const RankPlacement& placement : spec.ranks) {
    nodes.push_back(std::to_string(placement.daemon));
    if (placement.daemon == self) ++facts.local_ranks;
  }
  for (const std::string& pair : spec.pmi_preput) {
    const std::size_t equals = pair.find('=');
    if (equals != std::string::npos)
      facts.preput.emplace_back(pair.substr(0, equals), pair.substr(equals + 1));
  }
  std::string mapping = pmi::format_mapping(pmi::mapping_blocks(pmi::number_nodes(nodes)));
  // Too long for one value: "" says it cannot be expressed, and MPICH asks
  // each rank's host name instead.
  if (mapping.size() <= pmi::Limits{}.vallen_max) facts.process_mapping = std::move(mapping);
  return facts;
}

Status SimplePmiHost::offer(const JobSpec& spec, std::uint32_t rank,
                            RankSetup::RankExtras& extras) {
  if (spec.mpi == "pmix") return ok_status();
  if (!server_.job_facts(spec.job)) server_.add_job(facts_of(spec, runtime_.self()));
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    return Error{std::string("cannot make its PMI connection: ") + std::strerror(errno)};
  Fd ours(ends[0]);
  extras.pmi = Fd(ends[1]);
  set_nonblocking(ours.get());
  auto conn = std::make_unique<Conn>();
  conn->id = next_id_++;
  conn->job = spec.job;
  conn->rank = rank;
  const pmi::ConnId id = conn->id;
  conn->readable =
      IoWatch(base_, ours.get(), IoReady::read, IoRepeat::persist, [this, id] { on_readable(id); });
  conn->writable = IoWatch(base_, ours.get(), IoReady::write, IoRepeat::persist,
                           [this, id] { on_writable(id); });
  conn->fd = std::move(ours);
  conn->readable.enable();
  server_.open(id, spec.job, rank, spec.app_of(rank));
  by_rank_[{spec.job, rank}] = id;
  conns_[id] = std::move(conn);
  extras.env.push_back("PMI_FD=" + std::to_string(kRankPmiFd));
  extras.env.push_back("PMI_RANK=" + std::to_string(rank));
  extras.env.push_back("PMI_SIZE=" + std::to_string(spec.ranks.size()));
  extras.env.push_back("PMI_JOBID=" + spec.nspace);
  extras.env.push_back(std::string("PMI_SPAWNED=") + (spec.parent_nspace.empty() ? "0" : "1"));
  return ok_status();
}

SimplePmiHost::Conn* SimplePmiHost::find(pmi::ConnId id) {
  auto found = conns_.find(id);
  return found == conns_.end() || found->second->dead ? nullptr : found->second.get();
}

void SimplePmiHost::on_readable(pmi::ConnId id) {
  if (Conn* conn = find(id)) pump(*conn);
}

void SimplePmiHost::pump(Conn& conn, bool to_the_end) {
  const pmi::ConnId id = conn.id;
  char buffer[16384];
  std::size_t taken = 0;
  for (;;) {
    Conn* live = find(id);  // effects of the last pass may have ended it
    if (live == nullptr || live->closing) return;
    // A rank that sends without reading its answers is not read further
    // until it has taken them; one pass reads a bounded amount, so the
    // loop's other work goes on.
    if (live->backlog.size() > kMaxBacklog) {
      live->readable.disable();
      return;
    }
    if (!to_the_end && taken >= kMaxReadPerPass) return;
    const ssize_t got = recv(live->fd.get(), buffer, sizeof buffer, MSG_DONTWAIT);
    if (got > 0) {
      taken += static_cast<std::size_t>(got);
      drive(server_.receive(id, std::string_view(buffer, static_cast<std::size_t>(got))));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    end(*live);  // the rank closed its end, or went
    drive(server_.closed(id));
    return;
  }
}

void SimplePmiHost::send(Conn& conn, const std::string& bytes) {
  if (conn.dead) return;
  std::size_t sent = 0;
  if (conn.backlog.empty()) {
    while (sent < bytes.size()) {
      const ssize_t wrote =
          ::send(conn.fd.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (wrote > 0) {
        sent += static_cast<std::size_t>(wrote);
      } else if (wrote < 0 && errno == EINTR) {
        continue;
      } else if (wrote < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      } else {  // the rank is gone; its end is read as closed
        return;
      }
    }
  }
  if (sent == bytes.size()) return;
  conn.backlog.append(bytes, sent);
  conn.writable.enable();
}

void SimplePmiHost::on_writable(pmi::ConnId id) {
  Conn* conn = find(id);
  if (conn == nullptr) return;
  std::string pending = std::move(conn->backlog);
  conn->backlog.clear();
  conn->writable.disable();
  send(*conn, pending);
  if (conn->backlog.empty() && conn->closing) {
    end(*conn);
    drive(server_.closed(id));
    return;
  }
  if (!conn->closing && conn->backlog.size() <= kMaxBacklog) conn->readable.enable();
}

void SimplePmiHost::end(Conn& conn) {
  conn.dead = true;
  conn.readable.disable();
  conn.writable.disable();
  by_rank_.erase({conn.job, conn.rank});
  sweeper_.arm(0);
}

void SimplePmiHost::sweep() {
  std::erase_if(conns_, [](const auto& entry) { return entry.second->dead; });
}

void SimplePmiHost::drive(pmi::Outbox outbox) {
  for (pmi::Effect& effect : outbox) {
    std::visit(
        [&](auto& step) {
          using Step = std::decay_t<decltype(step)>;
          if constexpr (std::is_same_v<Step, pmi::effect::Send>) {
            if (Conn* conn = find(step.conn)) send(*conn, step.bytes);
          } else if constexpr (std::is_same_v<Step, pmi::effect::Close>) {
            Conn* conn = find(step.conn);
            if (conn == nullptr) return;
            conn->closing = true;
            conn->readable.disable();
            if (conn->backlog.empty()) {
              end(*conn);
              drive(server_.closed(step.conn));
            }
          } else if constexpr (std::is_same_v<Step, pmi::effect::Contribute>) {
            const pmi::JobFacts* facts = server_.job_facts(step.job);
            if (facts == nullptr) return;
            Bytes data(step.data.size());
            if (!data.empty()) std::memcpy(data.data(), step.data.data(), data.size());
            const std::uint32_t job = step.job;
            bridge_.fence_job(
                facts->kvsname, std::move(data),
                [this, job](pmix_fence::Outcome outcome, Bytes others) {
                  const bool released = outcome == pmix_fence::Outcome::released;
                  drive(server_.fence_done(job, released, as_text(others), outcome_text(outcome)));
                });
          } else if constexpr (std::is_same_v<Step, pmi::effect::Abort>) {
            runtime_.send_control(
                kControllerVpid, job_tags::aborted,
                encode(JobAbort{step.job, step.rank, step.code, step.message, step.call}));
          } else if constexpr (std::is_same_v<Step, pmi::effect::Notice>) {
            log_.error_limited("pmi", "%s", step.text.c_str());
          } else if constexpr (std::is_same_v<Step, pmi::effect::Spawn>) {
            spawn(step);
          } else {
            static_assert(sizeof(Step) == 0, "a PMI effect without a driver");
          }
        },
        effect);
  }
}

void SimplePmiHost::spawn(const pmi::effect::Spawn& request) {
  const pmi::JobFacts* facts = server_.job_facts(request.job);
  if (facts == nullptr) {
    drive(server_.spawn_done(request.conn, false, "the job has ended"));
    return;
  }
  SpawnMessage message;
  message.nspace = facts->kvsname;
  message.rank = request.rank;
  for (const pmi::SpawnProgram& program : request.programs)
    message.apps.push_back(SpawnApp{program.argv, {}, "", program.np});
  for (const auto& [key, value] : request.preput)
    message.pmi_preput.push_back(key + "=" + value);
  const pmi::ConnId conn = request.conn;
  bridge_.spawn_job(std::move(message), [this, conn](bool started, const std::string& text) {
    drive(server_.spawn_done(conn, started, text));
  });
}

void SimplePmiHost::classify_exit(RankExit& exit) {
  auto id = by_rank_.find({exit.job, exit.rank});
  if (id != by_rank_.end()) {
    if (Conn* conn = find(id->second)) pump(*conn, true);  // a finalize it sent as it went
  }
  if (auto owed = server_.owed_finalize(exit.job, exit.rank);
      owed && exit.kind == ExitKind::exited) {
    exit.kind = ExitKind::left_without_finalize;
    exit.message = *owed;
  }
  id = by_rank_.find({exit.job, exit.rank});
  if (id != by_rank_.end()) {
    const pmi::ConnId conn_id = id->second;
    if (Conn* conn = find(conn_id)) end(*conn);
    drive(server_.closed(conn_id));
  }
  drive(server_.rank_exited(exit.job, exit.rank));
}

void SimplePmiHost::forget_job(std::uint32_t job) {
  server_.job_ended(job);
  for (auto& [id, conn] : conns_) {
    if (conn->job != job) continue;
    if (!conn->dead) end(*conn);
    (void)server_.closed(id);  // the job has ended: nothing to answer
  }
}

}  // namespace grove
