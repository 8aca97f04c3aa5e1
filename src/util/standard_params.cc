#include "util/standard_params.h"

#include "util/fault_plan.h"

namespace grove {
namespace {

// Integers and sizes both carry a range; only the kind differs.
ParamSpec ranged(ParamKind kind, std::string name, std::string default_text, std::int64_t min,
                 std::int64_t max, std::string description) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.kind = kind;
  spec.default_text = std::move(default_text);
  spec.description = std::move(description);
  spec.min = min;
  spec.max = max;
  return spec;
}

ParamSpec integer(std::string name, std::string default_text, std::int64_t min, std::int64_t max,
                  std::string description) {
  return ranged(ParamKind::integer, std::move(name), std::move(default_text), min, max,
                std::move(description));
}

ParamSpec boolean(std::string name, std::string default_text, std::string description) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.kind = ParamKind::boolean;
  spec.default_text = std::move(default_text);
  spec.description = std::move(description);
  return spec;
}

ParamSpec text(std::string name, std::string default_text, std::string description) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.kind = ParamKind::string;
  spec.default_text = std::move(default_text);
  spec.description = std::move(description);
  return spec;
}

ParamSpec size(std::string name, std::string default_text, std::int64_t min, std::int64_t max,
               std::string description) {
  return ranged(ParamKind::size, std::move(name), std::move(default_text), min, max,
                std::move(description));
}

constexpr std::int64_t kVerboseMax = 100;

// rml: trees and transport.
void register_rml_params(ParamRegistry& registry) {
  registry.define(integer("rml_base_radix", "64", 2, 65535,
                          "Radix of the routing tree: fence rollup, routed sends, group releases"));
  registry.define(integer("rml_base_radix2", "4", 2, 65535,
                          "Radix of the derived release tree used for fence releases"));
  registry.define(integer("rml_base_verbose", "0", 0, kVerboseMax,
                          "Verbosity of the rml framework (2 names the path of every send)"));
  registry.define(size("rml_base_max_frame_size", "256M", 1024, std::int64_t{1} << 40,
                       "Largest frame a daemon accepts; a larger one closes the connection"));
  registry.define(size("rml_send_queue_limit", "512M", 1024, std::int64_t{1} << 40,
                       "Bytes queued to one peer before it counts as not reading (at least "
                       "rml_base_max_frame_size); twice this drops the peer at once"));
  registry.define(integer("rml_send_queue_timeout_ms", "10000", 10, 3600000,
                          "How long a peer's send queue may stay over rml_send_queue_limit "
                          "before the peer is dropped"));
  registry.define(integer("rml_link_timeout_ms", "10000", 0, 3600000,
                          "How long bytes sent to a peer may go unacknowledged by its host "
                          "before the link counts as failed (TCP_USER_TIMEOUT; 0: the kernel's "
                          "retransmission limit, about 15 minutes)"));
  ParamSpec protection;
  protection.name = "rml_frame_protection";
  protection.kind = ParamKind::enumeration;
  protection.default_text = "integrity";
  protection.choices = {"integrity", "encryption", "none"};
  protection.description =
      "What every frame between daemons carries after the handshake: a tag (integrity), the tag "
      "and an encrypted payload (encryption), or nothing (none: for measuring the cost only)";
  registry.define(protection);
}

