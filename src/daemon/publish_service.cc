#include "daemon/publish_service.h"

#include "rml/tag_registry.h"

namespace grove {

PublishService::PublishService(event_base* base, const Log& log, SendFn send)
    : base_(base), log_(log), send_(std::move(send)) {}

PublishService::~PublishService() = default;

bool PublishService::on_control(std::uint32_t from, std::uint16_t tag, const Bytes& payload) {
  if (tag == pmix_tags::publish) {
    auto message = wire_decode<PublishMessage>(payload);
    if (!message) {
      log_.error("daemon %u sent a %s", from, message.error().message.c_str());
      return true;
    }
    std::vector<PublishedValue> values;
    for (PublishedValueWire& value : message->values)
      values.push_back(PublishedValue{std::move(value.key), std::move(value.value)});
    std::vector<LookupAnswer> completed;
    const PublishProc who{message->nspace, message->rank, from};
    const PublishStatus status =
        store_.publish(who, message->range, message->persistence, std::move(values), completed);
    log_.verbose("daemon", 2, "PMIx_Publish from rank %u of %s: %zu values, %s", message->rank,
                 message->nspace.c_str(), message->values.size(),
                 status == PublishStatus::ok ? "stored" : "refused");
    send_(from, pmix_tags::publish_reply, encode(PublishReply{message->handle, status}));
    for (const LookupAnswer& answer_now : completed)
      answer(answer_now, false);
    return true;
  }
  if (tag == pmix_tags::lookup) {
    auto message = wire_decode<LookupMessage>(payload);
    if (!message) {
      log_.error("daemon %u sent a %s", from, message.error().message.c_str());
      return true;
    }
    auto waiting = std::make_unique<Waiting>();
    waiting->id = next_id_++;
    waiting->daemon = from;
    waiting->handle = message->handle;
    const std::uint32_t timeout = message->timeout_seconds;
    LookupRequest request{waiting->id, PublishProc{message->nspace, message->rank, from},
                          std::move(message->keys), message->range, message->wait_for};
    const std::uint64_t id = waiting->id;
    waiting_[id] = std::move(waiting);
    if (std::optional<LookupAnswer> now = store_.lookup(std::move(request))) {
      answer(*now, false);
      return true;
    }
    if (timeout > 0) {
      Waiting& parked = *waiting_[id];
      parked.timer = Timer(base_, [this, id] { on_timeout(id); });
      parked.timer.arm(static_cast<std::int64_t>(timeout) * 1000);
    }
    return true;
  }
  if (tag == pmix_tags::unpublish) {
    auto message = wire_decode<UnpublishMessage>(payload);
    if (!message) {
      log_.error("daemon %u sent a %s", from, message.error().message.c_str());
      return true;
    }
    const PublishStatus status = store_.unpublish(PublishProc{message->nspace, message->rank, from},
                                                  message->keys, message->range);
    send_(from, pmix_tags::publish_reply, encode(PublishReply{message->handle, status}));
    return true;
  }
  return false;
}

void PublishService::answer(const LookupAnswer& answer, bool timed_out) {
  auto found = waiting_.find(answer.id);
  if (found == waiting_.end()) return;
  LookupReply reply;
  reply.handle = found->second->handle;
  reply.status = answer.status;
  reply.timed_out = timed_out;
  for (const FoundValue& value : answer.found)
    reply.found.push_back(FoundValueWire{value.key, value.nspace, value.rank, value.value});
  const std::uint32_t daemon = found->second->daemon;
  waiting_.erase(found);
  send_(daemon, pmix_tags::lookup_reply, encode(reply));
}

void PublishService::on_timeout(std::uint64_t id) {
  if (std::optional<LookupAnswer> given_up = store_.cancel(id)) {
    answer(*given_up, true);  // frees the waiting lookup and its timer
  }
}

void PublishService::drop(const std::vector<std::uint64_t>& ids) {
  for (std::uint64_t id : ids)
    waiting_.erase(id);
}

void PublishService::rank_exited(const std::string& nspace, std::uint32_t rank) {
  drop(store_.proc_ended(nspace, rank));
}

void PublishService::job_ended(const std::string& nspace) {
  drop(store_.job_ended(nspace));
}

}  // namespace grove
