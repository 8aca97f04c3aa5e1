#!/bin/sh
# Where a grove fence's time goes (issue 14): for each DVM size, a local DVM
# runs one rank per daemon doing back-to-back PMIx fences, while `perf record`
# samples every DVM process (controller and daemons) with DWARF call chains.
# Two loads: barriers (test/clients/pmix_fence_client --barrier, BARRIERS of
# them) and collecting fences of 64 bytes per rank under the same key every
# round (benchmarks/pmix_fence_bench, COLLECTS of them; a build configured
# with -Dbenchmarks=true). Prints, per size, the CPU each daemon spends per fence (from
# /proc utime+stime before and after, so perf's own overhead is not in it),
# the CPU each rank spends per fence (its shell's `times`), the share of the
# CPUs' time the DVM and the ranks together kept busy (near 100%: the fence
# is bound by CPU, not by waiting), the share of the two CPUs' time the DVM
# was not running under the profiler (the ranks', the
# kernel's idle and other processes'), and the DVM's CPU
# split into buckets (benchmarks/perf_buckets.py). Writes
# benchmarks/results/profile_fence.json.
#
# Usage: benchmarks/profile_fence.sh [BUILD_DIR] [OUT_DIR]
#   DAEMONS="8 16 32" BARRIERS=2000 COLLECTS=500 FREQ=999 to change the defaults.
# Needs linux-perf (Debian's `perf`); run it as root or with
# kernel.perf_event_paranoid <= 1 for other processes' samples.
set -eu
BUILD=${1:-build}
OUT=${2:-$(mktemp -d /tmp/grove-profile.XXXXXX)}
DAEMONS=${DAEMONS:-"8 16 32"}
BARRIERS=${BARRIERS:-2000}
COLLECTS=${COLLECTS:-500}
FREQ=${FREQ:-999}
HERE=$(cd "$(dirname "$0")" && pwd)
GROVE=$BUILD/src/grove
CLIENT=$BUILD/test/clients/pmix_fence_client
BENCH=$BUILD/benchmarks/pmix_fence_bench
RESULT=$HERE/results/profile_fence.json
command -v perf >/dev/null || { echo "profile_fence: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$GROVE" ] && [ -x "$CLIENT" ] || { echo "profile_fence: build $BUILD first (no $GROVE or $CLIENT)" >&2; exit 2; }
[ -x "$BENCH" ] || { echo "profile_fence: no $BENCH: meson configure $BUILD -Dbenchmarks=true, then ninja -C $BUILD" >&2; exit 2; }
mkdir -p "$OUT"
SESSION=$OUT/session
mkdir -p "$SESSION"
export TMPDIR=$SESSION

# Clock ticks of user+system CPU of the given pids, summed.
cpu_ticks() {
  total=0
  for pid in "$@"; do
    # Fields 14 and 15 after the command (which may hold spaces) ends at ')'.
    ticks=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')
    total=$((total + ticks))
  done
  echo "$total"
}

