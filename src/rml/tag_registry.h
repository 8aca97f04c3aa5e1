// Every message tag of grove, in one place: the engine's own (below 64) and
// the daemon's (control frames and DVM-wide broadcasts), so a tag number is
// never given twice and every log line can name the tag it saw. A new tag is
// added here, with its name in tag_registry.cc, or nowhere.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace grove {

namespace tags {
inline constexpr std::uint16_t membership = 1;         // departure/return notices
inline constexpr std::uint16_t fence_rollup = 2;       // contributions up the routing tree
inline constexpr std::uint16_t fence_release = 3;      // a fence's aggregate, down
inline constexpr std::uint16_t group_release = 4;      // a group collective's release
inline constexpr std::uint16_t op_report = 5;          // daemon -> controller: an op went wrong
inline constexpr std::uint16_t op_abort = 6;           // controller -> all: an op ended in error
inline constexpr std::uint16_t launch = 7;             // job launch messages
inline constexpr std::uint16_t bench_release = 8;      // `grove bench release`: a release, no fence
inline constexpr std::uint16_t fence_exchange = 9;     // a round of a fence's Bruck exchange
inline constexpr std::uint16_t first_daemon_tag = 64;  // tags >= this belong to the daemon
}  // namespace tags

// Daemon <-> controller (daemon/control_plane/control_messages.h).
namespace daemon_tags {
inline constexpr std::uint16_t report = tags::first_daemon_tag + 0;            // control
inline constexpr std::uint16_t endpoint_table = tags::first_daemon_tag + 1;    // broadcast
inline constexpr std::uint16_t heartbeat = tags::first_daemon_tag + 2;         // control
inline constexpr std::uint16_t shutdown = tags::first_daemon_tag + 3;          // broadcast
inline constexpr std::uint16_t counters_request = tags::first_daemon_tag + 4;  // broadcast
inline constexpr std::uint16_t counters_reply = tags::first_daemon_tag + 5;    // control
inline constexpr std::uint16_t help = tags::first_daemon_tag + 6;              // control
inline constexpr std::uint16_t bench_barrier = tags::first_daemon_tag + 7;     // broadcast
inline constexpr std::uint16_t welcome = tags::first_daemon_tag + 8;           // control
inline constexpr std::uint16_t launch_failed = tags::first_daemon_tag + 9;     // control
inline constexpr std::uint16_t link_lost = tags::first_daemon_tag + 10;        // control
inline constexpr std::uint16_t evicted = tags::first_daemon_tag + 11;          // control
// controller -> a daemon grove shrink removes: leave cleanly (an Eviction's reason)
inline constexpr std::uint16_t removed = tags::first_daemon_tag + 12;  // control
// a daemon -> the controller: a problem it saw, for an automatic flight dump
inline constexpr std::uint16_t problem_seen = tags::first_daemon_tag + 13;  // control
}  // namespace daemon_tags

// Jobs (jobs/job_messages.h).
namespace job_tags {
inline constexpr std::uint16_t launch = tags::launch;                  // broadcast
inline constexpr std::uint16_t kill = tags::first_daemon_tag + 16;     // broadcast
inline constexpr std::uint16_t cleanup = tags::first_daemon_tag + 17;  // broadcast
inline constexpr std::uint16_t output = tags::first_daemon_tag + 18;   // control
inline constexpr std::uint16_t exited = tags::first_daemon_tag + 19;   // control
inline constexpr std::uint16_t aborted = tags::first_daemon_tag + 20;  // control
// controller -> hosting daemon: output it has passed on (flow control)
inline constexpr std::uint16_t output_ack = tags::first_daemon_tag + 21;
// controller -> every daemon: ranks that left cleanly (their fences cannot complete)
inline constexpr std::uint16_t ranks_gone = tags::first_daemon_tag + 22;  // broadcast
// controller -> every daemon: a signal for a job's ranks (grove kill --signal)
inline constexpr std::uint16_t signal = tags::first_daemon_tag + 23;  // broadcast
// grove run's stdin: controller -> a daemon hosting a reading rank, and its answer
inline constexpr std::uint16_t stdin_data = tags::first_daemon_tag + 35;  // control
inline constexpr std::uint16_t stdin_ack = tags::first_daemon_tag + 36;   // control
// hosting daemon -> controller: ranks whose program is exec'd (grove ps)
inline constexpr std::uint16_t ranks_started = tags::first_daemon_tag + 37;  // control
}  // namespace job_tags

// The PMIx bridge's direct modex (daemon/pmix_bridge.h).
namespace pmix_tags {
inline constexpr std::uint16_t modex_request = tags::first_daemon_tag + 24;  // control
inline constexpr std::uint16_t modex_reply = tags::first_daemon_tag + 25;    // control
// PMIx_Publish / Lookup / Unpublish: a daemon asks the controller, which answers.
inline constexpr std::uint16_t publish = tags::first_daemon_tag + 26;        // control
inline constexpr std::uint16_t lookup = tags::first_daemon_tag + 27;         // control
inline constexpr std::uint16_t unpublish = tags::first_daemon_tag + 28;      // control
inline constexpr std::uint16_t publish_reply = tags::first_daemon_tag + 29;  // control
inline constexpr std::uint16_t lookup_reply = tags::first_daemon_tag + 30;   // control
// PMIx_Spawn: a daemon asks the controller for a new job, which answers.
inline constexpr std::uint16_t spawn = tags::first_daemon_tag + 31;        // control
inline constexpr std::uint16_t spawn_reply = tags::first_daemon_tag + 32;  // control
// PMIx events: a daemon relays a rank's to the controller, which delivers
// every event to every daemon.
inline constexpr std::uint16_t notify = tags::first_daemon_tag + 33;  // control
inline constexpr std::uint16_t event = tags::first_daemon_tag + 34;   // broadcast
}  // namespace pmix_tags

struct TagInfo {
  std::uint16_t tag;
  std::string_view name;
};

// Every tag above, once (job_tags::launch is tags::launch).
std::span<const TagInfo> all_tags();

// The tag's name, or "unknown" for a number no one registered.
std::string_view tag_name(std::uint16_t tag);
// The rml verbosity at which frames of `tag` are logged, given the level
// other frames are logged at: heartbeats only from kHeartbeatVerbosity on (on
// a quiet DVM they are nearly every frame, and would drown the rest).
inline constexpr int kHeartbeatVerbosity = 5;
inline int frame_log_level(std::uint16_t tag, int usual) {
  return tag == daemon_tags::heartbeat ? kHeartbeatVerbosity : usual;
}

}  // namespace grove
