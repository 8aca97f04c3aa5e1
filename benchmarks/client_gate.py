#!/usr/bin/env python3
"""What admitting PMIx clients by the kernel's word costs a job's start.

Two DVMs of 2 local daemons, one with pmix_verify_clients true (every rank's
connection is checked against /proc: docs/pmix.md) and one with it false.
Each runs `grove run -n N pmix_fence_client 1 --barrier` (PMIx_Init, one
barrier, finalize) for N = 16 and 64, the two DVMs taking turns in rounds so
a slow spell of this shared machine hits both alike. Reports the median time
of a whole `grove run` and the ratio verified / unverified.

Usage: benchmarks/client_gate.py [BUILD_DIR] [RESULT.json] [ROUNDS]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ("false", "true")
RANKS = (16, 64)


def start_dvm(grove, env, verify):
    dvm = subprocess.Popen([grove, "start", "--local", "2", "--mca", "pmix_verify_clients", verify],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    line = dvm.stdout.readline()
    if "DVM ready" not in line:
        dvm.kill()
        raise RuntimeError(f"DVM (verify {verify}) did not start: {line}")
    return dvm


def run_job(grove, client, env, dvm, ranks):
    start = time.perf_counter()
    subprocess.run([grove, "run", "--dvm", str(dvm.pid), "-n", str(ranks), client, "1",
                    "--barrier"], env=env, capture_output=True, text=True, timeout=300,
                   check=True)
    return (time.perf_counter() - start) * 1000.0


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    out = sys.argv[2] if len(sys.argv) > 2 else "benchmarks/results/client_gate.json"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    grove = os.path.join(build, "src", "grove")
    client = os.path.join(build, "test", "clients", "pmix_fence_client")
    env = dict(os.environ, TMPDIR=tempfile.mkdtemp(prefix="grove-bench-"))
    dvms = {}
    samples = {mode: {n: [] for n in RANKS} for mode in MODES}
    try:
        for mode in MODES:
            dvms[mode] = start_dvm(grove, env, mode)
        for _ in range(rounds):
            for mode in MODES:
                for n in RANKS:
                    samples[mode][n].append(run_job(grove, client, env, dvms[mode], n))
    finally:
        for dvm in dvms.values():
            subprocess.run([grove, "stop", "--dvm", str(dvm.pid)], env=env, capture_output=True,
                           timeout=60)
            try:
                dvm.wait(timeout=30)
            except subprocess.TimeoutExpired:
                dvm.kill()
                dvm.wait()
    rows = []
    for n in RANKS:
        base = statistics.median(samples["false"][n])
        for mode in MODES:
            median = statistics.median(samples[mode][n])
            rows.append({"ranks": n, "verify_clients": mode == "true",
                         "median_ms": round(median, 1), "ratio_to_unverified": round(median / base, 3),
                         "samples_ms": [round(s, 1) for s in samples[mode][n]]})
            print(f"{n:3d} ranks  verify {mode:5s}  median {median:8.1f} ms  "
                  f"x{median / base:5.2f} of unverified")
    with open(out, "w") as f:
        json.dump({"benchmark": "client_gate", "daemons": 2, "rounds": rounds,
                   "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "rows": rows}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
