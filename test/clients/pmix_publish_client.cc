// A PMIx client for PMIx_Publish, PMIx_Lookup and PMIx_Unpublish under a
// real server. One scenario per run (--scenario NAME):
//
//   within     rank 0 publishes while the others look up with PMIX_WAIT (no
//              fence first: the wait is what orders them); then duplicate,
//              missing, timed-out, unpublished and range-limited lookups.
//   publisher  rank 0 publishes grove.dvm (the DVM's life), grove.app (the
//              job's life, PMIX_PERSIST_APP) and grove.ns (PMIX_RANGE_NAMESPACE)
//              with values naming its job, and exits.
//   reader     rank 0, in a later job, looks the three up: grove.dvm is
//              found with its publisher's nspace, the others are not.
//
// Every check prints "rank R: <what> ok" or fails with exit status 1 and a
// line on stderr. Exit status: 0 all checks passed, 1 a check failed, 2 bad
// usage, 3 PMIx_Init failed.
#include <pmix.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "client_report.h"

using test_client::fail;
using test_client::nspace_of;
using test_client::ok;
using test_client::self;

namespace {

pmix_status_t publish(const char* key, const std::string& value, pmix_data_range_t range,
                      pmix_persistence_t persistence) {
  pmix_info_t info[3];
  PMIX_INFO_LOAD(&info[0], key, value.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &range, PMIX_DATA_RANGE);
  PMIX_INFO_LOAD(&info[2], PMIX_PERSISTENCE, &persistence, PMIX_PERSIST);
  pmix_status_t status = PMIx_Publish(info, 3);
  for (pmix_info_t& entry : info)
    PMIX_INFO_DESTRUCT(&entry);
  return status;
}

// PMIx_Lookup of one key; `wait` adds PMIX_WAIT (true, or with `as_zero`
// the number 0, which the standard reads as all the keys), `timeout`
// PMIX_TIMEOUT.
pmix_status_t lookup(const char* key, bool wait, int timeout, std::string& value,
                     pmix_proc_t& publisher, bool as_zero = false) {
  pmix_pdata_t data;
  PMIX_PDATA_CONSTRUCT(&data);
  PMIX_LOAD_KEY(data.key, key);
  pmix_info_t info[2];
  std::size_t ninfo = 0;
  int zero = 0;
  if (wait && as_zero) {
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_WAIT, &zero, PMIX_INT);
  } else if (wait) {
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_WAIT, &wait, PMIX_BOOL);
  }
  if (timeout > 0) PMIX_INFO_LOAD(&info[ninfo++], PMIX_TIMEOUT, &timeout, PMIX_INT);
  pmix_status_t status = PMIx_Lookup(&data, 1, ninfo > 0 ? info : nullptr, ninfo);
  for (std::size_t i = 0; i < ninfo; ++i)
    PMIX_INFO_DESTRUCT(&info[i]);
  if (status == PMIX_SUCCESS) {
    if (data.value.type != PMIX_STRING || data.value.data.string == nullptr) {
      fail("lookup of %s gave a value of type %s", key, PMIx_Data_type_string(data.value.type));
    }
    value = data.value.data.string;
    publisher = data.proc;
  }
  PMIX_PDATA_DESTRUCT(&data);
  return status;
}

void expect(pmix_status_t got, pmix_status_t wanted, const char* what) {
  if (got != wanted) {
    fail("%s: %s, expected %s", what, PMIx_Error_string(got), PMIx_Error_string(wanted));
  }
  ok(what);
}

void fence() {
  pmix_status_t status = PMIx_Fence(nullptr, 0, nullptr, 0);
  if (status != PMIX_SUCCESS) fail("fence: %s", PMIx_Error_string(status));
}

