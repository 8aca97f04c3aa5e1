#include "pmix/answer_registry.h"

#include <algorithm>

namespace grove::pmix_internal {

void AnswerRegistry::job_ended(const std::string& nspace) {
  // Collected first: answering runs libpmix's callbacks, and nothing here
  // may change underneath.
  std::vector<std::shared_ptr<AnswerState>> doomed;
  for (const Entry& entry : entries_) {
    auto state = entry.state.lock();
    if (!state || state->answered()) continue;
    if (std::find(state->nspaces.begin(), state->nspaces.end(), nspace) != state->nspaces.end())
      doomed.push_back(std::move(state));
  }
  for (const auto& state : doomed)
    state->fail(state->on_job_end);
  prune();
}

std::size_t AnswerRegistry::pending(AnswerKind kind) const {
  std::size_t count = 0;
  for (const Entry& entry : entries_) {
    if (entry.kind != kind) continue;
    auto state = entry.state.lock();
    count += state && !state->answered() ? 1 : 0;
  }
  return count;
}

void AnswerRegistry::prune() {
  std::erase_if(entries_, [](const Entry& entry) {
    auto state = entry.state.lock();
    return !state || state->answered();
  });
  prune_at_ = std::max<std::size_t>(64, 2 * entries_.size());
}

}  // namespace grove::pmix_internal