CONTROLLER=
cleanup() {
  [ -n "$CONTROLLER" ] && "$GROVE" stop >/dev/null 2>&1 || true
  [ -n "$CONTROLLER" ] && kill -9 "$CONTROLLER" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

HZ=$(getconf CLK_TCK)
echo "[" > "$OUT/rows.json"
FIRST=1
for N in $DAEMONS; do
  started=$("$GROVE" start --local "$N" --daemonize)
  CONTROLLER=$(echo "$started" | sed -n 's/.*controller pid \([0-9]*\).*/\1/p')
  PIDS=$("$GROVE" status --json | python3 -c 'import json,sys; print(" ".join(str(d["pid"]) for d in json.load(sys.stdin)["daemons"]))')
  PIDLIST=$(echo "$PIDS" | tr ' ' ',')
  # One warm-up job: first-job costs (registration, connections) are not a fence's.
  "$GROVE" run -n "$N" --map-by node "$CLIENT" --rounds 5 >/dev/null
  for MODE in barrier collect64; do
  if [ "$MODE" = barrier ]; then
    ROUNDS=$BARRIERS; PROGRAM="$CLIENT --rounds $BARRIERS --barrier --timing"
  else
    ROUNDS=$COLLECTS; PROGRAM="$BENCH --bytes 64 --rounds $COLLECTS"
  fi
  TAG=$N-$MODE
  # First without the profiler (DWARF sampling slows the daemons): the
  # fence's median and the DVM's CPU per fence as they are.
  # Each rank's CPU too: its shell writes `times` (the second line is the
  # rank's user and system time) to a file of its own.
  RANKCPU=$OUT/rank-cpu-$TAG
  rm -rf "$RANKCPU"; mkdir -p "$RANKCPU"
  plain_before=$(cpu_ticks $PIDS)
  p0=$(date +%s.%N)
  # shellcheck disable=SC2086,SC2016 # PROGRAM is the program and its arguments
  "$GROVE" run -n "$N" --map-by node sh -c '"$@"; s=$?; times > "$0/$$"; exit $s' "$RANKCPU" $PROGRAM > "$OUT/job-$TAG-plain.txt"
  p1=$(date +%s.%N)
  plain_after=$(cpu_ticks $PIDS)
  ranks_cpu_s=$(awk 'FNR == 2 { split($1, u, "m"); split($2, s, "m"); t += u[1] * 60 + u[2] + s[1] * 60 + s[2] } END { printf "%.3f", t }' "$RANKCPU"/*)
  [ "$(ls "$RANKCPU" | wc -l)" -eq "$N" ] || { echo "profile_fence: $(ls "$RANKCPU" | wc -l) of $N ranks reported their CPU" >&2; exit 1; }
  plain_median=$(sed -n -e 's/.*median \([0-9.]*\) us.*/\1/p' -e 's/.*median_us=\([0-9.]*\).*/\1/p' "$OUT/job-$TAG-plain.txt" | head -1)
  perf record -F "$FREQ" --call-graph dwarf,16384 --no-inherit -p "$PIDLIST" -o "$OUT/perf-$TAG.data" >/dev/null 2>"$OUT/perf-$TAG.log" &
  PERF=$!
  sleep 0.5
  before=$(cpu_ticks $PIDS)
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086 # PROGRAM is the program and its arguments
  "$GROVE" run -n "$N" --map-by node $PROGRAM > "$OUT/job-$TAG.txt"
  t1=$(date +%s.%N)
  after=$(cpu_ticks $PIDS)
  kill -INT "$PERF"; wait "$PERF" || true
  perf script -i "$OUT/perf-$TAG.data" --comms grove,groved -F comm,tid,period,ip,sym,dso > "$OUT/perf-$TAG.script" 2>/dev/null
  split=$(python3 "$HERE/perf_buckets.py" "$OUT/perf-$TAG.script")
  rm -f "$OUT/perf-$TAG.script"
  median=$(sed -n -e 's/.*median \([0-9.]*\) us.*/\1/p' -e 's/.*median_us=\([0-9.]*\).*/\1/p' "$OUT/job-$TAG.txt" | head -1)
  row=$(python3 - "$N" "$ROUNDS" "$before" "$after" "$t0" "$t1" "$HZ" "$median" "$split" "$MODE" \
    "$plain_before" "$plain_after" "$plain_median" "$p0" "$p1" "$ranks_cpu_s" <<'PY'
import json, os, sys
n, rounds, before, after = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
t0, t1, hz = float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
median = float(sys.argv[8]) if sys.argv[8] else None
split = json.loads(sys.argv[9])
cpu_s = (after - before) / hz
wall = t1 - t0
plain_cpu_s = (int(sys.argv[12]) - int(sys.argv[11])) / hz
plain_wall, ranks_cpu_s = float(sys.argv[15]) - float(sys.argv[14]), float(sys.argv[16])
row = {"daemons": n, "load": sys.argv[10], "fences": rounds,
       "fence_median_us": float(sys.argv[13]) if sys.argv[13] else None,
       "cpu_per_fence_per_daemon_us": round(plain_cpu_s / rounds / n * 1e6, 1),
       # The whole job: DVM and ranks together against what the CPUs had.
       "cpu_per_fence_per_rank_us": round(ranks_cpu_s / rounds / n * 1e6, 1),
       "dvm_cpu_per_fence_us": round(plain_cpu_s / rounds * 1e6, 1),
       "ranks_cpu_per_fence_us": round(ranks_cpu_s / rounds * 1e6, 1),
       "busy_share": round((plain_cpu_s + ranks_cpu_s) / (plain_wall * (os.cpu_count() or 1)), 3),
       "profiled": {"fence_median_us": median,
       "job_wall_s": round(wall, 3), "dvm_cpu_s": round(cpu_s, 3),
       "cpu_per_fence_per_daemon_us": round(cpu_s / rounds / n * 1e6, 1),
       "dvm_off_cpu_share": round(max(0.0, 1 - cpu_s / (wall * (os.cpu_count() or 1))), 3)},
       "buckets_percent": split["buckets"], "hottest": split["hottest"]}
print(json.dumps(row))
PY
)
  [ $FIRST -eq 1 ] || echo "," >> "$OUT/rows.json"
  FIRST=0
  echo "$row" >> "$OUT/rows.json"
  echo "$row" | python3 -c '
import json, sys
r = json.load(sys.stdin)
b = r["buckets_percent"]
p = r["profiled"]
print("%3d daemons, %-9s: fence median %s us, CPU per fence per daemon %.1f us, per rank "
      "%.1f us, DVM and ranks busy %.0f%% of the CPUs "
      "(profiled: %s us, %.1f us, DVM off CPU %.0f%%)" % (
          r["daemons"], r["load"], r["fence_median_us"], r["cpu_per_fence_per_daemon_us"],
          r["cpu_per_fence_per_rank_us"], 100 * r["busy_share"],
          p["fence_median_us"], p["cpu_per_fence_per_daemon_us"], 100 * p["dvm_off_cpu_share"]))
print("    " + ", ".join("%s %.1f%%" % (k, v) for k, v in sorted(b.items(), key=lambda kv: -kv[1])))'
  done
  "$GROVE" stop >/dev/null
  CONTROLLER=
done
echo "]" >> "$OUT/rows.json"
python3 - "$OUT/rows.json" "$RESULT" "$(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo unknown)" "$BUILD" "$FREQ" <<'PY'
import json, os, sys, time
rows = json.load(open(sys.argv[1]))
buildtype = "unknown"
try:
    options = json.load(open(os.path.join(sys.argv[4], "meson-info", "intro-buildoptions.json")))
    buildtype = next(o["value"] for o in options if o["name"] == "buildtype")
except (OSError, StopIteration, ValueError):
    pass
out = {"benchmark": "profile_fence", "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "commit": sys.argv[3], "buildtype": buildtype, "perf_frequency_hz": int(sys.argv[5]),
       "cpus": os.cpu_count(), "loadavg": os.getloadavg(), "rows": rows}
json.dump(out, open(sys.argv[2], "w"), indent=1)
print("wrote", sys.argv[2])
PY
echo "perf data and reports: $OUT"
