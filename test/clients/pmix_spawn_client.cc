// A PMIx client for PMIx_Spawn under a real server. One scenario per run
// (--scenario NAME):
//
//   parent    rank --spawner (default 0) spawns --np N copies of this program
//             as `--scenario child --exit S` with GROVE_SPAWN_TEST=yes in
//             their environment, prints "rank R: spawned NSPACE", and the
//             job fences and finalizes at once (the children may outlive it).
//   child     prints "child rank R of NSPACE: parent PNSPACE rank PR" from
//             PMIX_PARENT_ID, checks PMIX_SPAWNED and its environment, fences
//             with its own job, and exits with --exit S (default 0).
//   multiple  rank 0 spawns one job of two apps (MPI_Comm_spawn_multiple's
//             shape): 2 ranks as `--scenario app` with GROVE_APP=first, 1 rank
//             with GROVE_APP=second in directory /; prints "rank 0: spawned
//             NSPACE of two apps".
//   app       prints "app rank R: appnum A app rank AR of AS, N apps, job size
//             J, GROVE_APP=X, cwd D", then fences with its job.
//   connect   rank 0 spawns --np N copies as `--scenario connected`, and
//             publishes the new nspace; every rank of both jobs then calls
//             PMIx_Connect over both jobs, reads a value the other job put
//             (and, parents, the child job's size), fences across both
//             jobs, and calls PMIx_Disconnect. With --leaver R, rank R of the
//             child job finalizes and exits right after the connect ("child
//             rank R: leave ok"), and every other rank's fence across both
//             jobs must end with PROC-TERMINATED instead ("... fence across
//             both jobs refused ok"), with no disconnect after it.
//
// Every check prints "rank R: <what> ok" or fails with exit status 1 and a
// line on stderr. Exit status: 0 all checks passed (or --exit), 1 a check
// failed, 2 bad usage, 3 PMIx_Init failed.
#include <pmix.h>
#include <unistd.h>

#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client_report.h"

using test_client::fail;
using test_client::nspace_of;
using test_client::ok;
using test_client::self;

namespace {

std::string own_program() {
  char path[PATH_MAX] = {};
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) fail("cannot read /proc/self/exe");
  return std::string(path, static_cast<std::size_t>(length));
}

void fence() {
  pmix_status_t status = PMIx_Fence(nullptr, 0, nullptr, 0);
  if (status != PMIX_SUCCESS) fail("fence: %s", PMIx_Error_string(status));
}

// An app running this program as `--scenario child --exit S`.
void load_child_app(pmix_app_t& app, const std::string& program, int np, int exit_status) {
  PMIX_APP_CONSTRUCT(&app);
  app.cmd = strdup(program.c_str());
  const std::string status = std::to_string(exit_status);
  const char* argv[] = {program.c_str(), "--scenario", "child", "--exit", status.c_str(), nullptr};
  app.argv = static_cast<char**>(calloc(6, sizeof(char*)));
  for (int i = 0; argv[i] != nullptr; ++i)
    app.argv[i] = strdup(argv[i]);
  app.env = static_cast<char**>(calloc(2, sizeof(char*)));
  app.env[0] = strdup("GROVE_SPAWN_TEST=yes");
  app.maxprocs = np;
}

void run_parent(std::uint32_t spawner, int np, int child_exit) {
  if (self.rank == spawner) {
    pmix_app_t app;
    load_child_app(app, own_program(), np, child_exit);
    pmix_nspace_t child;
    std::memset(child, 0, sizeof child);
    pmix_status_t status = PMIx_Spawn(nullptr, 0, &app, 1, child);
    PMIX_APP_DESTRUCT(&app);
    if (status != PMIX_SUCCESS) fail("spawn: %s", PMIx_Error_string(status));
    const std::string name(child, ::strnlen(child, PMIX_MAX_NSLEN));
    if (name.empty() || name == nspace_of(self)) fail("spawn gave nspace '%s'", name.c_str());
    std::printf("rank %u: spawned %s\n", self.rank, name.c_str());
    ok("", "spawn");
  }
  fence();
}

