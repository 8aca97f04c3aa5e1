#!/usr/bin/env python3
"""Sequential fences from real PMIx clients (the method of seed 004).

On a DVM of 8 local daemons, 8 ranks (one per daemon) run 1, 10, 100, 1000
and 10000 back-to-back fences; the per-fence cost must stay flat as the count
grows. Barriers carry no data; the 64-byte rows put one 0..64-byte value per
rank per round and fence with collect (libpmix 4.2 resends every key a rank
has committed in each collecting fence, so that row's cost grows with the
round count by construction; it is reported for small counts only).

Usage: benchmarks/fences.py [BUILD_DIR] [RESULT.json]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

SUMMARY = re.compile(r"timing rank 0: (\d+) fences, mean ([\d.]+) us, median ([\d.]+) us, "
                     r"min ([\d.]+) us, max ([\d.]+) us")


def run_fences(grove, client, dvm, env, rounds, extra):
    started = time.monotonic()
    result = subprocess.run([grove, "run", "--dvm", dvm, "-n", "8", "--map-by", "node", client,
                             "--rounds", str(rounds), "--timing"] + extra,
                            env=env, capture_output=True, text=True, timeout=1800, check=True)
    wall = time.monotonic() - started
    match = SUMMARY.search(result.stdout)
    if not match:
        raise RuntimeError("no timing summary in:\n" + result.stdout[-2000:])
    return {"fences": rounds, "mean_us": float(match[2]), "median_us": float(match[3]),
            "min_us": float(match[4]), "max_us": float(match[5]),
            "fences_per_s": rounds / (float(match[2]) * rounds / 1e6), "job_wall_s": wall}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    out = sys.argv[2] if len(sys.argv) > 2 else "benchmarks/results/fences.json"
    grove = os.path.join(build, "src", "grove")
    client = os.path.join(build, "test", "clients", "pmix_fence_client")
    env = dict(os.environ, TMPDIR=tempfile.mkdtemp(prefix="grove-bench-"))
    uri = os.path.join(env["TMPDIR"], "uri")
    subprocess.run([grove, "start", "--local", "8", "--daemonize", "--report-uri", uri], env=env,
                   check=True, capture_output=True)
    dvm = open(uri).read().strip()
    rows = {"barrier": [], "64B": []}
    try:
        for rounds in (1, 10, 100, 1000, 10000):
            row = run_fences(grove, client, dvm, env, rounds, ["--barrier"])
            rows["barrier"].append(row)
            print(f"barrier x{rounds:6d}: median {row['median_us']:8.1f} us  mean "
                  f"{row['mean_us']:8.1f} us  {row['fences_per_s']:8.0f} fences/s")
        for rounds in (1, 10, 100):
            row = run_fences(grove, client, dvm, env, rounds, ["--max-bytes", "64"])
            rows["64B"].append(row)
            print(f"64 B    x{rounds:6d}: median {row['median_us']:8.1f} us  mean "
                  f"{row['mean_us']:8.1f} us")
    finally:
        subprocess.run([grove, "stop", "--dvm", dvm], env=env, capture_output=True)
    # The first fence of a job also waits for its last rank to start (launch
    # skew), so flatness is judged from 100 fences on.
    medians = [row["median_us"] for row in rows["barrier"] if row["fences"] >= 100]
    flatness = max(medians) / min(medians)
    print(f"barrier median spread over 100..10000 fences: {flatness:.2f}x (flat is ~1)")
    with open(out, "w") as handle:
        json.dump({"benchmark": "sequential_fences", "daemons": 8, "ranks": 8,
                   "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "rows": rows, "barrier_median_spread": flatness}, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    main()
