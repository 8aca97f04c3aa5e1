// The DVM's store behind PMIx_Publish, PMIx_Lookup and PMIx_Unpublish, kept
// by the controller so that every rank of every job sees one store (what
// MPI_Publish_name and MPI_Lookup_name rely on). Pure: values are opaque
// bytes (a packed pmix_value_t), and time, transport and PMIx belong to the
// caller, which answers each LookupAnswer it is handed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "util/bytes.h"

namespace grove {

// Who may look a value up (PMIX_RANGE). PMIx's SESSION, GLOBAL, RM and
// UNDEF are the whole DVM here: a DVM is one session.
enum class PublishRange : std::uint8_t {
  session = 0,  // every rank of every job of the DVM
  nspace = 1,   // the publisher's job only
  local = 2,    // ranks on the publisher's daemon only
  proc = 3,     // the publisher only
};

// How long a value stays (PMIX_PERSISTENCE).
enum class PublishPersistence : std::uint8_t {
  session = 0,     // until the DVM stops (PMIx's SESSION and INDEF)
  first_read = 1,  // until a lookup returns it
  proc = 2,        // until the publisher exits
  app = 3,         // until the publisher's job ends
};

enum class PublishStatus : std::uint8_t {
  ok = 0,
  not_found = 1,
  duplicate_key = 2,  // the key is already published in that range
  bad_param = 3,      // no key, an empty key, or a key twice in one request
};

struct PublishProc {
  std::string nspace;
  std::uint32_t rank = 0;
  std::uint32_t daemon = 0;  // the vpid hosting it (for PublishRange::local)
};

struct PublishedValue {
  std::string key;
  Bytes value;
};

struct FoundValue {
  std::string key;
  std::string nspace;  // the publisher
  std::uint32_t rank = 0;
  Bytes value;
};

struct LookupRequest {
  std::uint64_t id = 0;  // the caller's, echoed in the answer
  PublishProc who;
  std::vector<std::string> keys;
  std::optional<PublishRange> range;  // only values published in this range
  // Park until this many of the keys are found (PMIX_WAIT); 0: answer now.
  std::size_t wait_for = 0;
};

struct LookupAnswer {
  std::uint64_t id = 0;
  PublishStatus status = PublishStatus::ok;  // not_found when nothing was found
  std::vector<FoundValue> found;             // in the order of the request's keys
};

class PublishStore {
 public:
  // Stores every value or none. `completed`: the parked lookups this
  // publication completes, in the order they were parked.
  PublishStatus publish(const PublishProc& who, PublishRange range, PublishPersistence persistence,
                        std::vector<PublishedValue> values, std::vector<LookupAnswer>& completed);
  // The answer now, or nullopt when the request waits (parked) for values
  // yet to be published.
  std::optional<LookupAnswer> lookup(LookupRequest request);
  // Removes the caller's own values of these keys (every one of its values
  // when `keys` is empty); not_found when none matched.
  PublishStatus unpublish(const PublishProc& who, const std::vector<std::string>& keys,
                          std::optional<PublishRange> range);
  // A parked lookup given up (its timeout): what it found so far, status
  // not_found. nullopt if it was answered or cancelled already.
  std::optional<LookupAnswer> cancel(std::uint64_t id);
  // The rank exited: its PublishPersistence::proc values go. Returns the
  // ids of the lookups it had parked (dropped: no one waits for them).
  std::vector<std::uint64_t> proc_ended(const std::string& nspace, std::uint32_t rank);
  // The job ended: its proc and app values go, and the lookups its ranks
  // had parked (their ids returned).
  std::vector<std::uint64_t> job_ended(const std::string& nspace);

  std::size_t size() const { return entries_.size(); }
  std::size_t parked() const { return parked_.size(); }

 private:
  struct Entry {
    PublishProc owner;
    PublishRange range;
    PublishPersistence persistence;
    std::string key;
    Bytes value;
  };
  static bool visible(const Entry& entry, const PublishProc& who);
  // What `request` finds now (values read once are removed); the answer if
  // it has enough (always, when it does not wait).
  std::optional<LookupAnswer> try_answer(const LookupRequest& request);

  std::vector<Entry> entries_;  // in publication order
  std::list<LookupRequest> parked_;
};

}  // namespace grove
