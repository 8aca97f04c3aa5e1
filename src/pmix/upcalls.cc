// The C entry points of the PMIx server module. They run on PMIx's progress
// thread and do only this: check the arguments, copy them into an Upcall,
// post it to the daemon loop's mailbox, and return. Nothing here touches
// daemon state or calls back into PMIx.
#include <pmix.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "pmix/async_ops.h"
#include "pmix/client_gate.h"
#include "pmix/event_info.h"
#include "pmix/packed_value.h"
#include "pmix/upcall.h"

namespace grove::pmix_internal {
namespace {

std::atomic<UpcallMailbox*> installed_mailbox{nullptr};
std::atomic<ClientGate*> installed_gate{nullptr};

std::string nspace_of(const pmix_proc_t& proc) {
  return std::string(proc.nspace, ::strnlen(proc.nspace, PMIX_MAX_NSLEN));
}

std::vector<std::byte> copy_bytes(const char* data, std::size_t size) {
  if (data == nullptr || size == 0) return {};
  const auto* first = reinterpret_cast<const std::byte*>(data);
  return std::vector<std::byte>(first, first + size);
}

// An abort's message as the DVM passes it on: at most kMaxAbortMessage
// bytes, with a note of what was cut. It goes to the controller, into the
// job's end and to grove run; a rank's 64 MB message, copied whole, cost
// daemons their heartbeats and grew every daemon of the DVM.
std::string bounded_abort_message(const char* message) {
  const std::size_t length = ::strnlen(message, kMaxAbortMessage + 1);
  if (length <= kMaxAbortMessage) return std::string(message, length);
  const std::size_t total = length + ::strlen(message + length);
  return std::string(message, kMaxAbortMessage) + "... (" +
         std::to_string(total - kMaxAbortMessage) + " more bytes not kept)";
}

// Posts the upcall; false if no server is installed (PMIx is shutting down).
bool post(Upcall upcall) {
  UpcallMailbox* mailbox = installed_mailbox.load(std::memory_order_acquire);
  if (mailbox == nullptr) return false;
  mailbox->post(std::move(upcall));
  return true;
}

// Processes by nspace, each rank list sorted and distinct; a wildcard rank
// stands for the whole nspace (an empty list).
std::map<std::string, std::vector<std::uint32_t>> procs_by_nspace(const pmix_proc_t procs[],
                                                                  std::size_t nprocs) {
  std::map<std::string, std::vector<std::uint32_t>> by_nspace;
  std::set<std::string> whole;
  for (std::size_t i = 0; i < nprocs; ++i) {
    const std::string nspace = nspace_of(procs[i]);
    std::vector<std::uint32_t>& ranks = by_nspace[nspace];
    if (procs[i].rank == PMIX_RANK_WILDCARD) {
      whole.insert(nspace);
    } else {
      ranks.push_back(procs[i].rank);
    }
  }
  for (auto& [nspace, ranks] : by_nspace) {
    if (whole.count(nspace) != 0) ranks.clear();
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  }
  return by_nspace;
}

// The participants of a fence: the first process's nspace, and any others
// (jobs that connected).
pmix_status_t copy_participants(const pmix_proc_t procs[], std::size_t nprocs,
                                FenceUpcall& upcall) {
  if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
  upcall.nspace = nspace_of(procs[0]);
  upcall.others = procs_by_nspace(procs, nprocs);
  upcall.ranks = std::move(upcall.others[upcall.nspace]);
  upcall.others.erase(upcall.nspace);
  return PMIX_SUCCESS;
}

pmix_status_t fence_nb(const pmix_proc_t procs[], std::size_t nprocs, const pmix_info_t info[],
                       std::size_t ninfo, char* data, std::size_t ndata, pmix_modex_cbfunc_t cbfunc,
                       void* cbdata) {
  // The blob is the host's to free, on every path: libpmix 4.2 unloads it
  // from its own buffer and forgets it (pmix_server_ops.c; PRRTE frees it
  // with its fence). Kept, it was the local ranks' data lost once per fence.
  FenceUpcall upcall;
  upcall.data = copy_bytes(data, ndata);
  std::free(data);
  pmix_status_t status = copy_participants(procs, nprocs, upcall);
  if (status != PMIX_SUCCESS) return status;
  for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA)) upcall.collect_data = PMIX_INFO_TRUE(&info[i]);
    if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
      const pmix_value_t& value = info[i].value;
      if (value.type == PMIX_INT) upcall.timeout_seconds = value.data.integer;
      if (value.type == PMIX_INT32) upcall.timeout_seconds = value.data.int32;
      if (value.type == PMIX_UINT32) upcall.timeout_seconds = static_cast<int>(value.data.uint32);
      if (upcall.timeout_seconds < 0) upcall.timeout_seconds = 0;
    }
  }
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t direct_modex(const pmix_proc_t* proc, const pmix_info_t[], std::size_t,
                           pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
  DirectModexUpcall upcall{nspace_of(*proc), proc->rank, cbfunc, cbdata};
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t abort_job(const pmix_proc_t* proc, void*, int status, const char message[],
                        pmix_proc_t[], std::size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
  AbortUpcall upcall;
  upcall.nspace = nspace_of(*proc);
  upcall.rank = proc->rank;
  upcall.status = status;
  if (message != nullptr) upcall.message = bounded_abort_message(message);
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t client_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc,
                               void* cbdata) {
  if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
  FinalizedUpcall upcall{nspace_of(*proc), proc->rank, cbfunc, cbdata};
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

// A registered client is accepted at once if the gate admits it, refused
// (its PMIx_Init fails) otherwise. PMIx 4.2 may pass a null cbfunc here, so
// the answer is the return value, never the callback. The daemon is told
// either way (it must know which ranks owe a PMIx_Finalize).
pmix_status_t admit_client(const pmix_proc_t* proc) {
  if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
  ConnectedUpcall upcall{nspace_of(*proc), proc->rank, {}};
  if (ClientGate* gate = installed_gate.load(std::memory_order_acquire)) {
    if (std::optional<std::string> why = gate->admit(upcall.nspace, upcall.rank)) {
      upcall.refused = std::move(*why);
      post(std::move(upcall));
      return PMIX_ERR_NO_PERMISSIONS;
    }
  }
  post(std::move(upcall));
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t client_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  return admit_client(proc);
}

pmix_status_t client_connected2(const pmix_proc_t* proc, void*, pmix_info_t[], std::size_t,
                                pmix_op_cbfunc_t, void*) {
  return admit_client(proc);
}

// Answered at once, and noted: a program that needs these learns why it
// failed from the daemon's log, not from a hang.
pmix_status_t unsupported(const char* call, const pmix_proc_t* proc) {
  UnsupportedUpcall upcall;
  upcall.call = call;
  if (proc != nullptr) {
    upcall.nspace = nspace_of(*proc);
    upcall.rank = proc->rank;
  }
  post(std::move(upcall));
  return PMIX_ERR_NOT_SUPPORTED;
}

// PMIx's ranges and persistences as grove's store keeps them: SESSION,
// GLOBAL, RM, CUSTOM and UNDEF are the whole DVM (one session); INDEF is
// the DVM's life.
PublishRange range_of(pmix_data_range_t range) {
  switch (range) {
    case PMIX_RANGE_LOCAL:
      return PublishRange::local;
    case PMIX_RANGE_NAMESPACE:
      return PublishRange::nspace;
    case PMIX_RANGE_PROC_LOCAL:
      return PublishRange::proc;
    default:
      return PublishRange::session;
  }
}

PublishPersistence persistence_of(pmix_persistence_t persistence) {
  switch (persistence) {
    case PMIX_PERSIST_FIRST_READ:
      return PublishPersistence::first_read;
    case PMIX_PERSIST_PROC:
      return PublishPersistence::proc;
    case PMIX_PERSIST_APP:
      return PublishPersistence::app;
    default:
      return PublishPersistence::session;
  }
}

// An integer directive (PMIX_TIMEOUT, a counting PMIX_WAIT), whatever
// integer type the client used; negative values read as 0.
std::uint32_t info_count(const pmix_value_t& value) {
  long long number = 0;
  switch (value.type) {
    case PMIX_INT:
      number = value.data.integer;
      break;
    case PMIX_INT32:
      number = value.data.int32;
      break;
    case PMIX_UINT32:
      number = value.data.uint32;
      break;
    case PMIX_SIZE:
      number = static_cast<long long>(value.data.size);
      break;
    case PMIX_BOOL:
      number = value.data.flag ? 1 : 0;
      break;
    default:
      break;
  }
  return number < 0 ? 0 : static_cast<std::uint32_t>(std::min<long long>(number, UINT32_MAX));
}

// A lookup's or unpublish's PMIX_RANGE, when it names one.
std::optional<PublishRange> range_directive(const pmix_info_t& info) {
  if (!PMIX_CHECK_KEY(&info, PMIX_RANGE) || info.value.type != PMIX_DATA_RANGE ||
      info.value.data.range == PMIX_RANGE_UNDEF)
    return std::nullopt;
  return range_of(info.value.data.range);
}

std::vector<std::string> string_list(char** strings) {
  std::vector<std::string> list;
  for (std::size_t i = 0; strings != nullptr && strings[i] != nullptr; ++i)
    list.emplace_back(strings[i]);
  return list;
}

pmix_status_t publish(const pmix_proc_t* proc, const pmix_info_t info[], std::size_t ninfo,
                      pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
  PublishUpcall upcall;
  upcall.message.nspace = nspace_of(*proc);
  upcall.message.rank = proc->rank;
  for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
    // Directives, the client's or libpmix's own; every other entry is data.
    if (PMIX_CHECK_KEY(&info[i], PMIX_RANGE) && info[i].value.type == PMIX_DATA_RANGE) {
      upcall.message.range = range_of(info[i].value.data.range);
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE) && info[i].value.type == PMIX_PERSIST) {
      upcall.message.persistence = persistence_of(info[i].value.data.persist);
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_USERID) || PMIX_CHECK_KEY(&info[i], PMIX_GRPID) ||
               PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT) || PMIX_CHECK_KEY(&info[i], PMIX_RANGE) ||
               PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE)) {
      continue;
    } else {
      Result<Bytes> packed = pack_value(info[i].value);
      if (!packed) return PMIX_ERR_PACK_FAILURE;
      upcall.message.values.push_back(PublishedValueWire{
          std::string(info[i].key, ::strnlen(info[i].key, PMIX_MAX_KEYLEN)), std::move(*packed)});
    }
  }
  if (upcall.message.values.empty()) return PMIX_ERR_BAD_PARAM;
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                     std::size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
  LookupUpcall upcall;
  upcall.message.nspace = nspace_of(*proc);
  upcall.message.rank = proc->rank;
  upcall.message.keys = string_list(keys);
  if (upcall.message.keys.empty()) return PMIX_ERR_BAD_PARAM;
  for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT)) {
      // true: every key, false: none; a number: that many of them, where 0
      // (the standard's default) means every key too.
      const std::uint32_t count = info_count(info[i].value);
      const auto all = static_cast<std::uint32_t>(upcall.message.keys.size());
      if (info[i].value.type == PMIX_BOOL) {
        upcall.message.wait_for = count == 1 ? all : 0;
      } else {
        upcall.message.wait_for = count == 0 ? all : std::min(count, all);
      }
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
      upcall.message.timeout_seconds = info_count(info[i].value);
    } else if (std::optional<PublishRange> range = range_directive(info[i])) {
      upcall.message.range = range;
    }
  }
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                        std::size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
  UnpublishUpcall upcall;
  upcall.message.nspace = nspace_of(*proc);
  upcall.message.rank = proc->rank;
  upcall.message.keys = string_list(keys);
  for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
    if (std::optional<PublishRange> range = range_directive(info[i])) upcall.message.range = range;
  }
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

