#include "sim/replay_line.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <vector>

#include "util/text.h"

namespace grove {
namespace {

// Shortest text that reads back as the same double.
std::string shortest(double value) {
  char text[64];
  auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return error == std::errc() ? std::string(text, end) : std::to_string(value);
}

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

TimeNs micros_to_ns(double micros) {
  return static_cast<TimeNs>(std::llround(micros * 1000.0));
}

double ns_to_micros(TimeNs ns) {
  return static_cast<double>(ns) / 1000.0;
}

using Setter = std::function<bool(SimOptions&, std::string_view)>;

template <typename T>
Setter unsigned_field(T SimOptions::*field) {
  return [field](SimOptions& options, std::string_view text) {
    auto value = parse_int(text);
    if (!value || *value < 0 ||
        static_cast<std::uint64_t>(*value) > std::numeric_limits<T>::max()) {
      return false;
    }
    options.*field = static_cast<T>(*value);
    return true;
  };
}

const std::map<std::string, Setter, std::less<>>& setters() {
  static const std::map<std::string, Setter, std::less<>> table = {
      {"--daemons", unsigned_field(&SimOptions::daemons)},
      {"--payload",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_size(text);
         if (value) o.payload_bytes = *value;
         return value.has_value();
       }},
      {"--radix",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_int(text);
         if (!value || *value < 2 || *value > 65535) return false;
         o.radices.routing = static_cast<std::uint32_t>(*value);
         return true;
       }},
      {"--radix2",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_int(text);
         if (!value || *value < 2 || *value > 65535) return false;
         o.radices.release = static_cast<std::uint32_t>(*value);
         return true;
       }},
      {"--low-radix-release",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_bool(text);
         if (value) o.low_radix_release = *value;
         return value.has_value();
       }},
      {"--rounds", unsigned_field(&SimOptions::rounds)},
      {"--faults", unsigned_field(&SimOptions::random_faults)},
      {"--release-delay-us",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_int(text);
         if (!value || *value < 0) return false;
         o.release_delay_ns = static_cast<TimeNs>(*value) * 1000;
         return true;
       }},
      {"--release-delay-target",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_int(text);
         if (!value || *value < -2) return false;
         o.release_delay_target = *value;
         return true;
       }},
      {"--participants",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_double(text);
         if (!value || *value < 0 || *value > 1) return false;
         o.participant_fraction = *value;
         return true;
       }},
      {"--alpha",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_double(text);
         if (!value || *value < 0) return false;
         o.network.alpha_ns = micros_to_ns(*value);
         return true;
       }},
      {"--copy-cost",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_double(text);
         if (!value || *value < 0) return false;
         o.network.copy_ns = micros_to_ns(*value);
         return true;
       }},
      {"--threads",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_int(text);
         if (!value || *value < 1 || *value > 1024) return false;
         o.network.threads = static_cast<std::uint32_t>(*value);
         return true;
       }},
      {"--bandwidth",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_double(text);
         if (!value || *value <= 0) return false;
         o.network.bandwidth_bytes_per_s = *value * 1e9 / 8;
         return true;
       }},
      {"--jitter",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_double(text);
         if (!value || *value < 0 || *value > 100) return false;
         o.network.jitter = *value;
         return true;
       }},
      {"--nic-sharing",
       [](SimOptions& o, std::string_view text) {
         if (text != "fifo" && text != "fair") return false;
         o.network.sharing = text == "fair" ? NicSharing::fair : NicSharing::fifo;
         return true;
       }},
      {"--compress-threshold",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_size(text);
         if (value) o.compress_threshold = *value;
         return value.has_value();
       }},
      {"--seed", unsigned_field(&SimOptions::seed)},
      {"--runs", [](SimOptions&, std::string_view text) { return text == "1"; }},
  };
  return table;
}

}  // namespace

std::string replay_arguments(const SimOptions& o) {
  std::ostringstream line;
  line << "--daemons " << o.daemons << " --payload " << o.payload_bytes << " --radix "
       << o.radices.routing << " --radix2 " << o.radices.release << " --low-radix-release "
       << (o.low_radix_release ? "true" : "false") << " --rounds " << o.rounds << " --faults "
       << o.random_faults << " --release-delay-us " << o.release_delay_ns / 1000
       << " --release-delay-target " << o.release_delay_target << " --participants "
       << shortest(o.participant_fraction) << " --alpha "
       << shortest(ns_to_micros(o.network.alpha_ns)) << " --copy-cost "
       << shortest(ns_to_micros(o.network.copy_ns)) << " --threads " << o.network.threads
       << " --bandwidth " << shortest(o.network.bandwidth_bytes_per_s * 8 / 1e9) << " --jitter "
       << shortest(o.network.jitter) << " --compress-threshold " << o.compress_threshold
       << " --seed " << o.seed;
  // Only when not the default, so replay lines from before the option read the same.
  if (o.network.sharing == NicSharing::fair) line << " --nic-sharing fair";
  return line.str();
}

std::string replay_command(const SimOptions& options) {
  return "grove sim " + replay_arguments(options) + " --runs 1";
}

Result<SimOptions> parse_replay_arguments(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream stream{std::string(line)};
  for (std::string word; stream >> word;)
    words.push_back(word);
  std::size_t at = 0;
  if (words.size() >= 2 && words[0] == "grove" && words[1] == "sim") at = 2;
  SimOptions options;
  for (; at < words.size(); at += 2) {
    auto setter = setters().find(words[at]);
    if (setter == setters().end()) return Error{"unknown simulator option '" + words[at] + "'"};
    if (at + 1 >= words.size()) return Error{"'" + words[at] + "' needs a value"};
    if (!setter->second(options, words[at + 1])) {
      return Error{"'" + words[at] + " " + words[at + 1] + "': not a valid value"};
    }
  }
  return options;
}

}  // namespace grove
