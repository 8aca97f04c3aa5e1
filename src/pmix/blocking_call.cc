#include "pmix/blocking_call.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace grove::pmix_internal {

namespace {

// How long a registration may take on PMIx's progress thread.
constexpr std::chrono::seconds kRegistrationDeadline{30};

// Shared with the callback, so a callback arriving after the deadline
// touches nothing freed.
struct OpState {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;
};

void on_op_done(pmix_status_t status, void* cbdata) {
  std::unique_ptr<std::shared_ptr<OpState>> holder(static_cast<std::shared_ptr<OpState>*>(cbdata));
  OpState& state = **holder;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.done = true;
    state.status = status;
  }
  state.finished.notify_all();
}

}  // namespace

std::string describe(const char* call, pmix_status_t status) {
  return std::string(call) + ": " + PMIx_Error_string(status);
}

Status run_blocking(const std::string& what, const OpStart& start) {
  auto state = std::make_shared<OpState>();
  auto* holder = new std::shared_ptr<OpState>(state);
  pmix_status_t started = start(on_op_done, holder);
  if (started != PMIX_SUCCESS) {
    delete holder;  // PMIx will not call back
    if (started == PMIX_OPERATION_SUCCEEDED) return ok_status();
    return Error{what + ": " + PMIx_Error_string(started)};
  }
  std::unique_lock<std::mutex> lock(state->mutex);
  if (!state->finished.wait_for(lock, kRegistrationDeadline, [&] { return state->done; })) {
    return Error{what + ": no answer from PMIx within " +
                 std::to_string(kRegistrationDeadline.count()) + " s"};
  }
  if (state->status != PMIX_SUCCESS) return Error{what + ": " + PMIx_Error_string(state->status)};
  return ok_status();
}

}  // namespace grove::pmix_internal