std::string string_value(const pmix_info_t& info) {
  if (info.value.type != PMIX_STRING || info.value.data.string == nullptr) return {};
  return info.value.data.string;
}

// One pmix_app_t as grove runs it: the program is `cmd` (argv[0] when cmd is
// not given), its arguments argv[1..], as PRRTE reads an app.
std::optional<SpawnApp> copy_app(const pmix_app_t& app) {
  SpawnApp copy;
  std::vector<std::string> argv = string_list(app.argv);
  std::string program = app.cmd != nullptr ? app.cmd : "";
  if (program.empty() && !argv.empty()) program = argv.front();
  if (program.empty() || app.maxprocs < 1) return std::nullopt;
  copy.argv.push_back(program);
  if (argv.size() > 1) copy.argv.insert(copy.argv.end(), argv.begin() + 1, argv.end());
  copy.env = string_list(app.env);
  if (app.cwd != nullptr) copy.cwd = app.cwd;
  for (std::size_t i = 0; app.info != nullptr && i < app.ninfo; ++i) {
    if (copy.cwd.empty() && PMIX_CHECK_KEY(&app.info[i], PMIX_WDIR))
      copy.cwd = string_value(app.info[i]);
  }
  copy.np = static_cast<std::uint32_t>(app.maxprocs);
  return copy;
}

