#include "daemon/rank_host.h"

#include "daemon/rank_binding.h"

namespace grove {

Result<std::unique_ptr<RankHost>> RankHost::create(event_base* base, DaemonRuntime& runtime,
                                                   const Log& log, const ParamRegistry& params,
                                                   Vpid self, const std::string& daemon_dir,
                                                   hwloc_topology* topology, RankReports reports) {
  std::unique_ptr<RankHost> host(new RankHost());
  RankHost* raw = host.get();
  host->runtime_ = &runtime;
  JobHostHooks hooks;
  hooks.on_output = std::move(reports.output);
  hooks.on_started = std::move(reports.started);
  hooks.on_exit = [raw, report = std::move(reports.exit)](RankExit exit) {
    raw->pmix_->classify_exit(exit);
    report(exit);
  };
  hooks.prepare_ranks = [raw](const JobSpec& spec, const std::vector<std::uint32_t>& ranks,
                              std::function<void(JobHostHooks::RankFailures)> done) {
    raw->pmix_->prepare_ranks(spec, ranks, std::move(done));
  };
  hooks.rank_env = [raw](const JobSpec& spec, std::uint32_t rank) {
    return raw->pmix_->rank_env(spec, rank);
  };
  hooks.rank_cpus = [topology](const JobSpec& spec,
                               std::uint32_t rank) -> Result<std::optional<RankCpus>> {
    auto binding =
        rank_binding(topology, spec.bind_to, spec.ranks.at(rank).host_rank, spec.cores_per_rank());
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
  };
  hooks.rank_started = [raw](const JobSpec& spec, std::uint32_t rank, pid_t pid) {
    raw->pmix_->rank_started(spec, rank, pid);
  };
  hooks.rank_reaped = [raw](std::uint32_t job, std::uint32_t rank) {
    raw->pmix_->rank_reaped(job, rank);
  };
  hooks.on_launch = [raw](const JobSpec& spec) { raw->pmix_->note_job(spec); };
  hooks.on_forget = [raw](std::uint32_t job, const std::string& nspace) {
    raw->pmix_->forget_job(job, nspace);
  };
  hooks.handshakes_pending = [raw](const std::vector<pid_t>& ranks) {
    return raw->pmix_ ? raw->pmix_->handshakes_pending(ranks) : std::set<pid_t>{};
  };
  host->job_host_ = std::make_unique<JobHost>(base, self, log, daemon_dir, std::move(hooks),
                                              params.get_size("jobs_output_window"));
  // A job's directory outlives end_ranks only as a name: nothing forks then.
  auto pmix = PmixBridge::create(
      base, runtime, log, daemon_dir + "/pmix",
      [raw]() { return raw->job_host_ ? &raw->job_host_->directories() : nullptr; },
      params.get_bool("pmix_verify_clients"), params.get_int("pmix_handshake_timeout_ms"),
      params.get_int("pmix_call_timeout_ms"), topology);
  if (!pmix) return pmix.error();
  host->pmix_ = std::move(*pmix);
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

}  // namespace grove
