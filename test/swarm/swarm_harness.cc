#include "swarm/swarm_harness.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace grove::test {

Swarm::Swarm(int hosts, bool slurm)
    : dir_("grove-swarm"), script_(binary_from_env("GROVE_SWARM_PY")), hosts_(hosts) {
  RunOptions options;
  options.timeout = std::chrono::seconds(120);
  std::vector<std::string> argv = {"/usr/bin/python3",   script_, "up", dir(), "--hosts",
                                   std::to_string(hosts)};
  if (slurm) argv.push_back("--slurm");
  auto result = run_program(argv, options);
  ok_ = result.exit_code == 0;
  if (!ok_) error_ = "swarm.py up failed: " + result.err + result.out;
}

Swarm::~Swarm() {
  RunOptions options;
  options.timeout = std::chrono::seconds(120);
  run_program({"/usr/bin/python3", script_, "down", dir()}, options);
}

std::vector<std::string> Swarm::wrap(int host, const std::vector<std::string>& argv) const {
  std::vector<std::string> wrapped = {"/usr/bin/python3", script_, "exec", dir(),
                                      this->host(host),   "--"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

RunResult Swarm::run(int host, const std::vector<std::string>& argv, const RunOptions& options) {
  return run_program(wrap(host, argv), options);
}

std::unique_ptr<BackgroundProcess> Swarm::start(int host, const std::vector<std::string>& argv,
                                                const std::vector<std::string>& extra_env) {
  return std::make_unique<BackgroundProcess>(wrap(host, argv), extra_env);
}

DvmPlace Swarm::place(int host) {
  DvmPlace place;
  place.tmpdir = dir();
  place.start = [this, host](const std::vector<std::string>& argv,
                             const std::vector<std::string>& env) {
    return start(host, argv, env);
  };
  place.run = [this, host](const std::vector<std::string>& argv, const RunOptions& options) {
    return run(host, argv, options);
  };
  return place;
}

bool Swarm::kill_host(int host) {
  return run_program({"/usr/bin/python3", script_, "kill-host", dir(), this->host(host)})
             .exit_code == 0;
}

bool Swarm::stop_sshd(int host) {
  return run_program({"/usr/bin/python3", script_, "stop-sshd", dir(), this->host(host)})
             .exit_code == 0;
}

bool Swarm::hide(int host, const std::string& directory) {
  return run_program({"/usr/bin/python3", script_, "hide", dir(), this->host(host), directory})
             .exit_code == 0;
}

std::vector<std::string> Swarm::processes(int host) {
  auto result = run_program({"/usr/bin/python3", script_, "ps", dir(), this->host(host)});
  std::vector<std::string> lines;
  std::istringstream stream(result.out);
  for (std::string line; std::getline(stream, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Swarm::find_processes(const std::string& needle) {
  std::vector<std::string> found;
  for (int host = 0; host < hosts_; ++host) {
    for (const auto& line : processes(host)) {
      if (line.find(needle) != std::string::npos) found.push_back(this->host(host) + ": " + line);
    }
  }
  return found;
}

}  // namespace grove::test
