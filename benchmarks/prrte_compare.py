#!/usr/bin/env python3
"""grove against PRRTE, side by side on one namespace swarm (issues 12, 14).

Brings up one swarm (test/swarm/swarm.py, one sshd per host), runs every
controller on node0 with a hostfile of node1..nodeN (`slots=1` each; both
launch flat, their default radix 64 being above N), and measures grove and
PRRTE on the same hosts, alternating which goes first:

  ssh floor  node0 runs `ssh nodeI true` to all N hosts at once: the
             logins that any ssh launch pays, for reference.
  start      `grove start --hostfile H --daemonize` and `prte --daemonize
             --hostfile H`: both return once every daemon is up (prte's
             parent waits for the DVM's "ready" byte on a pipe). Wall time.
  run        `grove run -n N hostname` and `prun -n N hostname` on that DVM:
             time to the last output line and to exit (prun can stall).
  fence      one job of benchmarks/pmix_fence_bench per put size, one rank
             per host: collecting PMIx_Fence with a fixed-size put, timed in
             the client, median over the rounds (rank 0 reports it); then a
             barrier job (PMIx_Fence without data, median of --barrier-rounds)
             and a sequence job (--sequential barriers back to back, the
             loop's wall time divided by their count). The
             same binary and the same libpmix (Debian's 4.2) under both: the
             job runs `env -u LD_LIBRARY_PATH CLIENT`, as PRRTE's daemons
             export PREFIX/lib, whose openpmix 7 has the same soname. One
             more PRRTE job per size keeps that LD_LIBRARY_PATH (the client
             then runs on PRRTE's own libpmix); --no-native-client skips it.

A job that fails is recorded and run again (three tries); if the DVM's
controller is gone with it, the death is counted (`dvm_deaths`), what is left
of that DVM is killed, and a new DVM is started on the same hosts.

Every DVM is stopped after its measurements (`grove stop`, `pterm`); then
every runtime process left in the swarm is waited for and, after --grace
seconds, killed by pid and recorded. The swarm is torn down on every exit,
Ctrl-C and SIGTERM included. Needs root, openssh-server, a grove build with
-Dbenchmarks=true and a PRRTE install (../shared/anchors/build-prrte.sh).

Usage: benchmarks/prrte_compare.py [--build DIR] [--prrte-prefix DIR]
           [--hosts 4,8,16,32] [--rounds 30] [--starts 5] [--out RESULT.json]
benchmarks/vs_prrte.sh builds both runtimes first and runs this.
"""
import argparse
import glob
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SWARM = os.path.join(ROOT, "test", "swarm", "swarm.py")
ANCHORS = os.path.join(ROOT, "..", "shared", "anchors")
PY = "/usr/bin/python3"
# Processes a measurement may leave in the swarm (comm is cut at 15 chars).
RUNTIME_COMMS = {"grove", "groved", "prte", "prted", "prun", "pterm", "prterun", "ssh",
                 "hostname", "pmix_fence_benc", "env"}
FENCE_LINE = re.compile(r"fence_bench bytes=(\d+) barrier=(\d) ranks=(\d+) local_size=(\d+) "
                        r"rounds=(\d+) median_us=([\d.]+) mean_us=([\d.]+) min_us=([\d.]+) "
                        r'max_us=([\d.]+) loop_us=([\d.]+) pmix="([^"]*)" samples_us=([\d.,]+)')
# The controller's process name: while none is left in the swarm, the DVM is dead.
CONTROLLER_COMM = {"grove": "grove", "grove_before": "grove", "prrte": "prte"}


class BenchError(Exception):
    pass


def log(message):
    print(message, file=sys.stderr, flush=True)