pmix_status_t spawn(const pmix_proc_t* proc, const pmix_info_t job_info[], std::size_t ninfo,
                    const pmix_app_t apps[], std::size_t napps, pmix_spawn_cbfunc_t cbfunc,
                    void* cbdata) {
  if (proc == nullptr || apps == nullptr || napps == 0) return PMIX_ERR_BAD_PARAM;
  SpawnUpcall upcall;
  upcall.message.nspace = nspace_of(*proc);
  upcall.message.rank = proc->rank;
  for (std::size_t i = 0; i < napps; ++i) {
    std::optional<SpawnApp> app = copy_app(apps[i]);
    if (!app) return PMIX_ERR_BAD_PARAM;
    upcall.message.apps.push_back(std::move(*app));
  }
  for (std::size_t i = 0; job_info != nullptr && i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&job_info[i], PMIX_MAPBY)) upcall.message.map_by = string_value(job_info[i]);
  }
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

// connect and disconnect: the participants by nspace (a wildcard rank
// stands for the whole nspace).
pmix_status_t post_connect(const pmix_proc_t procs[], std::size_t nprocs, bool disconnect,
                           const pmix_info_t info[], std::size_t ninfo, pmix_op_cbfunc_t cbfunc,
                           void* cbdata) {
  if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
  ConnectUpcall upcall;
  upcall.call.disconnect = disconnect;
  upcall.call.procs = procs_by_nspace(procs, nprocs);
  for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT))
      upcall.call.timeout_seconds = info_count(info[i].value);
  }
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t connect(const pmix_proc_t procs[], std::size_t nprocs, const pmix_info_t info[],
                      std::size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return post_connect(procs, nprocs, false, info, ninfo, cbfunc, cbdata);
}

