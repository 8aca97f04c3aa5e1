// libFuzzer target for the control socket's request decoder
// (control/control_request.h): any line either decodes to a request whose
// fields are within the documented limits, or is an Error with a message;
// never an exception, a crash or an unbounded value. Built and run by .ci/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "control/control_request.h"

namespace {

#define FUZZ_CHECK(condition)                                                 \
  do {                                                                        \
    if (!(condition)) {                                                       \
      std::fprintf(stderr, "control fuzzer: check failed: %s\n", #condition); \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto decoded = grove::parse_control_request(line);
  if (!decoded) {
    FUZZ_CHECK(!decoded.error().message.empty());
    return 0;
  }
  if (const auto* run = std::get_if<grove::RunRequest>(&*decoded)) {
    FUZZ_CHECK(run->apps.size() == 1);  // `grove run` runs one program
    // 0: one rank per slot, decided where the slots are known (grove run without -n).
    FUZZ_CHECK(run->np() <= grove::kMaxRanksPerJob);
    FUZZ_CHECK(run->bind_to == "none" || run->bind_to == "core" || run->bind_to == "hwthread" ||
               run->bind_to == "socket");  // the :overload-allowed qualifier is taken off
    FUZZ_CHECK(!run->apps[0].argv.empty() && !run->apps[0].argv.front().empty());
    FUZZ_CHECK(run->timeout_s <= grove::kMaxJobTimeoutS);
    FUZZ_CHECK(run->policy.pe >= 1 && run->policy.pe <= 4096);
    FUZZ_CHECK(run->hosts.size() <= grove::kMaxHostChoices);
    for (const grove::HostChoice& host : run->hosts)
      FUZZ_CHECK(!host.name.empty() && host.slots <= 65535);
    // No --bind-to: the default is chosen at mapping, "none" until then.
    FUZZ_CHECK(!run->bind_default || run->bind_to == "none");
  } else if (const auto* bench = std::get_if<grove::BenchRequest>(&*decoded)) {
    FUZZ_CHECK(bench->count >= 1 && bench->count <= grove::kMaxBenchCount);
    FUZZ_CHECK(bench->kind == "release" || bench->kind == "barrier");
  } else if (const auto* kill = std::get_if<grove::KillRequest>(&*decoded)) {
    FUZZ_CHECK(kill->job >= 1);
  }
  return 0;
}
