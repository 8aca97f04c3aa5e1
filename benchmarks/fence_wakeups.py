#!/usr/bin/env python3
"""What a fence costs each daemon, per thread: CPU and context switches.

For each DVM size (8, 16, 32 local daemons) a job of one rank per daemon runs
BARRIERS back-to-back barriers (`pmix_fence_client --barrier`), then
COLLECTS collecting fences of 64 bytes per rank under one key
(`benchmarks/pmix_fence_bench --bytes 64`, as profile_fence.sh runs them; a
build configured with -Dbenchmarks=true). Before and after each job the script reads, for every
thread of the controller and of every daemon, its user and system time and
its voluntary and involuntary context switches (`/proc/PID/task/TID/stat`
and `status`), and the DVM's frame counters (`grove status --json`). Printed
per fence and per daemon: CPU, switches split by thread (the daemon's loop,
libpmix's progress thread, the others), and frames sent.

With `--baseline OTHER_BUILD` the same loads run on both builds, alternately
(`--passes` times each), so that the two are compared in one sitting on the
same machine load; the JSON then holds both and their ratio.

With `--build-mca "name=value ..."` (and `--baseline-mca`) a build runs with
those parameters (as GROVE_MCA_<name>); the baseline may be the same build,
to measure what one parameter does.

Usage: benchmarks/fence_wakeups.py [--build B] [--baseline B] [--daemons "8 16 32"]
         [--barriers N] [--collects N] [--passes K] [--out RESULT.json]
         [--build-mca "..."] [--baseline-mca "..."]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HZ = os.sysconf("SC_CLK_TCK")


def thread_sample(pid):
    """{tid: (name, cpu_ticks, voluntary, involuntary)} for one process."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            stat = open(base + "/stat").read()
            status = open(base + "/status").read()
            name = open(base + "/comm").read().strip()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        ticks = int(fields[11]) + int(fields[12])
        switches = {}
        for line in status.splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                key, value = line.split(":")
                switches[key] = int(value)
        out[int(tid)] = (name, ticks, switches.get("voluntary_ctxt_switches", 0),
                         switches.get("nonvoluntary_ctxt_switches", 0))
    return out


def classify(pid, tid, name):
    # The main thread runs grove's event loop; libpmix names nothing, so its
    # progress thread and the watchdog share the process's name. Both are
    # reported as "other threads" together with the handshake watchdog,
    # except that the busiest non-main thread is libpmix's progress thread.
    return "loop" if pid == tid else "aux"


def sample(pids):
    return {pid: thread_sample(pid) for pid in pids}


def delta(before, after):
    """Per process: loop thread's and the other threads' (cpu, vol, invol)."""
    result = {}
    for pid, threads in after.items():
        loop = [0, 0, 0]
        others = []
        for tid, (name, ticks, vol, invol) in threads.items():
            prev = before.get(pid, {}).get(tid, (name, 0, 0, 0))
            d = (ticks - prev[1], vol - prev[2], invol - prev[3])
            if classify(pid, tid, name) == "loop":
                loop = list(d)
            else:
                others.append(d)
        # The busiest other thread (by switches) is libpmix's progress thread.
        others.sort(key=lambda d: -(d[1] + d[2]))
        pmix = list(others[0]) if others else [0, 0, 0]
        rest = [sum(d[i] for d in others[1:]) for i in range(3)]
        result[pid] = {"loop": loop, "pmix": pmix, "rest": rest}
    return result


