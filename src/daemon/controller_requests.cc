// The controller's answers to the CLI: status, kill and the benchmarks (the
// stop is controller_stop.cc).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "daemon/controller.h"
#include "daemon/flight_dump.h"

namespace grove {

namespace {

nlohmann::json accounting_json(const Accounting& accounting) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, count] : accounting.by_key()) {
    out.push_back({{"type", std::string(frame_type_name(key.type))},
                   {"tag", std::string(tag_name(key.tag))},
                   {"topology", std::string(topology_name(key.topology))},
                   {"frames", count.frames},
                   {"bytes", count.bytes}});
  }
  return out;
}

}  // namespace

void Controller::handle_request(const nlohmann::json& json, ReplyFn reply, PartialFn partial) {
  auto decoded = decode_control_request(json);
  if (!decoded) {
    reply(error_reply(decoded.error().message));
    return;
  }
  const ControlRequest& request = *decoded;
  if (std::holds_alternative<StopRequest>(request)) {
    begin_stop(reply, "grove stop");
    return;
  }
  if (!launch_.supervisor.is_ready()) {
    reply(error_reply(stopping_.sequence.stopping() ? "the DVM is stopping"
                                                    : "the DVM is still starting"));
    return;
  }
  std::visit(
      [&](const auto& typed) {
        using T = std::decay_t<decltype(typed)>;
        if constexpr (std::is_same_v<T, StopRequest>) {
          begin_stop(reply, "grove stop");
        } else if constexpr (std::is_same_v<T, StatusRequest>) {
          CountersReply own = runtime_->counters(0);
          own.wakes = wake_counts(*loop_, rank_host_.get());
          if (!typed.dump_dir.empty()) own.flight = runtime_->flight_recording();
          apply(cli_.service.status_requested(hold_reply(reply), std::move(own), roster_->living(),
                                              typed.dump_dir));
        } else if constexpr (std::is_same_v<T, BenchRequest>) {
          apply(cli_.service.bench_requested(
              hold_reply(reply), {typed.kind, typed.size, typed.count},
              params_.get_size("rml_base_max_frame_size"), runtime_->now()));
        } else if constexpr (std::is_same_v<T, RunRequest>) {
          request_run(typed, reply, partial);
        } else if constexpr (std::is_same_v<T, KillRequest>) {
          request_kill(typed, reply);
        } else if constexpr (std::is_same_v<T, StdinRequest>) {
          apply(jobs_->table.forward_stdin(typed.job, typed.data, typed.eof, hold_reply(reply)));
        } else if constexpr (std::is_same_v<T, ShrinkRequest>) {
          request_shrink(typed, reply);
        } else if constexpr (std::is_same_v<T, GrowRequest>) {
          request_grow(typed, reply);
        } else if constexpr (std::is_same_v<T, JobsRequest>) {
          reply({{"ok", true}, {"jobs", jobs_->table.jobs_json()}});
        } else {
          static_assert(sizeof(T) == 0, "every control request needs a handler");
        }
      },
      request);
}

void Controller::request_kill(const KillRequest& request, ReplyFn reply) {
  std::optional<job_table::Outbox> found;
  if (request.signal != 0) {
    found = jobs_->table.signal(request.job, request.signal);
  } else if (request.interrupted) {
    found = jobs_->table.kill(request.job, 130, "interrupted (Ctrl-C on grove run)");
  } else {
    // As a rank ended by SIGTERM would report it.
    found = jobs_->table.kill(request.job, 128 + SIGTERM, "killed by grove kill");
  }
  if (found) {
    apply(std::move(*found));
    reply({{"ok", true}});
  } else {
    reply(error_reply("no running job " + std::to_string(request.job) +
                      " (grove ps lists the jobs)"));
  }
}

