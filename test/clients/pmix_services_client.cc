// A PMIx client for the server's services beyond data exchange: queries and
// logging. One scenario per run (--scenario NAME):
//
//   query  rank 0 asks the server which jobs run (its own must be among
//          them), its job's size and node count (PMIX_QUERY_REFRESH_CACHE,
//          so the server answers, not the client's cache), the DVM's node
//          count, and a key and a job that do not exist (refused at once).
//   log    every rank logs a line to stdout and one to stderr through
//          PMIx_Log, then one to syslog, which grove refuses.
//   events every rank registers for job ends and for an event code of its
//          own; rank 0 spawns `true` and waits for that job's end, the last
//          rank notifies the session of its own event, which every other
//          rank waits for (20 s at most).
//   node-down  every rank registers for PMIX_EVENT_NODE_DOWN, says
//          "registered", and waits (60 s at most) for a daemon to be lost.
//   spawn-abort CLIENT  rank 0 spawns 2 ranks of CLIENT --abort 7
//          (pmix_fence_client) and waits for the child's failure to end its
//          own job (60 s at most).
//   count-events  every rank registers a default handler and handlers for
//          the codes of a job's and a rank's end and for a marker, fences,
//          notifies its namespace of the marker, waits (20 s at most) for every other
//          rank's marker, and prints "rank R: foreign events N": the events
//          it received that concern another job (none should).
//
// Every check prints "rank R: <what> ok" or fails with exit status 1 and a
// line on stderr. Exit status: 0 all checks passed, 1 a check failed, 2 bad
// usage, 3 PMIx_Init failed.
#include <pmix.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client_report.h"

using test_client::fail;
using test_client::ok;
using test_client::self;

