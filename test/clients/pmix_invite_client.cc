// A PMIx client for groups formed by invitation (PMIx_Group_invite), which
// libpmix 4.2 builds from events alone: the leader's PMIX_GROUP_INVITED to
// every member, each member's PMIX_GROUP_INVITE_ACCEPTED back to the leader,
// then the leader's PMIX_GROUP_CONSTRUCT_COMPLETE to all, from which every
// server records the group. Every rank of the job runs it:
//
//   1. rank 0 invites the whole job to the group "grove.invited" (the same
//      name in every job, on purpose); the others accept from their
//      PMIX_GROUP_INVITED handler: "rank 0: invite ok";
//   2. every rank waits (up to 10 s) for PMIX_GROUP_CONSTRUCT_COMPLETE naming
//      the group: "rank R: construct complete ok";
//   3. every rank fences over {grove.invited, wildcard}: "rank R: group fence ok";
//   4. every rank destructs the group and fences over the job:
//      "rank R: destruct ok".
//
// With --decline RANK that rank declines instead ("rank R: decline ok") and
// finalizes; with libpmix 4.2 the leader's invite then never returns (the
// test ends the job and reads the daemon's explanation).
//
// Exit status: 0 all steps passed, 1 a step failed, 3 PMIx_Init failed.
#include <pmix.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "client_report.h"
#include "support/wait.h"

using test_client::fail;
using test_client::ok;
using test_client::self;

namespace {

constexpr const char* kGroup = "grove.invited";
std::atomic<bool> complete{false};
std::atomic<int> join_status{PMIX_SUCCESS};
std::atomic<bool> answered{false};  // this rank has answered an invitation
long decliner = -1;                 // --decline RANK

bool names_our_group(const pmix_info_t info[], std::size_t ninfo) {
  for (std::size_t i = 0; i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING &&
        std::strcmp(info[i].value.data.string, kGroup) == 0)
      return true;
  }
  return false;
}

// Runs on libpmix's progress thread: only the non-blocking join may be used.
void on_invited(std::size_t, pmix_status_t, const pmix_proc_t* source, pmix_info_t info[],
                std::size_t ninfo, pmix_info_t*, std::size_t,
                pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  // The leader is among its invitation's targets: libpmix 4.2 counts it as
  // accepted already, and an acceptance of its own would be counted again
  // (with a decliner, the invite would then complete for the wrong reason).
  const bool own = source != nullptr && PMIX_CHECK_PROCID(source, &self);
  if (!own && names_our_group(info, ninfo)) {
    const pmix_group_opt_t answer = self.rank == decliner ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT;
    join_status = PMIx_Group_join_nb(kGroup, source, answer, nullptr, 0, nullptr, nullptr);
    answered = true;
  }
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

void on_complete(std::size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t info[],
                 std::size_t ninfo, pmix_info_t*, std::size_t,
                 pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  if (names_our_group(info, ninfo)) complete = true;
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

void register_handler(pmix_status_t code, pmix_notification_fn_t handler) {
  pmix_status_t codes[] = {code};
  pmix_status_t status =
      PMIx_Register_event_handler(codes, 1, nullptr, 0, handler, nullptr, nullptr);
  // The blocking form returns the handler's reference (a positive number).
  if (status < 0) fail("register handler for %d: %s", code, PMIx_Error_string(status));
}

void fence(const char* nspace, const char* what) {
  pmix_proc_t all;
  PMIX_LOAD_PROCID(&all, nspace, PMIX_RANK_WILDCARD);
  pmix_status_t status = PMIx_Fence(&all, 1, nullptr, 0);
  if (status != PMIX_SUCCESS) fail("%s: %s", what, PMIx_Error_string(status));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--decline") == 0) {
    decliner = std::strtol(argv[2], nullptr, 10);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: pmix_invite_client [--decline RANK]\n");
    return 2;
  }
  if (PMIx_Init(&self, nullptr, 0) != PMIX_SUCCESS) return 3;
  register_handler(PMIX_GROUP_INVITED, on_invited);
  register_handler(PMIX_GROUP_CONSTRUCT_COMPLETE, on_complete);
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, self.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* size_value = nullptr;
  if (PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &size_value) != PMIX_SUCCESS)
    fail("no PMIX_JOB_SIZE");
  const std::uint32_t size = size_value->data.uint32;
  PMIX_VALUE_RELEASE(size_value);
  fence(self.nspace, "fence before the invitation");  // every handler is in place

  if (self.rank == 0) {
    std::vector<pmix_proc_t> members(size);
    for (std::uint32_t rank = 0; rank < size; ++rank)
      PMIX_LOAD_PROCID(&members[rank], self.nspace, rank);
    pmix_info_t* results = nullptr;
    std::size_t nresults = 0;
    pmix_status_t status =
        PMIx_Group_invite(kGroup, members.data(), members.size(), nullptr, 0, &results, &nresults);
    if (results != nullptr) PMIX_INFO_FREE(results, nresults);
    if (status != PMIX_SUCCESS) fail("invite: %s", PMIx_Error_string(status));
    ok("invite");
  }
  if (self.rank == decliner) {
    if (!grove::test::wait_until([] { return answered.load(); }, std::chrono::seconds(10),
                                 std::chrono::milliseconds(10)))
      fail("no invitation to decline in 10 s");
    if (join_status != PMIX_SUCCESS) fail("decline: %s", PMIx_Error_string(join_status));
    ok("decline");
    PMIx_Finalize(nullptr, 0);
    return 0;
  }
  grove::test::wait_until([] { return complete.load(); }, std::chrono::seconds(10),
                          std::chrono::milliseconds(10));
  if (join_status != PMIX_SUCCESS) fail("join: %s", PMIx_Error_string(join_status));
  if (!complete) fail("no PMIX_GROUP_CONSTRUCT_COMPLETE for %s in 10 s", kGroup);
  ok("construct complete");
  fence(kGroup, "fence over the group");
  ok("group fence");
  pmix_status_t status = PMIx_Group_destruct(kGroup, nullptr, 0);
  if (status != PMIX_SUCCESS) fail("destruct: %s", PMIx_Error_string(status));
  fence(self.nspace, "fence after the destruct");
  ok("destruct");
  PMIx_Finalize(nullptr, 0);
  return 0;
}
