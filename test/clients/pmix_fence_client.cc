// pmix_fence_client: a PMIx client that checks a server's fence and modex.
// It links only libpmix, so it runs under any PMIx server (grove, PRRTE, ...).
//
//   pmix_fence_client [ROUNDS] [--rounds K] [--barrier] [--no-collect]
//                     [--max-bytes N] [--timing] [--progress] [--abort STATUS]
//                     [--probe-unsupported] [--wait-for FILE]
//                     [--fence-timeout S] [--late RANK:SECONDS] [--finalize-early RANK]
//
// Each round every rank puts one value (a deterministic 0..max-bytes pseudo
// random size and content, seeded by rank and round) under "grove.fence.<round>",
// commits, fences with PMIX_COLLECT_DATA, then gets every rank's value
// (its own included) and checks size and content. --no-collect fences without
// collecting, so the gets of other ranks' values go through direct modex.
// --barrier fences without data and gets nothing. Note for timing: libpmix
// 4.2 ships every key a rank has committed so far in each collecting fence, so
// with a new key per round the fence blob, and its cost, grows with the round
// number; time sequential fences with --barrier or a small --max-bytes.
//
// On success each rank prints one line:
//   rank 3/16: 5 rounds ok, modex 812345 bytes, digest 0123abcd0123abcd, local 1/4 on node0
// The digest is FNV-1a 64 over every fetched value (length then bytes) in
// round then rank order: it is the same on every rank exactly when every rank
// saw the same data. --timing adds one line per fence and a summary (the
// sequential-fence method of seed 004: per-fence cost should stay flat across
// rounds). --progress prints "rank R: round K done" after each fence, flushed
// at once (timing lines are not: flushing each would weigh on the fences
// they time). --abort calls PMIx_Abort(STATUS) right after PMIx_Init;
// --abort-message-bytes N pads its message with 'x' to N bytes.
// --leave-without-finalize RANK makes that rank exit 0 right after PMIx_Init.
// --pause-at ROUND:FILE makes rank 0 wait for FILE (printing "rank 0:
// connected, waiting for FILE") before it enters fence ROUND (0-based),
// while the other ranks wait inside it.
// --wait-for FILE prints "rank R: connected, waiting for FILE" right after
// PMIx_Init and waits (up to 120 s) until FILE exists before going on.
// --fence-timeout S passes PMIX_TIMEOUT=S with every fence. --late R:S makes
// rank R sleep S seconds before its first fence (its peers wait for it).
// --finalize-early RANK makes that rank call PMIx_Finalize right after
// PMIx_Init and exit 0: its peers' fences include a rank that is gone.
// --crash R:K makes rank R die of SIGSEGV just before its fence of round K
// (its peers are already waiting in that fence).
// --stall-in-handshake RANK makes that rank, instead of PMIx_Init, open a
// connection to its server's port and send nothing (up to 120 s): a client
// stuck inside its handshake (libpmix's server reads the handshake with a
// blocking receive). With --wait-for FILE it creates FILE once connected, so
// the other ranks (waiting for FILE after PMIx_Init) go on only then. If
// the server closes the connection it prints "the server closed the
// connection" and exits 3. Run outside a job (PMIX_RANK and
// PMIX_SERVER_URI4 set by hand), it is a stranger's idle connection.
// --check-keys gets, right after PMIx_Init, the keys Open MPI 4.1 reads at
// MPI_Init (docs/pmix.md, "What ranks are told") and prints one line per key
// ("rank R: key pmix.lrank ok" or "missing"), then "rank R: node
// oversubscribed yes|no" and "rank R: topology shared yes|no"; it exits 1
// if a key is missing, else 0, without fencing.
// --probe-unsupported checks that publish, lookup, spawn, allocation
// requests and job control fail promptly with an error instead of hanging
// (and reports what connect returns).
//
// Exit status: 0 ok, 1 a value did not match, 2 bad usage, 3 a PMIx call failed,
// 4 --wait-for timed out.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pmix.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/wait.h"

