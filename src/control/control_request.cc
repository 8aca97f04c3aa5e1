#include "control/control_request.h"

#include <set>
#include <vector>

#include "util/base64.h"
#include "util/text.h"

namespace grove {
namespace {

Error bad_field(const std::string& name, const std::string& expected) {
  return Error{"malformed request: '" + name + "' must be " + expected};
}

// An unsigned integer field in [low, high]; absent means `fallback`.
Result<std::uint64_t> unsigned_field(const nlohmann::json& request, const std::string& name,
                                     std::uint64_t low, std::uint64_t high,
                                     std::optional<std::uint64_t> fallback) {
  auto found = request.find(name);
  if (found == request.end()) {
    if (fallback) return *fallback;
    return Error{"malformed request: '" + name + "' is required"};
  }
  const std::string range =
      "an integer from " + std::to_string(low) + " to " + std::to_string(high);
  if (!found->is_number_integer()) return bad_field(name, range);
  if (found->is_number_unsigned()) {
    auto value = found->get<std::uint64_t>();
    if (value < low || value > high) return bad_field(name, range);
    return value;
  }
  auto value = found->get<std::int64_t>();
  if (value < 0 || static_cast<std::uint64_t>(value) < low ||
      static_cast<std::uint64_t>(value) > high) {
    return bad_field(name, range);
  }
  return static_cast<std::uint64_t>(value);
}

Result<std::string> string_field(const nlohmann::json& request, const std::string& name,
                                 std::optional<std::string> fallback) {
  auto found = request.find(name);
  if (found == request.end()) {
    if (fallback) return *fallback;
    return Error{"malformed request: '" + name + "' is required"};
  }
  if (!found->is_string()) return bad_field(name, "a string");
  return found->get<std::string>();
}

Result<bool> bool_field(const nlohmann::json& request, const std::string& name, bool fallback) {
  auto found = request.find(name);
  if (found == request.end()) return fallback;
  if (!found->is_boolean()) return bad_field(name, "true or false");
  return found->get<bool>();
}

Result<std::vector<std::string>> strings_field(const nlohmann::json& request,
                                               const std::string& name, bool required) {
  auto found = request.find(name);
  if (found == request.end()) {
    if (!required) return std::vector<std::string>{};
    return Error{"malformed request: '" + name + "' is required"};
  }
  if (!found->is_array()) return bad_field(name, "an array of strings");
  std::vector<std::string> out;
  for (const auto& item : *found) {
    if (!item.is_string()) return bad_field(name, "an array of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<ControlRequest> decode_kill(const nlohmann::json& request) {
  auto job = unsigned_field(request, "job", 1, UINT32_MAX, std::nullopt);
  if (!job) return job.error();
  auto signal = unsigned_field(request, "signal", 0, JobSignal::kMaxSignal, 0);
  if (!signal) return signal.error();
  auto interrupted = bool_field(request, "interrupted", false);
  if (!interrupted) return interrupted.error();
  return ControlRequest{
      KillRequest{static_cast<std::uint32_t>(*job), static_cast<int>(*signal), *interrupted}};
}

Result<ControlRequest> decode_shrink(const nlohmann::json& request) {
  ShrinkRequest shrink;
  auto hosts = strings_field(request, "hosts", false);
  if (!hosts) return hosts.error();
  shrink.hosts = std::move(*hosts);
  if (auto daemons = request.find("daemons"); daemons != request.end()) {
    const std::string expected = "an array of daemon numbers (vpids)";
    if (!daemons->is_array()) return bad_field("daemons", expected);
    for (const auto& item : *daemons) {
      if (!item.is_number_unsigned() || item.get<std::uint64_t>() > UINT32_MAX)
        return bad_field("daemons", expected);
      shrink.daemons.push_back(item.get<std::uint32_t>());
    }
  }
  if (shrink.hosts.empty() && shrink.daemons.empty())
    return Error{"malformed request: a shrink names no host and no daemon"};
  if (shrink.hosts.size() + shrink.daemons.size() > kMaxHostChoices)
    return bad_field("hosts", "at most " + std::to_string(kMaxHostChoices) + " names in all");
  auto force = bool_field(request, "force", false);
  if (!force) return force.error();
  shrink.force = *force;
  return ControlRequest{std::move(shrink)};
}

Result<ControlRequest> decode_grow_hosts(const nlohmann::json& hosts) {
  const std::string expected =
      "1 to " + std::to_string(kMaxGrowHosts) + " {name, user, slots} objects, each host once";
  if (!hosts.is_array() || hosts.empty() || hosts.size() > kMaxGrowHosts)
    return bad_field("hosts", expected);
  GrowRequest grow;
  for (const auto& host : hosts) {
    if (!host.is_object() || !host.contains("name") || !host["name"].is_string() ||
        host["name"].get<std::string>().empty())
      return bad_field("hosts", expected);
    GrowHost entry{host["name"].get<std::string>(), {}, 0};
    if (auto user = host.find("user"); user != host.end()) {
      if (!user->is_string()) return bad_field("hosts", "a user as a string");
      entry.user = user->get<std::string>();
    }
    if (auto slots = host.find("slots"); slots != host.end()) {
      if (!slots->is_number_unsigned() || slots->get<std::uint64_t>() > 65535)
        return bad_field("hosts", "slots from 0 to 65535");
      entry.slots = slots->get<std::uint32_t>();
    }
    for (const GrowHost& earlier : grow.hosts) {
      if (earlier.name == entry.name) return bad_field("hosts", expected);
    }
    grow.hosts.push_back(std::move(entry));
  }
  return ControlRequest{std::move(grow)};
}

Result<ControlRequest> decode_grow(const nlohmann::json& request) {
  const std::string expected = "a count of daemons from 1 to " + std::to_string(kMaxGrowLocal);
  auto local = request.find("local");
  auto hosts = request.find("hosts");
  auto activate = request.find("activate");
  if ((local != request.end()) + (hosts != request.end()) + (activate != request.end()) > 1)
    return Error{
        "malformed request: a grow names more than one of local, hosts, activate; give one"};
  if (hosts != request.end()) return decode_grow_hosts(*hosts);
  if (activate != request.end()) {
    if (!activate->is_boolean() || !activate->get<bool>()) return bad_field("activate", "true");
    auto nodes = strings_field(request, "nodes", false);
    if (!nodes) return nodes.error();
    if (nodes->size() > kMaxGrowHosts)
      return bad_field("nodes", "at most " + std::to_string(kMaxGrowHosts) + " node names");
    GrowRequest grow;
    grow.activate = true;
    grow.nodes = std::move(*nodes);
    return ControlRequest{std::move(grow)};
  }
  if (local == request.end()) return Error{"malformed request: a grow names no daemons to add"};
  if (!local->is_number_unsigned() || local->get<std::uint64_t>() == 0 ||
      local->get<std::uint64_t>() > kMaxGrowLocal)
    return bad_field("local", expected);
  GrowRequest grow;
  grow.local = local->get<std::uint32_t>();
  return ControlRequest{std::move(grow)};
}

Result<ControlRequest> decode_stdin(const nlohmann::json& request) {
  auto job = unsigned_field(request, "job", 1, UINT32_MAX, std::nullopt);
  if (!job) return job.error();
  auto text = string_field(request, "data", std::string());
  if (!text) return text.error();
  auto data = from_base64(*text);
  if (!data) return bad_field("data", "base64");
  if (data->size() > kMaxStdinChunk) {
    return bad_field("data", "at most " + std::to_string(kMaxStdinChunk) + " bytes");
  }
  auto eof = bool_field(request, "eof", false);
  if (!eof) return eof.error();
  return ControlRequest{StdinRequest{static_cast<std::uint32_t>(*job), std::move(*data), *eof}};
}

Result<ControlRequest> decode_bench(const nlohmann::json& request) {
  auto kind = string_field(request, "kind", std::nullopt);
  if (!kind) return kind.error();
  if (*kind != "release" && *kind != "barrier") {
    return Error{"unknown benchmark '" + *kind + "': expected release or barrier"};
  }
  auto size = unsigned_field(request, "size", 0, UINT32_MAX, 33);
  if (!size) return size.error();
  auto count = unsigned_field(request, "count", 1, kMaxBenchCount, 10);
  if (!count) return count.error();
  return ControlRequest{BenchRequest{*kind, *size, *count}};
}

// How the ranks start: --bind-to (absent: mpirun's default, chosen when the
// job is mapped), --report-bindings and --mpi.
Status decode_rank_start(const nlohmann::json& request, JobRequest& run) {
  run.bind_default = request.find("bind_to") == request.end();
  auto bind_to = string_field(request, "bind_to", std::string("none"));
  if (!bind_to) return bind_to.error();
  const std::string qualifier = ":overload-allowed";
  if (bind_to->size() > qualifier.size() &&
      bind_to->compare(bind_to->size() - qualifier.size(), qualifier.size(), qualifier) == 0) {
    bind_to->resize(bind_to->size() - qualifier.size());
    run.overload_allowed = true;
  }
  if (!JobSpec::valid_bind_to(*bind_to)) {
    return Error{"--bind-to '" + *bind_to +
                 "': expected none, core, hwthread or socket (with :overload-allowed)"};
  }
  run.bind_to = *bind_to;
  auto report = bool_field(request, "report_bindings", false);
  if (!report) return report.error();
  run.report_bindings = *report;
  auto mpi = string_field(request, "mpi", std::string("auto"));
  if (!mpi) return mpi.error();
  if (!JobSpec::valid_mpi(*mpi))
    return Error{"--mpi '" + *mpi + "': expected auto, pmix, pmi1 or pmi2"};
  run.mpi = *mpi;
  return ok_status();
}

Result<ControlRequest> decode_run(const nlohmann::json& request) {
  RunRequest run;
  JobApp& app = run.apps.emplace_back();
  auto argv = strings_field(request, "argv", true);
  if (!argv) return argv.error();
  if (argv->empty() || argv->front().empty()) return Error{"no program to run"};
  app.argv = std::move(*argv);
  auto env = strings_field(request, "env", false);
  if (!env) return env.error();
  for (const auto& entry : *env) {
    if (entry.find('=') == std::string::npos || entry.front() == '=') {
      return bad_field("env", "NAME=value entries ('" + entry + "' is not)");
    }
  }
  run.env = std::move(*env);
  auto replaces = bool_field(request, "env_replaces", false);
  if (!replaces) return replaces.error();
  run.env_replaces = *replaces;
  auto cwd = string_field(request, "cwd", std::string());
  if (!cwd) return cwd.error();
  app.cwd = std::move(*cwd);
  // 0 or absent: one rank per slot (grove run without -n).
  auto np = unsigned_field(request, "np", 0, kMaxRanksPerJob, 0);
  if (!np) return np.error();
  app.np = static_cast<std::uint32_t>(*np);
  auto timeout = unsigned_field(request, "timeout", 0, kMaxJobTimeoutS, 0);
  if (!timeout) return timeout.error();
  run.timeout_s = static_cast<std::uint32_t>(*timeout);
  auto map_by = string_field(request, "map_by", std::string("slot"));
  if (!map_by) return map_by.error();
  auto policy = parse_map_policy(*map_by);
  if (!policy) return policy.error();
  run.policy = *policy;
  auto oversubscribe = bool_field(request, "oversubscribe", true);
  if (!oversubscribe) return oversubscribe.error();
  run.oversubscribe = *oversubscribe;
  if (auto rank_by = request.find("rank_by"); rank_by != request.end()) {
    if (!rank_by->is_string()) return bad_field("rank_by", "slot or node");
    auto order = parse_rank_by(rank_by->get<std::string>());
    if (!order) return order.error();
    run.policy.rank_by = *order;
  }
  if (auto hosts = request.find("hosts"); hosts != request.end()) {
    const char* expected = "a list of {name, slots} objects";
    if (!hosts->is_array() || hosts->size() > kMaxHostChoices)
      return bad_field("hosts",
                       "at most " + std::to_string(kMaxHostChoices) + " {name, slots} objects");
    for (const auto& host : *hosts) {
      if (!host.is_object() || !host.contains("name") || !host["name"].is_string())
        return bad_field("hosts", expected);
      HostChoice choice{host["name"].get<std::string>(), 0};
      if (choice.name.empty()) return bad_field("hosts", expected);
      if (host.contains("slots")) {
        if (!host["slots"].is_number_unsigned() || host["slots"].get<std::uint64_t>() > 65535)
          return bad_field("hosts", "slots from 0 to 65535");
        choice.slots = host["slots"].get<std::uint32_t>();
      }
      run.hosts.push_back(std::move(choice));
    }
  }
  if (Status started = decode_rank_start(request, run); !started) return started.error();
  auto display = bool_field(request, "display_map", false);
  if (!display) return display.error();
  run.display_map = *display;
  auto stdin_target = string_field(request, "stdin", std::string("none"));
  if (!stdin_target) return stdin_target.error();
  if (*stdin_target == "all") {
    run.stdin_rank = JobSpec::kStdinAll;
  } else if (*stdin_target != "none") {
    auto rank = parse_int(*stdin_target);
    if (!rank || *rank < 0 || *rank >= kMaxRanksPerJob) {
      return bad_field("stdin", "all, none or a rank");
    }
    run.stdin_rank = *rank;
  }
  if (auto params = request.find("params"); params != request.end()) {
    if (!params->is_object()) return bad_field("params", "an object of name: value strings");
    for (const auto& [name, value] : params->items()) {
      if (!value.is_string()) return bad_field("params", "an object of name: value strings");
      run.runtime_params.emplace_back(name, value.get<std::string>());
    }
  }
  return ControlRequest{std::move(run)};
}

}  // namespace

Result<ControlRequest> decode_control_request(const nlohmann::json& request) {
  if (!request.is_object()) return Error{"malformed request: expected one JSON object"};
  auto command = string_field(request, "cmd", std::nullopt);
  if (!command) return command.error();
  if (*command == "stop") return ControlRequest{StopRequest{}};
  if (*command == "status") {
    auto dump = string_field(request, "dump", std::string());
    if (!dump) return dump.error();
    if (!dump->empty() && dump->front() != '/')
      return Error{"status: \"dump\" must be an absolute directory"};
    return ControlRequest{StatusRequest{std::move(*dump)}};
  }
  if (*command == "kill") return decode_kill(request);
  if (*command == "jobs") return ControlRequest{JobsRequest{}};
  if (*command == "stdin") return decode_stdin(request);
  if (*command == "bench") return decode_bench(request);
  if (*command == "run") return decode_run(request);
  if (*command == "shrink") return decode_shrink(request);
  if (*command == "grow") return decode_grow(request);
  return Error{"unknown request '" + *command + "'"};
}

Result<nlohmann::json> parse_control_json(std::string_view line) {
  if (line.size() > kMaxControlLine) return Error{"malformed request: longer than the limit"};
  // JSON leaves a repeated key to the reader, and nlohmann keeps the last:
  // {"cmd":"status","cmd":"stop"} would pass for a status request to one
  // eye and stop the DVM. A repeated key at any depth refuses the request.
  std::vector<std::set<std::string>> keys;  // one set per open object
  std::string repeated;
  nlohmann::json::parser_callback_t watch = [&](int, nlohmann::json::parse_event_t event,
                                                nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      keys.emplace_back();
    } else if (event == Event::object_end && !keys.empty()) {
      keys.pop_back();
    } else if (event == Event::key && !keys.empty() && parsed.is_string() &&
               !keys.back().insert(parsed.get<std::string>()).second && repeated.empty()) {
      repeated = parsed.get<std::string>();
    }
    return true;
  };
  auto request = nlohmann::json::parse(line, watch, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object())
    return Error{"malformed request: expected one JSON object"};
  if (!repeated.empty()) return Error{"malformed request: the key '" + repeated + "' repeats"};
  return request;
}

Result<ControlRequest> parse_control_request(std::string_view line) {
  auto request = parse_control_json(line);
  if (!request) return request.error();
  return decode_control_request(*request);
}

}  // namespace grove