pmix_status_t disconnect(const pmix_proc_t procs[], std::size_t nprocs, const pmix_info_t info[],
                         std::size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return post_connect(procs, nprocs, true, info, ninfo, cbfunc, cbdata);
}

// group construct and destruct: the members by nspace, as for a connect.
// Directives other than PMIX_GROUP_ASSIGN_CONTEXT_ID and PMIX_TIMEOUT change
// nothing here
// (docs/pmix.md "Process groups").
pmix_status_t group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                    std::size_t nprocs, const pmix_info_t directives[], std::size_t ndirs,
                    pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (grp == nullptr || procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
  if (op != PMIX_GROUP_CONSTRUCT && op != PMIX_GROUP_DESTRUCT) return PMIX_ERR_NOT_SUPPORTED;
  GroupUpcall upcall;
  upcall.call.destruct = op == PMIX_GROUP_DESTRUCT;
  upcall.call.id = grp;
  upcall.call.procs = procs_by_nspace(procs, nprocs);
  for (std::size_t i = 0; directives != nullptr && i < ndirs; ++i) {
    if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ASSIGN_CONTEXT_ID))
      upcall.call.assign_context_id = PMIX_INFO_TRUE(&directives[i]);
    if (PMIX_CHECK_KEY(&directives[i], PMIX_TIMEOUT))
      upcall.call.timeout_seconds = info_count(directives[i].value);
  }
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t query(pmix_proc_t* proc, pmix_query_t* queries, std::size_t nqueries,
                    pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (proc == nullptr || queries == nullptr || nqueries == 0) return PMIX_ERR_BAD_PARAM;
  QueryUpcall upcall;
  upcall.call.nspace = nspace_of(*proc);
  upcall.call.rank = proc->rank;
  for (std::size_t i = 0; i < nqueries; ++i) {
    PmixQueryCall::Query copy;
    copy.keys = string_list(queries[i].keys);
    for (std::size_t q = 0; queries[i].qualifiers != nullptr && q < queries[i].nqual; ++q) {
      if (PMIX_CHECK_KEY(&queries[i].qualifiers[q], PMIX_NSPACE))
        copy.nspace = string_value(queries[i].qualifiers[q]);
    }
    upcall.call.queries.push_back(std::move(copy));
  }
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  return post(std::move(upcall)) ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

void log_message(const pmix_proc_t* client, const pmix_info_t data[], std::size_t ndata,
                 const pmix_info_t[], std::size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  LogUpcall upcall;
  if (client != nullptr) {
    upcall.call.nspace = nspace_of(*client);
    upcall.call.rank = client->rank;
  }
  for (std::size_t i = 0; data != nullptr && i < ndata; ++i) {
    const std::string key(data[i].key, ::strnlen(data[i].key, PMIX_MAX_KEYLEN));
    if (PMIX_CHECK_KEY(&data[i], PMIX_LOG_STDOUT)) {
      upcall.call.stdout_lines.push_back(string_value(data[i]));
    } else if (PMIX_CHECK_KEY(&data[i], PMIX_LOG_STDERR)) {
      upcall.call.stderr_lines.push_back(string_value(data[i]));
    } else {
      upcall.call.unserved.push_back(key);
    }
  }
  upcall.cbfunc = cbfunc;
  upcall.cbdata = cbdata;
  if (!post(std::move(upcall)) && cbfunc != nullptr) cbfunc(PMIX_ERR_INIT, cbdata);
}

// A client registered for system events (a lost node, ...): libpmix asks
// whether the host will send them. grove delivers the ones it raises to
// every daemon whatever registered, so there is nothing to arrange.
pmix_status_t register_events(pmix_status_t*, std::size_t, const pmix_info_t[], std::size_t,
                              pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t deregister_events(pmix_status_t*, std::size_t, pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

// libpmix has delivered the event to this server's clients; the daemon
// relays it to the others. Answered at once: delivery beyond is best effort.
pmix_status_t notify_event(pmix_status_t code, const pmix_proc_t* source, pmix_data_range_t range,
                           pmix_info_t info[], std::size_t ninfo, pmix_op_cbfunc_t cbfunc,
                           void* cbdata) {
  NotifyUpcall upcall;
  upcall.event = pmix_internal::event_from_upcall(code, source, range, info, ninfo);
  post(std::move(upcall));
  (void)cbfunc;  // done here: OPERATION_SUCCEEDED means it is never called
  (void)cbdata;
  return PMIX_OPERATION_SUCCEEDED;
}

// Requests grove does not serve: refused at once, each with a line in the
// daemon's log (libpmix would refuse a null entry too, but silently).
pmix_status_t allocate(const pmix_proc_t* client, pmix_alloc_directive_t, const pmix_info_t[],
                       std::size_t, pmix_info_cbfunc_t, void*) {
  return unsupported("PMIx_Allocation_request", client);
}

pmix_status_t job_control(const pmix_proc_t* requestor, const pmix_proc_t[], std::size_t,
                          const pmix_info_t[], std::size_t, pmix_info_cbfunc_t, void*) {
  return unsupported("PMIx_Job_control", requestor);
}

pmix_status_t monitor(const pmix_proc_t* requestor, const pmix_info_t*, pmix_status_t,
                      const pmix_info_t[], std::size_t, pmix_info_cbfunc_t, void*) {
  return unsupported("PMIx_Process_monitor", requestor);
}

pmix_status_t get_credential(const pmix_proc_t* proc, const pmix_info_t[], std::size_t,
                             pmix_credential_cbfunc_t, void*) {
  return unsupported("PMIx_Get_credential", proc);
}

pmix_status_t validate_credential(const pmix_proc_t* proc, const pmix_byte_object_t*,
                                  const pmix_info_t[], std::size_t, pmix_validation_cbfunc_t,
                                  void*) {
  return unsupported("PMIx_Validate_credential", proc);
}

pmix_status_t fabric(const pmix_proc_t* requestor, pmix_fabric_operation_t, const pmix_info_t[],
                     std::size_t, pmix_info_cbfunc_t, void*) {
  return unsupported("PMIx_Fabric", requestor);
}

}  // namespace

pmix_server_module_t make_server_module() {
  pmix_server_module_t module;
  std::memset(&module, 0, sizeof module);
  module.client_connected = client_connected;
  module.client_connected2 = client_connected2;
  module.client_finalized = client_finalized;
  module.abort = abort_job;
  module.fence_nb = fence_nb;
  module.direct_modex = direct_modex;
  module.publish = publish;
  module.lookup = lookup;
  module.unpublish = unpublish;
  module.spawn = spawn;
  module.connect = connect;
  module.disconnect = disconnect;
  module.query = query;
  module.notify_event = notify_event;
  module.register_events = register_events;
  module.deregister_events = deregister_events;
  module.log = log_message;
  module.allocate = allocate;
  module.job_control = job_control;
  module.monitor = monitor;
  module.get_credential = get_credential;
  module.validate_credential = validate_credential;
  module.group = group;
  module.fabric = fabric;
  return module;
}

bool install_mailbox(UpcallMailbox* mailbox, ClientGate* gate) {
  UpcallMailbox* expected = nullptr;
  if (!installed_mailbox.compare_exchange_strong(expected, mailbox, std::memory_order_acq_rel))
    return false;
  installed_gate.store(gate, std::memory_order_release);
  return true;
}

void clear_mailbox() {
  installed_gate.store(nullptr, std::memory_order_release);
  installed_mailbox.store(nullptr, std::memory_order_release);
}

void on_op_done(pmix_status_t status, void* cbdata) {
  post(OpFinished{reinterpret_cast<std::uintptr_t>(cbdata), status});
}

void on_local_modex_reply(pmix_status_t status, char* data, std::size_t size, void* cbdata) {
  LocalModexReply reply{reinterpret_cast<std::uintptr_t>(cbdata), status, copy_bytes(data, size)};
  post(std::move(reply));
}

}  // namespace grove::pmix_internal
