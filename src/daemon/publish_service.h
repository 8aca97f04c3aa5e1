// The controller's side of PMIx_Publish, PMIx_Lookup and PMIx_Unpublish:
// one PublishStore for the DVM, requests from every daemon's PMIx server
// (pmix_tags::publish, lookup, unpublish), answers back to that daemon, and
// the timers of lookups that wait with a PMIX_TIMEOUT.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "os/event_ptr.h"
#include "os/timer.h"
#include "pmix/publish_messages.h"
#include "pmix/publish_store.h"
#include "util/bytes.h"
#include "util/log.h"

namespace grove {

class PublishService {
 public:
  using SendFn = std::function<void(std::uint32_t daemon, std::uint16_t tag, Bytes payload)>;
  PublishService(event_base* base, const Log& log, SendFn send);
  ~PublishService();
  PublishService(const PublishService&) = delete;
  PublishService& operator=(const PublishService&) = delete;

  // A request from daemon `from`; false for other tags.
  bool on_control(std::uint32_t from, std::uint16_t tag, const Bytes& payload);
  // Values kept for a rank's life or its job's go with them; lookups their
  // ranks parked are dropped (their daemons forget them with the job).
  void rank_exited(const std::string& nspace, std::uint32_t rank);
  void job_ended(const std::string& nspace);

  std::size_t stored() const { return store_.size(); }

 private:
  // A parked lookup: who asked, and its timer (if it has a timeout).
  struct Waiting {
    std::uint64_t id = 0;
    std::uint32_t daemon = 0;
    std::uint64_t handle = 0;  // the daemon's
    Timer timer;
  };
  void answer(const LookupAnswer& answer, bool timed_out);
  void drop(const std::vector<std::uint64_t>& ids);
  void on_timeout(std::uint64_t id);

  event_base* base_;
  const Log& log_;
  SendFn send_;
  PublishStore store_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Waiting>> waiting_;  // by id
};

}  // namespace grove