void run_child() {
  pmix_value_t* value = nullptr;
  pmix_status_t status = PMIx_Get(&self, PMIX_PARENT_ID, nullptr, 0, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_PROC ||
      value->data.proc == nullptr) {
    fail("PMIX_PARENT_ID: %s", PMIx_Error_string(status));
  }
  std::printf("child rank %u of %s: parent %s rank %u\n", self.rank, nspace_of(self).c_str(),
              nspace_of(*value->data.proc).c_str(), value->data.proc->rank);
  PMIX_VALUE_RELEASE(value);
  value = nullptr;
  status = PMIx_Get(&self, PMIX_SPAWNED, nullptr, 0, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_BOOL || !value->data.flag) {
    fail("PMIX_SPAWNED: %s", PMIx_Error_string(status));
  }
  PMIX_VALUE_RELEASE(value);
  ok("child ", "PMIX_SPAWNED");
  const char* marker = std::getenv("GROVE_SPAWN_TEST");
  if (marker == nullptr || std::strcmp(marker, "yes") != 0) fail("GROVE_SPAWN_TEST not set");
  ok("child ", "environment");
  fence();
  ok("child ", "fence");
}

// The two jobs of the connect scenario: `self`'s and the other. `leaver`: the
// rank of the child job that leaves after the connect (-1: none).
void connect_jobs(const std::string& other, const char* prefix, long leaver) {
  pmix_proc_t procs[2];
  PMIX_LOAD_PROCID(&procs[0], self.nspace, PMIX_RANK_WILDCARD);
  PMIX_LOAD_PROCID(&procs[1], other.c_str(), PMIX_RANK_WILDCARD);
  pmix_status_t status = PMIx_Connect(procs, 2, nullptr, 0);
  if (status != PMIX_SUCCESS) fail("connect: %s", PMIx_Error_string(status));
  ok(prefix, "connect");
  const bool child = std::strcmp(prefix, "") != 0;
  // What rank 0 of the other job put before it connected.
  pmix_proc_t peer;
  PMIX_LOAD_PROCID(&peer, other.c_str(), 0);
  pmix_value_t* value = nullptr;
  status = PMIx_Get(&peer, "grove.side", nullptr, 0, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_STRING)
    fail("get grove.side of rank 0 of %s: %s", other.c_str(), PMIx_Error_string(status));
  std::printf("%srank %u: rank 0 of the other job put %s\n", prefix, self.rank, value->data.string);
  PMIX_VALUE_RELEASE(value);
  ok(prefix, "read the other job's value");
  if (child && self.rank == leaver) {
    ok(prefix, "leave");
    return;
  }
  status = PMIx_Fence(procs, 2, nullptr, 0);
  if (leaver >= 0) {
    if (status != PMIX_PROC_TERMINATED)
      fail("fence across both jobs without rank %ld of the child job: %s", leaver,
           PMIx_Error_string(status));
    ok(prefix, "fence across both jobs refused");
    return;
  }
  if (status != PMIX_SUCCESS) fail("fence across both jobs: %s", PMIx_Error_string(status));
  ok(prefix, "fence across both jobs");
  status = PMIx_Disconnect(procs, 2, nullptr, 0);
  if (status != PMIX_SUCCESS) fail("disconnect: %s", PMIx_Error_string(status));
  ok(prefix, "disconnect");
}

void put_side(const char* side) {
  pmix_value_t value;
  PMIX_VALUE_LOAD(&value, side, PMIX_STRING);
  pmix_status_t status = PMIx_Put(PMIX_GLOBAL, "grove.side", &value);
  PMIX_VALUE_DESTRUCT(&value);
  if (status == PMIX_SUCCESS) status = PMIx_Commit();
  if (status != PMIX_SUCCESS) fail("put: %s", PMIx_Error_string(status));
}