// grpcomm: the collective engine.
void register_grpcomm_params(ParamRegistry& registry) {
  registry.define(boolean("grpcomm_low_radix_release", "true",
                          "Send fence releases on the release tree instead of the routing tree"));
  ParamSpec shape;
  shape.name = "grpcomm_fence_topology";
  shape.kind = ParamKind::enumeration;
  shape.default_text = "tree";
  shape.choices = {"tree", "bruck"};
  shape.description =
      "How a fence's contributions travel: up the routing tree and back down the release tree "
      "(tree), or a Bruck exchange among the participants' daemons over direct links (bruck)";
  registry.define(shape);
  registry.define(
      integer("grpcomm_base_verbose", "0", 0, kVerboseMax, "Verbosity of the grpcomm framework"));
  registry.define(boolean("grpcomm_enable_timing", "false",
                          "Record each broadcast's started-to-completed span at its originator"));
  registry.define(integer("grpcomm_release_delay_ms", "0", 0, 600000,
                          "Hold each release this long before forwarding (fault-window widener)"));
  registry.define(integer("grpcomm_release_ack_delay_us", "10000", 0, 1000000,
                          "How long a daemon's acks of fence releases wait to share one frame: "
                          "they go with its first input after this, or on their own after "
                          "three times this (0: each at once)"));
  registry.define(size("grpcomm_flight_recorder_size", "4M", 0, std::int64_t{1} << 30,
                       "Bytes of its engine's newest inputs each daemon keeps for grove status "
                       "--dump and grove sim --replay (0: none kept)"));
  registry.define(text("grpcomm_flight_dump_dir", "",
                       "Where automatic flight dumps go, one directory each, and the recording "
                       "of a daemon dying of a fatal signal (empty: dvm-<pid>.flight beside "
                       "the DVM's session directory)"));
  registry.define(integer("grpcomm_flight_dumps", "3", 0, 1000,
                          "How many automatic flight dumps a DVM makes when a daemon sees a "
                          "problem (a fence timeout, a stalled broadcast); 0: none"));
  registry.define(integer("grpcomm_flight_dump_stall_ms", "30000", 0, 86400000,
                          "A broadcast of the controller's not complete after this long is a "
                          "problem worth an automatic flight dump (0: not watched)"));
  registry.define(integer("grpcomm_release_delay_target", "-1", -1, 0xFFFFFFF,
                          "Daemon vpid that applies grpcomm_release_delay_ms (-1: every daemon)"));
  registry.define(size("grpcomm_compress_threshold", "4096", 0, std::int64_t{1} << 40,
                       "Broadcast payloads larger than this are deflated once at the originator"));
  ParamSpec fault;
  fault.name = "debug_fault";
  fault.kind = ParamKind::string;
  fault.description =
      "Testing only: daemons that kill themselves at a chosen point, as "
      "VPID:POINT[:N[:HOW]],... (points: release-received, release-delivered, join-welcomed, "
      "join-seeded; N counts release ops; HOW kill or segv)";
  fault.check = [](std::string_view text) -> std::optional<std::string> {
    auto plan = parse_fault_plan(text);
    if (!plan) return plan.error().message;
    return std::nullopt;
  };
  registry.define(std::move(fault));
}

