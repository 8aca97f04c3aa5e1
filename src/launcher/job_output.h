// Where `grove run` puts its job's output: on this terminal, each line
// prefixed with "[job,rank]<stream>: " under --tag-output, or in one file per
// rank and stream under --output-filename; under --timestamp-output each line
// first carries the time its daemon read it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <tuple>

#include "util/result.h"

namespace grove {

struct OutputOptions {
  bool tag = false;
  bool timestamp = false;
  std::string directory;  // empty: the terminal
};

class JobOutputSink {
 public:
  explicit JobOutputSink(OutputOptions options) : options_(std::move(options)) {}

  // Makes the --output-filename directory; an Error names it and why not.
  Status prepare();
  // One output event of the job (`job`: ours; the event names a spawned one).
  void write(const nlohmann::json& event, std::uint32_t job);

 private:
  // The file of a rank's stream under the output directory: DIR/JOB/rank.N/stdout
  // (truncated when first written in this run), or null after an error, said once.
  std::FILE* open_file(std::uint32_t job, std::uint32_t rank, bool is_err);

  OutputOptions options_;
  std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> started_;  // files begun
  bool file_error_reported_ = false;
};

// "2026-12-02 14:30:15.123456", local time.
std::string timestamp_text(std::int64_t microseconds_since_epoch);

}  // namespace grove
