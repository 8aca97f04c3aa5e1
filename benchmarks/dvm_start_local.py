#!/usr/bin/env python3
"""Local DVM start, one build against another: `grove start --local N
--daemonize` until it returns ready, for N = 4, 8, 16, 32, builds interleaved
per repeat so machine noise hits them alike. For each start it also reads the
CPU time the controller and the daemons have used by then (schedstat),
which is what bounds a local start on a machine with fewer cores than
daemons. Medians reported; JSON written.

Usage: benchmarks/dvm_start_local.py [--baseline BUILD] [--build BUILD]
           [--sizes 4,8,16,32] [--repeat 5] [--out RESULT.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_ms(pid):
    """CPU time of every thread of `pid` so far (schedstat: nanoseconds, not
    the clock ticks of /proc/PID/stat)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
    except (OSError, IndexError, ValueError):
        return None
    return total / 1e6


def start_stop(build, daemons):
    """(seconds to ready, controller CPU ms, daemons' CPU ms) of one start."""
    grove = os.path.join(build, "src", "grove")
    with tempfile.TemporaryDirectory(prefix="grove-start-") as work:
        # Its own session root: a DVM the user runs is neither met nor touched.
        env = dict(os.environ, GROVE_GROVED=os.path.join(build, "src", "groved"), TMPDIR=work)
        uri = os.path.join(work, "uri")
        began = time.monotonic()
        started = subprocess.run([grove, "start", "--local", str(daemons), "--daemonize",
                                  "--report-uri", uri], env=env, capture_output=True, text=True,
                                 timeout=120)
        elapsed = time.monotonic() - began
        if started.returncode != 0:
            raise RuntimeError(f"{grove} start --local {daemons}: {started.stderr.strip()}")
        with open(uri) as written:
            dvm = written.read().strip()
        try:
            status = json.loads(subprocess.run([grove, "status", "--json", "--dvm", dvm],
                                               env=env, capture_output=True, text=True,
                                               timeout=60, check=True).stdout)
            pids = [d["pid"] for d in status["daemons"]]
            controller = cpu_ms(pids[0])
            others = [cpu_ms(pid) for pid in pids[1:]]
            daemons_ms = sum(ms for ms in others if ms is not None)
        finally:
            subprocess.run([grove, "stop", "--dvm", dvm], env=env, capture_output=True,
                           timeout=60)
    return elapsed, controller, daemons_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--baseline", help="another build directory to interleave with")
    parser.add_argument("--sizes", default="4,8,16,32")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "dvm_start_local.json"))
    args = parser.parse_args()
    builds = {"build": os.path.abspath(args.build)}
    if args.baseline:
        builds["baseline"] = os.path.abspath(args.baseline)
    sizes = [int(size) for size in args.sizes.split(",")]
    samples = {name: {n: [] for n in sizes} for name in builds}
    for repeat in range(args.repeat):
        for n in sizes:
            for name, build in builds.items():
                samples[name][n].append(start_stop(build, n))
        print(f"repeat {repeat + 1}/{args.repeat} done", file=sys.stderr)

    result = {"sizes": sizes, "repeat": args.repeat, "builds": builds, "runs": {}}
    header = f"{'daemons':>7}"
    for name in builds:
        header += f" | {name + ': ready':>16} | {'controller CPU':>14} | {'CPU per daemon':>14}"
    if args.baseline:
        header += " | baseline / build"
    print(header)
    for n in sizes:
        line = f"{n:>7}"
        medians = {}
        for name in builds:
            runs = samples[name][n]
            ready = statistics.median(r[0] for r in runs)
            controller = statistics.median(r[1] for r in runs if r[1] is not None)
            per_daemon = statistics.median(r[2] / (n - 1) for r in runs)
            medians[name] = ready
            result["runs"].setdefault(name, {})[str(n)] = {
                "ready_s": [r[0] for r in runs], "controller_cpu_ms": [r[1] for r in runs],
                "daemons_cpu_ms": [r[2] for r in runs], "median_ready_s": ready,
                "median_controller_cpu_ms": controller, "median_cpu_per_daemon_ms": per_daemon}
            line += f" | {ready * 1000:>13.0f} ms | {controller:>11.0f} ms | {per_daemon:>11.1f} ms"
        if args.baseline:
            ratio = medians["baseline"] / medians["build"]
            result["runs"].setdefault("ratio", {})[str(n)] = ratio
            line += f" | {ratio:.2f}"
        print(line)
    result["machine"] = {"cpus": os.cpu_count(), "load": os.getloadavg()}
    result["commit"] = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as out:
        json.dump(result, out, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
