#!/usr/bin/env python3
"""What the flight recorder costs a fence: the same loads on one build with
grpcomm_flight_recorder_size 0 (nothing kept) and at its default, DVMs
alternated per pass so machine noise hits both alike.

For each DVM size a local DVM runs, per setting: BARRIERS back-to-back PMIx
barriers (`pmix_fence_bench --barrier`, one rank per daemon: loop_us per
barrier), COLLECTS collecting fences of 64 bytes (its median), and the
DVM's own barrier benchmark (`grove bench barrier`, its median), and the
daemons' CPU over all of it is read from /proc. With the recorder on,
`grove status --dump` then says how many bytes the recordings hold (so how
many fences the default keeps), and `bench_flight_record` replays that dump
with and without a recorder: the recorder's CPU per engine input, on the
inputs the DVM really had. Times that by the inputs per fence per daemon,
it is the recorder's share of a daemon's CPU per fence, a figure the
machine's noise does not swamp as it does the latencies (on a shared
2-core VM, the same DVM's barrier median varies by a third between runs).

Needs a build configured with -Dbenchmarks=true (pmix_fence_bench).

Usage: benchmarks/flight_recorder_cost.py [--build B] [--daemons "8 16"]
           [--barriers N] [--collects N] [--bench N] [--passes K] [--size 4M]
           [--warmup N] [--out RESULT.json]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HZ = os.sysconf("SC_CLK_TCK")

HERE = os.path.dirname(os.path.abspath(__file__))


def run(argv, env, timeout=600):
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def fence_bench(grove, dvm, env, bench, daemons, extra):
    out = run([grove, "run", "--dvm", dvm, "-n", str(daemons), "--map-by", "node", bench] + extra,
              env)
    line = next(line for line in out.splitlines() if line.startswith("fence_bench"))
    fields = dict(re.findall(r"(\w+)=([^\s]+)", line))
    return float(fields["median_us"]), float(fields["loop_us"]) / float(fields["rounds"])


def cpu_ticks(pids):
    total = 0
    for pid in pids:
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total


def one_pass(build, daemons, size, args):
    """Figures of one DVM: barrier loop and median, 64 B median, bench median,
    and (recorder on) the recordings' bytes and barriers recorded."""
    grove = os.path.join(build, "src", "grove")
    bench = os.path.join(build, "benchmarks", "pmix_fence_bench")
    with tempfile.TemporaryDirectory(prefix="grove-flight-") as work:
        env = dict(os.environ, GROVE_GROVED=os.path.join(build, "src", "groved"), TMPDIR=work)
        uri = os.path.join(work, "uri")
        run([grove, "start", "--local", str(daemons), "--daemonize", "--report-uri", uri, "--mca",
             "grpcomm_flight_recorder_size", size], env, timeout=120)
        dvm = open(uri).read().strip()
        try:
            figures = {}
            status = json.loads(run([grove, "status", "--dvm", dvm, "--json"], env))
            pids = [d["pid"] for d in status["daemons"]]
            if args.warmup:
                # Fills the recorder first: each page it writes the first time
                # is a page fault (about 60 us on this VM; docs/benchmarks.md).
                run([grove, "bench", "--dvm", dvm, "barrier", "--size", "0", "--count",
                     str(args.warmup)], env)
            before = cpu_ticks(pids)
            _, figures["barrier_loop_us"] = fence_bench(
                grove, dvm, env, bench, daemons, ["--barrier", "--rounds", str(args.barriers)])
            figures["collect64_median_us"], _ = fence_bench(
                grove, dvm, env, bench, daemons, ["--bytes", "64", "--rounds", str(args.collects)])
            measured = json.loads(run([grove, "bench", "--dvm", dvm, "barrier", "--size", "0",
                                       "--count", str(args.bench), "--json"], env))
            figures["dvm_barrier_median_us"] = measured["median_us"]
            fences = args.barriers + args.collects + args.bench
            figures["cpu_per_fence_per_daemon_us"] = (
                (cpu_ticks(pids) - before) / HZ * 1e6 / fences / daemons)
            if size != "0":
                dump = os.path.join(work, "dump")
                status = json.loads(run([grove, "status", "--dvm", dvm, "--dump", dump, "--json"],
                                        env))
                figures["recorded_bytes"] = status["flight_dump"]["bytes"]
                if args.warmup:
                    return figures  # the recordings lost their start: no replay
                timing = json.loads(run([os.path.join(build, "benchmarks", "bench_flight_record"),
                                         dump, "10"], env, timeout=1200))
                figures["recorder_ns_per_input"] = timing["recorder_ns_per_input"]
                figures["inputs_per_fence_per_daemon"] = timing["inputs"] / fences / daemons
        finally:
            subprocess.run([grove, "stop", "--dvm", dvm], env=env, capture_output=True, timeout=60)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build-release"))
    parser.add_argument("--daemons", default="8 16")
    parser.add_argument("--barriers", type=int, default=2000)
    parser.add_argument("--collects", type=int, default=300)
    parser.add_argument("--bench", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=0,
                        help="barriers before the timed loads (enough fill the recorder: "
                             "the steady state, not its first pages)")
    parser.add_argument("--size", default="4M", help="the recorder's size when on")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "flight_recorder_cost.json"))
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    sizes = [int(n) for n in args.daemons.split()]
    settings = {"off": "0", "on": args.size}
    samples = {n: {name: [] for name in settings} for n in sizes}
    for p in range(args.passes):
        for n in sizes:
            order = list(settings.items())
            if p % 2:
                order.reverse()
            for name, size in order:
                samples[n][name].append(one_pass(build, n, size, args))
        print(f"pass {p + 1}/{args.passes} done", file=sys.stderr)

    result = {"build": build, "daemons": sizes, "barriers": args.barriers, "warmup": args.warmup,
              "collects": args.collects, "bench": args.bench, "passes": args.passes,
              "recorder_size": args.size, "runs": {}}
    keys = [("barrier_loop_us", "barrier in a loop"), ("collect64_median_us", "64 B fence median"),
            ("dvm_barrier_median_us", "grove bench barrier median")]
    print(f"{'daemons':>7} | {'load':<28} | {'off (us)':>9} | {'on (us)':>9} | on / off")
    for n in sizes:
        entry = {"off": samples[n]["off"], "on": samples[n]["on"]}
        for key, label in keys:
            off = statistics.median(s[key] for s in samples[n]["off"])
            on = statistics.median(s[key] for s in samples[n]["on"])
            entry[key + "_ratio"] = on / off
            print(f"{n:>7} | {label:<28} | {off:>9.1f} | {on:>9.1f} | {on / off:.3f}")
        cpu = {name: statistics.median(s["cpu_per_fence_per_daemon_us"] for s in samples[n][name])
               for name in settings}
        entry["cpu_per_fence_per_daemon_us"] = cpu
        print(f"{n:>7} | {'CPU per fence per daemon':<28} | {cpu['off']:>9.1f} | {cpu['on']:>9.1f} | "
              f"{cpu['on'] / cpu['off']:.3f}")
        if not args.warmup:
            per_input = statistics.median(s["recorder_ns_per_input"] for s in samples[n]["on"])
            inputs = statistics.median(s["inputs_per_fence_per_daemon"] for s in samples[n]["on"])
            share = per_input * inputs / 1000 / cpu["off"]
            entry.update(recorder_ns_per_input=per_input, inputs_per_fence_per_daemon=inputs,
                         recorder_share_of_cpu=share)
            print(f"{n:>7} | recorder: {per_input:.0f} ns per input x {inputs:.2f} inputs per "
                  f"fence per daemon = {per_input * inputs / 1000:.2f} us, {100 * share:.2f}% of "
                  f"a daemon's CPU per fence")
        recorded = statistics.median(s["recorded_bytes"] for s in samples[n]["on"])
        # With a warm-up the recordings may hold only the newest fences.
        fences = args.barriers + args.collects + args.bench + args.warmup
        per_fence = recorded / n / fences
        entry["recorded_bytes_per_daemon_per_fence"] = per_fence
        print(f"{n:>7} | recorded: {per_fence:.0f} bytes per daemon per fence (all loads"
              f"{', at least' if args.warmup else ''}); "
              f"{args.size} holds about {parse_size(args.size) / per_fence:.0f} fences")
        result["runs"][str(n)] = entry
    result["machine"] = {"cpus": os.cpu_count(), "load": os.getloadavg()}
    result["commit"] = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as out:
        json.dump(result, out, indent=1)
    print(f"wrote {args.out}")


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1:].upper() in units:
        return float(text[:-1]) * units[text[-1].upper()]
    return float(text)


if __name__ == "__main__":
    main()
