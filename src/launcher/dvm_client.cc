#include "launcher/dvm_client.h"

#include "control/control_socket.h"
#include "control/session_dir.h"

namespace grove {

void add_dvm_option(CLI::App& command, std::string& selector) {
  command.add_option("--dvm,--dvm-uri", selector,
                     "Which DVM: controller pid, session directory, or unix:SOCKET "
                     "(default: the only one running)");
}

Result<nlohmann::json> ask_dvm(const std::string& selector, const nlohmann::json& request,
                               std::chrono::milliseconds timeout) {
  std::string socket_path;
  if (selector.rfind("unix:", 0) == 0) {
    socket_path = selector.substr(5);
  } else {
    auto dvm = select_dvm(selector);
    if (!dvm) return dvm.error();
    socket_path = dvm->socket_path;
  }
  auto reply = control_request(socket_path, request, timeout);
  if (!reply) return reply.error();
  if (!reply->value("ok", false)) {
    return Error{reply->value("error", std::string("the controller refused the request"))};
  }
  return reply;
}

}  // namespace grove
