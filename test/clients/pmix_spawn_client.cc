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
//   multiple  rank 0 spawns two programs at once and expects an error status
//             at once (grove runs one program per job).
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

void ok(const char* prefix, const char* what) {
  std::printf("%srank %u: %s ok\n", prefix, self.rank, what);
  std::fflush(stdout);
}

std::string nspace_of(const pmix_proc_t& proc) {
  return std::string(proc.nspace, ::strnlen(proc.nspace, PMIX_MAX_NSLEN));
}

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
  ok("child ", "spawned flag");
  const char* marker = std::getenv("GROVE_SPAWN_TEST");
  if (marker == nullptr || std::strcmp(marker, "yes") != 0) fail("GROVE_SPAWN_TEST not set");
  ok("child ", "environment");
  fence();
  ok("child ", "fence");
}

void run_multiple() {
  if (self.rank == 0) {
    const std::string program = own_program();
    pmix_app_t apps[2];
    load_child_app(apps[0], program, 1, 0);
    load_child_app(apps[1], program, 1, 0);
    pmix_nspace_t child;
    std::memset(child, 0, sizeof child);
    pmix_status_t status = PMIx_Spawn(nullptr, 0, apps, 2, child);
    PMIX_APP_DESTRUCT(&apps[0]);
    PMIX_APP_DESTRUCT(&apps[1]);
    if (status == PMIX_SUCCESS) fail("a spawn of two programs succeeded");
    std::printf("rank 0: spawn of two programs refused with %s\n", PMIx_Error_string(status));
    ok("", "two programs refused");
  }
  fence();
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario;
  std::uint32_t spawner = 0;
  int np = 2;
  int exit_status = 0;
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
    } else {
      std::fprintf(stderr, "unknown option %s\n", option.c_str());
      return 2;
    }
  }
  if (scenario != "parent" && scenario != "child" && scenario != "multiple") {
    std::fprintf(stderr,
                 "usage: pmix_spawn_client --scenario parent|child|multiple [--spawner R] "
                 "[--np N] [--exit S]\n");
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
  } else {
    run_multiple();
  }
  PMIx_Finalize(nullptr, 0);
  return scenario == "child" ? exit_status : 0;
}
