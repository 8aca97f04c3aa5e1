#include "daemon/flight_dump.h"

#include <algorithm>

#include "os/binary_files.h"
#include "os/proc_files.h"

namespace grove {
namespace {

constexpr std::string_view kPrefix = "daemon-";
constexpr std::string_view kSuffix = ".flight";
// A recording is bounded by grpcomm_flight_recorder_size (at most 1 GiB)
// plus one input of at most a frame.
constexpr std::size_t kMaxFlightFile = std::size_t{3} << 30;

bool is_flight_file(const std::string& name) {
  return name.size() > kPrefix.size() + kSuffix.size() && name.starts_with(kPrefix) &&
         name.ends_with(kSuffix);
}

}  // namespace

std::string flight_file_name(Vpid vpid) {
  return std::string(kPrefix) + std::to_string(vpid) + std::string(kSuffix);
}

Result<std::size_t> write_flight_dump(const std::string& dir, const std::map<Vpid, Bytes>& files) {
  if (Status made = ensure_directory(dir); !made) return made.error();
  std::size_t written = 0;
  for (const auto& [vpid, bytes] : files) {
    if (bytes.empty()) continue;
    if (Status wrote = write_file_atomically(dir + "/" + flight_file_name(vpid), bytes); !wrote)
      return wrote.error();
    ++written;
  }
  return written;
}

Result<std::vector<FlightRecording>> read_flight_dump(const std::string& dir) {
  std::vector<std::string> names = directory_entries(dir);
  names.erase(std::remove_if(names.begin(), names.end(),
                             [](const std::string& name) { return !is_flight_file(name); }),
              names.end());
  if (names.empty()) return Error{"no flight recordings (daemon-*.flight) in " + dir};
  std::sort(names.begin(), names.end());
  std::vector<FlightRecording> recordings;
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    auto bytes = read_binary_file(path, kMaxFlightFile);
    if (!bytes) return bytes.error();
    auto recording = decode_flight_file(*bytes);
    if (!recording) return Error{path + ": " + recording.error().message};
    recordings.push_back(std::move(*recording));
  }
  return recordings;
}

}  // namespace grove