namespace {

constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;
constexpr int kExitPmix = 3;
constexpr int kExitWaitTimeout = 4;
constexpr int kWaitForSeconds = 120;
constexpr int kGetTimeoutSeconds = 60;

struct Options {
  int rounds = 3;
  bool barrier = false;
  bool collect = true;
  std::size_t max_bytes = 64 * 1024;
  bool timing = false;
  bool progress = false;  // --progress: a flushed line after each fence
  bool abort = false;
  int abort_status = 0;
  std::size_t abort_message_bytes = 0;  // --abort-message-bytes N (0: the usual message)
  int leave_rank = -1;                  // --leave-without-finalize RANK
  bool probe_unsupported = false;
  bool check_keys = false;
  std::string wait_for;  // --wait-for FILE
  int pause_round = -1;  // --pause-at ROUND:FILE (rank 0)
  std::string pause_file;
  int fence_timeout = 0;  // --fence-timeout S (0: none)
  int late_rank = -1;     // --late RANK:SECONDS
  int late_seconds = 0;
  int finalize_early_rank = -1;  // --finalize-early RANK
  int crash_rank = -1;           // --crash RANK:ROUND
  int crash_round = 0;
  int stall_rank = -1;  // --stall-in-handshake RANK
};

struct Identity {
  pmix_proc_t self;
  std::uint32_t size = 0;
  std::uint16_t local_rank = 0;
  std::uint32_t local_size = 0;
  std::string hostname;
};

[[noreturn]] void fail(int code, const char* format, ...) __attribute__((format(printf, 2, 3)));

void fail(int code, const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::fputs("pmix_fence_client: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
  std::exit(code);
}

bool parse_count(const char* text, long min, long max, long& value) {
  char* end = nullptr;
  errno = 0;
  value = std::strtol(text, &end, 10);
  return errno == 0 && end != text && *end == '\0' && value >= min && value <= max;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    long value = 0;
    if (arg == "--barrier") {
      options.barrier = true;
    } else if (arg == "--no-collect") {
      options.collect = false;
    } else if (arg == "--timing") {
      options.timing = true;
    } else if (arg == "--progress") {
      options.progress = true;
    } else if (arg == "--probe-unsupported") {
      options.probe_unsupported = true;
    } else if (arg == "--check-keys") {
      options.check_keys = true;
    } else if (arg == "--rounds" && has_value && parse_count(argv[i + 1], 0, 1000000, value)) {
      options.rounds = static_cast<int>(value);
      ++i;
    } else if (arg == "--max-bytes" && has_value &&
               parse_count(argv[i + 1], 0, 64L * 1024 * 1024, value)) {
      options.max_bytes = static_cast<std::size_t>(value);
      ++i;
    } else if (arg == "--abort" && has_value && parse_count(argv[i + 1], -1000, 1000, value)) {
      options.abort = true;
      options.abort_status = static_cast<int>(value);
      ++i;
    } else if (arg == "--abort-message-bytes" && has_value &&
               parse_count(argv[i + 1], 1, 256L * 1024 * 1024, value)) {
      options.abort_message_bytes = static_cast<std::size_t>(value);
      ++i;
    } else if (arg == "--leave-without-finalize" && has_value &&
               parse_count(argv[i + 1], 0, 1000000, value)) {
      options.leave_rank = static_cast<int>(value);
      ++i;
    } else if (arg == "--fence-timeout" && has_value && parse_count(argv[i + 1], 1, 3600, value)) {
      options.fence_timeout = static_cast<int>(value);
      ++i;
    } else if (arg == "--late" && has_value &&
               std::sscanf(argv[i + 1], "%d:%d", &options.late_rank, &options.late_seconds) == 2 &&
               options.late_rank >= 0 && options.late_seconds >= 0) {
      ++i;
    } else if (arg == "--crash" && has_value &&
               std::sscanf(argv[i + 1], "%d:%d", &options.crash_rank, &options.crash_round) == 2 &&
               options.crash_rank >= 0 && options.crash_round >= 0) {
      ++i;
    } else if (arg == "--finalize-early" && has_value &&
               parse_count(argv[i + 1], 0, 1000000, value)) {
      options.finalize_early_rank = static_cast<int>(value);
      ++i;
    } else if (arg == "--stall-in-handshake" && has_value &&
               parse_count(argv[i + 1], 0, 1000000, value)) {
      options.stall_rank = static_cast<int>(value);
      ++i;
    } else if (arg == "--pause-at" && has_value && std::strchr(argv[i + 1], ':') != nullptr &&
               std::sscanf(argv[i + 1], "%d:", &options.pause_round) == 1 &&
               options.pause_round >= 0) {
      options.pause_file = std::strchr(argv[i + 1], ':') + 1;
      ++i;
    } else if (arg == "--wait-for" && has_value) {
      options.wait_for = argv[i + 1];
      ++i;
    } else if (parse_count(argv[i], 0, 1000000, value)) {
      options.rounds = static_cast<int>(value);
    } else {
      fail(kExitUsage,
           "bad argument '%s'; usage: pmix_fence_client [ROUNDS] [--rounds K] [--barrier] "
           "[--no-collect] [--max-bytes N] [--timing] [--progress] [--abort STATUS] "
           "[--leave-without-finalize RANK] [--probe-unsupported] [--wait-for FILE] "
           "[--fence-timeout S] [--late RANK:SECONDS] [--finalize-early RANK] "
           "[--crash RANK:ROUND] [--stall-in-handshake RANK] [--check-keys] "
           "[--pause-at ROUND:FILE]",
           argv[i]);
    }
  }
  return options;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The value rank `rank` puts in round `round`: every rank can recompute it.
std::vector<char> expected_value(std::uint32_t rank, int round, std::size_t max_bytes) {
  std::uint64_t state =
      (static_cast<std::uint64_t>(rank) << 32) ^ static_cast<std::uint32_t>(round);
  std::size_t size = static_cast<std::size_t>(splitmix64(state) % (max_bytes + 1));
  std::vector<char> bytes(size);
  for (std::size_t i = 0; i < size; i += 8) {
    std::uint64_t word = splitmix64(state);
    std::memcpy(bytes.data() + i, &word, std::min<std::size_t>(8, size - i));
  }
  return bytes;
}

struct Digest {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  void add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      hash ^= bytes[i];
      hash *= 0x100000001b3ULL;
    }
  }
};