namespace {

// One query of one key, with a PMIX_NSPACE qualifier when `nspace` is given
// and PMIX_QUERY_REFRESH_CACHE always. The status; the first answer's value
// in `value` (the caller releases it).
pmix_status_t query_one(const char* key, const char* nspace, pmix_value_t** value) {
  pmix_query_t query;
  PMIX_QUERY_CONSTRUCT(&query);
  query.keys = static_cast<char**>(calloc(2, sizeof(char*)));
  query.keys[0] = strdup(key);
  query.nqual = nspace != nullptr ? 2 : 1;
  PMIX_INFO_CREATE(query.qualifiers, query.nqual);
  bool refresh = true;
  PMIX_INFO_LOAD(&query.qualifiers[0], PMIX_QUERY_REFRESH_CACHE, &refresh, PMIX_BOOL);
  if (nspace != nullptr) PMIX_INFO_LOAD(&query.qualifiers[1], PMIX_NSPACE, nspace, PMIX_STRING);
  pmix_info_t* results = nullptr;
  std::size_t nresults = 0;
  pmix_status_t status = PMIx_Query_info(&query, 1, &results, &nresults);
  PMIX_QUERY_DESTRUCT(&query);
  *value = nullptr;
  for (std::size_t i = 0; i < nresults; ++i) {
    if (PMIX_CHECK_KEY(&results[i], key)) {
      PMIX_VALUE_CREATE(*value, 1);
      PMIx_Value_xfer(*value, &results[i].value);
      break;
    }
  }
  if (results != nullptr) PMIX_INFO_FREE(results, nresults);
  return status;
}

std::uint32_t get_u32(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* value = nullptr;
  pmix_status_t status = PMIx_Get(&proc, key, nullptr, 0, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_UINT32)
    fail("PMIx_Get %s: %s", key, PMIx_Error_string(status));
  const std::uint32_t number = value->data.uint32;
  PMIX_VALUE_RELEASE(value);
  return number;
}

void run_query() {
  if (self.rank != 0) return;
  pmix_value_t* value = nullptr;
  pmix_status_t status = query_one(PMIX_QUERY_NAMESPACES, nullptr, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_STRING)
    fail("query of the running jobs: %s", PMIx_Error_string(status));
  const std::string jobs = value->data.string;
  PMIX_VALUE_RELEASE(value);
  std::printf("rank 0: running jobs %s\n", jobs.c_str());
  if (jobs.find(self.nspace) == std::string::npos)
    fail("its own job is not among %s", jobs.c_str());
  ok("running jobs include this one");

  pmix_proc_t whole;
  PMIX_LOAD_PROCID(&whole, self.nspace, PMIX_RANK_WILDCARD);
  status = query_one(PMIX_JOB_SIZE, self.nspace, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_UINT32)
    fail("query of the job size: %s", PMIx_Error_string(status));
  std::printf("rank 0: job size %u\n", value->data.uint32);
  if (value->data.uint32 != get_u32(whole, PMIX_JOB_SIZE)) fail("job size differs from get");
  PMIX_VALUE_RELEASE(value);
  ok("job size");

  status = query_one(PMIX_NUM_NODES, self.nspace, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_UINT32)
    fail("query of the job's nodes: %s", PMIx_Error_string(status));
  std::printf("rank 0: job nodes %u\n", value->data.uint32);
  PMIX_VALUE_RELEASE(value);
  status = query_one(PMIX_NUM_NODES, nullptr, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_UINT32)
    fail("query of the DVM's nodes: %s", PMIx_Error_string(status));
  std::printf("rank 0: dvm nodes %u\n", value->data.uint32);
  PMIX_VALUE_RELEASE(value);
  ok("node counts");

  // No process sets: none, rather than an error (openpmix's hello asks).
  status = query_one(PMIX_QUERY_NUM_PSETS, nullptr, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_SIZE ||
      value->data.size != 0)
    fail("query of the number of process sets: %s", PMIx_Error_string(status));
  PMIX_VALUE_RELEASE(value);
  status = query_one(PMIX_QUERY_PSET_NAMES, nullptr, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_STRING ||
      (value->data.string != nullptr && value->data.string[0] != '\0'))
    fail("query of the process sets' names: %s", PMIx_Error_string(status));
  PMIX_VALUE_RELEASE(value);
  ok("no process sets");

  status = query_one("grove.no.such.key", nullptr, &value);
  if (status == PMIX_SUCCESS) fail("a query of an unknown key succeeded");
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  std::printf("rank 0: unknown key -> %s\n", PMIx_Error_string(status));
  ok("unknown key refused");
  status = query_one(PMIX_JOB_SIZE, "grove.no.such.job", &value);
  if (status == PMIX_SUCCESS) fail("a query of an unknown job succeeded");
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  std::printf("rank 0: unknown job -> %s\n", PMIx_Error_string(status));
  ok("unknown job refused");
}

// Events as the handlers saw them, for the main thread to wait on.
constexpr pmix_status_t kOwnEvent = PMIX_EXTERNAL_ERR_BASE - 7;
std::mutex events_mutex;
std::condition_variable events_changed;
struct SeenEvent {
  pmix_status_t code;
  std::string source;
  std::string affected;  // nspace:rank ("*" for the wildcard)
  std::string text;
  std::string affected_nspace;
  int job_status = -1;
  int exit_code = -1;
};
std::vector<SeenEvent> seen;

void on_event(std::size_t, pmix_status_t code, const pmix_proc_t* source, pmix_info_t info[],
              std::size_t ninfo, pmix_info_t*, std::size_t,
              pmix_event_notification_cbfunc_fn_t done, void* done_data) {
  SeenEvent event{};
  event.code = code;
  if (source != nullptr)
    event.source = std::string(source->nspace) + ":" + std::to_string(source->rank);
  for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC) {
      const pmix_proc_t* proc = info[i].value.data.proc;
      event.affected_nspace = proc->nspace;
      event.affected = std::string(proc->nspace) + ":" +
                       (proc->rank == PMIX_RANK_WILDCARD ? "*" : std::to_string(proc->rank));
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE) &&
               info[i].value.type == PMIX_STRING) {
      event.text = info[i].value.data.string;
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS) &&
               info[i].value.type == PMIX_STATUS) {
      event.job_status = info[i].value.data.status;
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT) {
      event.exit_code = info[i].value.data.integer;
    }
  }
  {
    std::lock_guard lock(events_mutex);
    seen.push_back(event);
  }
  events_changed.notify_all();
  if (done != nullptr) done(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, done_data);
}

void register_for(pmix_status_t code) {
  pmix_status_t codes[] = {code};
  pmix_status_t status =
      PMIx_Register_event_handler(codes, 1, nullptr, 0, on_event, nullptr, nullptr);
  if (status < 0) fail("registering for event %d: %s", code, PMIx_Error_string(status));
}

