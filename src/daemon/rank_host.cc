#include "daemon/rank_host.h"

#include "daemon/rank_binding.h"

namespace grove {

namespace {

// What the JobHost asks to start a rank, answered by the PMIx bridge (the
// registrations, the environment, pending handshakes) and hwloc (binding).
class BridgeRankSetup : public RankSetup {
 public:
  BridgeRankSetup(std::unique_ptr<PmixBridge>& pmix, std::unique_ptr<SimplePmiHost>& pmi,
                  hwloc_topology* topology)
      : pmix_(pmix), pmi_(pmi), topology_(topology) {}

  void prepare_ranks(const JobSpec& spec, const std::vector<std::uint32_t>& ranks,
                     std::function<void(RankFailures)> done) override {
    pmix_->prepare_ranks(spec, ranks, std::move(done));
  }
  Result<RankExtras> rank_env(const JobSpec& spec, std::uint32_t rank) override {
    RankExtras extras;
    if (spec.mpi != "pmi1" && spec.mpi != "pmi2") {
      auto env = pmix_->rank_env(spec, rank);
      if (!env) return env.error();
      extras.env = std::move(*env);
    } else {
      extras.env.push_back("GROVE_JOB=" + std::to_string(spec.job));
    }
    if (Status offered = pmi_->offer(spec, rank, extras); !offered) return offered.error();
    return extras;
  }
  Result<std::optional<RankCpus>> rank_cpus(const JobSpec& spec, std::uint32_t rank) override {
    auto binding =
        rank_binding(topology_, spec.bind_to, spec.ranks.at(rank).host_rank, spec.cores_per_rank());
    // mpirun's default binding is a preference: where it cannot be had,
    // the rank runs unbound (an asked-for binding fails the rank instead).
    if (!binding && spec.bind_by_default) return std::optional<RankCpus>();
    if (!binding) return binding.error();
    if (!*binding) return std::optional<RankCpus>();
    const RankBinding& bound = **binding;
    return std::optional<RankCpus>(
        RankCpus{bound.cpus,
                 bound.what + " (cpus " + bound.cpu_list + ")" +
                     (bound.shared ? ", shared: more ranks on this host than such objects" : "")});
  }
  std::set<pid_t> handshakes_pending(const std::vector<pid_t>& ranks) override {
    return pmix_ ? pmix_->handshakes_pending(ranks) : std::set<pid_t>{};
  }

