#!/usr/bin/env python3
"""Fits T = floor + c * (N - 1) to grove's release span on a real DVM.

For N = 2..10 local daemons, starts a DVM with a flat routing tree (so the
release is one level: the controller sends N-1 copies), runs `grove bench
release --size 33`, and fits the medians and the minimums by least squares.
This is the seed's measurement of c and the broadcast floor (seed 001,
8.7.2.10: ~200 us floor and ~25 us a copy in containers).

Usage: benchmarks/release_fit.py [BUILD_DIR] [RESULT.json] [COUNT]
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def fit(points):
    n = len(points)
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    return my - slope * mx, slope


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    out = sys.argv[2] if len(sys.argv) > 2 else "benchmarks/results/release.json"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    grove = os.path.join(build, "src", "grove")
    env = dict(os.environ, TMPDIR=tempfile.mkdtemp(prefix="grove-bench-"))
    rows = []
    for daemons in range(2, 11):
        dvm = subprocess.Popen([grove, "start", "--local", str(daemons), "--mca", "rml_base_radix",
                                "64", "--mca", "grpcomm_low_radix_release", "false"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
        try:
            line = dvm.stdout.readline()
            if "DVM ready" not in line:
                raise RuntimeError("DVM did not start: " + line)
            bench = subprocess.run([grove, "bench", "release", "--size", "33", "--count",
                                    str(count), "--json", "--dvm", str(dvm.pid)],
                                   env=env, capture_output=True, text=True, timeout=300, check=True)
            result = json.loads(bench.stdout)
            rows.append({"daemons": daemons, "median_us": result["median_us"],
                         "min_us": result["min_us"], "mean_us": result["mean_us"]})
            print(f"N={daemons:2d}  median {result['median_us']:8.1f} us  "
                  f"min {result['min_us']:8.1f} us")
            subprocess.run([grove, "stop", "--dvm", str(dvm.pid)], env=env, capture_output=True,
                           timeout=60)
            dvm.wait(timeout=30)
        finally:
            if dvm.poll() is None:
                dvm.kill()
                dvm.wait()
    floor_med, c_med = fit([(r["daemons"] - 1, r["median_us"]) for r in rows])
    floor_min, c_min = fit([(r["daemons"] - 1, r["min_us"]) for r in rows])
    print(f"median fit: T = {floor_med:.1f} us + {c_med:.1f} us * (N-1)")
    print(f"minimum fit: T = {floor_min:.1f} us + {c_min:.1f} us * (N-1)")
    print("seed 001 (containers): ~200 us floor, c ~ 25 us (minimum fit 235 + 25 (N-1))")
    with open(out, "w") as handle:
        json.dump({"benchmark": "release_fit", "payload_bytes": 33, "count": count,
                   "routing_radix": 64, "low_radix_release": False,
                   "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "rows": rows,
                   "median_fit": {"floor_us": floor_med, "c_us": c_med},
                   "minimum_fit": {"floor_us": floor_min, "c_us": c_min},
                   "seed_reference": {"floor_us": 200, "c_us": 25}}, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    main()
