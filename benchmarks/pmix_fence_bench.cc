// pmix_fence_bench: times collecting PMIx fences with a fixed put size, for
// comparing PMIx servers (grove's daemons, PRRTE's prted) with one binary.
// It links only libpmix.
//
//   pmix_fence_bench [--bytes N] [--rounds K] [--warmup W] [--barrier]
//
// Every round each rank puts N bytes (content derived from rank and round)
// under one key, "bench.fence", commits and calls PMIx_Fence over the job
// with PMIX_COLLECT_DATA; only the fence call is timed. The key is the same
// in every round: a new key per round would make each fence carry every
// earlier round's data too (libpmix resends all that a rank has committed),
// so the rounds would not be samples of one size. W warm-up rounds (default
// 1) run first and are not counted: the first fence of a job also waits for
// the last rank to start.
//
// Nothing runs between two timed fences but the next put and commit. After
// the last round, a fence without data (so that no rank commits again) and
// then every rank reads every rank's value (a plain get, then, if that is
// not the last round's, one with PMIX_GET_REFRESH_CACHE) and checks that it
// is the last round's. Reading in every round would not
// work under every server: with libpmix's hash store (a 4.2 client under a
// PMIx 7 server) a plain get returns the copy cached in an earlier round,
// and a refreshing get may already see the peer's next round.
//
// With --barrier nothing is put and the fence does not collect data: a plain
// barrier, and nothing is checked afterwards.
//
// Rank 0 prints one line:
//   fence_bench bytes=64 barrier=0 ranks=8 local_size=1 rounds=30 median_us=812.3
//   mean_us=... min_us=... max_us=... loop_us=... pmix="OpenPMIx 4.2.2rc2, ..."
//   samples_us=1.0,2.0,...
// local_size is the number of ranks on rank 0's node (1: one rank per host).
// loop_us is rank 0's wall time from the first timed round to the end of the
// last: with --barrier, K back-to-back barriers, so loop_us / K is the cost of
// one in a sequence (seed 004's measure), puts and clock reads included.
// Exit status: 0 ok, 1 a value did not match, 2 bad usage, 3 a PMIx call failed.
#include <pmix.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;
constexpr int kExitPmix = 3;
constexpr char kKey[] = "bench.fence";

struct Options {
  std::size_t bytes = 64;
  int rounds = 30;
  int warmup = 1;
  bool barrier = false;
};

[[noreturn]] void fail(int code, const char* format, ...) __attribute__((format(printf, 2, 3)));

void fail(int code, const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::fputs("pmix_fence_bench: ", stderr);
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
    long value = 0;
    bool ok = i + 1 < argc;
    if (arg == "--barrier") {
      options.barrier = true;
      continue;
    }
    if (arg == "--bytes" && ok && parse_count(argv[i + 1], 0, 64L * 1024 * 1024, value)) {
      options.bytes = static_cast<std::size_t>(value);
    } else if (arg == "--rounds" && ok && parse_count(argv[i + 1], 1, 1000000, value)) {
      options.rounds = static_cast<int>(value);
    } else if (arg == "--warmup" && ok && parse_count(argv[i + 1], 0, 1000000, value)) {
      options.warmup = static_cast<int>(value);
    } else {
      fail(kExitUsage,
           "bad argument '%s'; usage: pmix_fence_bench [--bytes N] [--rounds K] [--warmup W] "
           "[--barrier]",
           argv[i]);
    }
    ++i;
  }
  return options;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// What rank `rank` puts in round `round`; every rank can recompute it.
std::vector<char> value_of(std::uint32_t rank, int round, std::size_t bytes) {
  std::uint64_t state =
      (static_cast<std::uint64_t>(rank) << 32) ^ static_cast<std::uint32_t>(round);
  std::vector<char> out(bytes);
  for (std::size_t i = 0; i < bytes; i += 8) {
    std::uint64_t word = splitmix64(state);
    std::memcpy(out.data() + i, &word, std::min<std::size_t>(8, bytes - i));
  }
  return out;
}

void check(pmix_status_t status, const pmix_proc_t& self, const char* what) {
  if (status != PMIX_SUCCESS) {
    fail(kExitPmix, "rank %u: %s: %s", self.rank, what, PMIx_Error_string(status));
  }
}

std::uint32_t get_uint32(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* value = nullptr;
  check(PMIx_Get(&proc, key, nullptr, 0, &value), proc, key);
  std::uint32_t out = value->data.uint32;
  PMIX_VALUE_RELEASE(value);
  return out;
}

void put(const pmix_proc_t& self, int round, std::size_t bytes) {
  std::vector<char> data = value_of(self.rank, round, bytes);
  pmix_value_t value;
  PMIX_VALUE_CONSTRUCT(&value);
  value.type = PMIX_BYTE_OBJECT;
  value.data.bo.bytes = data.empty() ? nullptr : data.data();
  value.data.bo.size = data.size();
  check(PMIx_Put(PMIX_GLOBAL, kKey, &value), self, "PMIx_Put");
  check(PMIx_Commit(), self, "PMIx_Commit");
}

