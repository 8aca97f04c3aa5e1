// The controller's roster: the daemon table and the membership decisions
// made from it. Sans-IO like the engine: inputs are reports, lost
// connections, accusations, reaped processes and `now`; outputs are effects
// the controller carries out (send, broadcast, kill, declare a departure).
// The simulator drives the same roster in virtual time (sim/control_plane).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "daemon/control_plane/control_messages.h"
#include "daemon/control_plane/liveness.h"
#include "rml/membership.h"
#include "util/clock.h"
#include "util/result.h"

namespace grove {

// draining: leaving the DVM (grove shrink): no new ranks, its jobs end
// first; removed: it left cleanly, its vpid a hole in the trees.
enum class DaemonStateKind : std::uint8_t { launching, up, failed, stopped, draining, removed };
std::string_view daemon_state_name(DaemonStateKind state);

struct DaemonRecord {
  Vpid vpid = 0;
  int pid = 0;       // our child (a local groved), negated once reaped; 0 elsewhere
  int host_pid = 0;  // its pid on its own host, as it reported
  std::string hostname;
  std::optional<std::uint32_t> slots;  // from the host list; else its cores
  bool holds_ranks = true;
  std::uint32_t cores = 0;
  std::uint32_t packages = 1;
  std::uint64_t open_files = 0;    // see DaemonReport
  bool topology_imported = false;  // see DaemonReport
  std::string endpoint;
  DaemonStateKind state = DaemonStateKind::launching;
  TimeNs last_seen_ns = 0;
  std::string failure;
  // Its life in the DVM, oldest first (the last kMaxHistory): up, joined,
  // lost, back, removed (grove status).
  std::vector<std::string> history;
  bool returning = false;  // launched again at its old vpid; its report is a return
  // Its connection to the controller is open (from its report until the
  // transport says it closed): a daemon that left is gone only then.
  bool link_open = false;
  bool reported = false;  // ever: it had a place in the trees
};
inline constexpr std::size_t kMaxHistory = 16;

// What the roster asks of its driver, in order.
namespace roster {

struct SendControl {
  Vpid to = 0;
  std::uint16_t tag = 0;
  Bytes payload;
};
// Every daemon reported: broadcast the table (the DVM is ready once it lands).
struct BroadcastEndpointTable {
  EndpointTable table;
};
// A local daemon declared lost must really be gone (a hung one, say).
struct KillProcess {
  Vpid vpid = 0;
  int pid = 0;
};
struct DeclareDeparture {
  Vpid vpid = 0;
};
// Tell the rest of the DVM: its jobs, their ranks (a PMIx event), status.
struct AnnounceLoss {
  Vpid vpid = 0;
  std::string description;  // "daemon 3 (node3) lost: missed 3 heartbeats"
};
// A daemon was lost before the DVM was ready: the start fails (the driver
// decides when; under srun it waits for the step's own exit first).
struct StartupLoss {
  Vpid vpid = 0;
  std::string message;
};
struct Notice {
  enum class Level : std::uint8_t { error, verbose } level = Level::verbose;
  std::string text;
};
// A daemon grown into the running DVM reported: the driver tells everyone
// its endpoint, declares the join and sends it its seed.
struct AdmitJoiner {
  Vpid vpid = 0;
  EndpointTable table;  // every daemon's, the joiner's included
};
// Of a large start, every 32nd report (and the last), for the terminal.
struct ReportProgress {
  std::size_t reported = 0;
  std::uint32_t total = 0;
};

using Effect = std::variant<SendControl, BroadcastEndpointTable, KillProcess, DeclareDeparture,
                            AnnounceLoss, StartupLoss, Notice, ReportProgress, AdmitJoiner>;
using Outbox = std::vector<Effect>;

}  // namespace roster

struct RosterConfig {
  std::uint32_t size = 1;  // daemons, the controller (vpid 0) included
  // 0: no heartbeats; then only lost connections and exits decide.
  TimeNs heartbeat_interval_ns = 0;
  std::uint32_t heartbeat_misses = 3;
};

class DaemonRoster {
 public:
  enum class Phase : std::uint8_t { starting, running, stopping };

  DaemonRoster(RosterConfig config, DaemonRecord controller);

  // Launch set-up (the launch supervisor's facts, before any report).
  void planned(Vpid vpid, std::string hostname, std::optional<std::uint32_t> slots,
               bool holds_ranks);
  void launched(Vpid vpid, int pid);
  void set_controller_host(std::uint32_t cores, std::uint32_t packages, std::uint64_t open_files);

