// The in-process harness: one PmixServer on a real event_base, as the daemon
// of a one-daemon DVM would run it. Its on_fence hook completes every fence
// at once with the local blob (on one server that is the whole aggregate);
// the other hooks record what they saw. run_clients registers and forks real
// pmix_fence_client processes and drives the loop until they exit, killing
// any left at the deadline by PID.
//
// libpmix 4.2 cannot start a server twice in one process, so the test binary
// shares one OneDaemon (shared_daemon()) across test cases, each with its own
// nspace; main.cc destroys it after the session.
#pragma once

#include <event2/event.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client_launch.h"
#include "os/event_handles.h"
#include "pmix/server.h"

namespace grove::pmix_test {

struct ClientRun {
  std::uint32_t rank = 0;
  ChildProcess process;
  std::string out;
  std::string err;
};

// One parsed "rank R/N: K rounds ok, modex B bytes, digest D, local L/S on H" line.
struct ClientSummary {
  std::uint32_t rank = 0;
  std::uint32_t size = 0;
  int rounds = 0;
  std::uint64_t modex_bytes = 0;
  std::string digest;
  std::uint32_t local_rank = 0;
  std::uint32_t local_size = 0;
  std::string node;
};
std::optional<ClientSummary> parse_summary(const std::string& text);

struct FenceSeen {
  std::string nspace;
  std::vector<std::uint32_t> ranks;
  bool collect_data = false;
  std::size_t data_bytes = 0;
};

// The pmix_fence_client binary meson hands the tests.
std::string fence_client_path();

class OneDaemon {
 public:
  OneDaemon();
  OneDaemon(const OneDaemon&) = delete;
  OneDaemon& operator=(const OneDaemon&) = delete;
  ~OneDaemon();

  Status start();
  PmixServer& server() { return *server_; }
  event_base* base() { return base_.get(); }
  const std::string& tmpdir() const { return dir_.path(); }
  // The server's registrations, answered (the loop runs until they are).
  Status register_job(const PmixJob& job);
  Status deregister_job(const std::string& nspace);

  // A job of `ranks` ranks, all on this daemon (vpid 0, node 0).
  static PmixJob local_job(const std::string& nspace, std::uint32_t ranks);

  // Registers every rank of `job` as a client, forks one pmix_fence_client
  // per rank with `args`, and runs the loop until all have exited or the
  // deadline passed (then the rest are killed by PID).
  Result<std::vector<ClientRun>> run_clients(const PmixJob& job,
                                             const std::vector<std::string>& args,
                                             std::chrono::milliseconds deadline);

  // Forgets what the hooks saw so far.
  void clear_records();

  std::vector<FenceSeen> fences;
  std::vector<PmixAbortNotice> aborts;
  std::vector<std::string> unsupported;  // calls answered NOT-SUPPORTED, in order
  std::vector<std::pair<std::string, std::uint32_t>> finalized;  // nspace, rank
  std::size_t direct_modex_requests = 0;

 private:
  void on_request(PmixRequest request);

  TempDir dir_{"grove-pmix-test"};
  EventBasePtr base_;
  std::unique_ptr<PmixServer> server_;
};

// The daemon shared by every test case of the binary, started on first use;
// start_status() says whether it runs.
OneDaemon& shared_daemon();
const Status& shared_daemon_status();
void destroy_shared_daemon();

}  // namespace grove::pmix_test