class Swarm:
    """The hosts of test/swarm/swarm.py, entered with nsenter directly (no
    Python start per command, so no fixed cost is added to what is timed)."""

    def __init__(self, work):
        self.work = work
        self.anchors = {}

    def up(self, hosts):
        subprocess.run([PY, SWARM, "up", self.work, "--hosts", str(hosts), "--timeout", "120"],
                       check=True, capture_output=True, text=True, timeout=300)
        listing = subprocess.run([PY, SWARM, "list", self.work], check=True, capture_output=True,
                                 text=True).stdout
        for line in listing.splitlines():
            name, _, anchor = line.split()
            self.anchors[name] = int(anchor)

    def down(self):
        subprocess.run([PY, SWARM, "down", self.work], capture_output=True, timeout=120)

    def argv(self, host, argv):
        return ["nsenter", "-t", str(self.anchors[host]), "-n", "-u", "-m",
                "--wd=" + self.work, "--", *argv]

    def runtime_procs(self):
        """[(pid, comm, cmdline)] of runtime processes in the swarm's namespaces."""
        keys = set()
        for anchor in self.anchors.values():
            try:
                keys.add(os.stat(f"/proc/{anchor}/ns/net").st_ino)
            except OSError:
                pass
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                if os.stat(f"/proc/{entry}/ns/net").st_ino not in keys:
                    continue
                with open(f"/proc/{entry}/comm") as handle:
                    comm = handle.read().strip()
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{entry}/stat") as handle:
                    state = handle.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if comm in RUNTIME_COMMS and state != "Z":
                found.append((int(entry), comm, cmdline.strip()))
        return found

    def reap(self, grace, what, leftovers):
        """Waits up to `grace` s for the swarm's runtime processes to end,
        then SIGKILLs the rest by pid and records them. Returns the wait."""
        started = time.monotonic()
        while time.monotonic() - started < grace:
            if not self.runtime_procs():
                return time.monotonic() - started
            time.sleep(0.05)
        procs = self.runtime_procs()
        for pid, comm, cmdline in procs:
            leftovers.append({"after": what, "pid": pid, "comm": comm, "cmdline": cmdline[:200]})
            log(f"  left running after {what}: {pid} {cmdline[:100]} (killed)")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while self.runtime_procs() and time.monotonic() < deadline:
            time.sleep(0.05)
        return time.monotonic() - started


def timed_job(argv, env, timeout, cwd):
    """Runs argv, timestamping stdout lines. Returns (lines, s to the last
    line, s to exit, stderr). A job past its timeout is killed."""
    errors = tempfile.TemporaryFile()
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=errors)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    lines, last = [], None
    try:
        for raw in iter(proc.stdout.readline, b""):
            last = time.monotonic() - started
            lines.append(raw.decode(errors="replace").rstrip("\n"))
        status = proc.wait()
        done = time.monotonic() - started
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    errors.seek(0)
    stderr = errors.read().decode(errors="replace")
    errors.close()
    if status != 0:
        raise BenchError(f"{' '.join(argv[-12:])} exited {status} after {done:.1f} s:\n"
                         + "\n".join(lines[-10:]) + "\n" + stderr[-2000:])
    return lines, last, done, stderr


