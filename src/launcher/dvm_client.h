// How CLI commands find and talk to a running DVM.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

#include "util/result.h"

namespace grove {

// Adds --dvm PID|DIR|unix:SOCKET to a command.
void add_dvm_option(CLI::App& command, std::string& selector);

// The selected DVM as `unix:SOCKET`: a command that asks it more than once
// names it so, and a DVM starting or stopping in between cannot change which
// one answers.
Result<std::string> resolve_dvm(const std::string& selector);

// Sends a request to the selected DVM; a reply with "ok": false becomes an Error.
Result<nlohmann::json> ask_dvm(const std::string& selector, const nlohmann::json& request,
                               std::chrono::milliseconds timeout);

}  // namespace grove