nlohmann::json Controller::status_json() const {
  const Membership& membership = runtime_->engine().membership();
  nlohmann::json out;
  out["ok"] = true;
  out["pid"] = getpid();
  out["session"] = identity_.dvm.directory;
  // A background DVM writes its log (and its local daemons') to a file as
  // its stderr; a foreground one to the terminal, which grove log cannot read.
  out["log"] = nullptr;
  std::error_code error;
  const auto log = options_.log_path.empty()
                       ? std::filesystem::read_symlink("/proc/self/fd/2", error)
                       : std::filesystem::path(options_.log_path);
  if (!error && std::filesystem::is_regular_file(log, error)) out["log"] = log.string();
  out["size"] = roster_->records().size();
  out["epoch"] = membership.epoch();
  out["tree_version"] = membership.tree_version();
  out["failed"] = membership.failed();
  out["radix"] = params_.get_int("rml_base_radix");
  out["radix2"] = params_.get_int("rml_base_radix2");
  out["low_radix_release"] = params_.get_bool("grpcomm_low_radix_release");
  out["fence_topology"] = params_.get_string("grpcomm_fence_topology");
  out["heartbeat_ms"] = params_.get_int("daemon_heartbeat_ms");
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : params_.non_defaults())
    params[name] = value;
  out["params"] = params;
  out["flight_dumps"] = flight_dumps_json();
  nlohmann::json daemons = nlohmann::json::array();
  for (const DaemonRecord& daemon : roster_->records()) {
    daemons.push_back(
        {{"vpid", daemon.vpid},
         {"host", daemon.hostname},
         {"pid", daemon.host_pid != 0 ? daemon.host_pid : std::abs(daemon.pid)},
         {"state", std::string(daemon_state_name(daemon.state))},
         {"cores", daemon.cores},
         {"topology", daemon.topology_imported ? "imported" : "discovered"},
         {"endpoint", daemon.endpoint},
         {"silent_ms",
          (daemon.state == DaemonStateKind::up || daemon.state == DaemonStateKind::draining) &&
                  daemon.vpid != 0
              ? (runtime_->now() - std::min(daemon.last_seen_ns, runtime_->now())) / 1'000'000
              : 0},
         {"failure", daemon.failure},
         {"history", daemon.history}});
  }
  out["daemons"] = daemons;
  out["jobs"] = jobs_->table.jobs_json();
  return out;
}

std::uint64_t Controller::hold_reply(ReplyFn reply) {
  const std::uint64_t requester = cli_.next_requester++;
  cli_.replies.emplace(requester, std::move(reply));
  return requester;
}

ReplyFn Controller::take_reply(std::uint64_t requester) {
  auto found = cli_.replies.find(requester);
  if (found == cli_.replies.end()) return [](const nlohmann::json&) {};
  ReplyFn reply = std::move(found->second);
  cli_.replies.erase(found);
  return reply;
}

void Controller::apply(cli::Outbox out) {
  for (cli::Effect& effect : out) {
    std::visit(
        [&](auto& step) {
          using T = std::decay_t<decltype(step)>;
          if constexpr (std::is_same_v<T, cli::BroadcastCountersRequest>) {
            runtime_->broadcast(daemon_tags::counters_request,
                                encode(CountersRequest{step.id, step.flight}));
          } else if constexpr (std::is_same_v<T, cli::ArmTimer>) {
            Timer& timer = cli_.timers[static_cast<std::size_t>(step.timer)];
            const CliTimer which = step.timer;
            if (!timer)
              timer =
                  Timer(loop_->base(), [this, which] { apply(cli_.service.timer_fired(which)); });
            timer.arm(step.delay_ms);
          } else if constexpr (std::is_same_v<T, cli::ReplyStatus>) {
            reply_status(step);
          } else if constexpr (std::is_same_v<T, cli::StartReleaseRound> ||
                               std::is_same_v<T, cli::StartBarrierRound>) {
            start_bench_round(effect);
          } else if constexpr (std::is_same_v<T, cli::ReplyBench>) {
            reply_bench(step);
          } else if constexpr (std::is_same_v<T, cli::ReplyError>) {
            take_reply(step.requester)(error_reply(step.error));
          } else {
            static_assert(sizeof(T) == 0, "a CLI service effect without a driver");
          }
        },
        effect);
  }
}

