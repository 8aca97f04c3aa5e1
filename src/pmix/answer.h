// The answer to a request libpmix handed up (a fence, a direct-modex
// request, a connect, a group operation, a query). libpmix's rule is that
// the host calls the request's cbfunc exactly once; a PmixAnswer keeps it:
// it is move-only, answering it twice is impossible (the second call finds
// it empty), and dropping it unanswered answers `on_drop`
// (PMIX_ERR_NOT_SUPPORTED unless set), so no path can leave a client waiting
// for ever by forgetting it. Its server may also answer it with an error
// when a job it names ends (PmixServer::deregister_job); the holder's later
// answer then does nothing. After the server is destroyed, answering does
// nothing (libpmix released the request at finalize).
// Loop thread only, like every PmixServer call.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace grove {

inline constexpr int kPmixAnswerNotSupported = -47;  // PMIX_ERR_NOT_SUPPORTED

namespace pmix_internal {

// What a PmixAnswer and its server share.
class AnswerState {
 public:
  virtual ~AnswerState() = default;
  bool answered() const { return answered_; }
  // Answers `status` with empty values, unless answered already.
  virtual void fail(int status) = 0;

  int on_drop = kPmixAnswerNotSupported;
  // The jobs whose end answers it (with `on_job_end`); empty: none.
  std::vector<std::string> nspaces;
  int on_job_end = kPmixAnswerNotSupported;

 protected:
  bool answered_ = false;
};

template <typename... Values>
class TypedAnswerState final : public AnswerState {
 public:
  using Respond = std::function<void(int status, Values...)>;
  explicit TypedAnswerState(Respond respond) : respond_(std::move(respond)) {}

  void answer(int status, Values... values) {
    if (answered_) return;
    answered_ = true;
    Respond respond = std::move(respond_);
    respond_ = nullptr;  // what it holds (libpmix's cbdata) is used once
    if (respond) respond(status, std::move(values)...);
  }
  void fail(int status) override { answer(status, Values{}...); }

 private:
  Respond respond_;
};

}  // namespace pmix_internal

template <typename... Values>
class PmixAnswer {
 public:
  using State = pmix_internal::TypedAnswerState<Values...>;

  PmixAnswer() = default;  // answers nothing
  explicit PmixAnswer(std::shared_ptr<State> state) : state_(std::move(state)) {}
  PmixAnswer(PmixAnswer&& other) noexcept : state_(std::move(other.state_)) {}
  PmixAnswer& operator=(PmixAnswer&& other) noexcept {
    if (this != &other) {
      drop();
      state_ = std::move(other.state_);
    }
    return *this;
  }
  PmixAnswer(const PmixAnswer&) = delete;
  PmixAnswer& operator=(const PmixAnswer&) = delete;
  ~PmixAnswer() { drop(); }

  void operator()(int status, Values... values) {
    if (auto state = std::exchange(state_, nullptr)) state->answer(status, std::move(values)...);
  }
  // Answers an error, with empty values.
  void fail(int status) {
    if (auto state = std::exchange(state_, nullptr)) state->fail(status);
  }
  // Not yet answered, by its holder or by its server.
  bool pending() const { return state_ && !state_->answered(); }
  // What dropping it unanswered answers.
  void answer_on_drop(int status) {
    if (state_) state_->on_drop = status;
  }

 private:
  void drop() {
    if (auto state = std::exchange(state_, nullptr); state && !state->answered())
      state->fail(state->on_drop);
  }

  std::shared_ptr<State> state_;
};

}  // namespace grove