pmix_proc_t proc_of(const pmix_proc_t& self, pmix_rank_t rank) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, self.nspace, rank);
  return proc;
}

// PMIx_Get of a job- or proc-level key that must exist.
pmix_value_t* get_required(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* value = nullptr;
  pmix_status_t status = PMIx_Get(&proc, key, nullptr, 0, &value);
  if (status != PMIX_SUCCESS || value == nullptr) {
    fail(kExitPmix, "rank %u: PMIx_Get(%s) of rank %u: %s", proc.rank, key, proc.rank,
         PMIx_Error_string(status));
  }
  return value;
}

Identity read_identity() {
  Identity id;
  pmix_status_t status = PMIx_Init(&id.self, nullptr, 0);
  if (status != PMIX_SUCCESS) fail(kExitPmix, "PMIx_Init: %s", PMIx_Error_string(status));
  pmix_proc_t job = proc_of(id.self, PMIX_RANK_WILDCARD);
  pmix_value_t* value = get_required(job, PMIX_JOB_SIZE);
  id.size = value->data.uint32;
  PMIX_VALUE_RELEASE(value);
  value = get_required(job, PMIX_LOCAL_SIZE);
  id.local_size = value->data.uint32;
  PMIX_VALUE_RELEASE(value);
  value = get_required(id.self, PMIX_LOCAL_RANK);
  id.local_rank = value->data.uint16;
  PMIX_VALUE_RELEASE(value);
  value = get_required(id.self, PMIX_HOSTNAME);
  if (value->type == PMIX_STRING && value->data.string != nullptr) id.hostname = value->data.string;
  PMIX_VALUE_RELEASE(value);
  return id;
}

