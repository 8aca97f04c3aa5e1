#include "plm/bootstrap.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <sodium.h>

#include "rml/transport/dvm_secret.h"

namespace grove {
namespace {

constexpr std::uint32_t kMaxPlanBytes = 64u << 20;
constexpr std::uint32_t kMaxDaemons = 1u << 20;

Status write_all(int fd, std::span<const std::byte> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return Error{std::string("writing the bootstrap: ") + std::strerror(errno)};
    done += static_cast<std::size_t>(wrote);
  }
  return ok_status();
}

Status read_all(int fd, std::span<std::byte> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error{std::string("reading the bootstrap: ") + std::strerror(errno)};
    if (got == 0) {
      return Error{"the bootstrap ended early (" + std::to_string(done) + " of " +
                   std::to_string(bytes.size()) + " bytes)"};
    }
    done += static_cast<std::size_t>(got);
  }
  return ok_status();
}

}  // namespace

Bytes encode_spawn_plan(const SpawnPlan& plan, const RemoteSettings& remote) {
  ByteWriter writer;
  writer.u32(plan.radix).u8(plan.tree_spawn ? 1 : 0);
  writer.text(remote.groved_path).text(remote.prefix).text(remote.controller_endpoint);
  writer.u32(plan.size());
  for (const PlannedDaemon& daemon : plan.daemons) {
    writer.text(daemon.host.name).text(daemon.host.user);
    writer.u32(daemon.host.slots.value_or(0)).u32(daemon.host.max_slots.value_or(0));
    writer.u8(daemon.holds_ranks ? 1 : 0);
  }
  return writer.take();
}

Status decode_spawn_plan(std::span<const std::byte> bytes, SpawnPlan& plan,
                         RemoteSettings& remote) {
  ByteReader reader(bytes);
  auto radix = reader.u32();
  auto tree = reader.u8();
  auto groved = reader.text();
  auto prefix = reader.text();
  auto controller = reader.text();
  auto count = reader.u32();
  if (!radix || !tree || !groved || !prefix || !controller || !count || *radix < 2 || *count == 0 ||
      *count > kMaxDaemons) {
    return Error{"malformed spawn plan"};
  }
  plan = SpawnPlan{};
  plan.radix = *radix;
  plan.tree_spawn = *tree != 0;
  remote = RemoteSettings{*groved, *prefix, *controller};
  for (std::uint32_t vpid = 0; vpid < *count; ++vpid) {
    auto name = reader.text();
    auto user = reader.text();
    auto slots = reader.u32();
    auto max_slots = reader.u32();
    auto holds = reader.u8();
    if (!name || !user || !slots || !max_slots || !holds) return Error{"malformed spawn plan"};
    PlannedDaemon daemon{vpid, HostEntry{*name, *user, std::nullopt, std::nullopt}, *holds != 0};
    if (*slots > 0) daemon.host.slots = *slots;
    if (*max_slots > 0) daemon.host.max_slots = *max_slots;
    if (vpid > 0 && !valid_host_name(daemon.host.name)) {
      return Error{"spawn plan: bad host name '" + daemon.host.name + "'"};
    }
    plan.daemons.push_back(std::move(daemon));
  }
  if (!reader.done()) return Error{"malformed spawn plan (trailing bytes)"};
  return ok_status();
}

Bytes encode_bootstrap(const Bootstrap& bootstrap) {
  Bytes plan;
  if (bootstrap.plan) plan = encode_spawn_plan(*bootstrap.plan, bootstrap.remote);
  ByteWriter writer;
  writer.raw(bootstrap.secret).u32(static_cast<std::uint32_t>(plan.size())).raw(plan);
  return writer.take();
}

Status write_bootstrap(int fd, const Bootstrap& bootstrap) {
  Bytes bytes = encode_bootstrap(bootstrap);
  auto status = write_all(fd, bytes);
  sodium_memzero(bytes.data(), bytes.size());
  return status;
}

Result<Bootstrap> read_bootstrap(int fd) {
  Bootstrap bootstrap;
  auto secret = read_secret(fd);
  if (!secret) return secret.error();
  bootstrap.secret = std::move(*secret);
  std::vector<std::byte> length_bytes(4);
  if (auto status = read_all(fd, length_bytes); !status) return status.error();
  ByteReader reader(length_bytes);
  const std::uint32_t length = *reader.u32();
  if (length > kMaxPlanBytes) return Error{"the spawn plan is too large"};
  if (length == 0) return bootstrap;
  std::vector<std::byte> plan_bytes(length);
  if (auto status = read_all(fd, plan_bytes); !status) return status.error();
  SpawnPlan plan;
  if (auto status = decode_spawn_plan(plan_bytes, plan, bootstrap.remote); !status) {
    return status.error();
  }
  bootstrap.plan = std::move(plan);
  return bootstrap;
}

}  // namespace grove
