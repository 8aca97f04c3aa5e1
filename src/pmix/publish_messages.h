// What a daemon and the controller say to each other about PMIx_Publish,
// PMIx_Lookup and PMIx_Unpublish (src/pmix/publish_store.h keeps the data at
// the controller). Every request names the asking daemon's handle, which its
// reply echoes; values travel as packed pmix_value_t bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pmix/publish_store.h"
#include "util/wire.h"

namespace grove {

template <>
struct WireEnum<PublishRange> {
  static constexpr PublishRange first = PublishRange::session, last = PublishRange::proc;
};
template <>
struct WireEnum<PublishPersistence> {
  static constexpr PublishPersistence first = PublishPersistence::session,
                                      last = PublishPersistence::app;
};
template <>
struct WireEnum<PublishStatus> {
  static constexpr PublishStatus first = PublishStatus::ok, last = PublishStatus::bad_param;
};

struct PublishedValueWire {
  std::string key;
  Bytes value;

  static constexpr const char* wire_name = "published value";
  static auto wire_fields(auto& m) { return std::tie(m.key, m.value); }
};

struct PublishMessage {
  std::uint64_t handle = 0;
  std::string nspace;  // the publisher
  std::uint32_t rank = 0;
  PublishRange range = PublishRange::session;
  PublishPersistence persistence = PublishPersistence::session;
  std::vector<PublishedValueWire> values;

  static constexpr const char* wire_name = "publish";
  static auto wire_fields(auto& m) {
    return std::tie(m.handle, m.nspace, m.rank, m.range, m.persistence, m.values);
  }
};

struct LookupMessage {
  std::uint64_t handle = 0;
  std::string nspace;  // the asker
  std::uint32_t rank = 0;
  std::vector<std::string> keys;
  std::optional<PublishRange> range;
  std::uint32_t wait_for = 0;         // PMIX_WAIT: keys to wait for (0: answer now)
  std::uint32_t timeout_seconds = 0;  // PMIX_TIMEOUT on that wait (0: none)

  static constexpr const char* wire_name = "lookup";
  static auto wire_fields(auto& m) {
    return std::tie(m.handle, m.nspace, m.rank, m.keys, m.range, m.wait_for, m.timeout_seconds);
  }
};

struct UnpublishMessage {
  std::uint64_t handle = 0;
  std::string nspace;
  std::uint32_t rank = 0;
  std::vector<std::string> keys;  // empty: every value of the caller's
  std::optional<PublishRange> range;

  static constexpr const char* wire_name = "unpublish";
  static auto wire_fields(auto& m) { return std::tie(m.handle, m.nspace, m.rank, m.keys, m.range); }
};

// The answer to a publish or an unpublish.
struct PublishReply {
  std::uint64_t handle = 0;
  PublishStatus status = PublishStatus::ok;

  static constexpr const char* wire_name = "publish reply";
  static auto wire_fields(auto& m) { return std::tie(m.handle, m.status); }
};

struct FoundValueWire {
  std::string key;
  std::string nspace;  // the publisher
  std::uint32_t rank = 0;
  Bytes value;

  static constexpr const char* wire_name = "found value";
  static auto wire_fields(auto& m) { return std::tie(m.key, m.nspace, m.rank, m.value); }
};

struct LookupReply {
  std::uint64_t handle = 0;
  PublishStatus status = PublishStatus::ok;
  bool timed_out = false;  // its PMIX_TIMEOUT passed first
  std::vector<FoundValueWire> found;

  static constexpr const char* wire_name = "lookup reply";
  static auto wire_fields(auto& m) { return std::tie(m.handle, m.status, m.timed_out, m.found); }
};

}  // namespace grove
