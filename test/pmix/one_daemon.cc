#include "one_daemon.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>

namespace grove::pmix_test {

std::optional<ClientSummary> parse_summary(const std::string& text) {
  static const std::regex pattern(
      R"(rank (\d+)/(\d+): (\d+) rounds ok, modex (\d+) bytes, digest ([0-9a-f]{16}), )"
      R"(local (\d+)/(\d+) on (\S+))");
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  ClientSummary summary;
  summary.rank = static_cast<std::uint32_t>(std::stoul(match[1]));
  summary.size = static_cast<std::uint32_t>(std::stoul(match[2]));
  summary.rounds = std::stoi(match[3]);
  summary.modex_bytes = std::stoull(match[4]);
  summary.digest = match[5];
  summary.local_rank = static_cast<std::uint32_t>(std::stoul(match[6]));
  summary.local_size = static_cast<std::uint32_t>(std::stoul(match[7]));
  summary.node = match[8];
  return summary;
}

std::string fence_client_path() {
  const char* path = std::getenv("GROVE_PMIX_FENCE_CLIENT");
  return path == nullptr ? std::string() : std::string(path);
}

OneDaemon::OneDaemon() : base_(event_base_new()) {}

OneDaemon::~OneDaemon() {
  server_.reset();  // PMIx_server_finalize before the base goes away
}

void OneDaemon::on_request(PmixRequest request) {
  if (auto* fence = std::get_if<PmixFenceCall>(&request)) {
    fences.push_back(
        FenceSeen{fence->nspace, fence->ranks, fence->collect_data, fence->data.size()});
    // One server hosts every participant: its blob is the whole aggregate.
    fence->answer(kPmixSuccess, std::move(fence->data));
  } else if (auto* abort = std::get_if<PmixAbortNotice>(&request)) {
    aborts.push_back(std::move(*abort));
  } else if (auto* finalize = std::get_if<PmixFinalizedNotice>(&request)) {
    finalized.emplace_back(std::move(finalize->nspace), finalize->rank);
  } else if (auto* modex = std::get_if<PmixDirectModexCall>(&request)) {
    // Every rank is local here, so PMIx should never ask; fail it if it does.
    ++direct_modex_requests;
    modex->answer(kPmixErrorNotFound, {});
  } else if (std::holds_alternative<PmixConnectedNotice>(request) ||
             std::holds_alternative<PmixRefusedNotice>(request) ||
             std::holds_alternative<PmixAnsweredAgainNotice>(request) ||
             std::holds_alternative<HandshakeCut>(request) ||
             std::holds_alternative<PmixEvent>(request)) {
    // Nothing these tests look at.
  } else {
    // Served by nothing here (no publish store, no launcher, ...): dropped,
    // which answers the client NOT-SUPPORTED. A notice of an unsupported
    // call names one the server refused by itself.
    unsupported.push_back(pmix_call_name(request));
  }
}

Status OneDaemon::start() {
  if (!base_) return Error{"event_base_new failed"};
  if (dir_.path().empty()) return Error{"cannot create a temporary directory"};
  PmixServerOptions options;
  options.tmpdir = dir_.path() + "/pmix";
  options.daemon_vpid = 0;
  // spawn_child execs at once, without the daemon's hold for the client gate;
  // the gate is tested in test/unit and test/multinode.
  options.verify_clients = false;
  Result<std::unique_ptr<PmixServer>> server = PmixServer::create(
      base_.get(), options, [this](PmixRequest request) { on_request(std::move(request)); });
  if (!server) return server.error();
  server_ = std::move(*server);
  return ok_status();
}

PmixJob OneDaemon::local_job(const std::string& nspace, std::uint32_t ranks) {
  PmixJob job;
  job.nspace = nspace;
  job.size = ranks;
  job.universe_size = ranks;
  job.node_hostnames = {"node0"};
  job.this_node_id = 0;
  for (std::uint32_t rank = 0; rank < ranks; ++rank) {
    PmixProcPlacement proc;
    proc.rank = rank;
    proc.daemon_vpid = 0;
    proc.local_rank = static_cast<std::uint16_t>(rank);
    proc.node_rank = static_cast<std::uint16_t>(rank);
    proc.node_id = 0;
    job.procs.push_back(proc);
  }
  return job;
}

void OneDaemon::clear_records() {
  fences.clear();
  aborts.clear();
  unsupported.clear();
  finalized.clear();
  direct_modex_requests = 0;
}

namespace {

std::unique_ptr<OneDaemon> shared;
Status shared_status = ok_status();

}  // namespace

OneDaemon& shared_daemon() {
  if (!shared) {
    shared = std::make_unique<OneDaemon>();
    shared_status = shared->start();
  }
  return *shared;
}

const Status& shared_daemon_status() {
  shared_daemon();
  return shared_status;
}

void destroy_shared_daemon() {
  shared.reset();
}

namespace {

int open_output(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

}  // namespace

Status OneDaemon::register_job(const PmixJob& job) {
  return wait_for_answer(base_.get(),
                         [&](PmixServer::StatusDone done) { server_->register_job(job, done); });
}

Status OneDaemon::deregister_job(const std::string& nspace) {
  return wait_for_answer(
      base_.get(), [&](PmixServer::StatusDone done) { server_->deregister_job(nspace, done); });
}

Result<std::vector<ClientRun>> OneDaemon::run_clients(const PmixJob& job,
                                                      const std::vector<std::string>& args,
                                                      std::chrono::milliseconds deadline) {
  std::string client = fence_client_path();
  if (client.empty()) return Error{"GROVE_PMIX_FENCE_CLIENT is not set"};
  std::vector<ChildProcess> children;
  ChildGuard guard(children);
  std::vector<ClientRun> runs;
  for (const PmixProcPlacement& proc : job.procs) {
    Result<std::vector<std::string>> env =
        register_client_env(base_.get(), *server_, job.nspace, proc.rank);
    if (!env) return env.error();
    std::vector<std::string> argv = {client};
    argv.insert(argv.end(), args.begin(), args.end());
    ClientRun run;
    run.rank = proc.rank;
    run.out = dir_.path() + "/out-" + job.nspace + "-" + std::to_string(proc.rank);
    run.err = dir_.path() + "/err-" + job.nspace + "-" + std::to_string(proc.rank);
    int out_fd = open_output(run.out);
    int err_fd = open_output(run.err);
    Result<ChildProcess> child = spawn_child(argv, *env, out_fd, err_fd);
    ::close(out_fd);
    ::close(err_fd);
    if (!child) return child.error();
    children.push_back(*child);
    runs.push_back(run);
  }
  run_loop_until(
      base_.get(),
      [&] {
        bool all = true;
        for (ChildProcess& child : children)
          all = poll_child(child) && all;
        return all;
      },
      deadline);
  for (ChildProcess& child : children)
    kill_child(child);  // only those still running at the deadline
  for (std::size_t i = 0; i < runs.size(); ++i) {
    runs[i].process = children[i];
    runs[i].out = read_text_file(runs[i].out);
    runs[i].err = read_text_file(runs[i].err);
  }
  return runs;
}

}  // namespace grove::pmix_test
