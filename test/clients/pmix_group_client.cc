// A PMIx client for process groups under a real server. Every rank of the
// job runs it (4 ranks on 2 daemons in the tests):
//
//   1. every rank constructs group "grove.all" over the whole job, asking for
//      a context id: "rank R: group grove.all context id C";
//   2. ranks 0 and 3 (one per daemon with --map-by node) construct
//      "grove.pair" over just the two of them, also with a context id, then
//      destruct it: "rank R: group grove.pair context id C", "... destruct ok";
//   3. every rank destructs "grove.all": "rank R: group grove.all destruct ok";
//   4. with --without-id, one more construct of "grove.plain" over the job
//      without asking for an id: "rank R: group grove.plain without id ok".
//
// --leave-first RANK: that rank finalizes and exits 0 right after PMIx_Init
// ("rank R: left before the groups"), so the others' first construct
// includes a rank that is gone: it must fail, not wait.
//
// The test compares the ids across ranks (equal within a group, different
// between groups). Exit status: 0 all steps passed, 1 a step failed, 3
// PMIx_Init failed.
#include <pmix.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client_report.h"

using test_client::fail;
using test_client::self;

namespace {

// Constructs `name` over `members`; prints its context id when one is asked.
void construct(const char* name, const std::vector<pmix_proc_t>& members, bool want_id) {
  pmix_info_t directive;
  bool assign = true;
  PMIX_INFO_LOAD(&directive, PMIX_GROUP_ASSIGN_CONTEXT_ID, &assign, PMIX_BOOL);
  pmix_info_t* results = nullptr;
  std::size_t nresults = 0;
  pmix_status_t status =
      PMIx_Group_construct(name, members.data(), members.size(), want_id ? &directive : nullptr,
                           want_id ? 1 : 0, &results, &nresults);
  PMIX_INFO_DESTRUCT(&directive);
  if (status != PMIX_SUCCESS) fail("construct %s: %s", name, PMIx_Error_string(status));
  bool found = false;
  for (std::size_t i = 0; i < nresults; ++i) {
    if (!PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) continue;
    std::size_t id = 0;
    pmix_status_t got = PMIX_SUCCESS;
    PMIX_VALUE_GET_NUMBER(got, &results[i].value, id, std::size_t);
    if (got != PMIX_SUCCESS)
      fail("construct %s: a context id of type %d", name, static_cast<int>(results[i].value.type));
    std::printf("rank %u: group %s context id %zu\n", self.rank, name, id);
    found = true;
  }
  if (results != nullptr) PMIX_INFO_FREE(results, nresults);
  if (want_id && !found) fail("construct %s: no context id in the results", name);
  if (!want_id) std::printf("rank %u: group %s without id ok\n", self.rank, name);
  std::fflush(stdout);
}

void destruct(const char* name) {
  pmix_status_t status = PMIx_Group_destruct(name, nullptr, 0);
  if (status != PMIX_SUCCESS) fail("destruct %s: %s", name, PMIx_Error_string(status));
  std::printf("rank %u: group %s destruct ok\n", self.rank, name);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool without_id = false;
  long leave_first = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--without-id") == 0) {
      without_id = true;
    } else if (std::strcmp(argv[i], "--leave-first") == 0 && i + 1 < argc) {
      leave_first = std::strtol(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: pmix_group_client [--without-id] [--leave-first RANK]\n");
      return 2;
    }
  }
  pmix_status_t status = PMIx_Init(&self, nullptr, 0);
  if (status != PMIX_SUCCESS) {
    std::fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(status));
    return 3;
  }
  if (static_cast<long>(self.rank) == leave_first) {
    std::printf("rank %u: left before the groups\n", self.rank);
    std::fflush(stdout);
    PMIx_Finalize(nullptr, 0);
    return 0;
  }
  pmix_proc_t whole;
  PMIX_LOAD_PROCID(&whole, self.nspace, PMIX_RANK_WILDCARD);
  construct("grove.all", {whole}, true);
  if (self.rank == 0 || self.rank == 3) {
    std::vector<pmix_proc_t> pair(2);
    PMIX_LOAD_PROCID(&pair[0], self.nspace, 0);
    PMIX_LOAD_PROCID(&pair[1], self.nspace, 3);
    construct("grove.pair", pair, true);
    destruct("grove.pair");
  }
  destruct("grove.all");
  if (without_id) {
    construct("grove.plain", {whole}, false);
    destruct("grove.plain");
  }
  PMIx_Finalize(nullptr, 0);
  return 0;
}
