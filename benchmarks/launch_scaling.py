#!/usr/bin/env python3
"""Launch time and daemon memory against the ranks a daemon hosts.

On a running 2-daemon DVM (the controller and one groved), `grove run -n N
--map-by node` of a rank that says it is up and waits: the time from the
command to every rank up, per rank; each daemon's resident memory while they
all run, against the idle DVM's, per rank it hosts; then the job is killed
and its end waited for. N/2 ranks per daemon, from 100 up.

Prints one line per size and writes benchmarks/results/launch_scaling.json.

Usage: benchmarks/launch_scaling.py [BUILD_DIR] [RESULT.json] [PER_DAEMON,...]
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    out = sys.argv[2] if len(sys.argv) > 2 else "benchmarks/results/launch_scaling.json"
    sizes = [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [
        100, 500, 1000, 2000, 5000]
    grove = os.path.join(build, "src", "grove")
    tmp = tempfile.mkdtemp(prefix="grove-bench-")
    env = dict(os.environ, TMPDIR=tmp)
    uri = os.path.join(tmp, "uri")
    subprocess.run([grove, "start", "--local", "2", "--daemonize", "--report-uri", uri], env=env,
                   check=True, capture_output=True)
    dvm = open(uri).read().strip()
    rows = []
    try:
        status = json.loads(subprocess.run([grove, "status", "--json", "--dvm", dvm], env=env,
                                           check=True, capture_output=True, text=True).stdout)
        pids = [daemon["pid"] for daemon in status["daemons"]]
        idle = [rss_kib(pid) for pid in pids]
        for per_daemon in sizes:
            ranks = 2 * per_daemon
            # Up, then asleep (no CPU) until the job is killed.
            script = "echo up; exec sleep 3600"
            started = time.monotonic()
            run = subprocess.Popen([grove, "run", "--dvm", dvm, "-n", str(ranks), "--map-by",
                                    "node", "--stdin", "none", "sh", "-c", script], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            up = 0
            for line in run.stdout:
                up += line.strip() == "up"
                if up == ranks:
                    break
            all_up = time.monotonic() - started
            running = [rss_kib(pid) for pid in pids]
            jobs = json.loads(subprocess.run([grove, "ps", "--json", "--dvm", dvm], env=env,
                                             check=True, capture_output=True, text=True).stdout)
            for job in (job for job in jobs if job.get("state") == "running"):
                subprocess.run([grove, "kill", "--dvm", dvm, str(job["job"])], env=env,
                               capture_output=True)
            run.stdout.read()
            code = run.wait(timeout=600)
            row = {"ranks_per_daemon": per_daemon, "ranks": ranks, "exit": code,
                   "all_up_s": all_up, "ms_per_rank": 1000 * all_up / ranks,
                   "rss_idle_kib": idle, "rss_running_kib": running,
                   "kib_per_rank": [(r - i) / per_daemon for r, i in zip(running, idle)]}
            rows.append(row)
            print(f"{per_daemon:5d} ranks per daemon: all up in {all_up:6.2f} s "
                  f"({row['ms_per_rank']:.2f} ms per rank); memory per rank hosted: "
                  f"controller {row['kib_per_rank'][0]:.1f} KiB, groved "
                  f"{row['kib_per_rank'][1]:.1f} KiB", flush=True)
    finally:
        subprocess.run([grove, "stop", "--dvm", dvm], env=env, capture_output=True)
    with open(out, "w") as handle:
        json.dump({"benchmark": "launch_scaling", "daemons": 2,
                   "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "rows": rows}, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    main()