void within() {
  const std::string mine = "port-of-" + nspace_of(self);
  std::string value;
  pmix_proc_t publisher;
  if (self.rank == 0) {
    expect(publish("grove.port", mine, PMIX_RANGE_SESSION, PMIX_PERSIST_SESSION), PMIX_SUCCESS,
           "publish");
    expect(publish("grove.port", "again", PMIX_RANGE_SESSION, PMIX_PERSIST_SESSION),
           PMIX_ERR_DUPLICATE_KEY, "duplicate publish refused");
    expect(publish("grove.mine", "private", PMIX_RANGE_PROC_LOCAL, PMIX_PERSIST_SESSION),
           PMIX_SUCCESS, "publish for itself only");
  } else {
    // Published perhaps not yet: the wait is what orders this after it. The
    // odd ranks ask to wait with the number 0.
    expect(lookup("grove.port", true, 30, value, publisher, self.rank % 2 == 1), PMIX_SUCCESS,
           "lookup with wait");
    if (value != mine) fail("lookup gave '%s', expected '%s'", value.c_str(), mine.c_str());
    if (publisher.rank != 0 || nspace_of(publisher) != nspace_of(self)) {
      fail("lookup named rank %u of %s as the publisher", publisher.rank,
           nspace_of(publisher).c_str());
    }
    ok("lookup value and publisher");
    expect(lookup("grove.absent", false, 0, value, publisher), PMIX_ERR_NOT_FOUND,
           "lookup of a missing key");
    const auto start = std::chrono::steady_clock::now();
    const pmix_status_t timed =
        lookup("grove.absent", true, 1, value, publisher, self.rank % 2 == 1);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    expect(timed, PMIX_ERR_TIMEOUT, "lookup waiting for a key that never comes times out");
    std::printf("rank %u: waited %.1f s\n", self.rank, waited);
  }
  fence();  // every lookup above is done
  if (self.rank != 0) {
    expect(lookup("grove.mine", false, 0, value, publisher), PMIX_ERR_NOT_FOUND,
           "a value published for its publisher alone is not found by another rank");
  } else {
    expect(lookup("grove.mine", false, 0, value, publisher), PMIX_SUCCESS,
           "its publisher finds it");
    char* keys[] = {const_cast<char*>("grove.port"), nullptr};
    expect(PMIx_Unpublish(keys, nullptr, 0), PMIX_SUCCESS, "unpublish");
  }
  fence();
  if (self.rank != 0) {
    expect(lookup("grove.port", false, 0, value, publisher), PMIX_ERR_NOT_FOUND,
           "lookup after unpublish");
  }
}

void publisher() {
  if (self.rank != 0) return;
  const std::string mine = "from-" + nspace_of(self);
  expect(publish("grove.dvm", mine, PMIX_RANGE_SESSION, PMIX_PERSIST_SESSION), PMIX_SUCCESS,
         "publish for the DVM's life");
  expect(publish("grove.app", mine, PMIX_RANGE_SESSION, PMIX_PERSIST_APP), PMIX_SUCCESS,
         "publish for the job's life");
  expect(publish("grove.ns", mine, PMIX_RANGE_NAMESPACE, PMIX_PERSIST_SESSION), PMIX_SUCCESS,
         "publish for the job's ranks");
}

void reader() {
  if (self.rank != 0) return;
  std::string value;
  pmix_proc_t from;
  expect(lookup("grove.dvm", false, 0, value, from), PMIX_SUCCESS, "an earlier job's value");
  if (value != "from-" + nspace_of(from)) fail("grove.dvm is '%s'", value.c_str());
  if (nspace_of(from) == nspace_of(self)) fail("grove.dvm came from this job");
  std::printf("rank 0: published by rank %u of %s\n", from.rank, nspace_of(from).c_str());
  expect(lookup("grove.app", false, 0, value, from), PMIX_ERR_NOT_FOUND,
         "a value kept for its job's life is gone");
  expect(lookup("grove.ns", false, 0, value, from), PMIX_ERR_NOT_FOUND,
         "another job's namespace-range value is not seen");
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--scenario") == 0 && i + 1 < argc) {
      scenario = argv[++i];
    } else {
      std::fprintf(stderr, "usage: pmix_publish_client --scenario within|publisher|reader\n");
      return 2;
    }
  }
  if (scenario != "within" && scenario != "publisher" && scenario != "reader") {
    std::fprintf(stderr, "pmix_publish_client: unknown scenario '%s' (within, publisher, reader)\n",
                 scenario.c_str());
    return 2;
  }
  if (PMIx_Init(&self, nullptr, 0) != PMIX_SUCCESS) {
    std::fprintf(stderr, "pmix_publish_client: PMIx_Init failed\n");
    return 3;
  }
  if (scenario == "within") within();
  if (scenario == "publisher") publisher();
  if (scenario == "reader") reader();
  PMIx_Finalize(nullptr, 0);
  return 0;
}
