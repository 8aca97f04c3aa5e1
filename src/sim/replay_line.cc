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

// A setter for an integer within [low, high], stored by `store`.
template <typename Store>
Setter integer_in(std::int64_t low, std::int64_t high, Store store) {
  return [=](SimOptions& o, std::string_view text) {
    auto value = parse_int(text);
    if (!value || *value < low || *value > high) return false;
    store(o, *value);
    return true;
  };
}

// A setter for a real number that `valid` accepts, stored by `store`.
template <typename Valid, typename Store>
Setter real_where(Valid valid, Store store) {
  return [=](SimOptions& o, std::string_view text) {
    auto value = parse_double(text);
    if (!value || !valid(*value)) return false;
    store(o, *value);
    return true;
  };
}

// A setter for a byte size ("4k", "1m"), stored by `store`.
template <typename Store>
Setter size_of(Store store) {
  return [=](SimOptions& o, std::string_view text) {
    auto value = parse_size(text);
    if (value) store(o, *value);
    return value.has_value();
  };
}

constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

const std::map<std::string, Setter, std::less<>>& setters() {
  auto non_negative = [](double v) { return v >= 0; };
  static const std::map<std::string, Setter, std::less<>> table = {
      {"--daemons", unsigned_field(&SimOptions::daemons)},
      {"--payload", size_of([](SimOptions& o, std::uint64_t v) { o.payload_bytes = v; })},
      {"--radix", integer_in(2, 65535,
                             [](SimOptions& o, std::int64_t v) {
                               o.radices.routing = static_cast<std::uint32_t>(v);
                             })},
      {"--radix2", integer_in(2, 65535,
                              [](SimOptions& o, std::int64_t v) {
                                o.radices.release = static_cast<std::uint32_t>(v);
                              })},
      {"--low-radix-release",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_bool(text);
         if (value) o.low_radix_release = *value;
         return value.has_value();
       }},
      {"--rounds", unsigned_field(&SimOptions::rounds)},
      {"--faults", unsigned_field(&SimOptions::random_faults)},
      {"--returns", unsigned_field(&SimOptions::returns)},
      {"--joins", unsigned_field(&SimOptions::joins)},
      {"--release-delay-us", integer_in(0, kMaxInt / 1000,
                                        [](SimOptions& o, std::int64_t v) {
                                          o.release_delay_ns = static_cast<TimeNs>(v) * 1000;
                                        })},
      {"--release-delay-target",
       integer_in(-2, kMaxInt, [](SimOptions& o, std::int64_t v) { o.release_delay_target = v; })},
      {"--ack-delay-us", integer_in(0, kMaxInt / 1000,
                                    [](SimOptions& o, std::int64_t v) {
                                      o.ack_delay_ns = static_cast<TimeNs>(v) * 1000;
                                    })},
      {"--participants", real_where([](double v) { return v >= 0 && v <= 1; },
                                    [](SimOptions& o, double v) { o.participant_fraction = v; })},
      {"--alpha", real_where(non_negative, [](SimOptions& o,
                                              double v) { o.network.alpha_ns = micros_to_ns(v); })},
      {"--copy-cost",
       real_where(non_negative,
                  [](SimOptions& o, double v) { o.network.copy_ns = micros_to_ns(v); })},
      {"--threads", integer_in(1, 1024,
                               [](SimOptions& o, std::int64_t v) {
                                 o.network.threads = static_cast<std::uint32_t>(v);
                               })},
      {"--bandwidth",
       real_where([](double v) { return v > 0; },
                  [](SimOptions& o, double v) { o.network.bandwidth_bytes_per_s = v * 1e9 / 8; })},
      {"--jitter", real_where([](double v) { return v >= 0 && v <= 100; },
                              [](SimOptions& o, double v) { o.network.jitter = v; })},
      {"--nic-sharing",
       [](SimOptions& o, std::string_view text) {
         if (text != "fifo" && text != "fair") return false;
         o.network.sharing = text == "fair" ? NicSharing::fair : NicSharing::fifo;
         return true;
       }},
      {"--compress-threshold",
       size_of([](SimOptions& o, std::uint64_t v) { o.compress_threshold = v; })},
      {"--seed", unsigned_field(&SimOptions::seed)},
      {"--pmix-fences",
       [](SimOptions& o, std::string_view text) {
         auto value = parse_bool(text);
         if (value) o.pmix_fences = *value;
         return value.has_value();
       }},
      {"--fence-topology",
       [](SimOptions& o, std::string_view text) {
         if (text != "tree" && text != "bruck") return false;
         o.fence_topology = text == "bruck" ? FenceTopology::bruck : FenceTopology::tree;
         return true;
       }},
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
  if (o.pmix_fences) line << " --pmix-fences true";
  if (o.returns != 0) line << " --returns " << o.returns;
  if (o.joins != 0) line << " --joins " << o.joins;
  if (o.ack_delay_ns != 0) line << " --ack-delay-us " << o.ack_delay_ns / 1000;
  if (o.fence_topology == FenceTopology::bruck) line << " --fence-topology bruck";
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
