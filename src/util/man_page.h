// Manual pages and shell completion written from a CLI11 app: the same
// names and descriptions --help prints, so the three never disagree.
// `grove --man-page grove|mca-params`, `groved --man-page` and
// `grove --completion bash` print them; meson installs what they print.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "util/param_registry.h"

namespace grove {

struct ManPageHeader {
  std::string name;     // "grove"
  int section = 1;      // 1, 7, 8
  std::string title;    // one line after the name in NAME
  std::string version;  // "grove 0.1.0"
};

// The app (its options, then every subcommand's) as a roff page.
std::string man_page_for_app(const CLI::App& app, const ManPageHeader& header,
                             const std::string& see_also);
// Every parameter: name, type, allowed values, default and description.
std::string man_page_for_params(const ParamRegistry& params, const ManPageHeader& header);
// A bash completion function for the app's subcommands and their options.
std::string bash_completion_for_app(const CLI::App& app);

}  // namespace grove
