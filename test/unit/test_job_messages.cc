// Job messages between the controller and the daemons: round trips, and a
// malformed payload is an error value, never a crash or a huge allocation.
#include <catch2/catch.hpp>

#include "jobs/job_messages.h"

using namespace grove;

TEST_CASE("ranks-gone messages round-trip and refuse malformed payloads", "[job_messages]") {
  RanksGone gone{7, {GoneRank{1, {}}, GoneRank{4, {FenceRound{"pmix:ns:*", 3}}}}};
  Bytes payload = encode(gone);
  auto decoded = wire_decode<RanksGone>(payload);
  REQUIRE(decoded);
  CHECK(decoded->job == 7);
  CHECK(decoded->ranks == gone.ranks);

  Bytes truncated(payload.begin(), payload.end() - 1);
  CHECK_FALSE(wire_decode<RanksGone>(truncated));
  Bytes trailing = payload;
  trailing.push_back(std::byte{0});
  CHECK_FALSE(wire_decode<RanksGone>(trailing));
  // A count far beyond what the payload holds is refused before any loop.
  ByteWriter huge;
  huge.u32(7).u32(0xffffffffu);
  CHECK_FALSE(wire_decode<RanksGone>(huge.take()));
  CHECK_FALSE(wire_decode<RanksGone>(Bytes{}));
}

TEST_CASE("rank exits carry the fence rounds released on their daemon", "[job_messages]") {
  RankExit exit{3, 5, ExitKind::exited, 0, "", {FenceRound{"pmix:ns:0-4", 2}}};
  auto decoded = wire_decode<RankExit>(encode(exit));
  REQUIRE(decoded);
  CHECK(decoded->rank == 5);
  CHECK(decoded->released == exit.released);
  Bytes truncated = encode(exit);
  truncated.pop_back();
  CHECK_FALSE(wire_decode<RankExit>(truncated));
}
