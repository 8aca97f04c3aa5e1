// grove run: launch a parallel job on a DVM (or on one started for it) and
// behave like the job: its output on our terminal, its status as ours.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "control/control_socket.h"
#include "control/session_dir.h"
#include "jobs/job_map.h"
#include "launcher/commands.h"
#include "launcher/dvm_client.h"
#include "launcher/job_output.h"
#include "launcher/run_options.h"
#include "launcher/stdin_forwarder.h"
#include "plm/host_list.h"
#include "util/text.h"

extern char** environ;

namespace grove {
namespace {

// Waits (up to `limit`) for child `pid` to end and reaps it: whether it
// ended with status 0.
bool wait_for_child(pid_t pid, std::chrono::milliseconds limit) {
  if (pid <= 0) return false;
  const auto give_up = std::chrono::steady_clock::now() + limit;
  int status = 0;
  pid_t reaped = 0;
  while ((reaped = waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return reaped == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// What the ranks get of this process's environment: all of it, as srun and
// flux do, but what names this process's own PMIx server and client (a
// `grove run` inside a rank must not hand its ranks its own identity; PMIx
// MCA settings, PMIX_MCA_*, are the user's and go along) and the shell's
// idea of the directory (each rank gets its own PWD).
std::vector<std::string> forwarded_environment() {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view item(*entry);
    const std::string_view name = item.substr(0, item.find('='));
    const bool pmix_identity = name.rfind("PMIX_", 0) == 0 && name.rfind("PMIX_MCA_", 0) != 0;
    if (pmix_identity || name.rfind("PMI_", 0) == 0 || name == "PWD" || name == "OLDPWD") continue;
    env.emplace_back(item);
  }
  return env;
}

Result<std::vector<std::string>> exported_environment(const std::vector<std::string>& exports,
                                                      const std::vector<std::string>& settings) {
  std::vector<std::string> env;
  for (const auto& item : settings) {
    if (item.find('=') == std::string::npos || item.front() == '=')
      return Error{"--env " + item + ": expected VAR=value"};
  }
  for (const auto& item : exports) {
    if (item.find('=') != std::string::npos) {
      env.push_back(item);
      continue;
    }
    const char* value = std::getenv(item.c_str());
    if (value == nullptr) return Error{"-x " + item + ": no such variable in this environment"};
    env.push_back(item + "=" + value);
  }
  env.insert(env.end(), settings.begin(), settings.end());
  return env;
}

// --display-map: which daemon runs which ranks, before any output.
void print_map(const nlohmann::json& event, std::uint32_t job) {
  const nlohmann::json& map = event["map"];
  std::fprintf(stderr, "grove: job %u: %u ranks on %zu daemons (--map-by %s, --bind-to %s)\n", job,
               event.value("np", 0u), map["nodes"].size(),
               map.value("map_by", std::string()).c_str(),
               map.value("bind_to", std::string()).c_str());
  for (const auto& node : map["nodes"]) {
    std::string ranks;
    for (const auto& rank : node["ranks"])
      ranks += (ranks.empty() ? "" : " ") + std::to_string(rank.get<std::uint32_t>());
    std::fprintf(stderr, "grove:   daemon %u (%s, %u slots): ranks %s\n",
                 node["daemon"].get<unsigned>(), node["host"].get<std::string>().c_str(),
                 node["slots"].get<unsigned>(), ranks.c_str());
  }
}

// The runtime parameters this command was given (--mca, --param-file):
// the DVM checks they are its own.
nlohmann::json given_params(const ParamRegistry& params) {
  nlohmann::json given = nlohmann::json::object();
  for (const ParamEntry* entry : params.entries()) {
    const ParamSourceKind source = entry->origin.kind;
    if (source == ParamSourceKind::command_line || source == ParamSourceKind::param_file)
      given[entry->spec.name] = entry->value_text;
  }
  return given;
}

// -H and --hostfile as the DVM reads them: name and slots (0: not given).
Result<nlohmann::json> chosen_hosts(const RunOptions& options) {
  auto hosts = hosts_from_options(options.hosts, options.hostfile);
  if (!hosts) return hosts.error();
  nlohmann::json chosen = nlohmann::json::array();
  for (const HostEntry& host : *hosts) {
    nlohmann::json entry{{"name", host.name}};
    if (host.slots) entry["slots"] = *host.slots;
    chosen.push_back(entry);
  }
  return chosen;
}

// --map-by with -c K's :pe=K (one way of saying it, not both).
Result<std::string> map_by_with_cores(const RunOptions& options) {
  std::string map_by =
      options.npernode != 0 ? "ppr:" + std::to_string(options.npernode) + ":node" : options.map_by;
  if (options.cpus_per_rank == 0) return map_by;
  if (map_by.find(":pe=") != std::string::npos)
    return Error{"-c/--cpus-per-rank and --map-by ...:pe=K say the same thing; give one"};
  return map_by + ":pe=" + std::to_string(options.cpus_per_rank);
}

// What the ranks run with, from the command line.
struct JobInputs {
  nlohmann::json hosts;  // -H and --hostfile
  std::string map_by;
  std::vector<std::string> env;
};

// The job's hosts, mapping and environment; nullopt (the error printed) if
// the command line does not say them right.
std::optional<JobInputs> job_inputs(const CliContext& context, const RunOptions& options) {
  if (options.command.empty()) {
    print_cli_error("no program given (grove run -n NP PROGRAM [ARGS...])");
    return std::nullopt;
  }
  auto hosts = chosen_hosts(options);
  auto map_by = map_by_with_cores(options);
  if (!hosts || !map_by) {
    print_cli_error(!hosts ? hosts.error().message : map_by.error().message);
    return std::nullopt;
  }
  auto exported = exported_environment(options.exports, options.settings);
  if (!exported) {
    print_cli_error(exported.error().message);
    return std::nullopt;
  }
  JobInputs inputs{std::move(*hosts), std::move(*map_by), {}};
  // Later entries win: -x and --env over the forwarded environment.
  if (!options.no_forward_env) inputs.env = forwarded_environment();
  for (const auto& [name, value] : context.foreign_mca)
    inputs.env.push_back("OMPI_MCA_" + name + "=" + value);
  inputs.env.insert(inputs.env.end(), exported->begin(), exported->end());
  return inputs;
}

// The directory the ranks run in, as a shell's PWD names it; nullopt (the
// error printed) if it cannot be told.
std::optional<std::filesystem::path> job_directory(const RunOptions& options) {
  std::error_code error;
  std::filesystem::path cwd = std::filesystem::current_path(error);
  if (!options.wdir.empty()) cwd = std::filesystem::absolute(options.wdir, error);
  if (error) {
    print_cli_error("cannot tell the working directory: " + error.message());
    return std::nullopt;
  }
  cwd = cwd.lexically_normal();  // "/a/b/.." is "/a/", which a shell's PWD never is
  if (!cwd.has_filename() && cwd != cwd.root_path()) cwd = cwd.parent_path();
  return cwd;
}

// The DVM a job runs on, and whether grove run started it for the job.
struct JobDvm {
  std::string socket_path;
  std::string started_uri;   // empty: the DVM was running already
  pid_t own_controller = 0;  // the started DVM's controller, our child
};

struct StartedDvm {
  pid_t controller = 0;
  std::string uri;
};

// Starts a DVM for this job alone. Its URI comes back through a file in the
// private session base, where its session directory will live too.
Result<StartedDvm> start_dvm_for_job(CliContext& context, const RunOptions& options) {
  auto base = session_base();
  if (!base) return base.error();
  std::string uri_file = *base + "/run-uri-XXXXXX";  // mkstemp's template: it fills the Xs
  int fd = mkstemp(uri_file.data());
  if (fd < 0) {
    return Error{"cannot create a temporary file in " + *base + ": " + std::strerror(errno)};
  }
  close(fd);
  Result<pid_t> started =
      start_local_dvm(context, options.daemons, uri_file, options.verbose_to_terminal,
                      DvmHosts{options.hosts, options.hostfile});
  if (!started) {
    std::remove(uri_file.c_str());
    return started.error();
  }
  StartedDvm dvm{*started, {}};
  std::ifstream(uri_file) >> dvm.uri;
  std::remove(uri_file.c_str());
  return dvm;
}

// Use the DVM asked for, or the one running, or start one for this job;
// nullopt (the error printed) if none can be had.
std::optional<JobDvm> choose_dvm(CliContext& context, const RunOptions& options) {
  JobDvm dvm;
  std::string selector = options.dvm;
  // Another `grove run`'s own DVM is not one to use: it stops when that job
  // ends. The one shared DVM is named by its socket, as found in this one
  // look; with several, select_dvm below names them.
  std::vector<DvmInfo> shared = selector.empty() ? shared_dvms() : std::vector<DvmInfo>{};
  if (selector.empty() && shared.size() == 1) selector = "unix:" + shared.front().socket_path;
  if (selector.empty() && shared.empty()) {
    auto started = start_dvm_for_job(context, options);
    if (!started) {
      print_cli_error(started.error().message);
      return std::nullopt;
    }
    dvm.own_controller = started->controller;
    dvm.started_uri = started->uri;
    selector = dvm.started_uri;
  }
  if (options.verbose_to_terminal && dvm.started_uri.empty()) {
    std::fprintf(stderr,
                 "grove: note: --verbose-to-terminal applies to a DVM grove run starts; the "
                 "running one keeps its log to itself (grove start --daemonize "
                 "--verbose-to-terminal shows it)\n");
  }
  if (selector.rfind("unix:", 0) == 0) {
    dvm.socket_path = selector.substr(5);
  } else {
    auto found = select_dvm(selector);
    if (!found) {
      print_cli_error(found.error().message);
      return std::nullopt;
    }
    dvm.socket_path = found->socket_path;
  }
  return dvm;
}

nlohmann::json run_request(const CliContext& context, const RunOptions& options,
                           const JobInputs& inputs, const std::filesystem::path& cwd,
                           const std::string& stdin_target, const JobDvm& dvm) {
  nlohmann::json request{{"cmd", "run"},
                         {"argv", options.command},
                         {"env", inputs.env},
                         {"env_replaces", !options.no_forward_env},
                         {"cwd", cwd.string()},
                         {"np", options.np},
                         {"map_by", inputs.map_by},
                         {"oversubscribe", !options.nooversubscribe},
                         {"timeout", options.timeout_s},
                         {"params", given_params(context.params)},
                         {"stdin", stdin_target},
                         {"report_bindings", options.report_bindings},
                         {"display_map", options.display_map}};
  if (!options.bind_to.empty()) request["bind_to"] = options.bind_to;
  if (!options.rank_by.empty()) request["rank_by"] = options.rank_by;
  if (options.mpi != "auto") request["mpi"] = options.mpi;
  // The DVM started for this job runs on those hosts already, under the
  // names its daemons report (an address given to -H is not one of them).
  if (!inputs.hosts.empty() && dvm.started_uri.empty()) request["hosts"] = inputs.hosts;
  return request;
}

// Ctrl-C kills the job (through the controller); the job's end then ends us.
// The signals are blocked here, in the threads made later too, and taken by
// the thread returned until it gets SIGUSR2, our own "the job is over".
std::thread watch_interrupts(const std::string& socket_path,
                             const std::atomic<std::uint32_t>& job) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return std::thread([signals, &job, socket_path] {
    int received = 0;
    while (sigwait(&signals, &received) == 0) {
      if (received == SIGUSR2) return;
      if (job.load() == 0) continue;
      (void)control_request(socket_path,
                            {{"cmd", "kill"}, {"job", job.load()}, {"interrupted", true}},
                            std::chrono::seconds(10));
    }
  });
}

// grove run's status from the DVM's last word on the job.
int job_status(const Result<nlohmann::json>& reply, std::uint32_t job) {
  int status = 1;
  if (!reply) {
    print_cli_error(reply.error().message);
  } else if (!reply->value("ok", false)) {
    print_cli_error(reply->value("error", std::string("the job could not run")));
  } else {
    status = reply->value("status", 1);
    std::string message = reply->value("message", std::string());
    if (status != 0) {
      std::fprintf(stderr, "grove: job %u: %s\n", job,
                   message.empty() ? "failed" : message.c_str());
    }
  }
  return status;
}

// Runs the job and follows it, its input and output passing through here,
// to its end: grove run's status.
int follow_job(const std::string& socket_path, const nlohmann::json& request,
               const RunOptions& options, const std::string& stdin_target, JobOutputSink& sink) {
  std::atomic<std::uint32_t> job{0};
  std::thread watcher = watch_interrupts(socket_path, job);
  StdinForwarder input;
  auto reply = control_stream(socket_path, request, [&](const nlohmann::json& event) {
    const std::string kind = event.value("event", "");
    if (kind == "started") {
      job = event.value("job", 0u);
      if (stdin_target != "none") input.start(socket_path, job.load());
      if (event.contains("map")) print_map(event, job.load());
      if (event.value("oversubscribed", false)) {
        std::fprintf(stderr, "grove: note: %u ranks exceed the DVM's slots (oversubscribed)\n",
                     event.value("np", options.np));
      }
    } else if (kind == "output") {
      sink.write(event, job.load());
    }
  });
  input.stop();
  pthread_kill(watcher.native_handle(), SIGUSR2);
  watcher.join();
  return job_status(reply, job.load());
}

// The DVM's log (session_base()/dvm-PID.log, daemonize_controller's) is kept
// only when something went wrong: a clean one-shot run leaves no file.
void keep_dvm_log_if_needed(pid_t controller, bool clean) {
  if (auto base = session_base()) {
    const std::string log = *base + "/dvm-" + std::to_string(controller) + ".log";
    if (clean) {
      std::remove(log.c_str());
    } else if (access(log.c_str(), F_OK) == 0) {
      std::fprintf(stderr, "grove: the log of the DVM started for this job is kept: %s\n",
                   log.c_str());
    }
  }
}

// The DVM started for this job stops with it, asked here rather than by a
// `grove stop` process (one exec less on every one-shot run). The job's
// status, made 1 if the DVM would not stop.
int stop_dvm_of_job(const JobDvm& dvm, int status) {
  auto stopped = ask_dvm(dvm.started_uri, {{"cmd", "stop"}}, std::chrono::seconds(120));
  if (!stopped) {
    print_cli_error("stopping the DVM started for this job: " + stopped.error().message);
    if (status == 0) status = 1;
  } else {
    // On stderr, as every word of grove's own: stdout is the job's alone
    // (`x=$(grove run ...)` must hold what the ranks wrote, nothing more).
    const int daemons = stopped->value("stopped", 0);
    std::fprintf(stderr, "grove: DVM stopped (%d daemon%s)\n", daemons, daemons == 1 ? "" : "s");
  }
  // Its controller is this process's child: gone before this returns, so
  // it neither outlives the job nor dies half way through tidying up (its
  // parent's end would send it SIGTERM).
  const bool clean = wait_for_child(dvm.own_controller, std::chrono::seconds(10));
  keep_dvm_log_if_needed(dvm.own_controller, status == 0 && clean);
  return status;
}

int run_job(CliContext& context, const RunOptions& options) {
  const std::optional<JobInputs> inputs = job_inputs(context, options);
  if (!inputs) return kRunUsageError;
  const std::optional<std::filesystem::path> cwd = job_directory(options);
  if (!cwd) return 1;
  // A terminal whose foreground we are not would stop us at the first read
  // (SIGTTIN): run in the background, the ranks read /dev/null.
  const std::string stdin_target =
      StdinForwarder::readable_here() ? options.stdin_target : std::string("none");
  JobOutputSink sink(options.output);
  if (Status ready = sink.prepare(); !ready) {
    print_cli_error(ready.error().message);
    return 1;
  }
  const std::optional<JobDvm> dvm = choose_dvm(context, options);
  if (!dvm) return 1;
  const nlohmann::json request = run_request(context, options, *inputs, *cwd, stdin_target, *dvm);
  const int status = follow_job(dvm->socket_path, request, options, stdin_target, sink);
  if (dvm->started_uri.empty()) return status;
  return stop_dvm_of_job(*dvm, status);
}

}  // namespace

void add_run_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run", "Run a parallel job (starts a local DVM for it if none is running)");
  add_param_options(*command, context);
  add_run_options(*command, *options);
  // Everything from the program on belongs to the program, options included.
  command->prefix_command();
  command->footer("Usage: grove run -n NP [options] PROGRAM [ARGS...]");
  context.actions[command] = [&context, options, command] {
    // After a `--` (mpirun's and srun's habit), the program was set aside
    // before parsing, even one whose name starts with '-'.
    options->command = context.run_program.empty() ? command->remaining() : context.run_program;

    return run_job(context, *options);
  };
}

}  // namespace grove
