#include "pmix/publish_store.h"

#include <algorithm>
#include <set>

namespace grove {

bool PublishStore::visible(const Entry& entry, const PublishProc& who) {
  switch (entry.range) {
    case PublishRange::session:
      return true;
    case PublishRange::nspace:
      return entry.owner.nspace == who.nspace;
    case PublishRange::local:
      return entry.owner.daemon == who.daemon;
    case PublishRange::proc:
      return entry.owner.nspace == who.nspace && entry.owner.rank == who.rank;
  }
  return false;
}

PublishStatus PublishStore::publish(const PublishProc& who, PublishRange range,
                                    PublishPersistence persistence,
                                    std::vector<PublishedValue> values,
                                    std::vector<LookupAnswer>& completed) {
  if (values.empty()) return PublishStatus::bad_param;
  std::set<std::string> keys;
  for (const PublishedValue& value : values) {
    if (value.key.empty() || !keys.insert(value.key).second) return PublishStatus::bad_param;
  }
  // A key is published once per audience: the same key in the same range,
  // seen by this publisher, is a duplicate (whoever published it).
  for (const Entry& entry : entries_) {
    if (entry.range == range && keys.count(entry.key) != 0 && visible(entry, who))
      return PublishStatus::duplicate_key;
  }
  for (PublishedValue& value : values) {
    entries_.push_back(
        Entry{who, range, persistence, std::move(value.key), std::move(value.value)});
  }
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (std::optional<LookupAnswer> answer = try_answer(*it)) {
      completed.push_back(std::move(*answer));
      it = parked_.erase(it);
    } else {
      ++it;
    }
  }
  return PublishStatus::ok;
}

std::optional<LookupAnswer> PublishStore::try_answer(const LookupRequest& request) {
  std::vector<std::size_t> hits;  // index into entries_, one per key found
  for (const std::string& key : request.keys) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const Entry& entry = entries_[i];
      if (entry.key != key || !visible(entry, request.who)) continue;
      if (request.range && entry.range != *request.range) continue;
      hits.push_back(i);
      break;  // the first published wins when audiences overlap
    }
  }
  if (request.wait_for > 0 && hits.size() < std::min(request.wait_for, request.keys.size()))
    return std::nullopt;
  LookupAnswer answer;
  answer.id = request.id;
  answer.status = hits.empty() ? PublishStatus::not_found : PublishStatus::ok;
  for (std::size_t i : hits) {
    const Entry& entry = entries_[i];
    answer.found.push_back(
        FoundValue{entry.key, entry.owner.nspace, entry.owner.rank, entry.value});
  }
  // Values meant to be read once are gone once read (back to front, so
  // the indexes stay right).
  std::sort(hits.begin(), hits.end());
  for (auto it = hits.rbegin(); it != hits.rend(); ++it) {
    if (entries_[*it].persistence == PublishPersistence::first_read)
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(*it));
  }
  return answer;
}

std::optional<LookupAnswer> PublishStore::lookup(LookupRequest request) {
  if (request.keys.empty()) return LookupAnswer{request.id, PublishStatus::bad_param, {}};
  if (std::optional<LookupAnswer> answer = try_answer(request)) return answer;
  parked_.push_back(std::move(request));
  return std::nullopt;
}

PublishStatus PublishStore::unpublish(const PublishProc& who, const std::vector<std::string>& keys,
                                      std::optional<PublishRange> range) {
  const std::size_t before = entries_.size();
  std::erase_if(entries_, [&](const Entry& entry) {
    if (entry.owner.nspace != who.nspace || entry.owner.rank != who.rank) return false;
    if (range && entry.range != *range) return false;
    return keys.empty() || std::find(keys.begin(), keys.end(), entry.key) != keys.end();
  });
  return entries_.size() < before ? PublishStatus::ok : PublishStatus::not_found;
}

std::optional<LookupAnswer> PublishStore::cancel(std::uint64_t id) {
  auto it = std::find_if(parked_.begin(), parked_.end(),
                         [id](const LookupRequest& request) { return request.id == id; });
  if (it == parked_.end()) return std::nullopt;
  LookupRequest request = std::move(*it);
  parked_.erase(it);
  request.wait_for = 0;
  std::optional<LookupAnswer> answer = try_answer(request);
  answer->status = PublishStatus::not_found;  // it did not get what it waited for
  return answer;
}

std::vector<std::uint64_t> PublishStore::proc_ended(const std::string& nspace, std::uint32_t rank) {
  std::erase_if(entries_, [&](const Entry& entry) {
    return entry.persistence == PublishPersistence::proc && entry.owner.nspace == nspace &&
           entry.owner.rank == rank;
  });
  std::vector<std::uint64_t> dropped;
  std::erase_if(parked_, [&](const LookupRequest& request) {
    const bool mine = request.who.nspace == nspace && request.who.rank == rank;
    if (mine) dropped.push_back(request.id);
    return mine;
  });
  return dropped;
}

std::vector<std::uint64_t> PublishStore::job_ended(const std::string& nspace) {
  std::erase_if(entries_, [&](const Entry& entry) {
    return entry.owner.nspace == nspace && (entry.persistence == PublishPersistence::proc ||
                                            entry.persistence == PublishPersistence::app);
  });
  std::vector<std::uint64_t> dropped;
  std::erase_if(parked_, [&](const LookupRequest& request) {
    const bool mine = request.who.nspace == nspace;
    if (mine) dropped.push_back(request.id);
    return mine;
  });
  return dropped;
}

}  // namespace grove
