// libFuzzer target for the PMI-1 and PMI-2 service a daemon runs on its
// ranks' bytes (pmi/pmi_server.h). The first byte picks how the rest is cut
// between two ranks' connections and into reads; every chunk goes to the
// server. Whatever the bytes, nothing crashes, every reply is one whole
// command in its connection's wire (a PMI-1 line; a PMI-2 command its own
// decoder reads back), a malformed command closes its connection only, a
// barrier's contribution decodes, and a spawn names programs of at least
// one process each. Built and run by .ci/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "pmi/pmi_server.h"

namespace {

#define FUZZ_CHECK(condition)                                                  \
  do {                                                                         \
    if (!(condition)) {                                                        \
      std::fprintf(stderr, "pmi wire fuzzer: check failed: %s\n", #condition); \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

using namespace grove;

void check_reply(const std::string& bytes) {
  FUZZ_CHECK(!bytes.empty());
  if (bytes.rfind("cmd=", 0) == 0) {  // PMI-1: one line
    FUZZ_CHECK(bytes.back() == '\n');
    FUZZ_CHECK(bytes.find('\n') == bytes.size() - 1);
    return;
  }
  pmi::Decoder decoder;
  decoder.use(pmi::Wire::v2);
  decoder.feed(bytes);
  auto command = decoder.next();
  FUZZ_CHECK(command && *command);
  FUZZ_CHECK(decoder.buffered() == 0);
  FUZZ_CHECK((*command)->find("rc") != nullptr);
}

void drain(pmi::Server& server, const pmi::Outbox& out, bool& closed) {
  for (const pmi::Effect& effect : out) {
    if (auto* send = std::get_if<pmi::effect::Send>(&effect)) check_reply(send->bytes);
    if (std::get_if<pmi::effect::Close>(&effect)) closed = true;
    if (auto* spawn = std::get_if<pmi::effect::Spawn>(&effect)) {
      FUZZ_CHECK(!spawn->programs.empty());
      for (const pmi::SpawnProgram& program : spawn->programs)
        FUZZ_CHECK(!program.argv.empty() && program.np > 0);
      // Answered at once, started or not by the parity of its size.
      bool ignored = false;
      const bool started = spawn->programs.size() % 2 == 1;
      drain(server, server.spawn_done(spawn->conn, started, started ? "grove.2" : "no"), ignored);
    }
    if (auto* contribute = std::get_if<pmi::effect::Contribute>(&effect)) {
      FUZZ_CHECK(pmi::decode_puts(contribute->data));
      // Released at once with this daemon's own data as the others'.
      bool ignored = false;
      drain(server, server.fence_done(contribute->job, true, contribute->data, ""), ignored);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t plan = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  pmi::Server server;
  pmi::JobFacts facts;
  facts.job = 1;
  facts.kvsname = "grove.1";
  facts.size = 2;
  facts.universe_size = 2;
  facts.local_ranks = 2;
  facts.process_mapping = "(vector,(0,1,2))";
  facts.accepts = static_cast<pmi::Accepts>(plan % 3);
  server.add_job(facts);
  server.open(1, 1, 0, 0);
  server.open(2, 1, 1, 0);
  bool closed[2] = {false, false};
  // Chunks of 1 to 64 bytes, alternating between the connections or not.
  const std::size_t chunk = 1 + (plan >> 2) % 64;
  const bool alternate = (plan & 0x80) != 0;
  std::size_t turn = 0;
  while (!rest.empty()) {
    const std::size_t take = std::min(chunk, rest.size());
    const int which = alternate ? static_cast<int>(turn++ % 2) : 0;
    const pmi::Outbox out =
        server.receive(static_cast<pmi::ConnId>(which + 1), rest.substr(0, take));
    if (closed[which]) FUZZ_CHECK(out.empty());  // nothing is read after a close
    drain(server, out, closed[which]);
    rest.remove_prefix(take);
  }
  bool ignored = false;
  drain(server, server.closed(1), ignored);
  drain(server, server.rank_exited(1, 1), ignored);
  return 0;
}