 private:
  std::unique_ptr<PmixBridge>& pmix_;    // the RankHost's, set once the bridge exists
  std::unique_ptr<SimplePmiHost>& pmi_;  // likewise
  hwloc_topology* topology_;
};

}  // namespace

Result<std::unique_ptr<RankHost>> RankHost::create(event_base* base, DaemonRuntime& runtime,
                                                   const Log& log, const ParamRegistry& params,
                                                   Vpid self, const std::string& daemon_dir,
                                                   hwloc_topology* topology, RankReports reports) {
  std::unique_ptr<RankHost> host(new RankHost());
  RankHost* raw = host.get();
  host->runtime_ = &runtime;
  host->setup_ = std::make_unique<BridgeRankSetup>(host->pmix_, host->pmi_, topology);
  // The JobHost's reports: the PMIx side's first, then the role's.
  auto report = [raw, reports = std::move(reports)](job_host::Report& report) {
    // The bridge exists before any rank does and goes only after the JobHost.
    std::visit(
        [&](auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, job_host::JobNoted>) {
            raw->pmix_->note_job(*r.spec);
          } else if constexpr (std::is_same_v<T, job_host::JobForgotten>) {
            raw->pmi_->forget_job(r.job);
            raw->pmix_->forget_job(r.job, r.nspace);
          } else if constexpr (std::is_same_v<T, job_host::RankForked>) {
            raw->pmix_->rank_started(*r.spec, r.rank, r.pid);
          } else if constexpr (std::is_same_v<T, job_host::RankReaped>) {
            raw->pmix_->rank_reaped(r.job, r.rank);
          } else if constexpr (std::is_same_v<T, JobOutput>) {
            reports.output(r);
          } else if constexpr (std::is_same_v<T, RankExit>) {
            raw->pmix_->classify_exit(r);  // left without finalizing, the rounds it took part in
            raw->pmi_->classify_exit(r);
            reports.exit(r);
          } else {
            static_assert(std::is_same_v<T, RanksStarted>, "a JobHost report nobody takes");
            reports.started(r);
          }
        },
        report);
  };
  host->job_host_ =
      std::make_unique<JobHost>(base, self, log, daemon_dir, *host->setup_, std::move(report),
                                params.get_size("jobs_output_window"));
  // A job's directory outlives end_ranks only as a name: nothing forks then.
  auto pmix = PmixBridge::create(
      base, runtime, log, daemon_dir + "/pmix",
      [raw]() { return raw->job_host_ ? &raw->job_host_->directories() : nullptr; },
      params.get_bool("pmix_verify_clients"), params.get_int("pmix_handshake_timeout_ms"),
      params.get_int("pmix_call_timeout_ms"), topology);
  if (!pmix) return pmix.error();
  host->pmix_ = std::move(*pmix);
  host->pmi_ = std::make_unique<SimplePmiHost>(base, runtime, log, *host->pmix_);
  host->control_tags_ = runtime.own_control(
      {job_tags::stdin_data, job_tags::output_ack, pmix_tags::modex_request, pmix_tags::modex_reply,
       pmix_tags::publish_reply, pmix_tags::lookup_reply, pmix_tags::spawn_reply},
      [raw](Vpid from, std::uint16_t tag, const Bytes& payload) {
        raw->on_control(from, tag, payload);
      });
  host->broadcast_tags_ = runtime.own_broadcasts(
      {job_tags::launch, job_tags::kill, job_tags::cleanup, job_tags::signal, job_tags::ranks_gone,
       pmix_tags::event},
      [raw](const DeliverBroadcast& deliver) { raw->on_broadcast(deliver.tag, *deliver.payload); });
  host->pmix_->set_log_output(
      [raw](std::uint32_t job, std::uint32_t rank, OutputStream stream, std::string text) {
        return raw->job_host_ && raw->job_host_->log_output(job, rank, stream, std::move(text));
      });
  return host;
}

RankHost::~RankHost() {
  // Ranks first: their exits are classified by the bridge.
  job_host_.reset();
  pmi_.reset();
  pmix_.reset();
}

bool RankHost::on_broadcast(std::uint16_t tag, std::span<const std::byte> payload) {
  if (job_host_ && job_host_->on_broadcast(tag, payload)) return true;
  return pmix_->on_broadcast(tag, payload);
}

bool RankHost::on_control(Vpid from, std::uint16_t tag, const Bytes& payload) {
  if (tag == job_tags::stdin_data) {
    if (from != kControllerVpid) return true;
    auto input = wire_decode<JobStdin>(payload);
    if (!input) return true;
    on_stdin(*input, [this](const StdinAck& ack) {
      runtime_->send_control(kControllerVpid, job_tags::stdin_ack, encode(ack));
    });
    return true;
  }
  if (tag == job_tags::output_ack) {
    if (from != kControllerVpid) return true;  // only the controller paces output
    if (auto ack = wire_decode<OutputAck>(payload)) on_output_ack(*ack);
    return true;
  }
  return pmix_->on_control(from, tag, payload);
}

void RankHost::on_stdin(const JobStdin& input, std::function<void(const StdinAck&)> ack) {
  if (job_host_) {
    job_host_->on_stdin(input, std::move(ack));
  } else {
    ack(StdinAck{input.job, input.seq, false});  // the ranks have ended
  }
}

void RankHost::on_output_ack(const OutputAck& ack) {
  if (job_host_) job_host_->on_output_ack(ack.job, ack.bytes);
}

void RankHost::reap() {
  if (job_host_) job_host_->reap();
}

void RankHost::end_ranks() {
  job_host_.reset();
}

PmixHops RankHost::pmix_hops() const {
  return pmix_ ? pmix_->hops() : PmixHops{};
}

WakeCounts wake_counts(const EventLoop& loop, const RankHost* ranks) {
  WakeCounts out;
  out.loop_passes = loop.passes();
  if (ranks != nullptr) {
    const PmixHops hops = ranks->pmix_hops();
    out.pmix_upcalls = hops.upcalls;
    out.pmix_upcall_wakes = hops.upcall_wakes;
    out.pmix_answers = hops.answers;
  }
  return out;
}

}  // namespace grove
