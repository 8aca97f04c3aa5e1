#include "util/param_sources.h"

#include <fstream>

#include "util/text.h"

extern char** environ;

namespace grove {

namespace {

std::string_view strip_trailing_comment(std::string_view value) {
  // A '#' begins a comment at the value's start or after a blank; inside a
  // word ("host#2") it is part of the value.
  for (std::size_t at = 0; at < value.size(); ++at) {
    if (value[at] == '#' && (at == 0 || value[at - 1] == ' ' || value[at - 1] == '\t'))
      return value.substr(0, at);
  }
  return value;
}

}  // namespace

Status apply_param_file(ParamRegistry& registry, const std::string& path, ParamSourceKind kind,
                        bool required) {
  std::ifstream file(path);
  if (!file) {
    if (!required) return ok_status();
    return Error{"cannot read parameter file '" + path + "'"};
  }
  std::string line;
  int line_number = 0;
  while (std::getline(file, line)) {
    ++line_number;
    std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    std::size_t equals = content.find('=');
    std::string where = path + ":" + std::to_string(line_number);
    if (equals == std::string_view::npos) {
      return Error{"malformed line in parameter file " + where +
                   ": expected 'name = value', got '" + std::string(content) + "'"};
    }
    std::string_view name = trim(content.substr(0, equals));
    std::string_view value = trim(strip_trailing_comment(content.substr(equals + 1)));
    if (name.empty()) {
      return Error{"malformed line in parameter file " + where + ": missing parameter name"};
    }
    auto status = registry.set(name, value, ParamOrigin{kind, where});
    if (!status) return status;
  }
  return ok_status();
}

Status load_params(ParamRegistry& registry, const ParamInputs& inputs) {
  if (inputs.home_directory && !inputs.home_directory->empty()) {
    auto status = apply_param_file(registry, *inputs.home_directory + "/.grove/mca-params.conf",
                                   ParamSourceKind::user_file, /*required=*/false);
    if (!status) return status;
  }
  for (const auto& path : inputs.param_files) {
    auto status = apply_param_file(registry, path, ParamSourceKind::param_file,
                                   /*required=*/true);
    if (!status) return status;
  }
  for (const auto& entry : inputs.environment) {
    if (entry.rfind(kParamEnvPrefix, 0) != 0) continue;
    std::size_t equals = entry.find('=');
    if (equals == std::string::npos) continue;
    std::string variable = entry.substr(0, equals);
    std::string name = variable.substr(kParamEnvPrefix.size());
    auto status = registry.set(name, entry.substr(equals + 1),
                               ParamOrigin{ParamSourceKind::environment, variable});
    if (!status) return status;
  }
  for (const auto& [name, value] : inputs.command_line) {
    auto status = registry.set(name, value, ParamOrigin{ParamSourceKind::command_line, "--mca"});
    if (!status) return status;
  }
  return ok_status();
}

std::vector<std::string> process_environment() {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    entries.emplace_back(*entry);
  }
  return entries;
}

}  // namespace grove