void put_value(const Identity& id, int round, const std::string& key, std::size_t max_bytes) {
  std::vector<char> bytes = expected_value(id.self.rank, round, max_bytes);
  pmix_value_t value;
  PMIX_VALUE_CONSTRUCT(&value);
  value.type = PMIX_BYTE_OBJECT;
  value.data.bo.bytes = bytes.empty() ? nullptr : bytes.data();
  value.data.bo.size = bytes.size();
  pmix_status_t status = PMIx_Put(PMIX_GLOBAL, key.c_str(), &value);
  if (status != PMIX_SUCCESS) {
    fail(kExitPmix, "rank %u: PMIx_Put(%s): %s", id.self.rank, key.c_str(),
         PMIx_Error_string(status));
  }
  status = PMIx_Commit();
  if (status != PMIX_SUCCESS) {
    fail(kExitPmix, "rank %u: PMIx_Commit: %s", id.self.rank, PMIx_Error_string(status));
  }
}

// One fence over the whole job; returns its duration in microseconds.
double fence(const Identity& id, bool collect, int round, int timeout_seconds) {
  pmix_proc_t all = proc_of(id.self, PMIX_RANK_WILDCARD);
  pmix_info_t info[2];
  std::size_t ninfo = 0;
  bool yes = true;
  if (collect) {
    PMIX_INFO_CONSTRUCT(&info[ninfo]);
    PMIX_INFO_LOAD(&info[ninfo], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    ++ninfo;
  }
  if (timeout_seconds > 0) {
    PMIX_INFO_CONSTRUCT(&info[ninfo]);
    PMIX_INFO_LOAD(&info[ninfo], PMIX_TIMEOUT, &timeout_seconds, PMIX_INT);
    ++ninfo;
  }
  auto start = std::chrono::steady_clock::now();
  pmix_status_t status = PMIx_Fence(&all, 1, ninfo > 0 ? info : nullptr, ninfo);
  auto end = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < ninfo; ++i)
    PMIX_INFO_DESTRUCT(&info[i]);
  if (status != PMIX_SUCCESS) {
    fail(kExitPmix, "rank %u round %d: PMIx_Fence: %s", id.self.rank, round,
         PMIx_Error_string(status));
  }
  return std::chrono::duration<double, std::micro>(end - start).count();
}

// Gets and checks every rank's value of this round; returns the bytes fetched.
std::size_t check_values(const Identity& id, int round, const std::string& key,
                         std::size_t max_bytes, Digest& digest) {
  pmix_info_t timeout;
  PMIX_INFO_CONSTRUCT(&timeout);
  int seconds = kGetTimeoutSeconds;
  PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
  std::size_t fetched = 0;
  for (std::uint32_t peer = 0; peer < id.size; ++peer) {
    pmix_proc_t proc = proc_of(id.self, peer);
    pmix_value_t* value = nullptr;
    pmix_status_t status = PMIx_Get(&proc, key.c_str(), &timeout, 1, &value);
    if (status != PMIX_SUCCESS || value == nullptr) {
      fail(kExitPmix, "rank %u round %d: PMIx_Get(%s) of rank %u: %s", id.self.rank, round,
           key.c_str(), peer, PMIx_Error_string(status));
    }
    if (value->type != PMIX_BYTE_OBJECT) {
      fail(kExitMismatch, "rank %u round %d: value of rank %u has PMIx type %d, not a byte object",
           id.self.rank, round, peer, static_cast<int>(value->type));
    }
    std::vector<char> expected = expected_value(peer, round, max_bytes);
    const pmix_byte_object_t& got = value->data.bo;
    if (got.size != expected.size()) {
      fail(kExitMismatch, "rank %u round %d: value of rank %u has %zu bytes, expected %zu",
           id.self.rank, round, peer, got.size, expected.size());
    }
    if (got.size > 0 && std::memcmp(got.bytes, expected.data(), got.size) != 0) {
      fail(kExitMismatch, "rank %u round %d: value of rank %u has the right size but wrong bytes",
           id.self.rank, round, peer);
    }
    std::uint64_t length = got.size;
    digest.add(&length, sizeof length);
    digest.add(got.bytes, got.size);
    fetched += got.size;
    PMIX_VALUE_RELEASE(value);
  }
  PMIX_INFO_DESTRUCT(&timeout);
  return fetched;
}