void run_connect(int np, long leaver) {
  put_side("parent");
  std::string child;
  if (self.rank == 0) {
    pmix_app_t app;
    load_child_app(app, own_program(), np, 0);
    std::free(app.argv[2]);
    app.argv[2] = strdup("connected");
    if (leaver >= 0) {
      std::free(app.env[0]);
      std::free(app.env);
      app.env = static_cast<char**>(calloc(3, sizeof(char*)));
      app.env[0] = strdup("GROVE_SPAWN_TEST=yes");
      app.env[1] = strdup(("GROVE_SPAWN_LEAVER=" + std::to_string(leaver)).c_str());
    }
    pmix_nspace_t spawned;
    std::memset(spawned, 0, sizeof spawned);
    // With a leaver, one child per daemon: the leaver's daemon then has no
    // other rank of the fence, so its part can only come from the rank that
    // left (libpmix completes a daemon's part without a local rank that has
    // finalized).
    pmix_info_t by_node;
    PMIX_INFO_LOAD(&by_node, PMIX_MAPBY, "node", PMIX_STRING);
    pmix_status_t status =
        PMIx_Spawn(leaver >= 0 ? &by_node : nullptr, leaver >= 0 ? 1 : 0, &app, 1, spawned);
    PMIX_INFO_DESTRUCT(&by_node);
    PMIX_APP_DESTRUCT(&app);
    if (status != PMIX_SUCCESS) fail("spawn: %s", PMIx_Error_string(status));
    child.assign(spawned, ::strnlen(spawned, PMIX_MAX_NSLEN));
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, "grove.child", child.c_str(), PMIX_STRING);
    status = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (status != PMIX_SUCCESS) fail("publish: %s", PMIx_Error_string(status));
  } else {
    pmix_pdata_t data;
    PMIX_PDATA_CONSTRUCT(&data);
    PMIX_LOAD_KEY(data.key, "grove.child");
    bool wait = true;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_WAIT, &wait, PMIX_BOOL);
    pmix_status_t status = PMIx_Lookup(&data, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (status != PMIX_SUCCESS || data.value.type != PMIX_STRING)
      fail("lookup of the child job: %s", PMIx_Error_string(status));
    child = data.value.data.string;
    PMIX_PDATA_DESTRUCT(&data);
  }
  connect_jobs(child, "", leaver);
  if (leaver >= 0) return;
  // Job data of the other job, known here once connected.
  pmix_proc_t whole;
  PMIX_LOAD_PROCID(&whole, child.c_str(), PMIX_RANK_WILDCARD);
  pmix_value_t* size = nullptr;
  pmix_status_t status = PMIx_Get(&whole, PMIX_JOB_SIZE, nullptr, 0, &size);
  if (status != PMIX_SUCCESS || size == nullptr || size->type != PMIX_UINT32)
    fail("PMIX_JOB_SIZE of %s: %s", child.c_str(), PMIx_Error_string(status));
  std::printf("rank %u: the child job has %u ranks\n", self.rank, size->data.uint32);
  PMIX_VALUE_RELEASE(size);
}

void run_connected() {
  put_side("child");
  pmix_value_t* value = nullptr;
  pmix_status_t status = PMIx_Get(&self, PMIX_PARENT_ID, nullptr, 0, &value);
  if (status != PMIX_SUCCESS || value == nullptr || value->type != PMIX_PROC)
    fail("PMIX_PARENT_ID: %s", PMIx_Error_string(status));
  const std::string parent = nspace_of(*value->data.proc);
  PMIX_VALUE_RELEASE(value);
  const char* leaver = std::getenv("GROVE_SPAWN_LEAVER");
  connect_jobs(parent, "child ", leaver != nullptr ? std::strtol(leaver, nullptr, 10) : -1);
}

// An app of the multiple scenario: `--scenario app` with GROVE_APP=`name`.
void load_app(pmix_app_t& app, const std::string& program, int np, const char* name) {
  load_child_app(app, program, np, 0);
  std::free(app.argv[2]);
  app.argv[2] = strdup("app");
  std::free(app.env[0]);
  app.env[0] = strdup((std::string("GROVE_APP=") + name).c_str());
}

void run_multiple() {
  if (self.rank == 0) {
    const std::string program = own_program();
    pmix_app_t apps[2];
    load_app(apps[0], program, 2, "first");
    load_app(apps[1], program, 1, "second");
    apps[1].cwd = strdup("/");
    pmix_nspace_t child;
    std::memset(child, 0, sizeof child);
    pmix_status_t status = PMIx_Spawn(nullptr, 0, apps, 2, child);
    PMIX_APP_DESTRUCT(&apps[0]);
    PMIX_APP_DESTRUCT(&apps[1]);
    if (status != PMIX_SUCCESS) fail("spawn of two apps: %s", PMIx_Error_string(status));
    std::printf("rank 0: spawned %s of two apps\n",
                std::string(child, ::strnlen(child, PMIX_MAX_NSLEN)).c_str());
    ok("", "spawn of two apps");
  }
  fence();
}

