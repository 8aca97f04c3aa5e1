#include "grpcomm/join_seed.h"

namespace grove {

bool JoinSeedMessage::wire_valid() const {
  // Bounded before anything is allocated for it.
  if (daemons.size() == 0 || daemons.size() > kMaxVpidEnd || vpid_end > kMaxVpidEnd ||
      daemons.ranges().back().last >= kMaxVpidEnd)
    return false;
  for (std::size_t i = 0; i < incarnations.size(); ++i) {
    if (i > 0 && incarnations[i].first <= incarnations[i - 1].first) return false;
    if (incarnations[i].second > epoch) return false;
  }
  return epoch > 0 && routing_watermark > 0 && release_watermark > 0;
}

Bytes encode_join_seed(const JoinSeed& seed) {
  const Membership& membership = seed.membership;
  JoinSeedMessage message;
  message.daemons = VpidSet::from_list({membership.daemons().begin(), membership.daemons().end()});
  message.epoch = membership.epoch();
  message.failed = membership.failed();
  message.vpid_end = membership.vpid_end();
  for (const Incarnation& entry : membership.incarnations())
    message.incarnations.emplace_back(entry.vpid, entry.epoch);
  message.tree_version = membership.tree_version();
  message.routing_watermark = seed.watermarks[static_cast<int>(TopologyKind::routing)];
  message.release_watermark = seed.watermarks[static_cast<int>(TopologyKind::release)];
  message.released = seed.rounds.released;
  message.retired = seed.rounds.retired;
  return encode(message);
}

Result<JoinSeed> decode_join_seed(std::span<const std::byte> payload) {
  auto message = wire_decode<JoinSeedMessage>(payload);
  if (!message) return message.error();
  std::vector<Vpid> daemons;
  daemons.reserve(message->daemons.size());
  message->daemons.for_each([&](Vpid vpid) { daemons.push_back(vpid); });
  auto membership = Membership::create(std::move(daemons));
  if (!membership) return Error{"join seed: " + membership.error().message};
  std::vector<Incarnation> incarnations;
  for (const auto& [vpid, epoch] : message->incarnations)
    incarnations.push_back(Incarnation{vpid, epoch});
  if (!membership->adopt(message->epoch, message->failed, message->vpid_end, incarnations,
                         message->tree_version) &&
      membership->epoch() != message->epoch) {
    return Error{"join seed: its membership view was refused"};
  }
  JoinSeed seed{
      std::move(*membership), {}, {std::move(message->released), std::move(message->retired)}};
  seed.watermarks[static_cast<int>(TopologyKind::routing)] = message->routing_watermark;
  seed.watermarks[static_cast<int>(TopologyKind::release)] = message->release_watermark;
  return seed;
}

}  // namespace grove