void print_timing(const Identity& id, std::vector<double> fence_us) {
  if (fence_us.empty()) return;
  double total = 0;
  for (double us : fence_us)
    total += us;
  std::sort(fence_us.begin(), fence_us.end());
  std::printf(
      "timing rank %u: %zu fences, mean %.1f us, median %.1f us, min %.1f us, max %.1f us\n",
      id.self.rank, fence_us.size(), total / static_cast<double>(fence_us.size()),
      fence_us[fence_us.size() / 2], fence_us.front(), fence_us.back());
}

// Whether `key` of `proc` can be had from the server (with `qualifier`, a
// bool attribute set to true, when not null).
bool has_key(const pmix_proc_t& proc, const char* key, const char* qualifier = nullptr) {
  pmix_info_t info;
  bool yes = true;
  if (qualifier != nullptr) PMIX_INFO_LOAD(&info, qualifier, &yes, PMIX_BOOL);
  pmix_value_t* value = nullptr;
  pmix_status_t status = PMIx_Get(&proc, key, qualifier != nullptr ? &info : nullptr,
                                  qualifier != nullptr ? 1 : 0, &value);
  if (qualifier != nullptr) PMIX_INFO_DESTRUCT(&info);
  bool found = status == PMIX_SUCCESS && value != nullptr;
  if (found && value->type == PMIX_BOOL) found = value->data.flag;
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  return found;
}

// What Open MPI 4.1 reads at MPI_Init: job-level keys (wildcard rank) and the
// rank's own. Missing one of these makes MPI_Init fail, lose shared memory,
// or put session files somewhere grove does not clean.
[[noreturn]] void check_keys(const Identity& id) {
  const pmix_proc_t job = proc_of(id.self, PMIX_RANK_WILDCARD);
  const std::pair<const pmix_proc_t*, const char*> wanted[] = {
      {&job, PMIX_JOB_SIZE},      {&job, PMIX_MAX_PROCS},  {&job, PMIX_UNIV_SIZE},
      {&job, PMIX_NUM_NODES},     {&job, PMIX_LOCAL_SIZE}, {&job, PMIX_LOCAL_PEERS},
      {&job, PMIX_TMPDIR},        {&job, PMIX_NSDIR},      {&id.self, PMIX_LOCAL_RANK},
      {&id.self, PMIX_NODE_RANK}, {&id.self, PMIX_APPNUM}, {&id.self, PMIX_HOSTNAME},
  };
  bool all = true;
  for (const auto& [proc, key] : wanted) {
    const bool found = has_key(*proc, key);
    all = all && found;
    std::printf("rank %u: key %s %s\n", id.self.rank, key, found ? "ok" : "missing");
  }
  std::printf("rank %u: node oversubscribed %s\n", id.self.rank,
              has_key(job, PMIX_NODE_OVERSUBSCRIBED, PMIX_NODE_INFO) ? "yes" : "no");
  // libpmix's names for the topology it shares (Open MPI 4.1 reads these).
  const bool topology = has_key(job, "pmix.hwlocxml2") || has_key(job, "pmix.hwlocfile");
  std::printf("rank %u: topology shared %s\n", id.self.rank, topology ? "yes" : "no");
  std::fflush(stdout);
  PMIx_Finalize(nullptr, 0);
  std::exit(all ? 0 : kExitMismatch);
}

