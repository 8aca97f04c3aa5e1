// grove ps / grove kill: a running DVM's jobs from the command line.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "daemon/control_plane/job_table.h"
#include "launcher/commands.h"
#include "launcher/dvm_client.h"
#include "util/signal_names.h"

namespace grove {
namespace {

std::string clock_time(std::int64_t seconds) {
  const auto when = static_cast<std::time_t>(seconds);
  std::tm local{};
  localtime_r(&when, &local);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &local);
  return text;
}

std::string duration_text(std::int64_t seconds) {
  if (seconds < 0) seconds = 0;
  char text[32];
  if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(seconds / 60),
                  static_cast<long long>(seconds % 60));
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(seconds / 3600),
                  static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60));
  }
  return text;
}

}  // namespace

// The jobs table, shared with `grove status`: running jobs, and ended ones
// when `all`.
void print_jobs(const nlohmann::json& jobs, bool all) {
  std::size_t shown = 0, ended = 0;
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  for (const auto& job : jobs) {
    const bool running = !job.contains("ended");
    ended += running ? 0 : 1;
    if (!running && !all) continue;
    if (shown++ == 0) {
      std::printf("%5s  %-8s %6s %7s  %-8s %8s %6s  %s\n", "job", "state", "ranks", "daemons",
                  "started", "elapsed", "status", "command");
    }
    const std::int64_t started = job["started"].get<std::int64_t>();
    const std::int64_t until = running ? now : job["ended"].get<std::int64_t>();
    const std::string status = running ? "-" : std::to_string(job["status"].get<int>());
    std::string command = job["command"].get<std::string>();
    if (job.contains("parent")) {
      command += "  (spawned by job " + std::to_string(job["parent"].get<unsigned>()) + ")";
    }
    std::printf("%5u  %-8s %6u %7u  %-8s %8s %6s  %s\n", job["job"].get<unsigned>(),
                job["state"].get<std::string>().c_str(), job["np"].get<unsigned>(),
                job["daemons"].get<unsigned>(), clock_time(started).c_str(),
                duration_text(until - started).c_str(), status.c_str(), command.c_str());
  }
  if (shown == 0) {
    std::printf(
        "no running jobs%s\n",
        all || ended == 0
            ? ""
            : (" (" + std::to_string(ended) + " ended: grove ps --all lists them)").c_str());
  }
}

namespace {

int list_jobs(const std::string& selector, bool all, bool json) {
  auto reply = ask_dvm(selector, {{"cmd", "jobs"}}, std::chrono::seconds(30));
  if (!reply) {
    print_cli_error(reply.error().message);
    return 1;
  }
  if (json) {
    std::cout << (*reply)["jobs"].dump(2) << "\n";
  } else {
    print_jobs((*reply)["jobs"], all);
  }
  return 0;
}

// A job as `grove ps` shows it (7), or by its PMIx namespace (grove-...-x.7).
Result<std::uint32_t> parse_job(const std::string& text) {
  const std::size_t dot = text.rfind('.');
  const std::string digits = dot == std::string::npos ? text : text.substr(dot + 1);
  std::uint32_t job = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), job);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || job == 0) {
    return Error{"'" + text +
                 "' is not a job: expected its number as grove ps shows it, or its "
                 "namespace"};
  }
  return job;
}

int kill_job(const std::string& selector, const std::string& job_text,
             const std::string& signal_text) {
  auto job = parse_job(job_text);
  if (!job) {
    print_cli_error(job.error().message);
    return 1;
  }
  int signal = 0;
  if (!signal_text.empty()) {
    auto parsed = parse_signal(signal_text);
    if (!parsed) {
      print_cli_error("--signal: " + parsed.error().message);
      return 1;
    }
    signal = *parsed;
  }
  auto dvm = resolve_dvm(selector);
  if (!dvm) {
    print_cli_error(dvm.error().message);
    return 1;
  }
  // A namespace names its DVM too: one of another DVM must not signal the
  // job that has the same number here.
  if (job_text.find('.') != std::string::npos) {
    auto jobs = ask_dvm(*dvm, {{"cmd", "jobs"}}, std::chrono::seconds(30));
    if (!jobs) {
      print_cli_error(jobs.error().message);
      return 1;
    }
    const auto& listed = (*jobs)["jobs"];
    if (std::none_of(listed.begin(), listed.end(), [&](const nlohmann::json& entry) {
          return entry.value("nspace", std::string()) == job_text;
        })) {
      print_cli_error("no job with namespace '" + job_text +
                      "' in this DVM (grove ps --all lists its jobs)");
      return 1;
    }
  }
  auto reply =
      ask_dvm(*dvm, {{"cmd", "kill"}, {"job", *job}, {"signal", signal}}, std::chrono::seconds(30));
  if (!reply) {
    print_cli_error(reply.error().message);
    return 1;
  }
  if (signal == 0) {
    std::printf("grove: job %u is being killed\n", *job);
  } else {
    std::printf("grove: SIG%s sent to the ranks of job %u\n", signal_name(signal).c_str(), *job);
  }
  return 0;
}

}  // namespace

void add_job_commands(CLI::App& app, CliContext& context) {
  struct PsOptions {
    std::string selector;
    bool all = false;
    bool json = false;
  };
  auto ps = std::make_shared<PsOptions>();
  CLI::App* ps_command = app.add_subcommand("ps", "List the jobs of a running DVM");
  ps_command->alias("jobs");
  add_param_options(*ps_command, context);
  add_dvm_option(*ps_command, ps->selector);
  ps_command->add_flag(
      "--all,-a", ps->all,
      "Also list the last " + std::to_string(JobTable::kRecentJobs) + " jobs that ended");
  ps_command->add_flag("--json", ps->json, "Print JSON: running and recently ended jobs");
  context.actions[ps_command] = [ps] { return list_jobs(ps->selector, ps->all, ps->json); };

  struct KillOptions {
    std::string selector;
    std::string job;
    std::string signal;
  };
  auto kill = std::make_shared<KillOptions>();
  CLI::App* kill_command = app.add_subcommand(
      "kill", "End a job of a running DVM, or send its ranks a signal (--signal)");
  add_param_options(*kill_command, context);
  add_dvm_option(*kill_command, kill->selector);
  kill_command->add_option("job", kill->job, "The job: its number in grove ps, or its namespace")
      ->required();
  kill_command->add_option("--signal,-s", kill->signal,
                           "Send this signal (TERM, USR1, 10, ...) to every running rank and "
                           "leave the job running unless they end; without it the job ends "
                           "(SIGTERM, then SIGKILL after 2 s)");
  context.actions[kill_command] = [kill] {
    return kill_job(kill->selector, kill->job, kill->signal);
  };
}

}  // namespace grove
