// libFuzzer target for every payload decoder a daemon runs on bytes from the
// network: job messages, daemon control messages and the engine's grpcomm
// messages. The first byte picks the decoder, the rest is the payload. Any
// payload either decodes or is an Error with a message (never a crash, an
// exception or an allocation the payload cannot back), and whatever decodes
// survives a round trip: encoding it and decoding that gives the same bytes
// again. Built and run by .ci/fuzz; with GROVE_FUZZ_CANARY it carries a
// planted bug the fuzzer must find.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "daemon/control_messages.h"
#include "grpcomm/messages.h"
#include "jobs/job_messages.h"

namespace {

#define FUZZ_CHECK(condition)                                                 \
  do {                                                                        \
    if (!(condition)) {                                                       \
      std::fprintf(stderr, "payload fuzzer: check failed: %s\n", #condition); \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

template <typename Decode>
void check(Decode decode, std::span<const std::byte> payload) {
  auto decoded = decode(payload);
  if (!decoded) {
    FUZZ_CHECK(!decoded.error().message.empty());
    return;
  }
  const grove::Bytes once = grove::encode(*decoded);
  auto again = decode(std::span<const std::byte>(once));
  FUZZ_CHECK(again);
  FUZZ_CHECK(grove::encode(*again) == once);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  using namespace grove;
  switch (data[0] % 18) {
    case 0:
      check(decode_job_spec, payload);
      break;
    case 1:
      check(decode_job_output, payload);
      break;
    case 2:
      check(decode_rank_exit, payload);
#ifdef GROVE_FUZZ_CANARY
      // A planted bug: a rank exit that carries released fence rounds. The
      // fuzzer must build one (lengths, kind, a round list) to find it, so
      // finding it shows it reaches past the decoders' first checks.
      if (auto exit = decode_rank_exit(payload); exit && !exit->released.empty()) {
        std::fprintf(stderr, "canary found\n");
        std::abort();
      }
#endif
      break;
    case 3:
      check(decode_job_abort, payload);
      break;
    case 4:
      check(decode_output_ack, payload);
      break;
    case 5:
      check(decode_ranks_gone, payload);
      break;
    case 6:
      check(decode_daemon_report, payload);
      break;
    case 7:
      check(decode_launch_failure, payload);
      break;
    case 8:
      check(decode_endpoint_table, payload);
      break;
    case 9:
      check(decode_counters_reply, payload);
      break;
    case 10:
      check(decode_help, payload);
      break;
    case 11:
      check(decode_bench_barrier, payload);
      break;
    case 12:
      check(decode_membership_notice, payload);
      break;
    case 13:
      check(decode_fence_rollup, payload);
      break;
    case 14:
      check(decode_fence_release, payload);
      break;
    case 15:
      check(decode_xcast_ack, payload);
      break;
    case 16:
      check(decode_op_report, payload);
      break;
    case 17:
      check(decode_op_abort, payload);
      break;
  }
  return 0;
}