// Calls that grove's server does not support must fail at once, not hang.
void probe_unsupported(const Identity& id) {
  pmix_info_t item;
  PMIX_INFO_CONSTRUCT(&item);
  PMIX_INFO_LOAD(&item, "grove.probe", "x", PMIX_STRING);
  pmix_status_t published = PMIx_Publish(&item, 1);
  PMIX_INFO_DESTRUCT(&item);
  pmix_pdata_t lookup;
  PMIX_PDATA_CONSTRUCT(&lookup);
  PMIX_LOAD_KEY(lookup.key, "grove.probe");
  pmix_status_t looked_up = PMIx_Lookup(&lookup, 1, nullptr, 0);
  PMIX_PDATA_DESTRUCT(&lookup);
  pmix_app_t app;
  PMIX_APP_CONSTRUCT(&app);
  app.cmd = strdup("/bin/true");
  app.maxprocs = 1;
  pmix_nspace_t child;
  pmix_status_t spawned = PMIx_Spawn(nullptr, 0, &app, 1, child);
  PMIX_APP_DESTRUCT(&app);
  pmix_proc_t all = proc_of(id.self, PMIX_RANK_WILDCARD);
  pmix_status_t connected = PMIx_Connect(&all, 1, nullptr, 0);
  pmix_info_t* answers = nullptr;
  std::size_t nanswers = 0;
  pmix_status_t allocated =
      PMIx_Allocation_request(PMIX_ALLOC_NEW, nullptr, 0, &answers, &nanswers);
  if (answers != nullptr) PMIX_INFO_FREE(answers, nanswers);
  answers = nullptr;
  nanswers = 0;
  pmix_info_t directive;
  PMIX_INFO_CONSTRUCT(&directive);
  bool terminate = true;
  PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_TERMINATE, &terminate, PMIX_BOOL);
  pmix_status_t controlled = PMIx_Job_control(&all, 1, &directive, 1, &answers, &nanswers);
  PMIX_INFO_DESTRUCT(&directive);
  if (answers != nullptr) PMIX_INFO_FREE(answers, nanswers);
  const pmix_status_t results[] = {published, looked_up, spawned, allocated, controlled};
  const char* names[] = {"PMIx_Publish", "PMIx_Lookup", "PMIx_Spawn", "PMIx_Allocation_request",
                         "PMIx_Job_control"};
  for (int i = 0; i < 5; ++i) {
    if (results[i] == PMIX_SUCCESS) {
      fail(kExitMismatch, "rank %u: %s succeeded on a server that does not support it",
           id.self.rank, names[i]);
    }
    std::printf("rank %u: %s -> %s\n", id.self.rank, names[i], PMIx_Error_string(results[i]));
  }
  // Reported, not judged: libpmix completes a connect among the ranks of one
  // nspace on one server by itself, without asking the host.
  std::printf("rank %u: PMIx_Connect -> %s\n", id.self.rank, PMIx_Error_string(connected));
}

void wait_for_file(const Identity& id, const std::string& path) {
  std::printf("rank %u: connected, waiting for %s\n", id.self.rank, path.c_str());
  std::fflush(stdout);
  if (!grove::test::wait_until([&path] { return access(path.c_str(), F_OK) == 0; },
                               std::chrono::seconds(kWaitForSeconds)))
    fail(kExitWaitTimeout, "rank %u: %s did not appear", id.self.rank, path.c_str());
}

}  // namespace

