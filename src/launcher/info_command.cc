// grove info: every parameter with type, default, current value, source and description.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "daemon/versions.h"
#include "launcher/commands.h"

namespace grove {
namespace {

struct InfoOptions {
  std::string param = "all";
  bool json = false;
};

nlohmann::json entry_json(const ParamEntry& entry) {
  nlohmann::json item;
  item["name"] = entry.spec.name;
  item["type"] = std::string(param_kind_name(entry.spec.kind));
  item["default"] = entry.spec.default_text;
  item["value"] = entry.value_text;
  item["source"] = std::string(param_source_name(entry.origin.kind));
  item["source_detail"] = entry.origin.detail;
  item["description"] = entry.spec.description;
  item["expected"] = describe_expected(entry.spec);
  return item;
}

void print_entry_text(const ParamEntry& entry) {
  std::printf("%s\n", entry.spec.name.c_str());
  std::printf("    %s\n", entry.spec.description.c_str());
  std::printf("    type: %s (%s)\n", std::string(param_kind_name(entry.spec.kind)).c_str(),
              describe_expected(entry.spec).c_str());
  std::printf("    default: %s    current: %s    source: %s\n", entry.spec.default_text.c_str(),
              entry.value_text.c_str(), describe_origin(entry.origin).c_str());
}

int run_info(const CliContext& context, const InfoOptions& options) {
  std::vector<const ParamEntry*> selected;
  if (options.param == "all") {
    selected = context.params.entries();
  } else if (const ParamEntry* entry = context.params.find(options.param)) {
    selected.push_back(entry);
  } else {
    std::string message = "unknown parameter '" + options.param + "'";
    std::string suggestion = context.params.closest_name(options.param);
    if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
    print_cli_error(message);
    return 1;
  }
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const ParamEntry* entry : selected)
      list.push_back(entry_json(*entry));
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  if (options.param == "all") std::printf("%s\n\n", version_text("grove").c_str());
  for (const ParamEntry* entry : selected)
    print_entry_text(*entry);
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* command = app.add_subcommand("info", "Show parameters: type, default, value, source");
  add_param_options(*command, context);
  command->add_option("--param", options->param, "'all' or one parameter's name")
      ->capture_default_str();
  command->add_flag("--json", options->json, "Print JSON instead of text");
  context.actions[command] = [&context, options] { return run_info(context, *options); };
}

}  // namespace grove