  // Any frame from `from` shows it alive.
  void heard_from(Vpid from, TimeNs now);
  // Whether a report from `from` (claiming `claimed`) is one we wait for;
  // else the reason it is not. The driver connects the reported endpoint
  // only then, and hands the report to on_report once that worked.
  std::optional<std::string> unexpected_report(Vpid from, Vpid claimed) const;
  roster::Outbox on_report(Vpid from, const DaemonReport& report, TimeNs now);

  // The endpoint table landed everywhere: liveness is judged from now on.
  void mark_running(TimeNs now);
  void mark_stopping() { phase_ = Phase::stopping; }
  Phase phase() const { return phase_; }

  // The heartbeat check (every interval while running).
  roster::Outbox check_heartbeats(TimeNs now);
  roster::Outbox on_connection_closed(Vpid peer);
  roster::Outbox on_link_lost(Vpid reporter, Vpid peer);
  // A local daemon's process ended (reaped by the driver); `how` as
  // "exited with status 1" / "killed by signal 9".
  roster::Outbox on_process_ended(Vpid vpid, const std::string& how);
  // `may_still_run`: lost to silence or a peer's report, not to its own exit
  // or closed connection; then it is told to leave.
  roster::Outbox lose(Vpid vpid, const std::string& reason, bool may_still_run);
  // The driver reaped it without a verdict (a failed start, the stop).
  void reaped(Vpid vpid);

  // grove shrink: the daemons these hosts (full or short names) and vpids
  // name, each up and not the controller; else why not, naming the host or
  // daemon and what the DVM has.
  Result<std::vector<Vpid>> shrink_targets(const std::vector<std::string>& hosts,
                                           const std::vector<Vpid>& vpids) const;
  // grove grow: `count` more daemons at the next vpids, launching on
  // `hostname`; returns their vpids. Their reports admit them (AdmitJoiner).
  std::vector<Vpid> add_daemons(std::uint32_t count, std::string hostname);
  // grove grow --host: for each host, the vpid of the daemon it lost (or
  // that was removed from it), to come back at once gone(); nullopt for a
  // host new to the DVM. A host with a daemon in the DVM (or launching), or
  // named twice, is an error naming it.
  // `planned_names`: by vpid, the name each was started under (a host list's,
  // which may differ from the name it reported), "" where none.
  Result<std::vector<std::optional<Vpid>>> grow_targets(
      const std::vector<std::string>& hosts,
      const std::vector<std::string>& planned_names = {}) const;
  // It is launched again at its old vpid: launching until its report
  // admits it (AdmitJoiner, a return in the engine). Only once the process
  // that had the vpid is gone (gone()); false otherwise.
  bool revive(Vpid vpid);
  // Failed or removed, its connection closed and (a local one) its process
  // reaped: nothing of it can still reach the DVM, and its vpid may return.
  bool gone(Vpid vpid) const;
  // Whether it ever was in the DVM (reported at least once).
  bool ever_up(Vpid vpid) const { return daemons_.at(vpid).reported; }
  // It takes no new ranks from now on (the job table places on `up` only).
  void drain(Vpid vpid);
  // It leaves cleanly: a departure every daemon takes in step (its vpid a
  // hole in the trees), and it is told to go. Its exit and closed
  // connections are then no loss.
  roster::Outbox remove(Vpid vpid, const std::string& reason);

  const std::vector<DaemonRecord>& records() const { return daemons_; }
  const DaemonRecord& record(Vpid vpid) const { return daemons_.at(vpid); }
  std::size_t living() const;  // up or draining, the controller included
  std::size_t count(DaemonStateKind state) const;
  // Other daemons whose local process has not been reaped: (vpid, pid).
  std::vector<std::pair<Vpid, int>> unreaped_children() const;
  std::string describe(Vpid vpid) const;  // "daemon 3 (node3)"
  // The daemons still launching, the first ten named ("..., and 990 more").
  std::string describe_launching() const;

 private:
  EndpointTable endpoint_table() const;
  static void note(DaemonRecord& record, std::string event);

  RosterConfig config_;
  std::vector<DaemonRecord> daemons_;
  Phase phase_ = Phase::starting;
  std::optional<SilenceWatch> watch_;
};

}  // namespace grove
