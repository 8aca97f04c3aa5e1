// Where parameter values come from, applied in increasing precedence:
// defaults, ~/.grove/mca-params.conf, --param-file FILE, GROVE_MCA_<name>,
// --mca <name> <value>. Inputs are plain values so tests need no real HOME or
// environment.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/param_registry.h"
#include "util/result.h"

namespace grove {

inline constexpr std::string_view kParamEnvPrefix = "GROVE_MCA_";

struct ParamInputs {
  std::optional<std::string> home_directory;  // for ~/.grove/mca-params.conf
  std::vector<std::string> param_files;       // --param-file, in order
  std::vector<std::string> environment;       // "NAME=value" strings, as in environ
  std::vector<std::pair<std::string, std::string>> command_line;  // --mca pairs, in order
};

// Applies every source to the registry. Stops at the first bad entry and
// returns its Error (naming parameter, value, source and expectation).
Status load_params(ParamRegistry& registry, const ParamInputs& inputs);

// Reads a conf file ("name = value" lines, '#' comments, a trailing
// "# comment" after a value too) into the registry. A missing file is an
// error only when `required`.
Status apply_param_file(ParamRegistry& registry, const std::string& path, ParamSourceKind kind,
                        bool required);

// The process environment as "NAME=value" strings.
std::vector<std::string> process_environment();

}  // namespace grove