class Runtime:
    """One runtime's commands; subclasses give the argv."""

    name = ""

    def __init__(self, swarm, env):
        self.swarm, self.env = swarm, env
        self.uri = os.path.join(swarm.work, f"{self.name}.uri")

    def start(self, hostfile):
        if os.path.exists(self.uri):
            os.unlink(self.uri)
        started = time.monotonic()
        try:
            result = subprocess.run(self.swarm.argv("node0", self.start_argv(hostfile)),
                                    env=self.env, capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired as error:
            raise BenchError(f"{self.name} start did not return in 180 s") from error
        took = time.monotonic() - started
        if result.returncode != 0 or not os.path.exists(self.uri):
            raise BenchError(f"{self.name} start failed ({result.returncode}):\n"
                             f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
        return took

    def alive(self):
        """Whether the DVM's controller is still running (checked between jobs)."""
        return any(comm == CONTROLLER_COMM[self.name] for _, comm, _ in self.swarm.runtime_procs())

    def job(self, ranks, cmd, timeout):
        argv = self.swarm.argv("node0", self.run_argv(ranks, cmd))
        return timed_job(argv, self.env, timeout, self.swarm.work)

    def stop(self):
        started = time.monotonic()
        try:
            result = subprocess.run(self.swarm.argv("node0", self.stop_argv()), env=self.env,
                                    capture_output=True, text=True, timeout=60)
            if result.returncode != 0:
                log(f"  {self.name} stop exited {result.returncode}: {result.stderr[-300:]}")
        except subprocess.TimeoutExpired:
            log(f"  {self.name} stop did not return in 60 s (its processes are killed)")
        return time.monotonic() - started


class Grove(Runtime):
    name = "grove"

    def __init__(self, swarm, env, build, name="grove"):
        self.name = name
        super().__init__(swarm, env)
        self.bin = os.path.join(build, "src", "grove")

    def start_argv(self, hostfile):
        # 32 ssh logins at once take over a minute on a 2-core VM (root's
        # .bashrc runs `pyenv init` for each): more than the 60 s default.
        return [self.bin, "start", "--hostfile", hostfile, "--mca", "plm_ssh_agent",
                f"ssh -F {self.swarm.work}/ssh_config", "--mca", "daemon_report_timeout_ms",
                "170000", "--daemonize", "--report-uri", self.uri]

    def run_argv(self, ranks, cmd):
        dvm = open(self.uri).read().strip()
        return [self.bin, "run", "--dvm", dvm, "-n", str(ranks), "--map-by", "node", *cmd]

    def stop_argv(self):
        return [self.bin, "stop", "--dvm", open(self.uri).read().strip()]


class Prrte(Runtime):
    name = "prrte"

    def __init__(self, swarm, env, prefix):
        super().__init__(swarm, env)
        self.bin = os.path.join(prefix, "bin")

    def start_argv(self, hostfile):
        return [f"{self.bin}/prte", "--allow-run-as-root", "--daemonize", "--report-uri", self.uri,
                "--hostfile", hostfile, "--prtemca", "plm_ssh_agent",
                f"ssh -F {self.swarm.work}/ssh_config"]

    def run_argv(self, ranks, cmd):
        return [f"{self.bin}/prun", "--allow-run-as-root", "--dvm-uri", f"file:{self.uri}", "-n",
                str(ranks), "--map-by", "node", "--bind-to", "none", *cmd]

    def stop_argv(self):
        return [f"{self.bin}/pterm", "--allow-run-as-root", "--dvm-uri", f"file:{self.uri}"]


def ssh_floor(swarm, hosts):
    """Seconds for node0 to run `ssh HOST true` on every host at once: the
    logins that any ssh launch pays (both runtimes launch flat here)."""
    logins = " ".join(f"ssh -F {swarm.work}/ssh_config node{i} true &"
                      for i in range(1, hosts + 1))
    started = time.monotonic()
    subprocess.run(swarm.argv("node0", ["sh", "-c", logins + " wait"]), check=True,
                   capture_output=True, timeout=120)
    return time.monotonic() - started


def hostname_run(runtime, hosts):
    lines, last, done, _ = runtime.job(hosts, ["hostname"], 120)
    expected = sorted(f"node{i}" for i in range(1, hosts + 1))
    if sorted(lines) != expected:
        raise BenchError(f"{runtime.name} run -n {hosts} hostname printed {lines}")
    return last, done


def make_loads(args):
    """The fence jobs of one DVM: a collecting fence per put size, a barrier
    (each timed alone, median) and a sequence of back-to-back barriers (the
    loop's wall time over the count: seed 004's per-barrier cost)."""
    loads = [{"name": f"fence_{size}B", "label": f"fence {size} B",
              "argv": ["--bytes", str(size), "--rounds", str(args.rounds)], "figure": "median"}
             for size in args.sizes]
    if args.barrier_rounds:
        loads.append({"name": "barrier", "label": "barrier",
                      "argv": ["--barrier", "--rounds", str(args.barrier_rounds)],
                      "figure": "median"})
    if args.sequential:
        loads.append({"name": "barriers_seq", "label": f"{args.sequential} barriers in a row, each",
                      "argv": ["--barrier", "--rounds", str(args.sequential)], "figure": "loop"})
    return loads


def fence_job(runtime, hosts, args, load, native):
    """One fence job; its figure is the median round or, for a sequence, the
    loop's wall time per barrier (microseconds)."""
    cmd = [args.client, *load["argv"]]
    if not native:
        cmd = ["/usr/bin/env", "-u", "LD_LIBRARY_PATH", *cmd]
    lines, _, done, _ = runtime.job(hosts, cmd, 600)
    match = next((m for m in map(FENCE_LINE.search, lines) if m), None)
    if not match:
        raise BenchError(f"no fence_bench line in {lines[-5:]}")
    if int(match[3]) != hosts or int(match[4]) != 1:
        raise BenchError(f"fence job not one rank per host: {match[0]}")
    rounds, loop_us = int(match[5]), float(match[10])
    figure = float(match[6]) if load["figure"] == "median" else loop_us / rounds
    return {"figure_us": figure, "median_us": float(match[6]), "mean_us": float(match[7]),
            "min_us": float(match[8]), "max_us": float(match[9]), "loop_us": loop_us,
            "rounds": rounds, "pmix": match[11],
            "samples_us": [float(v) for v in match[12].split(",")][:200], "job_s": done}


def with_restarts(rt, what, hostfile, data, failures, step, tries=3):
    """Runs step(); a failure is recorded and the step tried again (at most
    `tries` times in all). If the DVM died with it, the death is counted and
    a new DVM started on the same hosts first."""
    for attempt in range(tries):
        try:
            return step()
        except BenchError as error:
            failures.append({"runtime": rt.name, "what": what, "error": str(error)[-1500:]})
            log(f"  {rt.name}: {what} failed (attempt {attempt + 1}): {str(error)[:300]}")
            if attempt + 1 == tries or rt.alive():
                continue
            remains = []
            rt.swarm.reap(2.0, f"{rt.name}'s dead DVM", remains)
            data["dvm_deaths"].append({"during": what, "error": str(error)[-500:],
                                       "remains_killed": remains})
            log(f"  {rt.name}'s DVM died during {what}: starting a new one")
            if os.path.exists(rt.uri):
                os.unlink(rt.uri)
            data["restart_s"].append(rt.start(hostfile))
    raise BenchError(f"{rt.name}: {what} failed {tries} times")


def git(*args):
    try:
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def machine_info(build, prefix):
    cpu = ""
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next((l.split(":", 1)[1].strip() for l in handle if l.startswith("model name")),
                       "")
    except OSError:
        pass
    buildtype = None
    try:
        with open(os.path.join(build, "meson-info", "intro-buildoptions.json")) as handle:
            buildtype = next(o["value"] for o in json.load(handle) if o["name"] == "buildtype")
    except (OSError, StopIteration, ValueError):
        pass
    version = subprocess.run([os.path.join(prefix, "bin", "prte"), "--version"],
                             capture_output=True, text=True).stdout.strip().splitlines()
    anchors = sorted(f for f in os.listdir(ANCHORS) if f.endswith(".tar.gz")) \
        if os.path.isdir(ANCHORS) else []
    return {"uname": " ".join(platform.uname()), "cpus": os.cpu_count(), "cpu_model": cpu,
            "loadavg_at_start": os.getloadavg(),
            "grove": {"commit": git("rev-parse", "HEAD"),
                      "modified_files": (git("status", "--porcelain", "--untracked-files=no")
                                         or "").splitlines(),
                      "build": build, "buildtype": buildtype},
            "prrte": {"prefix": prefix, "version": version[0] if version else None,
                      "source_tarballs": anchors}}


def median(values):
    return statistics.median(values) if values else None


def summarize(samples, loads):
    """Medians per runtime and ratios PRRTE / grove (above 1: grove is faster)."""
    out = {}
    for hosts, per in samples.items():
        row = {}
        for name in [n for n in per if n in CONTROLLER_COMM]:
            data = per[name]
            row[name] = {"start_s": median(data["start_s"]),
                         "run_last_output_s": median(data["run_last_output_s"]),
                         "run_exit_s": median(data["run_exit_s"]),
                         "stop_s": median(data["stop_s"]),
                         "drain_s": median(data["drain_s"]),
                         "dvm_deaths": len(data["dvm_deaths"]),
                         "runs_exiting_1s_after_last_output": sum(
                             done - last > 1 for last, done in zip(data["run_last_output_s"],
                                                                   data["run_exit_s"])),
                         "runs": len(data["run_exit_s"]),
                         "fence_us": {load: median([job["figure_us"] for job in jobs])
                                      for load, jobs in data["fence"].items()}}
            if any(data["fence_native"].values()):
                row[name]["fence_native_client_us"] = {
                    load: median([job["figure_us"] for job in jobs])
                    for load, jobs in data["fence_native"].items()}
        row["ssh_floor_s"] = median(per["ssh_floor_s"])
        ratios = {key: ratio(row["prrte"][key], row["grove"][key])
                  for key in ("start_s", "run_last_output_s", "run_exit_s")}
        for load in loads:
            name = load["name"]
            grove_us = row["grove"]["fence_us"][name]
            ratios[name] = ratio(row["prrte"]["fence_us"][name], grove_us)
            native = row["prrte"].get("fence_native_client_us")
            if native:
                ratios[f"{name}_prrte_native_client"] = ratio(native[name], grove_us)
        row["ratio_prrte_over_grove"] = ratios
        if "grove_before" in row:
            # The same measures for the baseline build: how much this build gained.
            keys = ["start_s", "run_last_output_s", "run_exit_s"]
            row["ratio_before_over_grove"] = {
                key: ratio(row["grove_before"][key], row["grove"][key]) for key in keys}
            row["ratio_prrte_over_grove_before"] = {
                key: ratio(row["prrte"][key], row["grove_before"][key]) for key in keys}
            for load in loads:
                name = load["name"]
                before = row["grove_before"]["fence_us"][name]
                row["ratio_before_over_grove"][name] = ratio(before,
                                                             row["grove"]["fence_us"][name])
                row["ratio_prrte_over_grove_before"][name] = ratio(
                    row["prrte"]["fence_us"][name], before)
        out[hosts] = row
    return out


def fmt(value, digits=0, scale=1):
    return "-" if value is None else f"{value * scale:.{digits}f}"


def ratio(a, b):
    return None if a is None or b is None else a / b


def print_table(summary, loads):
    """Every figure: one row per host count and measure."""
    print("| hosts | what | grove | PRRTE | PRRTE / grove |\n|---|---|---:|---:|---:|")
    for hosts, row in summary.items():
        g, p, r = row["grove"], row["prrte"], row["ratio_prrte_over_grove"]
        floor = row["ssh_floor_s"]
        print(f"| {hosts} | ssh floor ({hosts} logins at once) | {fmt(floor, 0, 1000)} ms | "
              f"{fmt(floor, 0, 1000)} ms | |")
        cells = [("DVM start", "start_s", 1000, "ms"),
                 ("run: last output", "run_last_output_s", 1000, "ms"),
                 ("run: exit", "run_exit_s", 1000, "ms")]
        for label, key, scale, unit in cells:
            print(f"| {hosts} | {label} | {fmt(g[key], 0, scale)} {unit} | "
                  f"{fmt(p[key], 0, scale)} {unit} | {fmt(r[key], 2)} |")
        for load in loads:
            name = load["name"]
            print(f"| {hosts} | {load['label']} | {fmt(g['fence_us'][name])} us | "
                  f"{fmt(p['fence_us'][name])} us | {fmt(r[name], 2)} |")
        for load in loads if "fence_native_client_us" in p else []:
            name = load["name"]
            print(f"| {hosts} | {load['label']}, PRRTE's libpmix in the client | "
                  f"{fmt(g['fence_us'][name])} us | {fmt(p['fence_native_client_us'][name])} us "
                  f"| {fmt(r[f'{name}_prrte_native_client'], 2)} |")
        print(f"| {hosts} | DVM deaths (restarted) | {g['dvm_deaths']} | {p['dvm_deaths']} | |")


def print_ratios(summary, loads, key="ratio_prrte_over_grove",
                 title="PRRTE / grove (above 1: grove is faster)", native=True):
    """The ratios alone: one row per measure, one column per host count."""
    hosts = [h for h in summary if key in summary[h]]
    if not hosts:
        return
    print(f"\n{title}\n")
    print("| measure | " + " | ".join(f"{h} hosts" for h in hosts) + " |")
    print("|---|" + "---:|" * len(hosts))
    rows = [("DVM start", "start_s"), ("run: last output", "run_last_output_s"),
            ("run: exit", "run_exit_s")]
    rows += [(load["label"], load["name"]) for load in loads]
    if native and any("fence_native_client_us" in summary[h]["prrte"] for h in hosts):
        rows += [(f"{load['label']}, PRRTE's own libpmix", f"{load['name']}_prrte_native_client")
                 for load in loads]
    for label, name in rows:
        cells = [fmt(summary[h][key].get(name), 2) for h in hosts]
        print(f"| {label} | " + " | ".join(cells) + " |")
    if key == "ratio_prrte_over_grove":
        deaths = [f"{summary[h]['grove']['dvm_deaths']} / {summary[h]['prrte']['dvm_deaths']}"
                  for h in hosts]
        print("| DVM deaths, grove / PRRTE | " + " | ".join(deaths) + " |")


def session(args, rt, hosts, rep, data, hostfile, failures):
    """One DVM of `rt`: its start, the hostname runs and the fence jobs."""
    took = rt.start(hostfile)
    data["start_s"].append(took)
    log(f"{hosts} hosts, {rt.name}, start {rep + 1}/{args.starts}: {took:.3f} s")
    for _ in range(args.runs):
        last, done = with_restarts(rt, f"run -n {hosts} hostname", hostfile, data, failures,
                                   lambda: hostname_run(rt, hosts))
        data["run_last_output_s"].append(last)
        data["run_exit_s"].append(done)
        log(f"  run -n {hosts} hostname: last output {last:.3f} s, exit {done:.3f} s")
    if rep >= args.fence_starts:
        return
    variants = [False] + ([True] if rt.name == "prrte" and args.native else [])
    for load in args.loads:
        for native in variants:
            job = with_restarts(rt, load["label"] + (" (own libpmix)" if native else ""),
                                hostfile, data, failures,
                                lambda: fence_job(rt, hosts, args, load, native))
            data["fence_native" if native else "fence"][load["name"]].append(job)
            log(f"  {load['label']}: {job['figure_us']:.0f} us "
                f"({job['pmix'].split(' (')[0]})")


def measure(args, swarm, runtimes, leftovers, failures, samples):
    """Fills `samples` as it goes: an interrupted run keeps what it measured."""
    for hosts in args.hosts:
        hostfile = os.path.join(swarm.work, f"hosts-{hosts}")
        with open(hostfile, "w") as handle:
            handle.writelines(f"node{i} slots=1\n" for i in range(1, hosts + 1))
        per = {rt.name: {"start_s": [], "run_last_output_s": [], "run_exit_s": [], "stop_s": [],
                         "drain_s": [], "dvm_deaths": [], "restart_s": [],
                         "fence": {load["name"]: [] for load in args.loads},
                         "fence_native": {load["name"]: [] for load in args.loads}}
               for rt in runtimes}
        per["loadavg"], per["ssh_floor_s"] = [], []
        samples[hosts] = per
        for rep in range(args.starts):
            per["ssh_floor_s"].append(ssh_floor(swarm, hosts))
            # Each runtime goes first in turn.
            shift = rep % len(runtimes)
            for rt in runtimes[shift:] + runtimes[:shift]:
                data = per[rt.name]
                try:
                    session(args, rt, hosts, rep, data, hostfile, failures)
                except BenchError as error:
                    failures.append({"runtime": rt.name, "hosts": hosts, "repeat": rep,
                                     "error": str(error)[-1500:]})
                    log(f"  {rt.name} at {hosts} hosts failed: {str(error)[:500]}")
                finally:
                    if os.path.exists(rt.uri):
                        data["stop_s"].append(rt.stop())
                        os.unlink(rt.uri)
                    data["drain_s"].append(
                        swarm.reap(args.grace, f"{rt.name} at {hosts} hosts", leftovers))
            per["loadavg"].append(os.getloadavg())


def parse_args():
    parser = argparse.ArgumentParser(
        description=__doc__,
        epilog="Writes a table to stdout, progress to stderr and RESULT as JSON.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", help="grove build dir with -Dbenchmarks=true "
                        "(default: build-release if built, else build)")
    parser.add_argument("--baseline", metavar="BUILD",
                        help="a second grove build (same options) measured alongside as "
                        "'grove_before', for before/after ratios in one run")
    parser.add_argument("--prrte-prefix", default="/work/prrte-install",
                        help="PRRTE install prefix (default: %(default)s)")
    parser.add_argument("--hosts", default="4,8,16,32",
                        help="host counts (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=30,
                        help="timed fences per fence job (default: %(default)s)")
    parser.add_argument("--sizes", default="64,4096",
                        help="bytes put per rank per fence (default: %(default)s)")
    parser.add_argument("--barrier-rounds", type=int, default=30,
                        help="timed barriers (no data) per barrier job; 0 skips the job "
                        "(default: %(default)s)")
    parser.add_argument("--sequential", type=int, default=1000,
                        help="back-to-back barriers in the sequence job, timed as a whole; "
                        "0 skips it (default: %(default)s)")
    parser.add_argument("--starts", type=int, default=5,
                        help="DVM starts per runtime and host count (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=3,
                        help="`run -n N hostname` jobs per DVM (default: %(default)s)")
    parser.add_argument("--fence-starts", type=int, default=5,
                        help="DVMs (of --starts) that also run the fence jobs (default: "
                        "%(default)s)")
    parser.add_argument("--no-native-client", dest="native", action="store_false",
                        help="skip the extra PRRTE fence jobs whose client loads PRRTE's own "
                        "libpmix (PMIx 7) instead of Debian's 4.2")
    parser.add_argument("--grace", type=float, default=10.0,
                        help="seconds a stopped DVM's processes get to leave before they "
                        "are killed and reported (default: %(default)s)")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "prrte_compare.json"),
                        help="JSON result (default: benchmarks/results/prrte_compare.json)")
    args = parser.parse_args()
    args.hosts = [int(v) for v in args.hosts.split(",")]
    args.sizes = [int(v) for v in args.sizes.split(",")] if args.sizes else []
    args.loads = make_loads(args)
    if args.build is None:
        release = os.path.join(ROOT, "build-release")
        args.build = release if os.path.exists(os.path.join(release, "src", "grove")) else \
            os.path.join(ROOT, "build")
    args.build = os.path.abspath(args.build)
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
        for p in ("grove", "groved"):
            if not os.access(os.path.join(args.baseline, "src", p), os.X_OK):
                parser.error(f"--baseline {args.baseline}: no src/{p} there")
    args.prrte_prefix = os.path.abspath(args.prrte_prefix)
    args.client = os.path.join(args.build, "benchmarks", "pmix_fence_bench")
    missing = [p for p in (os.path.join(args.build, "src", "grove"),
                           os.path.join(args.build, "src", "groved"), args.client) if
               not os.access(p, os.X_OK)]
    if missing:
        parser.error(f"missing {', '.join(missing)}: build grove with "
                     f"`meson setup {args.build} -Dbenchmarks=true && ninja -C {args.build}`")
    tools = [os.path.join(args.prrte_prefix, "bin", t) for t in ("prte", "prted", "prun", "pterm")]
    if not all(os.access(t, os.X_OK) for t in tools):
        parser.error(f"no PRRTE install at {args.prrte_prefix} (need bin/prte, prted, prun, "
                     f"pterm): build one with `../shared/anchors/build-prrte.sh "
                     f"{args.prrte_prefix}` or pass --prrte-prefix")
    if os.geteuid() != 0:
        parser.error("needs root (the namespace swarm)")
    return args


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def keep_logs(work, out):
    """Copies grove's DVM logs (every daemon's lines, ssh-started ones
    included, reach the controller's) out of the swarm before it is torn
    down, so a failed job can be explained: RESULT's directory/logs-TIME/."""
    logs = glob.glob(os.path.join(work, "grove-*", "dvm-*.log"))
    if not logs:
        return None
    where = os.path.join(os.path.dirname(os.path.abspath(out)),
                         "logs-" + time.strftime("%Y%m%dT%H%M%S", time.gmtime()))
    os.makedirs(where, exist_ok=True)
    for path in logs:
        shutil.copy(path, where)
    log(f"a job failed: grove's DVM logs kept in {where}")
    return where


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)
    work = tempfile.mkdtemp(prefix="grove-prrte-swarm-")
    swarm = Swarm(work)
    base = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH",)}
    base["TMPDIR"] = work
    grove_env = dict(base, GROVE_GROVED=os.path.join(args.build, "src", "groved"))
    prefix = args.prrte_prefix
    prrte_env = dict(base, PATH=f"{prefix}/bin:{base.get('PATH', '/usr/bin:/bin')}",
                     LD_LIBRARY_PATH=f"{prefix}/lib", PRTE_PREFIX=prefix)
    runtimes = [Grove(swarm, grove_env, args.build), Prrte(swarm, prrte_env, prefix)]
    if args.baseline:
        runtimes.append(Grove(swarm, dict(base, GROVE_GROVED=os.path.join(
            args.baseline, "src", "groved")), args.baseline, "grove_before"))
    info = machine_info(args.build, prefix)
    leftovers, failures, samples = [], [], {}
    interrupted = False
    try:
        swarm.up(max(args.hosts) + 1)
        log(f"swarm of {max(args.hosts) + 1} hosts up in {work}")
        measure(args, swarm, runtimes, leftovers, failures, samples)
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: writing what was measured")
    except (OSError, subprocess.SubprocessError) as error:
        # An ssh floor login that fails, say: what was measured is still written.
        interrupted = True
        failures.append({"runtime": None, "what": "the run", "error": repr(error)[-1500:]})
        log(f"error: {error}: writing what was measured")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the teardown finish
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for pid, _, _ in swarm.runtime_procs():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        kept = keep_logs(work, args.out) if failures or interrupted else None
        swarm.down()
        shutil.rmtree(work, ignore_errors=True)
    summary = summarize(samples, args.loads)
    jobs = min(args.fence_starts, args.starts)
    print(f"Medians; PRRTE / grove above 1 means grove is faster. Controller on node0 plus "
          f"N hosts, one rank per host; {args.starts} starts, {args.runs} runs per start, "
          f"fence: median of {args.rounds} rounds per job, median over {jobs} jobs.")
    print_table(summary, args.loads)
    print_ratios(summary, args.loads)
    print_ratios(summary, args.loads, "ratio_prrte_over_grove_before",
                 "PRRTE / grove before (the --baseline build)", native=False)
    print_ratios(summary, args.loads, "ratio_before_over_grove",
                 "grove before / grove (above 1: this build is faster)", native=False)
    info["loadavg_at_end"] = os.getloadavg()
    if args.baseline:
        # The baseline's source tree, not the directory its build sits in.
        source = args.baseline
        try:
            with open(os.path.join(args.baseline, "meson-info", "meson-info.json")) as handle:
                source = json.load(handle)["directories"]["source"]
        except (OSError, KeyError, ValueError):
            pass
        head = subprocess.run(["git", "-C", source, "rev-parse", "HEAD"],
                              capture_output=True, text=True)
        info["grove_before"] = {"build": args.baseline,
                                "commit": head.stdout.strip() or None}
    result = {"benchmark": "prrte_compare", "interrupted": interrupted,
              "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "settings": {k: getattr(args, k) for k in ("hosts", "sizes", "rounds",
                                                          "barrier_rounds", "sequential",
                                                          "starts", "runs", "fence_starts",
                                                          "grace", "loads", "baseline")},
              "machine": info, "summary": {str(h): row for h, row in summary.items()},
              "samples": {str(h): per for h, per in samples.items()}, "leftovers": leftovers,
              "failed_jobs": failures, "kept_logs": kept}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")
    log(f"wrote {args.out}")
    return 130 if interrupted else 1 if leftovers else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted: swarm torn down")
        sys.exit(130)
    except BenchError as error:
        log(f"error: {error}")
        sys.exit(1)
