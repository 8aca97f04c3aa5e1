// grove start / stop / status / bench: a DVM's life from the command line.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "daemon/controller.h"
#include "daemon/host_info.h"
#include "launcher/bench_plot.h"
#include "launcher/commands.h"
#include "launcher/dvm_client.h"
#include "launcher/log_tee.h"
#include "launcher/status_tree.h"
#include "os/child_process.h"
#include "os/malloc_tuning.h"
#include "os/process_limits.h"
#include "plm/host_list.h"
#include "plm/remote_launcher.h"
#include "plm/slurm_allocation.h"
#include "plm/spawn_plan.h"
#include "util/text.h"

namespace grove {
namespace {

struct StartOptions {
  std::uint32_t local = 0;
  bool daemonize = false;
  std::string report_uri;
  std::string hosts;     // --host a,b:4,c
  std::string hostfile;  // --hostfile FILE
  std::string launcher = "auto";
  std::string prefix;
  bool another = false;              // start even if one is running
  bool verbose_to_terminal = false;  // --daemonize: the log on the terminal too
  bool one_job = false;              // grove run's own DVM: ends with that process
  std::string log_path;              // a background DVM's log file (set when forked)
};

// The DVM's hosts, who starts whom and how; no plan means daemons on this
// host only.
struct DvmLayout {
  std::optional<SpawnPlan> plan;
  RemoteLauncherKind launcher = RemoteLauncherKind::ssh;
};

Result<std::vector<HostEntry>> listed_hosts(const StartOptions& options) {
  return hosts_from_options(options.hosts, options.hostfile);
}

// Inside an allocation: its nodes, or those of them the user listed.
Result<std::vector<HostEntry>> slurm_hosts(const StartOptions& options, bool listed) {
  auto allocation =
      allocation_hosts(read_slurm_environment([](const char* name) { return std::getenv(name); }));
  if (!allocation) return Error{"--launcher slurm: " + allocation.error().message};
  if (!listed) return allocation;
  auto hosts = listed_hosts(options);
  if (!hosts) return hosts.error();
  auto selected = select_from_allocation(*allocation, *hosts);
  if (!selected) return Error{"--launcher slurm: " + selected.error().message};
  return selected;
}

Result<DvmLayout> layout_from_options(const CliContext& context, const StartOptions& options) {
  const bool listed = !options.hosts.empty() || !options.hostfile.empty();
  const bool in_allocation = std::getenv("SLURM_JOB_ID") != nullptr;
  if (options.local != 0 && listed)
    return Error{"--local and --host/--hostfile exclude each other"};
  std::string launcher = options.launcher;
  if (launcher == "auto") {
    // As prte: an allocation's nodes first, then the hosts given, else here.
    launcher = options.local != 0 ? "local" : in_allocation ? "slurm" : listed ? "ssh" : "local";
  }
  if (launcher == "local") {
    if (listed)
      return Error{"--launcher local starts daemons on this host only; drop --host/--hostfile"};
    return DvmLayout{};
  }
  if (options.local != 0)
    return Error{"--local starts daemons on this host only; it excludes --launcher " + launcher};
  const auto radix = static_cast<std::uint32_t>(context.params.get_int("rml_base_radix"));
  DvmLayout layout;
  Result<std::vector<HostEntry>> hosts = Error{""};
  if (launcher == "slurm") {
    layout.launcher = RemoteLauncherKind::slurm;
    hosts = slurm_hosts(options, listed);
  } else {
    if (!listed) return Error{"--launcher ssh needs --host or --hostfile"};
    hosts = listed_hosts(options);
  }
  if (!hosts) return hosts.error();
  auto plan = plan_dvm(*hosts, local_hostname(), radix,
                       launcher == "ssh" && !context.params.get_bool("plm_ssh_no_tree_spawn"));
  if (!plan) return plan.error();
  layout.plan = std::move(*plan);
  return layout;
}

// Runs the controller in this process; `ready_fd` (if >= 0) receives one line
// when the DVM is ready ("ready ...") or could not start ("error ...").
int run_controller(CliContext& context, const StartOptions& options, int ready_fd) {
  raise_open_file_limit();
  Log log("grove controller " + local_hostname() + ":" + std::to_string(getpid()), context.params);
  ControllerOptions controller_options;
  controller_options.daemons = options.local == 0 ? 2 : options.local;
  controller_options.report_uri = options.report_uri;
  auto layout = layout_from_options(context, options);
  if (!layout) {
    print_cli_error(layout.error().message);
    return 1;
  }
  if (layout->plan) controller_options.daemons = layout->plan->size();
  controller_options.plan = std::move(layout->plan);
  controller_options.launcher = layout->launcher;
  controller_options.prefix = options.prefix;
  controller_options.one_job = options.one_job;
  controller_options.log_path = options.log_path;
  if (controller_options.prefix.empty()) {
    if (const char* prefix = std::getenv("GROVE_PREFIX")) controller_options.prefix = prefix;
  }
  const std::uint32_t daemons = controller_options.daemons;
  controller_options.on_ready = [ready_fd, daemons](const std::string& error) {
    std::string line =
        error.empty() ? "ready " + std::to_string(daemons) + " " + std::to_string(getpid()) + "\n"
                      : "error " + error + "\n";
    if (ready_fd >= 0) {
      ssize_t ignored = write(ready_fd, line.data(), line.size());
      (void)ignored;
      close(ready_fd);
    } else if (error.empty()) {
      std::printf("grove: DVM ready: %u daemon%s, controller pid %d\n", daemons,
                  daemons == 1 ? "" : "s", getpid());
      std::fflush(stdout);
    }
  };
  // The controller is vpid 0 of the DVM: it handles every release first.
  if (!keep_freed_memory(context.params.get_size("daemon_malloc_top_pad"))) {
    log.verbose("daemon", 1, "the allocator refused daemon_malloc_top_pad");
  }
  Controller controller(context.params, log, context.help, std::move(controller_options));
  return controller.run();
}

volatile std::sig_atomic_t start_interrupted = 0;
void on_start_interrupted(int) {
  start_interrupted = 1;
}

// The forked controller, in a session of its own with /dev/null for stdin:
// its output (and its daemons') goes to a log beside its socket.
int run_in_background(CliContext& context, const StartOptions& options, int ready_fd) {
  std::string log_path = "/dev/null";
  if (auto base = session_base()) log_path = *base + "/dvm-" + std::to_string(getpid()) + ".log";
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd >= 0 && options.verbose_to_terminal) {
    // Still the caller's stderr here: the copies go there too.
    if (const int tee = start_log_tee(log_fd, STDERR_FILENO); tee >= 0) {
      close(log_fd);
      log_fd = tee;
    }
  }
  if (log_fd >= 0) {
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    close(log_fd);
  }
  StartOptions logged = options;
  if (log_path != "/dev/null") logged.log_path = log_path;
  const int code = run_controller(context, logged, ready_fd);
  // A log nobody wrote to is not kept (a one-shot grove run's DVM leaves
  // none). Through a tee the file may still be filling: kept then.
  struct stat written {};
  if (!options.verbose_to_terminal && log_path != "/dev/null" &&
      stat(log_path.c_str(), &written) == 0 && S_ISREG(written.st_mode) && written.st_size == 0)
    unlink(log_path.c_str());
  return code;
}

// Forks the controller into the background (its own session, its output to
// a log beside its socket) and waits until it is ready: its pid, or why it
// did not start.
Result<pid_t> daemonize_controller(CliContext& context, const StartOptions& options) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error{"pipe failed"};
  // The controller runs in a session of its own, out of reach of the
  // terminal's Ctrl-C: until it is ready, a Ctrl-C (or SIGTERM, SIGHUP) of
  // this process stops it too, rather than leaving a DVM nobody asked for.
  struct sigaction interrupt {
  }, before[3];
  interrupt.sa_handler = on_start_interrupted;  // no SA_RESTART: the read below returns
  sigemptyset(&interrupt.sa_mask);
  const int caught[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; ++i)
    sigaction(caught[i], &interrupt, &before[i]);
  auto restore = [&] {
    for (int i = 0; i < 3; ++i)
      sigaction(caught[i], &before[i], nullptr);
  };
  ChildSpec controller;
  controller.fds = {ChildFd::dev_null(STDIN_FILENO, O_RDWR)};
  controller.close_fds = {fds[0]};
  controller.group = ProcessGroup::own_session;
  controller.signals = SignalReset::none;  // grove's own code runs on: restore() below
  controller.mask = SignalMask::inherit;
  // grove run's own DVM must not outlive it, however it ends (SIGKILL
  // included): the controller stops on SIGTERM.
  if (options.one_job) controller.parent_death_signal = SIGTERM;
  auto forked = fork_child(controller, [&] {
    restore();
    return run_in_background(context, options, fds[1]);
  });
  if (!forked) {
    restore();
    close(fds[0]);
    close(fds[1]);
    return Error{"fork failed"};
  }
  const pid_t pid = *forked;
  close(fds[1]);
  std::string line;
  char buffer[4096];
  for (;;) {
    if (start_interrupted) break;
    ssize_t got = read(fds[0], buffer, sizeof buffer);
    if (got > 0) {
      line.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  restore();
  if (start_interrupted && line.rfind("ready", 0) != 0) {
    // The controller stops its daemons on SIGTERM; it is waited for, and
    // killed if it has not gone within 10 s.
    kill(pid, SIGTERM);
    for (int waited_ms = 0; waitpid(pid, nullptr, WNOHANG) == 0; waited_ms += 20) {
      if (waited_ms >= 10'000) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        break;
      }
      usleep(20'000);
    }
    return Error{"interrupted: the DVM being started was stopped"};
  }
  if (line.rfind("ready", 0) == 0) return pid;
  waitpid(pid, nullptr, 0);
  if (line.rfind("error ", 0) == 0) return Error{std::string(trim(line.substr(6)))};
  return Error{"the DVM exited before it was ready"};
}

int start_dvm(CliContext& context, const StartOptions& options) {
  // A second DVM is rarely meant: every later command would have to pick
  // one. (A check, not a lock: two starts at the same instant both pass.)
  // A DVM `grove run` started for its own job ends with it: not counted.
  if (!options.another) {
    auto running = shared_dvms();
    if (!running.empty()) {
      std::string which;
      for (const DvmInfo& info : running)
        which += (which.empty() ? "" : ", ") + std::string("controller pid ") +
                 std::to_string(info.pid) + " (" + info.directory + ")";
      print_cli_error(
          std::string(running.size() == 1 ? "a DVM is" : "DVMs are") + " already running: " +
          which + "; stop it with 'grove stop', or start one more with 'grove start --another'");
      return 1;
    }
  }
  // Bad host lists fail here, before anything forks.
  auto layout = layout_from_options(context, options);
  if (!layout) {
    print_cli_error(layout.error().message);
    return 1;
  }
  const std::uint32_t daemons =
      layout->plan ? layout->plan->size() : (options.local == 0 ? 2 : options.local);
  if (!options.daemonize) return run_controller(context, options, -1);
  Result<pid_t> pid = daemonize_controller(context, options);
  if (!pid) {
    print_cli_error(pid.error().message);
    return start_interrupted ? 130 : 1;
  }
  std::printf("grove: DVM ready: %u daemon%s, controller pid %d\n", daemons,
              daemons == 1 ? "" : "s", *pid);
  return 0;
}

}  // namespace

Result<pid_t> start_local_dvm(CliContext& context, std::uint32_t daemons,
                              const std::string& uri_file, bool verbose_to_terminal,
                              const DvmHosts& hosts) {
  StartOptions options;
  options.verbose_to_terminal = verbose_to_terminal;
  options.hosts = hosts.hosts;
  options.hostfile = hosts.hostfile;
  if (hosts.hosts.empty() && hosts.hostfile.empty()) options.local = daemons;
  options.daemonize = true;
  options.another = true;  // the caller found none running
  options.one_job = true;
  options.report_uri = uri_file;
  return daemonize_controller(context, options);
}

namespace {

// How a DVM's fences travel, from its status or a bench reply.
std::string fence_shape(const nlohmann::json& reply) {
  return reply.value("fence_topology", "tree") == "bruck" ? "as a Bruck exchange"
                                                          : "over the trees";
}

// `grove status`, with every daemon's flight recording written into `dump`
// (absolute, as the controller writes it) unless it is empty.
Result<nlohmann::json> ask_status(const std::string& selector, const std::string& dump) {
  nlohmann::json request = {{"cmd", "status"}};
  if (!dump.empty()) request["dump"] = std::filesystem::absolute(dump).lexically_normal().string();
  return ask_dvm(selector, request, std::chrono::seconds(dump.empty() ? 30 : 120));
}

// What a dump's status says of it: an error, or (unless quiet) where it went.
bool flight_dump_written(const nlohmann::json& status, bool quiet) {
  const auto flight = status.find("flight_dump");
  if (flight == status.end()) return true;
  if (flight->contains("error")) {
    print_cli_error("the flight recordings were not written: " +
                    (*flight)["error"].get<std::string>());
    return false;
  }
  if (!quiet) {
    std::fprintf(stderr, "grove: flight recordings of %llu daemons written to %s\n",
                 static_cast<unsigned long long>((*flight)["files"].get<std::uint64_t>()),
                 (*flight)["dir"].get<std::string>().c_str());
  }
  return true;
}

int stop_dvm(const std::string& selector, const std::string& dump) {
  if (!dump.empty()) {
    // The recordings die with the daemons: without them, no stop.
    auto status = ask_status(selector, dump);
    if (!status) {
      print_cli_error(status.error().message);
      return 1;
    }
    if (!flight_dump_written(*status, false)) {
      print_cli_error("the DVM was not stopped (grove stop without --dump stops it)");
      return 1;
    }
  }
  auto reply = ask_dvm(selector, {{"cmd", "stop"}}, std::chrono::seconds(120));
  if (!reply) {
    print_cli_error(reply.error().message);
    return 1;
  }
  const int stopped = (*reply)["stopped"].get<int>();
  const int lost = reply->value("lost", 0);
  std::printf("grove: DVM stopped (%d daemon%s%s)\n", stopped, stopped == 1 ? "" : "s",
              lost == 0 ? "" : ("; " + std::to_string(lost) + " had been lost").c_str());
  return 0;
}

void print_status(const nlohmann::json& status) {
  std::printf("DVM: controller pid %d, %d daemons, session %s\n", status["pid"].get<int>(),
              status["size"].get<int>(), status["session"].get<std::string>().c_str());
  const auto log = status.find("log");
  std::printf("log: %s (grove log prints it)\n",
              log != status.end() && log->is_string()
                  ? log->get<std::string>().c_str()
                  : "the terminal of the grove start that runs it");
  std::printf("epoch %llu, tree version %llu, failed:",
              static_cast<unsigned long long>(status["epoch"].get<std::uint64_t>()),
              static_cast<unsigned long long>(status["tree_version"].get<std::uint64_t>()));
  if (status["failed"].empty()) std::printf(" none");
  for (const auto& vpid : status["failed"])
    std::printf(" %u", vpid.get<unsigned>());
  std::printf("\nrouting radix %d, release radix %d, low-radix release %s, fences %s\n",
              status["radix"].get<int>(), status["radix2"].get<int>(),
              status["low_radix_release"].get<bool>() ? "on" : "off", fence_shape(status).c_str());
  if (!status["params"].empty()) {
    std::printf("parameters in force:");
    for (const auto& [name, value] : status["params"].items()) {
      std::printf(" %s=%s", name.c_str(), value.get<std::string>().c_str());
    }
    std::printf("\n");
  }
  std::map<unsigned, nlohmann::json> counters;
  for (const auto& entry : status["counters"])
    counters[entry["vpid"].get<unsigned>()] = entry;
  // "held" is what the daemon's engine keeps now: ops, open fence rounds and
  // remembered fence signatures; none of it grows with the jobs a DVM has run.
  std::printf("%5s  %-20s %8s  %-8s %14s %14s %14s  %s\n", "vpid", "host", "pid", "state",
              "sent frames", "sent bytes", "held o/f/s", "history");
  for (const auto& daemon : status["daemons"]) {
    unsigned vpid = daemon["vpid"].get<unsigned>();
    auto found = counters.find(vpid);
    auto field = [&](const char* name) {
      return found == counters.end() ? std::string("-")
                                     : std::to_string(found->second[name].get<std::uint64_t>());
    };
    std::string held = found == counters.end() ? "-"
                                               : field("held_ops") + "/" + field("open_fences") +
                                                     "/" + field("fence_signatures");
    // Its life: "up", or "up,lost,back" for a daemon that came back.
    std::string history;
    for (const auto& event : daemon.value("history", nlohmann::json::array()))
      history += (history.empty() ? "" : ",") + event.get<std::string>();
    std::printf("%5u  %-20s %8d  %-8s %14s %14s %14s  %s\n", vpid,
                daemon["host"].get<std::string>().c_str(), daemon["pid"].get<int>(),
                daemon["state"].get<std::string>().c_str(), field("sent_frames").c_str(),
                field("sent_bytes").c_str(), held.c_str(), history.c_str());
  }
  std::printf("jobs:\n");
  print_jobs(status["jobs"], false);
}

int status_dvm(const std::string& selector, bool json, bool tree, const std::string& dump) {
  auto reply = ask_status(selector, dump);
  if (!reply) {
    print_cli_error(reply.error().message);
    return 1;
  }
  const int status = flight_dump_written(*reply, json) ? 0 : 1;
  if (tree) return std::max(status, print_status_tree(*reply, json));
  if (json) {
    std::cout << reply->dump(2) << "\n";
  } else {
    print_status(*reply);
  }
  return status;
}

int bench_dvm(const std::string& selector, const std::string& kind, const std::string& size_text,
              std::uint64_t count, bool json, const std::string& plot) {
  auto size = parse_size(size_text);
  if (!size) {
    print_cli_error("--size '" + size_text + "': expected a byte count such as 33, 10KB or 1M");
    return 1;
  }
  auto reply =
      ask_dvm(selector, {{"cmd", "bench"}, {"kind", kind}, {"size", *size}, {"count", count}},
              std::chrono::seconds(3600));
  if (!reply) {
    print_cli_error(reply.error().message);
    return 1;
  }
  std::string what = kind == "release" ? "release of " + format_bytes(static_cast<double>(*size))
                                       : std::string("barrier");
  if (!plot.empty()) {
    const std::string title = what + " x " + std::to_string(count) + " on " +
                              std::to_string((*reply)["daemons"].get<int>()) + " daemons";
    if (Status drawn = plot_spans((*reply)["spans_us"].get<std::vector<double>>(),
                                  (*reply)["median_us"].get<double>(),
                                  (*reply)["p99_us"].get<double>(), title, plot);
        !drawn) {
      print_cli_error(drawn.error().message);
      return 1;
    }
  }
  if (json) {
    std::cout << reply->dump(2) << "\n";
    return 0;
  }
  std::printf("%s x %llu on %d daemons (radix %d, radix2 %d, low-radix release %s, fences %s)\n",
              what.c_str(), static_cast<unsigned long long>(count), (*reply)["daemons"].get<int>(),
              (*reply)["radix"].get<int>(), (*reply)["radix2"].get<int>(),
              (*reply)["low_radix_release"].get<bool>() ? "on" : "off",
              fence_shape(*reply).c_str());
  std::printf(
      "started-to-completed on the controller's clock: min %.1f us, median %.1f us, "
      "mean %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n",
      (*reply)["min_us"].get<double>(), (*reply)["median_us"].get<double>(),
      (*reply)["mean_us"].get<double>(), (*reply)["p50_us"].get<double>(),
      (*reply)["p99_us"].get<double>(), (*reply)["max_us"].get<double>());
  return 0;
}

}  // namespace

void add_dvm_commands(CLI::App& app, CliContext& context) {
  auto start = std::make_shared<StartOptions>();
  CLI::App* start_command =
      app.add_subcommand("start", "Start a DVM on this host, or across hosts over ssh or Slurm");
  add_param_options(*start_command, context);
  start_command
      ->add_option("--local", start->local,
                   "Daemons on this host, the controller included (default 2)")
      ->check(CLI::Range(1u, 4096u));
  start_command->add_option("--host,-H", start->hosts,
                            "Hosts to span, as HOST[:SLOTS],... (user@host allowed)");
  start_command->add_option("--hostfile", start->hostfile,
                            "File of hosts: '[user@]host [slots=N] [max_slots=M]' per line");
  start_command
      ->add_option("--launcher", start->launcher,
                   "How daemons start: auto (slurm inside an allocation, else ssh with hosts, else "
                   "local), local, ssh, slurm")
      ->check(CLI::IsMember({"auto", "local", "ssh", "slurm"}))
      ->capture_default_str();
  start_command->add_option("--prefix", start->prefix,
                            "grove's install directory on remote hosts (default: $GROVE_PREFIX, "
                            "else this groved's absolute path)");
  start_command->add_flag("--daemonize", start->daemonize,
                          "Return once the DVM is ready; it keeps running in the background");
  start_command->add_option("--report-uri", start->report_uri,
                            "Write the DVM's URI (unix:SOCKET) to FILE once ready");
  start_command->add_flag("--another", start->another,
                          "Start even though a DVM of yours already runs here (later commands "
                          "then pick one with --dvm)");
  start_command->add_flag("--verbose-to-terminal", start->verbose_to_terminal,
                          "With --daemonize: the DVM's log (verbose lines, errors) comes to this "
                          "terminal as well as to its log file");
  context.actions[start_command] = [&context, start] { return start_dvm(context, *start); };

  auto stop_selector = std::make_shared<std::string>();
  CLI::App* stop_command = app.add_subcommand("stop", "Stop a running DVM in order");
  add_param_options(*stop_command, context);
  add_dvm_option(*stop_command, *stop_selector);
  auto stop_dump = std::make_shared<std::string>();
  stop_command->add_option("--dump", *stop_dump,
                           "First write every daemon's flight recording into this directory "
                           "(as grove status --dump); if that fails, the DVM is not stopped");
  context.actions[stop_command] = [stop_selector, stop_dump] {
    return stop_dvm(*stop_selector, *stop_dump);
  };

  auto status_selector = std::make_shared<std::string>();
  auto status_json = std::make_shared<bool>(false);
  CLI::App* status_command =
      app.add_subcommand("status", "Daemons, failures, epoch, parameters and counters of a DVM");
  add_param_options(*status_command, context);
  add_dvm_option(*status_command, *status_selector);
  status_command->add_flag("--json", *status_json, "Print JSON");
  auto status_tree = std::make_shared<bool>(false);
  status_command->add_flag(
      "--tree", *status_tree,
      "Draw the routing and release trees: host, state (up, suspect, lost, promoted), round trip");
  auto status_dump = std::make_shared<std::string>();
  status_command->add_option("--dump", *status_dump,
                             "Write every daemon's flight recording (its engine's inputs) into "
                             "this directory, for grove sim --replay");
  context.actions[status_command] = [status_selector, status_json, status_tree, status_dump] {
    return status_dvm(*status_selector, *status_json, *status_tree, *status_dump);
  };

  struct BenchOptions {
    std::string selector;
    std::string kind;
    std::string size = "33";
    std::uint64_t count = 10;
    bool json = false;
    std::string plot;
  };
  auto bench = std::make_shared<BenchOptions>();
  CLI::App* bench_command =
      app.add_subcommand("bench", "Time releases or barriers among the daemons of a running DVM");
  add_param_options(*bench_command, context);
  add_dvm_option(*bench_command, bench->selector);
  bench_command->add_option("kind", bench->kind, "release or barrier")
      ->required()
      ->check(CLI::IsMember({"release", "barrier"}));
  bench_command
      ->add_option("--size", bench->size,
                   "Release payload, or a barrier's aggregate (each of N daemons contributes "
                   "SIZE/N bytes), in bytes")
      ->capture_default_str();
  bench_command->add_option("--count", bench->count, "How many, one after another")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000}))
      ->capture_default_str();
  bench_command->add_flag("--json", bench->json, "Print JSON with every span");
  bench_command
      ->add_option("--plot", bench->plot,
                   "Draw every span, the median and p99 into FILE.png (needs gnuplot)")
      ->type_name("FILE");
  context.actions[bench_command] = [bench] {
    return bench_dvm(bench->selector, bench->kind, bench->size, bench->count, bench->json,
                     bench->plot);
  };
}

}  // namespace grove
