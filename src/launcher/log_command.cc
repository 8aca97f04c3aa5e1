// grove log: a background DVM's log (its controller's and its daemons'
// lines, in one file beside its socket), whole or followed, as `flux dmesg`.
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "launcher/commands.h"
#include "launcher/dvm_client.h"
#include "os/proc_stat.h"

namespace grove {
namespace {

struct LogOptions {
  std::string selector;
  bool follow = false;
  int daemon = -1;  // -1: every line
};

// The prefix of daemon `vpid`'s lines (util/log.h): the controller is vpid 0.
std::string line_prefix(int vpid) {
  return vpid == 0 ? "[grove controller " : "[groved vpid " + std::to_string(vpid) + " ";
}

// Prints the complete lines of `pending` (those of `vpid` alone when it is
// not -1) and keeps a last line that has no newline yet.
void print_lines(std::string& pending, int vpid) {
  std::size_t start = 0;
  for (std::size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string_view line(pending.data() + start, end - start + 1);
    if (vpid < 0 || line.rfind(line_prefix(vpid), 0) == 0)
      std::fwrite(line.data(), 1, line.size(), stdout);
  }
  pending.erase(0, start);
  std::fflush(stdout);
}

int print_log(const LogOptions& options) {
  auto status = ask_dvm(options.selector, {{"cmd", "status"}}, std::chrono::seconds(30));
  if (!status) {
    print_cli_error(status.error().message);
    return 1;
  }
  const int size = status->value("size", 0);
  if (options.daemon >= size) {
    print_cli_error("--daemon " + std::to_string(options.daemon) + ": the DVM has daemons 0 to " +
                    std::to_string(size - 1));
    return 1;
  }
  const auto log = status->find("log");
  if (log == status->end() || !log->is_string()) {
    print_cli_error(
        "this DVM writes its log to the terminal of the 'grove start' that runs it (without "
        "--daemonize): nothing is kept to print here");
    return 1;
  }
  const std::string path = log->get<std::string>();
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    print_cli_error("cannot read the DVM's log " + path);
    return 1;
  }
  const pid_t controller = status->value("pid", 0);
  std::string pending;
  char buffer[65536];
  for (;;) {
    file.read(buffer, sizeof buffer);
    const std::streamsize got = file.gcount();
    if (got > 0) {
      pending.append(buffer, static_cast<std::size_t>(got));
      print_lines(pending, options.daemon);
      continue;
    }
    // At the end: done, unless following a DVM that still runs.
    // A controller that ended but is not reaped yet (a zombie) has stopped.
    if (!options.follow || controller <= 0 || !process_running(controller)) break;
    file.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (!pending.empty()) {
    pending += '\n';
    print_lines(pending, options.daemon);
  }
  return 0;
}

}  // namespace

void add_log_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<LogOptions>();
  CLI::App* command = app.add_subcommand(
      "log",
      "Print a background DVM's log: its controller's and daemons' lines, jobs' starts "
      "and ends");
  add_param_options(*command, context);
  add_dvm_option(*command, options->selector);
  command->add_flag("-f,--follow", options->follow,
                    "Keep printing what is written until the DVM stops (or Ctrl-C)");
  command->add_option("--daemon", options->daemon, "Only the lines of daemon V (0: the controller)")
      ->type_name("V")
      ->check(CLI::Range(0, 1 << 24));
  context.actions[command] = [options] { return print_log(*options); };
}

}  // namespace grove