// The first event seen with `code` (and, if given, this affected proc), or
// a failure after `seconds`.
SeenEvent wait_for_event(pmix_status_t code, const std::string& affected, int seconds) {
  std::unique_lock lock(events_mutex);
  SeenEvent found{};
  const bool arrived = events_changed.wait_for(lock, std::chrono::seconds(seconds), [&] {
    for (const SeenEvent& event : seen) {
      if (event.code == code && (affected.empty() || event.affected == affected)) {
        found = event;
        return true;
      }
    }
    return false;
  });
  if (!arrived) fail("no event %d for %s within %d s", code, affected.c_str(), seconds);
  return found;
}

std::uint32_t job_size() {
  pmix_proc_t whole;
  PMIX_LOAD_PROCID(&whole, self.nspace, PMIX_RANK_WILDCARD);
  return get_u32(whole, PMIX_JOB_SIZE);
}

void spawn(const char* command, std::vector<const char*> args, int procs, pmix_nspace_t child) {
  pmix_app_t app;
  PMIX_APP_CONSTRUCT(&app);
  app.cmd = strdup(command);
  app.argv = static_cast<char**>(calloc(args.size() + 2, sizeof(char*)));
  app.argv[0] = strdup(command);
  for (std::size_t i = 0; i < args.size(); ++i)
    app.argv[i + 1] = strdup(args[i]);
  app.maxprocs = procs;
  std::memset(child, 0, sizeof(pmix_nspace_t));
  pmix_status_t status = PMIx_Spawn(nullptr, 0, &app, 1, child);
  PMIX_APP_DESTRUCT(&app);
  if (status != PMIX_SUCCESS) fail("spawn of %s: %s", command, PMIx_Error_string(status));
}

void run_events() {
  register_for(PMIX_EVENT_JOB_END);
  register_for(kOwnEvent);
  PMIx_Fence(nullptr, 0, nullptr, 0);  // everyone listens before anyone speaks
  const std::uint32_t last = job_size() - 1;
  if (self.rank == 0) {
    pmix_nspace_t child;
    spawn("true", {}, 1, child);
    SeenEvent ended = wait_for_event(PMIX_EVENT_JOB_END, std::string(child) + ":*", 20);
    std::printf("rank 0: job end of %s status %d (%s)\n", child, ended.job_status,
                ended.text.c_str());
    ok("job end event");
  }
  if (self.rank == last) {
    pmix_info_t text;
    PMIX_INFO_LOAD(&text, PMIX_EVENT_TEXT_MESSAGE, "hello from the last rank", PMIX_STRING);
    pmix_status_t status =
        PMIx_Notify_event(kOwnEvent, nullptr, PMIX_RANGE_SESSION, &text, 1, nullptr, nullptr);
    PMIX_INFO_DESTRUCT(&text);
    if (status != PMIX_SUCCESS && status != PMIX_OPERATION_SUCCEEDED)
      fail("notify: %s", PMIx_Error_string(status));
    ok("notified");
  } else {
    SeenEvent event = wait_for_event(kOwnEvent, "", 20);
    std::printf("rank %u: event from %s: %s\n", self.rank, event.source.c_str(),
                event.text.c_str());
    ok("event from another rank");
  }
}

void run_node_down() {
  register_for(PMIX_EVENT_NODE_DOWN);
  std::printf("rank %u: registered\n", self.rank);
  std::fflush(stdout);
  SeenEvent down = wait_for_event(PMIX_EVENT_NODE_DOWN, "", 60);
  std::printf("rank %u: node down %s (%s)\n", self.rank, down.affected.c_str(), down.text.c_str());
  ok("node down event");
}

void run_spawn_abort(const char* client) {
  if (self.rank != 0) return;
  pmix_nspace_t child;
  spawn(client, {"--abort", "7"}, 2, child);
  std::printf("rank 0: spawned %s\n", child);
  std::fflush(stdout);
  sleep(60);  // the child's failure ends this job first
  fail("still running 60 s after spawning %s", child);
}

