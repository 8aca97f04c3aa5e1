#include "launcher/job_output.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "launcher/cli_context.h"

namespace grove {

std::string timestamp_text(std::int64_t microseconds_since_epoch) {
  const auto seconds = static_cast<std::time_t>(microseconds_since_epoch / 1'000'000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &local);
  char text[48];
  std::snprintf(text, sizeof text, "%s.%06lld", date,
                static_cast<long long>(microseconds_since_epoch % 1'000'000));
  return text;
}

Status JobOutputSink::prepare() {
  if (options_.directory.empty()) return ok_status();
  std::error_code error;
  std::filesystem::create_directories(options_.directory, error);
  if (error || !std::filesystem::is_directory(options_.directory)) {
    return Error{"--output-filename " + options_.directory + ": cannot make the directory (" +
                 (error ? error.message() : std::string("not a directory")) + ")"};
  }
  return ok_status();
}

std::FILE* JobOutputSink::open_file(std::uint32_t job, std::uint32_t rank, bool is_err) {
  const std::filesystem::path directory = std::filesystem::path(options_.directory) /
                                          std::to_string(job) / ("rank." + std::to_string(rank));
  const std::filesystem::path path = directory / (is_err ? "stderr" : "stdout");
  // A rank's files begin empty in each run (job numbers repeat across DVMs);
  // later output is appended. Opened per write: a job may have more ranks
  // than this process may hold files open.
  const bool first = started_.insert({job, rank, is_err}).second;
  std::error_code error;
  if (first) std::filesystem::create_directories(directory, error);
  std::FILE* file = error ? nullptr : std::fopen(path.c_str(), first ? "w" : "a");
  if (file == nullptr && !file_error_reported_) {
    file_error_reported_ = true;
    print_cli_error("--output-filename: cannot write " + path.string() + " (" +
                    (error ? error.message() : std::string(std::strerror(errno))) +
                    "); output that cannot go to its file comes here instead");
  }
  return file;
}

void JobOutputSink::write(const nlohmann::json& event, std::uint32_t job) {
  const bool is_err = event.value("stream", "out") == "err";
  const std::uint32_t from_job = event.value("job", job);
  const std::uint32_t rank = event.value("rank", 0u);
  const std::string text = event.value("text", "");
  std::FILE* file = options_.directory.empty() ? nullptr : open_file(from_job, rank, is_err);
  std::FILE* sink = file != nullptr ? file : is_err ? stderr : stdout;
  // A file is one rank's stream already: the tag would say nothing.
  std::string prefix;
  if (options_.timestamp) {
    const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    prefix = "[" + timestamp_text(event.value("time_us", std::int64_t{now})) + "] ";
  }
  if (options_.tag && file == nullptr) {
    prefix += "[" + std::to_string(from_job) + "," + std::to_string(rank) + "]<" +
              (is_err ? "stderr" : "stdout") + ">: ";
  }
  if (prefix.empty()) {
    std::fwrite(text.data(), 1, text.size(), sink);
  } else {
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size() - 1;
      std::fputs(prefix.c_str(), sink);
      std::fwrite(text.data() + start, 1, end - start + 1, sink);
      start = end + 1;
    }
  }
  if (file != nullptr) {
    if (std::fclose(file) != 0 && !file_error_reported_) {
      file_error_reported_ = true;
      print_cli_error("--output-filename: writing rank " + std::to_string(rank) + "'s " +
                      (is_err ? "stderr" : "stdout") + " failed (" + std::strerror(errno) + ")");
    }
  } else {
    std::fflush(sink);
  }
}

}  // namespace grove
