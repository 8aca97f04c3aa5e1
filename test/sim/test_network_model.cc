// The simulator's NIC: fifo serialises copies, fair shares the bandwidth
// among every copy in flight (what TCP connections through one bottleneck
// do, and what a namespace swarm measured; docs/benchmarks.md).
#include <catch2/catch.hpp>

#include "sim/network_model.h"
#include "sim/replay_line.h"
#include "sim/simulator.h"

namespace grove {
namespace {

NetworkModel gigabyte_nic() {
  NetworkModel model;
  model.alpha_ns = 0;
  model.copy_ns = 0;
  model.threads = 1;
  model.bandwidth_bytes_per_s = 1e9;  // a byte per nanosecond
  model.jitter = 0;
  return model;
}

}  // namespace

TEST_CASE("a fifo NIC sends copies one after another", "[network]") {
  NetworkModel model = gigabyte_nic();
  DaemonNic nic(1);
  CHECK(nic.transmit(0, 1'000'000, model) == 1'000'000);
  CHECK(nic.transmit(0, 1'000'000, model) == 2'000'000);
  CHECK(nic.transmit(0, 1'000'000, model) == 3'000'000);
}

TEST_CASE("a fair NIC finishes equal copies handed over together at once", "[network]") {
  NetworkModel model = gigabyte_nic();
  SharedNic nic(1);
  for (std::uint64_t token = 1; token <= 4; ++token)
    nic.add(0, 1'000'000, token, model);
  REQUIRE(nic.next_event(model) == TimeNs{0});  // all sendable now
  CHECK(nic.advance(0, model).empty());
  REQUIRE(nic.next_event(model) == TimeNs{4'000'000});
  CHECK(nic.advance(3'999'999, model).empty());
  CHECK(nic.advance(4'000'000, model) == std::vector<std::uint64_t>{1, 2, 3, 4});
  CHECK_FALSE(nic.next_event(model).has_value());
}

TEST_CASE("a small frame on a fair NIC overtakes a large one in flight", "[network]") {
  NetworkModel model = gigabyte_nic();
  SharedNic nic(1);
  nic.add(0, 1'000'000, 1, model);
  CHECK(nic.advance(500'000, model).empty());  // half of it left
  nic.add(500'000, 1'000, 2, model);
  // Both at half rate: the small one needs 2 us, the large one loses 1 us.
  REQUIRE(nic.next_event(model) == TimeNs{500'000});
  CHECK(nic.advance(500'000, model).empty());
  REQUIRE(nic.next_event(model) == TimeNs{502'000});
  CHECK(nic.advance(502'000, model) == std::vector<std::uint64_t>{2});
  REQUIRE(nic.next_event(model) == TimeNs{1'001'000});
  CHECK(nic.advance(2'000'000, model) == std::vector<std::uint64_t>{1});
}

TEST_CASE("a fair NIC's copies wait for their copy cost on the worker lanes", "[network]") {
  NetworkModel model = gigabyte_nic();
  model.copy_ns = 10'000;
  SharedNic nic(1);  // one lane: the second copy is ready 10 us after the first
  nic.add(0, 20'000, 1, model);
  nic.add(0, 20'000, 2, model);
  REQUIRE(nic.next_event(model) == TimeNs{10'000});
  CHECK(nic.advance(10'000, model).empty());
  // 10 us alone (10,000 bytes), then both at half rate: the first has
  // 10,000 bytes left and finishes at 40 us; the second, alone again, at 50.
  CHECK(nic.advance(40'000, model) == std::vector<std::uint64_t>{1});
  CHECK(nic.advance(50'000, model) == std::vector<std::uint64_t>{2});
}

TEST_CASE("fair sharing slows a multi-level release tree, not a flat one", "[network]") {
  SimOptions options;
  options.daemons = 16;
  options.payload_bytes = 1'000'000;
  options.radices = TopologyRadices{64, 4};
  options.network = gigabyte_nic();
  options.network.alpha_ns = 75'000;
  options.network.copy_ns = 55'000;
  auto span = [&](bool low_radix, NicSharing sharing) {
    SimOptions o = options;
    o.low_radix_release = low_radix;
    o.network.sharing = sharing;
    SimResult result = run_simulation(o);
    REQUIRE(result.ok);
    REQUIRE(result.release_span_ns.size() == 1);
    return std::pair{result.release_span_ns[0], result.traffic};
  };
  auto [flat_fifo, flat_fifo_traffic] = span(false, NicSharing::fifo);
  auto [flat_fair, flat_fair_traffic] = span(false, NicSharing::fair);
  auto [tree_fifo, tree_fifo_traffic] = span(true, NicSharing::fifo);
  auto [tree_fair, tree_fair_traffic] = span(true, NicSharing::fair);
  // Flat: the last of 15 copies leaves after 15 M/B either way.
  CHECK(flat_fair == Approx(flat_fifo).epsilon(0.001));
  // Radix 4: under fifo a relay's first child starts early; shared, every
  // child of a relay holds its copy only after the relay's whole fanout
  // (about 8 M/B on two levels of 4, against 6 M/B: M/B is 1 ms here).
  CHECK(tree_fair > tree_fifo + 1'500'000);
  CHECK(tree_fair < flat_fair);
  // How bytes share a NIC changes when frames arrive, never which frames.
  CHECK(flat_fair_traffic == flat_fifo_traffic);
  CHECK(tree_fair_traffic == tree_fifo_traffic);
}

TEST_CASE("a replay line keeps fair NIC sharing, and old lines mean fifo", "[network]") {
  SimOptions options;
  options.network.sharing = NicSharing::fair;
  auto line = replay_arguments(options);
  CHECK_THAT(line, Catch::Contains("--nic-sharing fair"));
  auto parsed = parse_replay_arguments(line);
  REQUIRE(parsed);
  CHECK(parsed->network.sharing == NicSharing::fair);
  options.network.sharing = NicSharing::fifo;
  auto fifo_line = replay_arguments(options);
  CHECK_THAT(fifo_line, !Catch::Contains("nic-sharing"));
  auto old = parse_replay_arguments(fifo_line);
  REQUIRE(old);
  CHECK(old->network.sharing == NicSharing::fifo);
  CHECK_FALSE(parse_replay_arguments(fifo_line + " --nic-sharing wobbly"));
}

}  // namespace grove