void run_count_events() {
  constexpr pmix_status_t kMarker = PMIX_EXTERNAL_ERR_BASE - 8;
  const pmix_status_t ends[] = {PMIX_EVENT_JOB_END,           PMIX_EVENT_PROC_TERMINATED,
                                PMIX_ERR_PROC_ABORTED,        PMIX_ERR_PROC_REQUESTED_ABORT,
                                PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_ERR_PROC_TERM_WO_SYNC};
  for (pmix_status_t code : ends)
    register_for(code);
  // By its code: libpmix 4.2's server drops a client's default handler
  // registration (docs/pmix.md), so a default handler alone hears nothing.
  register_for(kMarker);
  pmix_status_t status =
      PMIx_Register_event_handler(nullptr, 0, nullptr, 0, on_event, nullptr, nullptr);
  if (status < 0) fail("registering a default handler: %s", PMIx_Error_string(status));
  PMIx_Fence(nullptr, 0, nullptr, 0);
  status = PMIx_Notify_event(kMarker, nullptr, PMIX_RANGE_NAMESPACE, nullptr, 0, nullptr, nullptr);
  if (status != PMIX_SUCCESS && status != PMIX_OPERATION_SUCCEEDED)
    fail("notify: %s", PMIx_Error_string(status));
  // Every other rank's marker: what came before it through this daemon has
  // been delivered (a cached event is replayed at registration, earlier).
  const std::size_t others = job_size() - 1;
  std::unique_lock lock(events_mutex);
  // A rank's handler hears its own marker too (libpmix's client runs its
  // own handlers), so that one is left out of both counts.
  const std::string me = std::string(self.nspace) + ":" + std::to_string(self.rank);
  auto markers = [&] {
    std::size_t count = 0;
    for (const SeenEvent& event : seen)
      count += event.code == kMarker && event.source != me;
    return count;
  };
  if (!events_changed.wait_for(lock, std::chrono::seconds(20), [&] { return markers() >= others; }))
    fail("%zu of %zu markers within 20 s", markers(), others);
  std::size_t foreign = 0;
  const std::string own = std::string(self.nspace) + ":";
  std::size_t events = 0;
  for (const SeenEvent& event : seen) {
    if (event.source == me) continue;
    ++events;
    const bool other_source = !event.source.empty() && event.source.rfind(own, 0) != 0;
    const bool other_affected =
        !event.affected_nspace.empty() && event.affected_nspace != self.nspace;
    if (event.code == kMarker && !other_source) continue;
    if (other_source || other_affected) {
      ++foreign;
      std::fprintf(stderr, "rank %u: foreign event %d from %s affecting %s (%s)\n", self.rank,
                   event.code, event.source.c_str(), event.affected.c_str(), event.text.c_str());
    }
  }
  std::printf("rank %u: markers %zu, foreign events %zu, events %zu\n", self.rank, markers(),
              foreign, events);
  std::fflush(stdout);
}

void run_log() {
  const std::string out = "log line from rank " + std::to_string(self.rank);
  const std::string err = "log error from rank " + std::to_string(self.rank);
  pmix_info_t data[2];
  PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDOUT, out.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDERR, err.c_str(), PMIX_STRING);
  pmix_status_t status = PMIx_Log(data, 2, nullptr, 0);
  PMIX_INFO_DESTRUCT(&data[0]);
  PMIX_INFO_DESTRUCT(&data[1]);
  if (status != PMIX_SUCCESS) fail("log to stdout and stderr: %s", PMIx_Error_string(status));
  ok("log to stdout and stderr");
  pmix_info_t syslog;
  PMIX_INFO_LOAD(&syslog, PMIX_LOG_SYSLOG, "grove test", PMIX_STRING);
  status = PMIx_Log(&syslog, 1, nullptr, 0);
  PMIX_INFO_DESTRUCT(&syslog);
  if (status == PMIX_SUCCESS) fail("a log to syslog succeeded");
  std::printf("rank %u: syslog -> %s\n", self.rank, PMIx_Error_string(status));
  ok("syslog refused");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc >= 3 && std::strcmp(argv[1], "--scenario") == 0 ? argv[2] : "";
  const bool known = scenario == "query" || scenario == "log" || scenario == "events" ||
                     scenario == "node-down" || scenario == "count-events";
  if (!(known && argc == 3) && !(scenario == "spawn-abort" && argc == 4)) {
    std::fprintf(stderr,
                 "usage: pmix_services_client --scenario "
                 "query|log|events|node-down|count-events|spawn-abort CLIENT\n");
    return 2;
  }
  pmix_status_t status = PMIx_Init(&self, nullptr, 0);
  if (status != PMIX_SUCCESS) {
    std::fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(status));
    return 3;
  }
  if (scenario == "query") {
    run_query();
  } else if (scenario == "log") {
    run_log();
  } else if (scenario == "events") {
    run_events();
  } else if (scenario == "node-down") {
    run_node_down();
  } else if (scenario == "count-events") {
    run_count_events();
  } else {
    run_spawn_abort(argv[3]);
  }
  PMIx_Fence(nullptr, 0, nullptr, 0);
  PMIx_Finalize(nullptr, 0);
  return 0;
}
