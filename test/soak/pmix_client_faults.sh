#!/bin/bash
# A soak of PMIx client faults on one host (run by hand; not in CI):
#   test/soak/pmix_client_faults.sh [BUILD_DIR] [ROUNDS]
# Starts a local DVM of 6 daemons and runs ROUNDS (default 40) rounds of
# three 12-rank jobs that fail inside PMIx: every rank calls PMIx_Abort right
# after PMIx_Init, a rank leaves without PMIx_Finalize, a rank segfaults in a
# fence. Then prints how many jobs took over 3 s and which daemons the DVM
# lost, and stops the DVM. A daemon whose PMIx server wedged misses its
# heartbeats and shows up as lost (docs/pmix.md, "What PMIx 4.2 taught us").
set -u
build=${1:-build}
rounds=${2:-40}
tmp=$(mktemp -d -t grove-soak.XXXXXXXX)  # under $TMPDIR, else /tmp
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
GROVE_GROVED=$build/src/groved "$build/src/grove" start --local 6 --daemonize \
  --report-uri "$tmp/uri" --mca daemon_heartbeat_ms 200 --mca daemon_heartbeat_misses 25 \
  > "$tmp/start.log" 2>&1 || { cat "$tmp/start.log"; exit 1; }
uri=$(cat "$tmp/uri")
slow=0
for _ in $(seq 1 "$rounds"); do
  for args in "--abort 7" "--leave-without-finalize 3" "--crash 3:1 --rounds 3"; do
    start=$(date +%s%N)
    # shellcheck disable=SC2086  # args is a list of words
    timeout 60 "$build/src/grove" run --dvm "$uri" -n 12 --map-by node \
      "$build/test/clients/pmix_fence_client" $args > /dev/null 2>> "$tmp/jobs.err"
    [ $(( ($(date +%s%N) - start) / 1000000 )) -gt 3000 ] && slow=$((slow + 1))
  done
done
lost=$("$build/src/grove" status --dvm "$uri" --json |
  python3 -c "import json, sys; print(json.load(sys.stdin)['failed'])")
echo "$rounds x 3 jobs: $slow took over 3 s; daemons lost: $lost"
timeout 60 "$build/src/grove" stop --dvm "$uri" > /dev/null 2>&1 || echo "grove stop failed"
[ "$lost" = "[]" ]
