// A PMIx client for the server's services beyond data exchange: queries and
// logging. One scenario per run (--scenario NAME):
//
//   query  rank 0 asks the server which jobs run (its own must be among
//          them), its job's size and node count (PMIX_QUERY_REFRESH_CACHE,
//          so the server answers, not the client's cache), the DVM's node
//          count, and a key and a job that do not exist (refused at once).
//   log    every rank logs a line to stdout and one to stderr through
//          PMIx_Log, then one to syslog, which grove refuses.
//
// Every check prints "rank R: <what> ok" or fails with exit status 1 and a
// line on stderr. Exit status: 0 all checks passed, 1 a check failed, 2 bad
// usage, 3 PMIx_Init failed.
#include <pmix.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

pmix_proc_t self;

[[noreturn]] void fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fprintf(stderr, "rank %u: ", self.rank);
  std::vfprintf(stderr, format, args);
  std::fprintf(stderr, "\n");
  va_end(args);
  std::fflush(stdout);
  std::exit(1);
}

void ok(const char* what) {
  std::printf("rank %u: %s ok\n", self.rank, what);
  std::fflush(stdout);
}

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
  if (argc != 3 || std::strcmp(argv[1], "--scenario") != 0 ||
      (std::strcmp(argv[2], "query") != 0 && std::strcmp(argv[2], "log") != 0)) {
    std::fprintf(stderr, "usage: pmix_services_client --scenario query|log\n");
    return 2;
  }
  pmix_status_t status = PMIx_Init(&self, nullptr, 0);
  if (status != PMIX_SUCCESS) {
    std::fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(status));
    return 3;
  }
  if (std::strcmp(argv[2], "query") == 0) {
    run_query();
  } else {
    run_log();
  }
  PMIx_Fence(nullptr, 0, nullptr, 0);
  PMIx_Finalize(nullptr, 0);
  return 0;
}
