#include "plm/host_list.h"

#include <fstream>
#include <map>
#include <sstream>

#include "util/text.h"

namespace grove {
namespace {

// Hosts in the order first listed; repeats merge into the first.
class HostCollector {
 public:
  // `slots` unset means "not given on this line".
  void add(HostEntry entry) {
    auto found = index_.find(entry.name);
    if (found == index_.end()) {
      index_[entry.name] = hosts_.size();
      counts_.push_back(entry.slots.value_or(1));
      explicit_.push_back(entry.slots.has_value());
      repeated_.push_back(false);
      hosts_.push_back(std::move(entry));
      return;
    }
    std::size_t at = found->second;
    counts_[at] += entry.slots.value_or(1);
    repeated_[at] = true;
    if (entry.max_slots) hosts_[at].max_slots = entry.max_slots;
    if (hosts_[at].user.empty()) hosts_[at].user = entry.user;
  }

  std::vector<HostEntry> take() {
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      if (explicit_[i] || repeated_[i]) hosts_[i].slots = counts_[i];
    }
    return std::move(hosts_);
  }

  // The host whose slots exceed its max_slots, if any.
  const HostEntry* over_max() {
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      bool counted = explicit_[i] || repeated_[i];
      if (counted && hosts_[i].max_slots && counts_[i] > *hosts_[i].max_slots) return &hosts_[i];
    }
    return nullptr;
  }

 private:
  std::vector<HostEntry> hosts_;
  std::vector<std::uint32_t> counts_;
  std::vector<bool> explicit_;
  std::vector<bool> repeated_;
  std::map<std::string, std::size_t> index_;
};

Result<std::uint32_t> parse_count(std::string_view key, std::string_view value) {
  auto number = parse_int(value);
  if (!number || *number < 1 || *number > 1'000'000) {
    return Error{"'" + std::string(key) + "=" + std::string(value) +
                 "': expected a count from 1 to 1000000"};
  }
  return static_cast<std::uint32_t>(*number);
}

// "[user@]host" into entry; an Error says what is wrong with it.
Status parse_target(std::string_view text, HostEntry& entry) {
  auto at = text.find('@');
  if (at != std::string_view::npos) {
    entry.user = std::string(text.substr(0, at));
    text = text.substr(at + 1);
    if (entry.user.empty() || !valid_host_name(entry.user)) {
      return Error{"'" + entry.user + "': not a user name"};
    }
  }
  if (!valid_host_name(text)) return Error{"'" + std::string(text) + "': not a host name"};
  entry.name = std::string(text);
  return ok_status();
}

Result<HostEntry> parse_hostfile_line(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream stream{std::string(line)};
  for (std::string word; stream >> word;)
    words.push_back(word);
  HostEntry entry;
  if (auto status = parse_target(words[0], entry); !status) return status.error();
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    auto equals = word.find('=');
    if (equals == std::string::npos) {
      return Error{"'" + word + "': expected slots=N or max_slots=N"};
    }
    std::string key = word.substr(0, equals);
    std::string value = word.substr(equals + 1);
    if (key == "slots" || key == "count" || key == "cpu") {
      auto count = parse_count(key, value);
      if (!count) return count.error();
      entry.slots = *count;
    } else if (key == "max_slots" || key == "max-slots") {
      auto count = parse_count(key, value);
      if (!count) return count.error();
      entry.max_slots = *count;
    } else {
      return Error{"'" + key + "': unknown key (known: slots, max_slots)"};
    }
  }
  return entry;
}

}  // namespace

bool valid_host_name(std::string_view name) {
  if (name.empty() || name.size() > 253 || name.front() == '-') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

Result<std::vector<HostEntry>> parse_hostfile(std::string_view text, std::string_view origin) {
  HostCollector hosts;
  std::size_t line_number = 0;
  for (const std::string& raw : split(text, '\n')) {
    ++line_number;
    std::string_view line = raw;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    auto entry = parse_hostfile_line(line);
    if (!entry) {
      return Error{std::string(origin) + ":" + std::to_string(line_number) + ": " +
                   entry.error().message};
    }
    if (entry->slots && entry->max_slots && *entry->slots > *entry->max_slots) {
      return Error{std::string(origin) + ":" + std::to_string(line_number) +
                   ": slots=" + std::to_string(*entry->slots) +
                   " exceeds max_slots=" + std::to_string(*entry->max_slots)};
    }
    hosts.add(std::move(*entry));
  }
  if (const HostEntry* over = hosts.over_max()) {
    return Error{std::string(origin) + ": host '" + over->name +
                 "' lists more slots than its max_slots=" + std::to_string(*over->max_slots)};
  }
  auto list = hosts.take();
  if (list.empty()) return Error{std::string(origin) + ": no hosts in it"};
  return list;
}

Result<std::vector<HostEntry>> read_hostfile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return Error{"cannot read the hostfile '" + path + "'"};
  std::ostringstream text;
  text << file.rdbuf();
  return parse_hostfile(text.str(), path);
}

Result<std::vector<HostEntry>> parse_host_option(std::string_view text) {
  HostCollector hosts;
  for (const std::string& item : split(text, ',')) {
    std::string_view word = trim(item);
    if (word.empty()) return Error{"--host '" + std::string(text) + "': an empty host name"};
    HostEntry entry;
    auto colon = word.rfind(':');
    if (colon != std::string_view::npos) {
      auto count = parse_count("slots", word.substr(colon + 1));
      if (!count) {
        return Error{"--host '" + std::string(word) + "': expected HOST:SLOTS with a count"};
      }
      entry.slots = *count;
      word = word.substr(0, colon);
    }
    if (auto status = parse_target(word, entry); !status) {
      return Error{"--host: " + status.error().message};
    }
    hosts.add(std::move(entry));
  }
  auto list = hosts.take();
  if (list.empty()) return Error{"--host: no hosts given"};
  return list;
}

Result<std::vector<HostEntry>> hosts_from_options(const std::string& host_list,
                                                  const std::string& hostfile) {
  std::vector<HostEntry> hosts;
  if (!hostfile.empty()) {
    auto from_file = read_hostfile(hostfile);
    if (!from_file) return from_file.error();
    hosts = std::move(*from_file);
  }
  if (!host_list.empty()) {
    auto listed = parse_host_option(host_list);
    if (!listed) return listed.error();
    hosts.insert(hosts.end(), listed->begin(), listed->end());
  }
  return hosts;
}

}  // namespace grove