def status(grove, env):
    out = subprocess.run([grove, "status", "--json"], env=env, capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return json.loads(out)


def frames_sent(state):
    return sum(int(c.get("sent_frames", 0)) for c in state.get("counters", []))


WAKE_FIELDS = ("loop_passes", "pmix_upcalls", "pmix_upcall_wakes", "pmix_answers")


def wake_totals(state):
    """Per vpid: the daemon's wake counters (a build without them: none)."""
    out = {}
    for c in state.get("counters", []):
        if "loop_passes" in c:
            out[c["vpid"]] = {k: int(c[k]) for k in WAKE_FIELDS}
    return out


def engine_frames_by_type(state):
    totals = {}
    for c in state.get("counters", []):
        for entry in c.get("engine", []):
            totals[entry["type"]] = totals.get(entry["type"], 0) + int(entry["frames"])
    return totals


def run_load(build, env, n, mode, rounds):
    grove = os.path.join(build, "src", "grove")
    client = os.path.join(build, "test", "clients", "pmix_fence_client")
    state = status(grove, env)
    pids = [d["pid"] for d in state["daemons"]]
    controller = state.get("pid")
    if controller and controller not in pids:
        pids.append(controller)
    if mode == "barrier":
        program = [client, "--rounds", str(rounds), "--timing", "--barrier"]
    else:
        program = [os.path.join(build, "benchmarks", "pmix_fence_bench"), "--bytes", "64",
                   "--rounds", str(rounds)]
    frames_before = frames_sent(state)
    wakes_before = wake_totals(state)
    types_before = engine_frames_by_type(state)
    before = sample(pids)
    started = time.monotonic()
    job = subprocess.run([grove, "run", "-n", str(n), "--map-by", "node"] + program, env=env,
                         capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - started
    after = sample(pids)
    if job.returncode != 0:
        raise RuntimeError(f"job failed ({job.returncode}):\n{job.stdout[-2000:]}{job.stderr[-2000:]}")
    state_after = status(grove, env)
    frames = frames_sent(state_after) - frames_before
    wakes_after = wake_totals(state_after)
    types_after = engine_frames_by_type(state_after)
    wakes = None
    if wakes_before and wakes_after:
        # Leaf: a daemon other than the controller (vpid 0); the mean over
        # every daemon and the controller's own, per fence.
        deltas = {v: {k: wakes_after[v][k] - wakes_before.get(v, {}).get(k, 0) for k in WAKE_FIELDS}
                  for v in wakes_after}
        wakes = {
            "mean_per_daemon": {k: round(sum(d[k] for d in deltas.values()) / len(deltas) / rounds, 3)
                                for k in WAKE_FIELDS},
            "controller": {k: round(deltas.get(0, {}).get(k, 0) / rounds, 3) for k in WAKE_FIELDS},
            "max_other": {k: round(max((d[k] for v, d in deltas.items() if v != 0), default=0)
                                   / rounds, 3) for k in WAKE_FIELDS},
        }
    median = None
    match = re.search(r"median ([\d.]+) us|median_us=([\d.]+)", job.stdout)
    if match:
        median = float(match[1] or match[2])
    per = delta(before, after)
    totals = {k: [sum(p[k][i] for p in per.values()) for i in range(3)]
              for k in ("loop", "pmix", "rest")}
    cpu_ticks = sum(sum(v[0] for v in p.values()) for p in per.values())
    scale = 1.0 / (rounds * n)
    return {
        "daemons": n, "load": mode, "fences": rounds, "fence_median_us": median,
        "job_wall_s": round(wall, 3),
        "cpu_per_fence_per_daemon_us": round(cpu_ticks / HZ * 1e6 * scale, 1),
        "switches_per_fence_per_daemon": {
            k: {"voluntary": round(v[1] * scale, 2), "involuntary": round(v[2] * scale, 2)}
            for k, v in totals.items()},
        "frames_per_fence": round(frames / rounds, 2),
        "engine_frames_per_fence": {t: round((types_after.get(t, 0) - types_before.get(t, 0)) / rounds, 2)
                                    for t in types_after},
        "wakes_per_fence": wakes,
    }


def start_dvm(build, n, mca=""):
    grove = os.path.join(build, "src", "grove")
    env = dict(os.environ, TMPDIR=tempfile.mkdtemp(prefix="grove-wakeups-"))
    for setting in mca.split():
        name, value = setting.split("=", 1)
        env["GROVE_MCA_" + name] = value
    subprocess.run([grove, "start", "--local", str(n), "--daemonize"], env=env, check=True,
                   capture_output=True, timeout=120)
    # Warm-up: first-job costs (registration, connections) are not a fence's.
    client = os.path.join(build, "test", "clients", "pmix_fence_client")
    subprocess.run([grove, "run", "-n", str(n), "--map-by", "node", client, "--rounds", "5"],
                   env=env, check=True, capture_output=True, timeout=300)
    return env


def stop_dvm(build, env):
    grove = os.path.join(build, "src", "grove")
    subprocess.run([grove, "stop"], env=env, capture_output=True, timeout=120)


def summarize(rows):
    keys = ("cpu_per_fence_per_daemon_us", "fence_median_us", "frames_per_fence")
    out = {k: round(statistics.median(r[k] for r in rows if r[k] is not None), 1)
           for k in keys if any(r[k] is not None for r in rows)}
    for part in ("loop", "pmix", "rest"):
        for kind in ("voluntary", "involuntary"):
            out[f"{part}_{kind}"] = round(statistics.median(
                r["switches_per_fence_per_daemon"][part][kind] for r in rows), 2)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--baseline")
    parser.add_argument("--build-mca", default="", help='parameters for the build: "name=value ..."')
    parser.add_argument("--baseline-mca", default="", help="the same for the baseline")
    parser.add_argument("--daemons", default="8 16 32")
    parser.add_argument("--barriers", type=int, default=1000)
    parser.add_argument("--collects", type=int, default=200)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/results/fence_wakeups.json")
    args = parser.parse_args()
    builds = {"build": args.build}
    mca = {"build": args.build_mca, "baseline": args.baseline_mca}
    if args.baseline:
        builds["baseline"] = args.baseline
    results = {name: {} for name in builds}
    for n in (int(x) for x in args.daemons.split()):
        for load, rounds in (("barrier", args.barriers), ("collect64", args.collects)):
            if rounds <= 0:
                continue
            for name in builds:
                results[name].setdefault(f"{n}-{load}", [])
            for _ in range(args.passes):
                for name, build in builds.items():
                    env = start_dvm(build, n, mca[name])
                    try:
                        row = run_load(build, env, n, load, rounds)
                    finally:
                        stop_dvm(build, env)
                    results[name][f"{n}-{load}"].append(row)
                    sw = row["switches_per_fence_per_daemon"]
                    print(f"{name:8s} {n:3d} daemons {load:9s}: median {row['fence_median_us']} us, "
                          f"CPU/fence/daemon {row['cpu_per_fence_per_daemon_us']} us, "
                          f"switches/fence/daemon loop {sw['loop']['voluntary']}+"
                          f"{sw['loop']['involuntary']} pmix {sw['pmix']['voluntary']}+"
                          f"{sw['pmix']['involuntary']} rest {sw['rest']['voluntary']}+"
                          f"{sw['rest']['involuntary']}, frames/fence {row['frames_per_fence']}",
                          flush=True)
                    if row["wakes_per_fence"]:
                        print(f"         wakes per fence: {row['wakes_per_fence']}", flush=True)
    summary = {name: {key: summarize(rows) for key, rows in by_key.items()}
               for name, by_key in results.items()}
    if args.baseline:
        summary["ratio_build_over_baseline"] = {
            key: {k: round(v / summary["baseline"][key][k], 3)
                  for k, v in row.items() if summary["baseline"][key].get(k)}
            for key, row in summary["build"].items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    out = {"benchmark": "fence_wakeups", "commit": commit, "cpus": os.cpu_count(),
           "parameters": {k: v for k, v in mca.items() if k in builds},
           "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "builds": builds, "summary": summary, "rows": results}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    json.dump(out, open(args.out, "w"), indent=1)
    print(json.dumps(summary, indent=1))
    print("wrote", args.out)


if __name__ == "__main__":
    sys.exit(main())