// Connects to the server's port from the environment PMIx_server_setup_fork
// gave ("PMIX_SERVER_URI4=nspace.rank;tcp4://127.0.0.1:PORT") and stays
// silent.
[[noreturn]] void stall_in_handshake(const std::string& mark) {
  const char* uri = std::getenv("PMIX_SERVER_URI4");
  if (uri == nullptr) uri = std::getenv("PMIX_SERVER_URI41");
  const char* tcp = uri != nullptr ? std::strstr(uri, "tcp4://") : nullptr;
  unsigned a = 0, b = 0, c = 0, d = 0, port = 0;
  if (tcp == nullptr || std::sscanf(tcp, "tcp4://%u.%u.%u.%u:%u", &a, &b, &c, &d, &port) != 5)
    fail(kExitUsage, "--stall-in-handshake: no tcp4 server URI in the environment");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl((a << 24) | (b << 16) | (c << 8) | d);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    fail(kExitPmix, "--stall-in-handshake: connect: %s", std::strerror(errno));
  std::printf("stalling in the handshake\n");
  std::fflush(stdout);
  if (!mark.empty()) {
    if (std::FILE* file = std::fopen(mark.c_str(), "w")) std::fclose(file);
  }
  // Until the server gives up on it (a daemon cuts a handshake that takes
  // too long), or the time is up.
  pollfd watch{fd, POLLIN, 0};
  if (poll(&watch, 1, kWaitForSeconds * 1000) == 1) {
    char byte = 0;
    if (recv(fd, &byte, 1, 0) <= 0) {
      std::printf("the server closed the connection\n");
      std::fflush(stdout);
      std::exit(kExitPmix);
    }
  }
  std::exit(kExitWaitTimeout);
}

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  const char* rank_text = std::getenv("PMIX_RANK");
  if (options.stall_rank >= 0 && rank_text != nullptr && std::atoi(rank_text) == options.stall_rank)
    stall_in_handshake(options.wait_for);
  Identity id = read_identity();
  if (!options.wait_for.empty()) wait_for_file(id, options.wait_for);
  if (options.abort) {
    std::string message = "pmix_fence_client rank " + std::to_string(id.self.rank) +
                          " aborts with status " + std::to_string(options.abort_status);
    if (options.abort_message_bytes > message.size())
      message.resize(options.abort_message_bytes, 'x');
    pmix_status_t status = PMIx_Abort(options.abort_status, message.c_str(), nullptr, 0);
    fail(kExitPmix, "rank %u: PMIx_Abort returned %s", id.self.rank, PMIx_Error_string(status));
  }
  if (static_cast<int>(id.self.rank) == options.leave_rank) {
    // Exits 0 with PMIx initialised and never finalised: its peers' first
    // fence waits for it in vain unless the runtime notices.
    std::exit(0);
  }
  if (static_cast<int>(id.self.rank) == options.finalize_early_rank) {
    pmix_status_t status = PMIx_Finalize(nullptr, 0);
    if (status != PMIX_SUCCESS)
      fail(kExitPmix, "rank %u: PMIx_Finalize: %s", id.self.rank, PMIx_Error_string(status));
    std::printf("rank %u: finalized early\n", id.self.rank);
    return 0;
  }
  if (options.check_keys) check_keys(id);
  if (options.probe_unsupported) probe_unsupported(id);

  Digest digest;
  std::size_t modex_bytes = 0;
  std::vector<double> fence_us;
  for (int round = 0; round < options.rounds; ++round) {
    std::string key = "grove.fence." + std::to_string(round);
    if (!options.barrier) put_value(id, round, key, options.max_bytes);
    if (round == 0 && static_cast<int>(id.self.rank) == options.late_rank)
      std::this_thread::sleep_for(std::chrono::seconds(options.late_seconds));
    if (static_cast<int>(id.self.rank) == options.crash_rank && round == options.crash_round)
      std::raise(SIGSEGV);
    // Rank 0 holds the others in fence ROUND (they have entered it) until
    // FILE appears: a test acts on the DVM in the middle of a job's fences.
    if (id.self.rank == 0 && round == options.pause_round) wait_for_file(id, options.pause_file);
    double us = fence(id, options.collect && !options.barrier, round, options.fence_timeout);
    fence_us.push_back(us);
    if (options.timing)
      std::printf("timing rank %u round %d: fence %.1f us\n", id.self.rank, round, us);
    if (options.progress) {
      // Line by line: a test may act once a round has passed.
      std::printf("rank %u: round %d done\n", id.self.rank, round);
      std::fflush(stdout);
    }
    if (!options.barrier) modex_bytes += check_values(id, round, key, options.max_bytes, digest);
  }
  if (options.timing) print_timing(id, fence_us);
  std::printf("rank %u/%u: %d rounds ok, modex %zu bytes, digest %016" PRIx64
              ", local %u/%u on %s\n",
              id.self.rank, id.size, options.rounds, modex_bytes, digest.hash,
              static_cast<unsigned>(id.local_rank), id.local_size, id.hostname.c_str());
  std::fflush(stdout);
  pmix_status_t status = PMIx_Finalize(nullptr, 0);
  if (status != PMIX_SUCCESS) {
    fail(kExitPmix, "rank %u: PMIx_Finalize: %s", id.self.rank, PMIx_Error_string(status));
  }
  return 0;
}
