// Internal to grove_pmix. Where a PmixServer makes the PmixAnswers it hands
// its daemon, and keeps a weak list of those still pending: to answer, with
// an error, each one that names a job when that job ends, to count them, and
// to make every answer a no-op once the server is gone. Loop thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "pmix/answer.h"

namespace grove::pmix_internal {

enum class AnswerKind : std::uint8_t {
  fence,
  direct_modex,
  connect,
  group,
  query,
  publish,
  lookup,
  spawn,
  log
};

class AnswerRegistry {
 public:
  AnswerRegistry() : alive_(std::make_shared<char>(0)) {}
  AnswerRegistry(const AnswerRegistry&) = delete;
  AnswerRegistry& operator=(const AnswerRegistry&) = delete;

  // An answer whose `respond` runs at most once, and not at all once this
  // registry is gone. The end of any of `nspaces` answers it `on_job_end`.
  template <typename... Values>
  PmixAnswer<Values...> make(AnswerKind kind, typename TypedAnswerState<Values...>::Respond respond,
                             std::vector<std::string> nspaces = {},
                             int on_job_end = kPmixAnswerNotSupported) {
    std::weak_ptr<char> alive = alive_;
    auto state = std::make_shared<TypedAnswerState<Values...>>(
        [this, alive, respond = std::move(respond)](int status, Values... values) {
          if (alive.expired() || !respond) return;
          ++answered_;  // the registry is alive: `this` is too
          respond(status, std::move(values)...);
        });
    state->nspaces = std::move(nspaces);
    state->on_job_end = on_job_end;
    if (entries_.size() >= prune_at_) prune();
    entries_.push_back(Entry{kind, state});
    return PmixAnswer<Values...>(std::move(state));
  }

  // Answers every pending answer that names `nspace`.
  void job_ended(const std::string& nspace);
  std::size_t pending(AnswerKind kind) const;
  // Answers handed back to libpmix (each a wake-up of its thread).
  std::uint64_t answered() const { return answered_; }

 private:
  struct Entry {
    AnswerKind kind;
    std::weak_ptr<AnswerState> state;
  };
  // Drops the entries of answers answered or gone; amortized over the
  // entries made since the last time.
  void prune();

  std::shared_ptr<char> alive_;
  std::vector<Entry> entries_;
  std::size_t prune_at_ = 64;
  std::uint64_t answered_ = 0;
};

}  // namespace grove::pmix_internal