void Controller::reply_status(cli::ReplyStatus& status) {
  cli_.timers[static_cast<std::size_t>(CliTimer::status_deadline)].cancel();
  nlohmann::json out = status_json();
  Accounting engine_total;
  nlohmann::json counters = nlohmann::json::array();
  for (const auto& [vpid, reply] : status.counters) {
    engine_total += reply.engine;
    counters.push_back({{"vpid", vpid},
                        {"epoch", reply.epoch},
                        {"tree_version", reply.tree_version},
                        {"engine", accounting_json(reply.engine)},
                        {"engine_frames", reply.engine.total().frames},
                        {"engine_bytes", reply.engine.total().bytes},
                        {"sent_frames", reply.transport_sent.total().frames},
                        {"sent_bytes", reply.transport_sent.total().bytes},
                        {"received_frames", reply.transport_received.total().frames},
                        {"received_bytes", reply.transport_received.total().bytes},
                        {"held_ops", reply.footprint.ops},
                        {"open_fences", reply.footprint.open_fences},
                        {"fence_signatures", reply.footprint.fence_signatures},
                        {"controller_rtt_us", reply.controller_rtt_ns / 1000},
                        {"heap_bytes", reply.heap_bytes},
                        {"resident_bytes", reply.resident_bytes},
                        {"loop_passes", reply.wakes.loop_passes},
                        {"pmix_upcalls", reply.wakes.pmix_upcalls},
                        {"pmix_upcall_wakes", reply.wakes.pmix_upcall_wakes},
                        {"pmix_answers", reply.wakes.pmix_answers}});
  }
  out["counters"] = counters;
  out["engine_total"] = accounting_json(engine_total);
  out["answered"] = status.counters.size();
  if (!status.dump_dir.empty()) {
    std::map<Vpid, Bytes> files;
    std::uint64_t bytes = 0;
    for (auto& [vpid, reply] : status.counters) {
      bytes += reply.flight.size();
      files[vpid] = std::move(reply.flight);
    }
    Result<std::size_t> written =
        bytes == 0 ? Error{"no daemon keeps a flight recording (grpcomm_flight_recorder_size 0)"}
                   : write_flight_dump(status.dump_dir, files);
    out["flight_dump"] =
        written ? nlohmann::json{{"dir", status.dump_dir}, {"files", *written}, {"bytes", bytes}}
                : nlohmann::json{{"dir", status.dump_dir}, {"error", written.error().message}};
  }
  for (std::size_t i = 0; i < status.requesters.size(); ++i) {
    // Those who rode on a dump without asking for it hear nothing of it.
    if (i == 1) out.erase("flight_dump");
    take_reply(status.requesters[i])(out);
  }
}

void Controller::request_run(const RunRequest& run, ReplyFn reply, PartialFn partial) {
  // Every runtime parameter is the DVM's, fixed when it started: one set
  // for a run must agree with it, or the run is refused rather than the
  // setting silently ignored.
  for (const auto& [name, value] : run.runtime_params) {
    const ParamEntry* entry = params_.find(name);
    if (entry == nullptr) {
      reply(error_reply("unknown parameter '" + name + "'"));
      return;
    }
    if (entry->value_text != value) {
      reply(error_reply(name + " " + value + " cannot apply to one job: this DVM runs with " +
                        name + " " + entry->value_text +
                        " (set it on grove start, or let grove run start a DVM of its own)"));
      return;
    }
  }
  submit_run(run, std::move(reply), std::move(partial));
}

void Controller::start_bench_round(const cli::Effect& round) {
  if (const auto* release = std::get_if<cli::StartReleaseRound>(&round)) {
    Bytes payload(release->size);
    std::mt19937_64 random(release->round);
    for (auto& byte : payload)
      byte = static_cast<std::byte>(random() & 0xFF);
    cli_.service.release_started(runtime_->broadcast(tags::bench_release, payload));
    return;
  }
  const auto& barrier_round = std::get<cli::StartBarrierRound>(round);
  std::vector<Vpid> living;
  for (const auto& daemon : roster_->records()) {
    // Draining daemons are members still: every member takes part.
    if (daemon.state == DaemonStateKind::up || daemon.state == DaemonStateKind::draining)
      living.push_back(daemon.vpid);
  }
  const std::uint64_t share = living.empty() ? 0 : barrier_round.size / living.size();
  BenchBarrier barrier{kBenchBarrierSignature, VpidSet::from_list(living), share,
                       barrier_round.round};
  runtime_->broadcast(daemon_tags::bench_barrier, encode(barrier));
  runtime_->contribute(FenceRequest{barrier.signature, barrier.participants,
                                    bench_contribution(barrier, kControllerVpid)});
}

void Controller::reply_bench(const cli::ReplyBench& bench) {
  const BenchSummary& run = bench.summary;
  nlohmann::json out{{"ok", true},
                     {"kind", run.kind},
                     {"size", run.size},
                     {"count", run.count},
                     {"daemons", options_.daemons},
                     {"radix", params_.get_int("rml_base_radix")},
                     {"radix2", params_.get_int("rml_base_radix2")},
                     {"low_radix_release", params_.get_bool("grpcomm_low_radix_release")},
                     {"fence_topology", params_.get_string("grpcomm_fence_topology")},
                     {"wire_bytes", run.wire_bytes},
                     {"spans_us", run.spans_us},
                     {"min_us", run.min_us},
                     {"median_us", run.median_us},
                     {"p50_us", run.p50_us},
                     {"p99_us", run.p99_us},
                     {"max_us", run.max_us},
                     {"mean_us", run.mean_us}};
  take_reply(bench.requester)(out);
}

}  // namespace grove