double timed_fence(const pmix_proc_t& self, bool collect) {
  pmix_proc_t all;
  PMIX_LOAD_PROCID(&all, self.nspace, PMIX_RANK_WILDCARD);
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  bool yes = true;
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  auto start = std::chrono::steady_clock::now();
  pmix_status_t status = PMIx_Fence(&all, 1, collect ? &info : nullptr, collect ? 1 : 0);
  auto end = std::chrono::steady_clock::now();
  PMIX_INFO_DESTRUCT(&info);
  check(status, self, "PMIx_Fence");
  return std::chrono::duration<double, std::micro>(end - start).count();
}

bool same(const pmix_byte_object_t& got, const std::vector<char>& expected) {
  return got.size == expected.size() &&
         (got.size == 0 || std::memcmp(got.bytes, expected.data(), got.size) == 0);
}

bool matches(const pmix_value_t* value, const std::vector<char>& expected) {
  return value != nullptr && value->type == PMIX_BYTE_OBJECT && same(value->data.bo, expected);
}

// A plain get first: a 4.2 server's clients read local and remote peers from
// its shared store, and a refreshing get of a peer on the same node returns
// NOT-FOUND there (libpmix answers it from the client's own cache). Under a
// server whose clients cache in their own hash (PMIx 7), a plain get may
// return an earlier round's copy: then a refreshing get asks the server.
void verify(const pmix_proc_t& self, std::uint32_t size, int round, std::size_t bytes) {
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  bool yes = true;
  int seconds = 60;
  PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &seconds, PMIX_INT);
  PMIX_INFO_LOAD(&info[1], PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
  for (std::uint32_t peer = 0; peer < size; ++peer) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, self.nspace, peer);
    const std::vector<char> expected = value_of(peer, round, bytes);
    pmix_value_t* value = nullptr;
    pmix_status_t status = PMIx_Get(&proc, kKey, info, 1, &value);
    if (status == PMIX_SUCCESS && matches(value, expected)) {
      PMIX_VALUE_RELEASE(value);
      continue;
    }
    if (value != nullptr) PMIX_VALUE_RELEASE(value);
    value = nullptr;
    status = PMIx_Get(&proc, kKey, info, 2, &value);
    if (status != PMIX_SUCCESS || value == nullptr) {
      fail(kExitPmix, "rank %u round %d: PMIx_Get of rank %u: %s", self.rank, round, peer,
           PMIx_Error_string(status));
    }
    if (!matches(value, expected)) {
      // Name the round the value belongs to, if any: a stale copy or a mix-up.
      const pmix_byte_object_t& got = value->data.bo;
      int from = -1;
      for (int r = 0; value->type == PMIX_BYTE_OBJECT && r < round + 64 && from < 0; ++r) {
        if (same(got, value_of(peer, r, bytes))) from = r;
      }
      fail(kExitMismatch,
           "rank %u round %d: rank %u's value (type %d, %zu bytes) is not this round's; it is "
           "round %d's (-1: none)",
           self.rank, round, peer, static_cast<int>(value->type),
           value->type == PMIX_BYTE_OBJECT ? got.size : 0, from);
    }
    PMIX_VALUE_RELEASE(value);
  }
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
}

void report(const Options& options, std::uint32_t size, std::uint32_t local_size,
            const std::vector<double>& samples, double loop_us) {
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  std::size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  std::string list;
  for (double us : samples) {
    char cell[32];
    std::snprintf(cell, sizeof cell, "%s%.1f", list.empty() ? "" : ",", us);
    list += cell;
  }
  std::printf(
      "fence_bench bytes=%zu barrier=%d ranks=%u local_size=%u rounds=%d median_us=%.1f "
      "mean_us=%.1f min_us=%.1f max_us=%.1f loop_us=%.1f pmix=\"%s\" samples_us=%s\n",
      options.barrier ? 0 : options.bytes, options.barrier ? 1 : 0, size, local_size,
      options.rounds, median, mean, sorted.front(), sorted.back(), loop_us, PMIx_Get_version(),
      list.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  pmix_proc_t self;
  pmix_status_t status = PMIx_Init(&self, nullptr, 0);
  if (status != PMIX_SUCCESS) fail(kExitPmix, "PMIx_Init: %s", PMIx_Error_string(status));
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, self.nspace, PMIX_RANK_WILDCARD);
  std::uint32_t size = get_uint32(job, PMIX_JOB_SIZE);
  std::uint32_t local_size = get_uint32(job, PMIX_LOCAL_SIZE);

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(options.rounds));
  int last = options.warmup + options.rounds - 1;
  std::chrono::steady_clock::time_point loop_start;
  for (int round = 0; round <= last; ++round) {
    if (round == options.warmup) loop_start = std::chrono::steady_clock::now();
    if (!options.barrier) put(self, round, options.bytes);
    double us = timed_fence(self, !options.barrier);
    if (round >= options.warmup) samples.push_back(us);
  }
  double loop_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - loop_start)
          .count();
  check(PMIx_Fence(&job, 1, nullptr, 0), self, "PMIx_Fence (barrier)");
  if (!options.barrier) verify(self, size, last, options.bytes);
  // No rank leaves while another may still read its value: under PRRTE a
  // refreshing get of a rank that has already finalized fails.
  check(PMIx_Fence(&job, 1, nullptr, 0), self, "PMIx_Fence (barrier)");
  if (self.rank == 0) report(options, size, local_size, samples, loop_us);
  check(PMIx_Finalize(nullptr, 0), self, "PMIx_Finalize");
  return 0;
}
