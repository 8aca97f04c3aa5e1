// A typed registry of MCA-style parameters ("framework_component_name").
// Each parameter has a type, a default, a one-line description, and remembers
// where its current value came from. Values are validated when set, so a bad
// value is an Error that names the parameter, the value, the source and what
// was expected; reads never fail for a defined name.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "util/result.h"

namespace grove {

enum class ParamKind : std::uint8_t { boolean, integer, size, string, enumeration };

// Sources in increasing precedence: a later source overrides an earlier one.
enum class ParamSourceKind : std::uint8_t {
  default_value,
  user_file,     // ~/.grove/mca-params.conf
  param_file,    // --param-file FILE
  environment,   // GROVE_MCA_<name>
  command_line,  // --mca <name> <value>
};

struct ParamOrigin {
  ParamSourceKind kind = ParamSourceKind::default_value;
  std::string detail;  // file:line, variable name, option spelling
};

std::string_view param_kind_name(ParamKind kind);
std::string_view param_source_name(ParamSourceKind kind);
std::string describe_origin(const ParamOrigin& origin);

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::string;
  std::string default_text;
  std::string description;
  std::int64_t min = std::numeric_limits<std::int64_t>::min();  // integer and size
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::vector<std::string> choices;  // enumeration
  // A string's own syntax: returns what is wrong with `text`, or nothing.
  std::function<std::optional<std::string>(std::string_view text)> check;
};

using ParamValue = std::variant<bool, std::int64_t, std::uint64_t, std::string>;

struct ParamEntry {
  ParamSpec spec;
  ParamValue value;
  std::string value_text;  // canonical spelling of value
  ParamOrigin origin;
};

class ParamRegistry {
 public:
  // Defining a name twice or with an invalid default is a programmer error (aborts).
  void define(ParamSpec spec);

  // Parses and validates text for the named parameter; on success it becomes
  // the current value with the given origin. Unknown names suggest the closest one.
  Status set(std::string_view name, std::string_view text, const ParamOrigin& origin);

  // Typed reads. Asking for an undefined name or the wrong type is a programmer error.
  bool get_bool(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const;
  std::uint64_t get_size(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;  // string and enumeration

  const ParamEntry* find(std::string_view name) const;
  // Every entry, sorted by name.
  std::vector<const ParamEntry*> entries() const;
  // The known name closest to `name` by edit distance, or "" if nothing is close.
  std::string closest_name(std::string_view name) const;

  // Every parameter whose value did not come from its default, as (name, value),
  // sorted by name: what a controller hands to the daemons it starts.
  std::vector<std::pair<std::string, std::string>> non_defaults() const;
  // The same, spelled as command-line arguments: --mca name value ...
  std::vector<std::string> child_arguments() const;

 private:
  const ParamEntry& require(std::string_view name) const;
  std::map<std::string, ParamEntry, std::less<>> entries_;
};

// Validates text against a spec; the Error message says what was expected.
Result<ParamValue> parse_param_value(const ParamSpec& spec, std::string_view text);
std::string param_value_text(const ParamValue& value);
std::string describe_expected(const ParamSpec& spec);

}  // namespace grove
