#include "util/log.h"

#include <cstdarg>

#include "util/clock.h"

namespace grove {

namespace {
constexpr std::string_view kVerboseSuffix = "_base_verbose";

// Holds a spin flag for its scope.
class FlagHold {
 public:
  explicit FlagHold(std::atomic_flag& flag) : flag_(flag) {
    while (flag_.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~FlagHold() { flag_.clear(std::memory_order_release); }
  FlagHold(const FlagHold&) = delete;
  FlagHold& operator=(const FlagHold&) = delete;

 private:
  std::atomic_flag& flag_;
};
}  // namespace

Log::Log(std::string identity, const ParamRegistry& params, std::FILE* sink)
    : identity_(std::move(identity)), sink_(sink) {
  for (const ParamEntry* entry : params.entries()) {
    const std::string& name = entry->spec.name;
    if (name.size() <= kVerboseSuffix.size() ||
        name.compare(name.size() - kVerboseSuffix.size(), kVerboseSuffix.size(), kVerboseSuffix) !=
            0) {
      continue;
    }
    std::string framework = name.substr(0, name.size() - kVerboseSuffix.size());
    levels_[framework] = static_cast<int>(std::get<std::int64_t>(entry->value));
  }
}

int Log::level(std::string_view framework) const {
  auto found = levels_.find(framework);
  return found == levels_.end() ? 0 : found->second;
}

std::string Log::prefix(std::string_view framework) const {
  TimeNs now = monotonic_now_ns();
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "%llu.%06llu",
                static_cast<unsigned long long>(now / 1'000'000'000ULL),
                static_cast<unsigned long long>((now % 1'000'000'000ULL) / 1000ULL));
  return "[" + identity_ + "] " + stamp + " " + std::string(framework) + ":";
}

void Log::write_line(std::string_view framework, const char* format, va_list args) const {
  char body[2048];
  std::vsnprintf(body, sizeof body, format, args);
  // One fprintf per line keeps lines whole when several threads log.
  std::fprintf(sink_, "%s %s\n", prefix(framework).c_str(), body);
  std::fflush(sink_);
}

void Log::verbose(std::string_view framework, int level, const char* format, ...) const {
  if (!enabled(framework, level)) return;
  va_list args;
  va_start(args, format);
  write_line(framework, format, args);
  va_end(args);
}

void Log::error_limited(std::string_view kind, const char* format, ...) const {
  LineLimiter::Verdict verdict;
  {
    FlagHold hold(limiter_busy_);
    verdict = limiter_.admit(kind, monotonic_now_ns());
  }
  if (!verdict.pass) return;
  if (verdict.left_out > 0) {
    error("%llu more lines like the next (%.*s) were not logged in the last 10 s",
          static_cast<unsigned long long>(verdict.left_out), static_cast<int>(kind.size()),
          kind.data());
  }
  va_list args;
  va_start(args, format);
  write_line("error", format, args);
  va_end(args);
}

void Log::flush_limited() const {
  std::vector<LineLimiter::LeftOut> left_out;
  {
    FlagHold hold(limiter_busy_);
    left_out = limiter_.flush(monotonic_now_ns());
  }
  for (const LineLimiter::LeftOut& kind : left_out) {
    error("%llu more lines like the last (%s) were not logged in the last 10 s",
          static_cast<unsigned long long>(kind.count), kind.kind.c_str());
  }
}

void Log::notice(std::string_view framework, const char* format, ...) const {
  va_list args;
  va_start(args, format);
  write_line(framework, format, args);
  va_end(args);
}

void Log::error(const char* format, ...) const {
  va_list args;
  va_start(args, format);
  write_line("error", format, args);
  va_end(args);
}

}  // namespace grove
