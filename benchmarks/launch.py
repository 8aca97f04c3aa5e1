#!/usr/bin/env python3
"""Launch time: `grove run -n 16 true` on a running DVM against Debian's Open
MPI `mpirun -np 16 --oversubscribe true`, interleaved in one run (so machine
noise hits both alike), reported as a ratio of medians.

Usage: benchmarks/launch.py [BUILD_DIR] [RESULT.json] [REPEATS]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(argv, env):
    started = time.monotonic()
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=120)
    return time.monotonic() - started


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    out = sys.argv[2] if len(sys.argv) > 2 else "benchmarks/results/launch.json"
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    grove = os.path.join(build, "src", "grove")
    env = dict(os.environ, TMPDIR=tempfile.mkdtemp(prefix="grove-bench-"),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    uri = os.path.join(env["TMPDIR"], "uri")
    subprocess.run([grove, "start", "--local", "4", "--daemonize", "--report-uri", uri], env=env,
                   check=True, capture_output=True)
    dvm = open(uri).read().strip()
    grove_times, mpirun_times = [], []
    try:
        for _ in range(repeats):
            grove_times.append(timed([grove, "run", "--dvm", dvm, "-n", "16", "true"], env))
            mpirun_times.append(timed(["mpirun", "-np", "16", "--oversubscribe", "true"], env))
    finally:
        subprocess.run([grove, "stop", "--dvm", dvm], env=env, capture_output=True)
    g, m = statistics.median(grove_times), statistics.median(mpirun_times)
    print(f"grove run -n 16 true (4-daemon DVM): median {g * 1000:.1f} ms")
    print(f"mpirun -np 16 --oversubscribe true:  median {m * 1000:.1f} ms")
    print(f"mpirun / grove = {m / g:.1f}x")
    with open(out, "w") as handle:
        json.dump({"benchmark": "launch", "ranks": 16, "repeats": repeats,
                   "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "grove_median_s": g, "mpirun_median_s": m, "mpirun_over_grove": m / g,
                   "grove_s": grove_times, "mpirun_s": mpirun_times}, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    main()