// runtime: process-wide settings, and the daemons'.
void register_daemon_params(ParamRegistry& registry) {
  registry.define(
      integer("runtime_num_worker_threads", "0", 0, 256,
              "Event bases that share socket writes (the model's t); 0: main loop only"));
  registry.define(boolean("daemon_bind_local", "true",
                          "When every daemon of a DVM runs on this host (grove start --local), "
                          "bind each one to a CPU of its own, round robin; ranks still start "
                          "with every CPU the daemon was given"));
  registry.define(text("daemon_bind_boot_id", "",
                       "Set by the controller for the daemons it starts over ssh or srun: its "
                       "machine's kernel boot id. A daemon on the same machine (namespaces, "
                       "containers) binds as under daemon_bind_local"));
  registry.define(size("daemon_malloc_top_pad", "16M", 0, std::int64_t{1} << 30,
                       "Memory each daemon's allocator keeps beyond its need when its heap "
                       "grows or shrinks (glibc M_TOP_PAD; blocks up to 32 MiB then come "
                       "from the heap), so fence releases do not fault their buffers in anew "
                       "each time (0: glibc's defaults)"));
  registry.define(integer("daemon_base_verbose", "0", 0, kVerboseMax,
                          "Verbosity of the daemon framework (launch, PMIx server, failures)"));
  registry.define(integer("daemon_report_timeout_ms", "60000", 100, 3600000,
                          "How long the controller waits for every daemon to report at startup"));
  registry.define(integer("daemon_heartbeat_ms", "500", 0, 600000,
                          "Interval of daemon heartbeats to the controller (0: none)"));
  registry.define(
      integer("daemon_heartbeat_misses", "10", 1, 1000,
              "Heartbeat intervals without word after which a daemon is declared lost"));
  registry.define(integer("daemon_controller_timeout_ms", "30000", 0, 3600000,
                          "How long a daemon waits without word from the controller before "
                          "leaving with its ranks (0: forever; needs daemon_heartbeat_ms)"));
  registry.define(integer("daemon_stop_timeout_ms", "5000", 100, 600000,
                          "How long an orderly stop waits for daemons before killing them"));
  registry.define(boolean("dvm_respawn_lost", "false",
                          "Start a lost daemon again on its host, at its old vpid (a return), "
                          "after dvm_respawn_delay_ms, doubling each time, up to "
                          "dvm_respawn_max times per vpid"));
  registry.define(integer("dvm_respawn_delay_ms", "1000", 0, 600000,
                          "How long after a loss a daemon is respawned (dvm_respawn_lost); "
                          "doubles with each respawn of that vpid, at most 60 s"));
  registry.define(integer("dvm_respawn_max", "3", 1, 1000,
                          "Respawns per vpid (dvm_respawn_lost); lost again after that, it "
                          "stays lost"));
}

// plm: starting daemons on other hosts.
void register_plm_params(ParamRegistry& registry) {
  registry.define(integer("plm_base_verbose", "0", 0, kVerboseMax,
                          "Verbosity of daemon launching (1 names every launch and its end)"));
  registry.define(text(
      "plm_ssh_agent", "ssh",
      "The command that starts daemons on other hosts, with its options (e.g. 'ssh -F FILE')"));
  registry.define(boolean("plm_ssh_no_tree_spawn", "false",
                          "Start every remote daemon from the controller instead of along the "
                          "routing tree"));
  registry.define(integer("plm_ssh_num_concurrent", "128", 1, 65535,
                          "Daemon launches one daemon runs at once (an ssh session counts until "
                          "its daemon has reported)"));
  registry.define(text("plm_slurm_srun", "srun",
                       "The command that starts the daemons' step inside a Slurm allocation"));
  registry.define(text("plm_slurm_args", "",
                       "Extra srun options for the daemons' step (e.g. '--overlap' or "
                       "'--partition=P')"));
}

void register_pmix_params(ParamRegistry& registry) {
  registry.define(boolean("pmix_verify_clients", "true",
                          "Admit a PMIx connection as rank R only from the process the daemon "
                          "started as R, or its descendants, as the kernel reports them"));
  registry.define(integer("pmix_handshake_timeout_ms", "1000", 0, 600000,
                          "How long a PMIx connection of the daemon's own user may keep libpmix "
                          "waiting for its handshake before the daemon cuts it (0: never); "
                          "another user's is cut at once"));
  registry.define(integer("pmix_call_timeout_ms", "30000", 100, 3600000,
                          "How long a daemon waits for libpmix to answer a job's registration or "
                          "deregistration; past it the call fails, and while it stays unanswered "
                          "(libpmix stuck) the daemon refuses new ranks at once"));
}

}  // namespace

void register_standard_params(ParamRegistry& registry) {
  register_rml_params(registry);
  register_grpcomm_params(registry);
  register_daemon_params(registry);
  register_plm_params(registry);
  register_pmix_params(registry);
  // jobs
  registry.define(size("jobs_output_window", "4M", 0, std::int64_t{1} << 40,
                       "Output bytes of a job a daemon passes on before the controller has "
                       "handed them to grove run; past it the ranks' pipes wait (0: no bound)"));
}

}  // namespace grove
