#include "util/log.h"

#include <cstdarg>

#include "util/clock.h"

namespace grove {

namespace {
constexpr std::string_view kVerboseSuffix = "_base_verbose";
}

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

void Log::error(const char* format, ...) const {
  va_list args;
  va_start(args, format);
  write_line("error", format, args);
  va_end(args);
}

}  // namespace grove
