#!/usr/bin/env python3
"""What authenticating (or encrypting) every frame costs a release.

On one DVM of 8 local daemons per mode of rml_frame_protection (none,
integrity, encryption), runs `grove bench release` at 33 B and 1 MB and
reports the medians and their ratio to `none`. The modes take turns in
rounds, so a slow spell of this shared machine hits all of them alike.

Usage: benchmarks/frame_protection.py [BUILD_DIR] [RESULT.json] [ROUNDS]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ("none", "integrity", "encryption")
SIZES = {"33B": ("33", 200), "1MB": ("1M", 30)}  # size, releases per measurement


def start_dvm(grove, env, mode):
    dvm = subprocess.Popen([grove, "start", "--local", "8", "--mca", "rml_frame_protection", mode],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    line = dvm.stdout.readline()
    if "DVM ready" not in line:
        dvm.kill()
        raise RuntimeError(f"DVM ({mode}) did not start: {line}")
    return dvm


def bench(grove, env, dvm, size, count):
    result = subprocess.run([grove, "bench", "release", "--size", size, "--count", str(count),
                             "--json", "--dvm", str(dvm.pid)],
                            env=env, capture_output=True, text=True, timeout=600, check=True)
    return json.loads(result.stdout)["median_us"]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    out = sys.argv[2] if len(sys.argv) > 2 else "benchmarks/results/frame_protection.json"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    grove = os.path.join(build, "src", "grove")
    env = dict(os.environ, TMPDIR=tempfile.mkdtemp(prefix="grove-bench-"))
    dvms = {}
    samples = {mode: {name: [] for name in SIZES} for mode in MODES}
    try:
        for mode in MODES:
            dvms[mode] = start_dvm(grove, env, mode)
        for _ in range(rounds):
            for mode in MODES:
                for name, (size, count) in SIZES.items():
                    samples[mode][name].append(bench(grove, env, dvms[mode], size, count))
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
    for name in SIZES:
        base = statistics.median(samples["none"][name])
        for mode in MODES:
            median = statistics.median(samples[mode][name])
            rows.append({"size": name, "mode": mode, "median_us": round(median, 1),
                         "ratio_to_none": round(median / base, 3),
                         "samples_us": [round(s, 1) for s in samples[mode][name]]})
            print(f"{name:4s} {mode:10s} median {median:9.1f} us  x{median / base:5.2f} of none")
    with open(out, "w") as f:
        json.dump({"benchmark": "frame_protection", "daemons": 8, "rounds": rounds,
                   "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "rows": rows}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
