#include "pmix/event_info.h"

#include <cstring>
#include <string_view>

#include "pmix/packed_value.h"

namespace grove::pmix_internal {
namespace {

// libpmix's server marks an event it received from a client with this key
// (src/event/pmix_event.h); it means nothing to another server.
constexpr std::string_view kServerInternalNotify = "pmix.srvr.internal.notify";

std::string nspace_text(const pmix_proc_t& proc) {
  return std::string(proc.nspace, strnlen(proc.nspace, PMIX_MAX_NSLEN));
}

EventProc event_proc(const pmix_proc_t& proc) {
  return EventProc{nspace_text(proc), proc.rank};
}

// A PMIX_PROC or a PMIX_DATA_ARRAY of them; anything else names nobody.
std::vector<EventProc> procs_of(const pmix_value_t& value) {
  std::vector<EventProc> procs;
  if (value.type == PMIX_PROC && value.data.proc != nullptr) {
    procs.push_back(event_proc(*value.data.proc));
  } else if (value.type == PMIX_DATA_ARRAY && value.data.darray != nullptr &&
             value.data.darray->type == PMIX_PROC && value.data.darray->array != nullptr) {
    const auto* array = static_cast<const pmix_proc_t*>(value.data.darray->array);
    for (std::size_t i = 0; i < value.data.darray->size; ++i)
      procs.push_back(event_proc(array[i]));
  }
  return procs;
}

bool flag_set(const pmix_info_t& info) {
  return info.value.type == PMIX_UNDEF ||  // a key given with no value means true
         (info.value.type == PMIX_BOOL && info.value.data.flag);
}

std::vector<pmix_proc_t> pmix_procs(const std::vector<EventProc>& procs) {
  std::vector<pmix_proc_t> out(procs.size());
  for (std::size_t i = 0; i < procs.size(); ++i)
    PMIX_LOAD_PROCID(&out[i], procs[i].nspace.c_str(), procs[i].rank);
  return out;
}

}  // namespace

PmixEvent event_from_upcall(pmix_status_t code, const pmix_proc_t* source, pmix_data_range_t range,
                            const pmix_info_t info[], std::size_t ninfo) {
  PmixEvent event;
  event.code = code;
  if (source != nullptr) {
    event.source_nspace = nspace_text(*source);
    event.source_rank = source->rank;
  }
  event.range = range;
  for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
    const pmix_info_t& entry = info[i];
    const std::string_view key(entry.key, strnlen(entry.key, PMIX_MAX_KEYLEN));
    if (PMIX_CHECK_KEY(&entry, PMIX_EVENT_CUSTOM_RANGE)) {
      event.targets = procs_of(entry.value);
    } else if (PMIX_CHECK_KEY(&entry, PMIX_EVENT_AFFECTED_PROC) ||
               PMIX_CHECK_KEY(&entry, PMIX_EVENT_AFFECTED_PROCS)) {
      for (EventProc& proc : procs_of(entry.value))
        event.affected.push_back(std::move(proc));
    } else if (PMIX_CHECK_KEY(&entry, PMIX_EVENT_NON_DEFAULT)) {
      event.non_default = flag_set(entry);
    } else if (PMIX_CHECK_KEY(&entry, PMIX_EVENT_DO_NOT_CACHE)) {
      event.cached = !flag_set(entry);
    } else if (PMIX_CHECK_KEY(&entry, PMIX_EVENT_TEXT_MESSAGE) && entry.value.type == PMIX_STRING &&
               entry.value.data.string != nullptr) {
      event.message = entry.value.data.string;
    } else if (PMIX_CHECK_KEY(&entry, PMIX_JOB_TERM_STATUS) && entry.value.type == PMIX_STATUS) {
      event.has_status = true;
      event.status = entry.value.data.status;
    } else if (PMIX_CHECK_KEY(&entry, PMIX_EXIT_CODE) && entry.value.type == PMIX_INT) {
      event.has_exit_code = true;
      event.exit_code = entry.value.data.integer;
    } else if (key == kServerInternalNotify || entry.value.type == PMIX_POINTER) {
      continue;  // libpmix's own mark; an address in the notifier's memory
    } else if (Result<Bytes> packed = pack_value(entry.value)) {
      event.info.push_back(EventInfo{std::string(key), std::move(*packed)});
    }
  }
  return event;
}

pmix_data_range_t delivery_range(const PmixEvent& event) {
  if (event.range == PMIX_RANGE_NAMESPACE && !event.source_nspace.empty()) return PMIX_RANGE_CUSTOM;
  return event.range;
}

Result<InfoArray> event_info(const PmixEvent& event) {
  InfoList list;
  std::vector<EventProc> targets = event.targets;
  if (event.range == PMIX_RANGE_NAMESPACE && !event.source_nspace.empty())
    targets = {EventProc{event.source_nspace, EventProc::kWholeJob}};
  if (!targets.empty()) list.add_procs(PMIX_EVENT_CUSTOM_RANGE, pmix_procs(targets));
  if (event.affected.size() == 1) {
    list.add_proc(PMIX_EVENT_AFFECTED_PROC, event.affected[0].nspace, event.affected[0].rank);
  } else if (event.affected.size() > 1) {
    list.add_procs(PMIX_EVENT_AFFECTED_PROCS, pmix_procs(event.affected));
  }
  if (event.non_default) list.add_bool(PMIX_EVENT_NON_DEFAULT, true);
  if (!event.cached) list.add_bool(PMIX_EVENT_DO_NOT_CACHE, true);
  if (event.has_status) list.add_status(PMIX_JOB_TERM_STATUS, event.status);
  if (event.has_exit_code) list.add_int(PMIX_EXIT_CODE, event.exit_code);
  if (!event.message.empty()) list.add_string(PMIX_EVENT_TEXT_MESSAGE, event.message);
  for (const EventInfo& carried : event.info) {
    pmix_info_t entry;
    PMIX_INFO_CONSTRUCT(&entry);
    PMIX_LOAD_KEY(entry.key, carried.key.c_str());
    if (Status unpacked = unpack_value(carried.packed_value, entry.value); !unpacked)
      return Error{"event info " + carried.key + ": " + unpacked.error().message};
    list.add_info(entry);
    PMIX_INFO_DESTRUCT(&entry);
  }
  return list.take_array();
}

}  // namespace grove::pmix_internal
