// A PMIx client that asks its server, right after PMIx_Init, for every key
// PRRTE's daemons register for a job (prted/pmix/pmix_server_register_fns.c:
// job level, app level, node level and each rank's own) and prints one line
// per key:
//
//   rank R: job pmix.mapby = node
//   rank R: node pmix.node.size = 2
//   rank R: peer pmix.hostname = host.n1
//   rank R: self pmix.cpuset missing
//
// Scopes: job (wildcard rank), app (PMIX_APP_INFO, app 0), node
// (PMIX_NODE_INFO, this rank's node), self (this rank), peer (the last rank
// of the job, which may live on another daemon). It judges nothing: the
// multinode test "every key PRRTE registers for a job" compares the lines
// with what PRRTE provides. Exit status: 0 after printing, 3 if PMIx_Init
// fails.
#include <pmix.h>

#include <cinttypes>
#include <cstdio>
#include <string>

namespace {

enum class Scope { job, app, node, self, peer };

struct Wanted {
  Scope scope;
  const char* key;
};

// PRRTE's keys for a job, by where it puts them (its IOF and GPU keys are
// options of the launcher, not facts of the job, and are left out).
constexpr Wanted kWanted[] = {
    {Scope::job, PMIX_SESSION_ID},
    {Scope::job, PMIX_JOBID},
    {Scope::job, PMIX_NPROC_OFFSET},
    {Scope::job, PMIX_NODE_MAP},
    {Scope::job, PMIX_PROC_MAP},
    {Scope::job, PMIX_NUM_NODES},
    {Scope::job, PMIX_UNIV_SIZE},
    {Scope::job, PMIX_JOB_SIZE},
    {Scope::job, PMIX_JOB_NUM_APPS},
    {Scope::job, PMIX_MAX_PROCS},
    {Scope::job, PMIX_AVAIL_PHYS_MEMORY},
    {Scope::job, PMIX_MAPBY},
    {Scope::job, PMIX_RANKBY},
    {Scope::job, PMIX_BINDTO},
    {Scope::job, PMIX_HOSTNAME_KEEP_FQDN},
    {Scope::job, PMIX_TMPDIR},
    {Scope::job, PMIX_NSDIR},
    {Scope::job, PMIX_LOCAL_PROCS},
    {Scope::app, PMIX_APPNUM},
    {Scope::app, PMIX_APP_SIZE},
    {Scope::app, PMIX_APPLDR},
    {Scope::app, PMIX_WDIR},
    {Scope::app, PMIX_APP_ARGV},
    {Scope::app, PMIX_PSET_NAME},
    {Scope::node, PMIX_HOSTNAME},
    {Scope::node, PMIX_HOSTNAME_ALIASES},
    {Scope::node, PMIX_NODEID},
    {Scope::node, PMIX_NODE_SIZE},
    {Scope::node, PMIX_LOCAL_SIZE},
    {Scope::node, PMIX_LOCALLDR},
    {Scope::node, PMIX_LOCAL_PEERS},
    {Scope::node, PMIX_NODE_OVERSUBSCRIBED},
    // Registered at job level, but libpmix's hash store files them as facts
    // of this node.
    {Scope::node, PMIX_AVAIL_PHYS_MEMORY},
    {Scope::node, PMIX_LOCAL_PROCS},
    {Scope::self, PMIX_RANK},
    {Scope::self, PMIX_CPUSET},
    {Scope::self, PMIX_LOCALITY_STRING},
    {Scope::self, PMIX_DEVICE_DISTANCES},
    {Scope::self, PMIX_PROCDIR},
    {Scope::self, PMIX_GLOBAL_RANK},
    {Scope::self, PMIX_PARENT_ID},
    {Scope::self, PMIX_APPNUM},
    {Scope::self, PMIX_APP_RANK},
    {Scope::self, PMIX_LOCAL_RANK},
    {Scope::self, PMIX_NODE_RANK},
    {Scope::self, PMIX_NODEID},
    {Scope::self, PMIX_REINCARNATION},
    {Scope::self, PMIX_HOSTNAME},
    {Scope::peer, PMIX_APPNUM},
    {Scope::peer, PMIX_APP_RANK},
    {Scope::peer, PMIX_LOCAL_RANK},
    {Scope::peer, PMIX_NODE_RANK},
    {Scope::peer, PMIX_NODEID},
    {Scope::peer, PMIX_HOSTNAME},
    {Scope::peer, PMIX_REINCARNATION},
};

const char* scope_name(Scope scope) {
  switch (scope) {
    case Scope::job:
      return "job";
    case Scope::app:
      return "app";
    case Scope::node:
      return "node";
    case Scope::self:
      return "self";
    case Scope::peer:
      return "peer";
  }
  return "?";
}

std::string describe(const pmix_value_t& value) {
  char text[64];
  switch (value.type) {
    case PMIX_STRING:
      return value.data.string != nullptr ? value.data.string : "(null)";
    case PMIX_BOOL:
      return value.data.flag ? "true" : "false";
    case PMIX_UINT16:
      return std::to_string(value.data.uint16);
    case PMIX_UINT32:
      return std::to_string(value.data.uint32);
    case PMIX_PROC_RANK:
      return std::to_string(value.data.rank);
    case PMIX_UINT64:
      std::snprintf(text, sizeof text, "%" PRIu64, value.data.uint64);
      return text;
    case PMIX_DATA_ARRAY:
      return value.data.darray != nullptr
                 ? "(" + std::to_string(value.data.darray->size) + " entries)"
                 : "(empty array)";
    default:
      return std::string("(") + PMIx_Data_type_string(value.type) + ")";
  }
}

// PMIx_Get of `key` at `scope`; the value as text, or empty when missing.
bool get(const pmix_proc_t& self, std::uint32_t job_size, std::uint32_t node_id, Scope scope,
         const char* key, std::string& out) {
  pmix_proc_t proc = self;
  pmix_info_t qualifiers[3];
  std::size_t count = 0;
  bool yes = true;
  std::uint32_t zero = 0;
  // What the server registered is held locally: a missing key is not to be
  // asked of the server (a direct modex), so no get can wait.
  PMIX_INFO_LOAD(&qualifiers[count++], PMIX_OPTIONAL, &yes, PMIX_BOOL);
  switch (scope) {
    case Scope::job:
      proc.rank = PMIX_RANK_WILDCARD;
      break;
    case Scope::app:
      proc.rank = PMIX_RANK_WILDCARD;
      PMIX_INFO_LOAD(&qualifiers[count++], PMIX_APP_INFO, &yes, PMIX_BOOL);
      PMIX_INFO_LOAD(&qualifiers[count++], PMIX_APPNUM, &zero, PMIX_UINT32);
      break;
    case Scope::node:
      proc.rank = PMIX_RANK_WILDCARD;
      PMIX_INFO_LOAD(&qualifiers[count++], PMIX_NODE_INFO, &yes, PMIX_BOOL);
      PMIX_INFO_LOAD(&qualifiers[count++], PMIX_NODEID, &node_id, PMIX_UINT32);
      break;
    case Scope::self:
      break;
    case Scope::peer:
      proc.rank = job_size - 1;
      break;
  }
  pmix_value_t* value = nullptr;
  const pmix_status_t status = PMIx_Get(&proc, key, qualifiers, count, &value);
  for (std::size_t i = 0; i < count; ++i)
    PMIX_INFO_DESTRUCT(&qualifiers[i]);
  const bool found = status == PMIX_SUCCESS && value != nullptr;
  if (found) out = describe(*value);
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  return found;
}

std::uint32_t get_u32(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* value = nullptr;
  std::uint32_t result = 0;
  if (PMIx_Get(&proc, key, nullptr, 0, &value) == PMIX_SUCCESS && value != nullptr) {
    if (value->type == PMIX_UINT32) result = value->data.uint32;
  }
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  return result;
}

}  // namespace

int main() {
  pmix_proc_t self;
  if (PMIx_Init(&self, nullptr, 0) != PMIX_SUCCESS) {
    std::fprintf(stderr, "pmix_key_dump: PMIx_Init failed\n");
    return 3;
  }
  pmix_proc_t job = self;
  job.rank = PMIX_RANK_WILDCARD;
  const std::uint32_t job_size = get_u32(job, PMIX_JOB_SIZE);
  const std::uint32_t node_id = get_u32(self, PMIX_NODEID);
  for (const Wanted& wanted : kWanted) {
    std::string value;
    if (get(self, job_size, node_id, wanted.scope, wanted.key, value)) {
      std::printf("rank %u: %s %s = %s\n", self.rank, scope_name(wanted.scope), wanted.key,
                  value.c_str());
    } else {
      std::printf("rank %u: %s %s missing\n", self.rank, scope_name(wanted.scope), wanted.key);
    }
  }
  std::fflush(stdout);
  PMIx_Finalize(nullptr, 0);
  return 0;
}
