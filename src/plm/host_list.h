// The hosts a DVM spans, as users write them: PRRTE's hostfile syntax and the
// `--host a,b:4,c` list. Pure text in, hosts out; errors name file and line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace grove {

struct HostEntry {
  std::string name;  // as ssh will be given it (no user part)
  std::string user;  // empty: ssh's default
  // Unset: the host's core count, reported by its daemon.
  std::optional<std::uint32_t> slots;
  std::optional<std::uint32_t> max_slots;

  // "user@name" or "name": what ssh connects to.
  std::string ssh_target() const { return user.empty() ? name : user + "@" + name; }
};

// Parses a hostfile's text. `origin` names it in errors ("FILE:LINE: ...").
// One host per line: `[user@]host [slots=N] [max_slots=M]`; `#` starts a
// comment; blank lines are skipped. A host listed on several lines is one
// host whose slots add up (a line without slots= counts one), as in PRRTE;
// a host listed once without slots= gets its core count.
Result<std::vector<HostEntry>> parse_hostfile(std::string_view text, std::string_view origin);

// Reads and parses a hostfile.
Result<std::vector<HostEntry>> read_hostfile(const std::string& path);

// Parses `--host` lists: comma-separated `[user@]host[:slots]`; repeated
// hosts add up as in a hostfile.
Result<std::vector<HostEntry>> parse_host_option(std::string_view text);

// The hosts of `--hostfile FILE` (when not empty) then `--host LIST` (when
// not empty), as grove start and grove run read them.
Result<std::vector<HostEntry>> hosts_from_options(const std::string& host_list,
                                                  const std::string& hostfile);

// Whether `name` is a plausible host name or IPv4 address (letters, digits,
// '-', '.', '_'; no leading '-', which ssh would take for an option).
bool valid_host_name(std::string_view name);

}  // namespace grove
