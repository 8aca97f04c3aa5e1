#include "launcher/dvm_client.h"

#include "control/control_socket.h"
#include "control/session_dir.h"

namespace grove {

void add_dvm_option(CLI::App& command, std::string& selector) {
  command.add_option("--dvm,--dvm-uri", selector,
                     "Which DVM: controller pid, session directory, or unix:SOCKET "
                     "(default: the only one running)");
}

Result<std::string> resolve_dvm(const std::string& selector) {
  if (selector.rfind("unix:", 0) == 0) return selector;
  auto dvm = select_dvm(selector);
  if (!dvm) return dvm.error();
  return "unix:" + dvm->socket_path;
}

Result<nlohmann::json> ask_dvm(const std::string& selector, const nlohmann::json& request,
                               std::chrono::milliseconds timeout) {
  auto resolved = resolve_dvm(selector);
  if (!resolved) return resolved.error();
  auto reply = control_request(resolved->substr(5), request, timeout);
  if (!reply) return reply.error();
  if (!reply->value("ok", false)) {
    return Error{reply->value("error", std::string("the controller refused the request"))};
  }
  return reply;
}

}  // namespace grove