std::uint32_t get_u32(const pmix_proc_t& proc, const char* key,
                      const pmix_info_t* qualifiers = nullptr, std::size_t nqualifiers = 0) {
  pmix_value_t* value = nullptr;
  pmix_status_t status = PMIx_Get(&proc, key, qualifiers, nqualifiers, &value);
  if (status != PMIX_SUCCESS || value == nullptr)
    fail("get %s: %s", key, PMIx_Error_string(status));
  std::uint32_t number = 0;
  if (value->type == PMIX_UINT32) {
    number = value->data.uint32;
  } else if (value->type == PMIX_PROC_RANK) {
    number = value->data.rank;
  } else {
    fail("get %s: type %d", key, static_cast<int>(value->type));
  }
  PMIX_VALUE_RELEASE(value);
  return number;
}

void run_app() {
  pmix_proc_t whole = self;
  whole.rank = PMIX_RANK_WILDCARD;
  const std::uint32_t appnum = get_u32(self, PMIX_APPNUM);
  const std::uint32_t app_rank = get_u32(self, PMIX_APP_RANK);
  // App-level facts are asked of the job, naming the app (PMIx standard).
  pmix_info_t app_qualifiers[2];
  bool app_info = true;
  PMIX_INFO_LOAD(&app_qualifiers[0], PMIX_APP_INFO, &app_info, PMIX_BOOL);
  PMIX_INFO_LOAD(&app_qualifiers[1], PMIX_APPNUM, &appnum, PMIX_UINT32);
  const std::uint32_t app_size = get_u32(whole, PMIX_APP_SIZE, app_qualifiers, 2);
  PMIX_INFO_DESTRUCT(&app_qualifiers[0]);
  PMIX_INFO_DESTRUCT(&app_qualifiers[1]);
  const std::uint32_t apps = get_u32(whole, PMIX_JOB_NUM_APPS);
  const std::uint32_t job_size = get_u32(whole, PMIX_JOB_SIZE);
  const char* name = std::getenv("GROVE_APP");
  char cwd[PATH_MAX] = {};
  if (::getcwd(cwd, sizeof cwd) == nullptr) fail("getcwd");
  std::printf(
      "app rank %u: appnum %u app rank %u of %u, %u apps, job size %u, GROVE_APP=%s, cwd %s\n",
      self.rank, appnum, app_rank, app_size, apps, job_size, name != nullptr ? name : "", cwd);
  std::fflush(stdout);
  fence();
  ok("app ", "fence");
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario;
  std::uint32_t spawner = 0;
  int np = 2;
  int exit_status = 0;
  long leaver = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--scenario") {
      scenario = argv[i + 1];
    } else if (option == "--spawner") {
      spawner = static_cast<std::uint32_t>(std::atoi(argv[i + 1]));
    } else if (option == "--np") {
      np = std::atoi(argv[i + 1]);
    } else if (option == "--exit") {
      exit_status = std::atoi(argv[i + 1]);
    } else if (option == "--leaver") {
      leaver = std::atol(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown option %s\n", option.c_str());
      return 2;
    }
  }
  if (scenario != "parent" && scenario != "child" && scenario != "multiple" && scenario != "app" &&
      scenario != "connect" && scenario != "connected") {
    std::fprintf(stderr,
                 "usage: pmix_spawn_client --scenario parent|child|multiple|app|connect|connected "
                 "[--spawner R] [--np N] [--exit S] [--leaver R]\n");
    return 2;
  }
  pmix_status_t status = PMIx_Init(&self, nullptr, 0);
  if (status != PMIX_SUCCESS) {
    std::fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(status));
    return 3;
  }
  if (scenario == "parent") {
    run_parent(spawner, np, exit_status);
  } else if (scenario == "child") {
    run_child();
  } else if (scenario == "connect") {
    run_connect(np, leaver);
  } else if (scenario == "connected") {
    run_connected();
  } else if (scenario == "app") {
    run_app();
  } else {
    run_multiple();
  }
  PMIx_Finalize(nullptr, 0);
  return scenario == "child" ? exit_status : 0;
}
