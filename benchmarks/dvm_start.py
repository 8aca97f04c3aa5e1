#!/usr/bin/env python3
"""DVM start time across hosts: `grove start --hostfile H --daemonize` until
it returns ready, on a namespace swarm (test/swarm/swarm.py, one sshd per
host), for 4, 8, 16 and 32 hosts: ssh flat (every daemon from the
controller), ssh tree spawn at radix 4 and 2 (radix 64, the default, is flat
up to 64 hosts), and the same number of daemons forked locally. Modes are
interleaved per repeat so machine noise hits them alike; medians reported.
Needs root and openssh-server.

Usage: benchmarks/dvm_start.py [BUILD_DIR] [RESULT.json] [REPEATS]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SWARM = os.path.join(HERE, "..", "test", "swarm", "swarm.py")
PY = "/usr/bin/python3"
SIZES = [4, 8, 16, 32]
MODES = {
    "local": [],
    "ssh-flat": ["--mca", "plm_ssh_no_tree_spawn", "true"],
    "ssh-tree-radix4": ["--mca", "rml_base_radix", "4"],
    "ssh-tree-radix2": ["--mca", "rml_base_radix", "2"],
}


def swarm(*args, **kwargs):
    return subprocess.run([PY, SWARM, *args], check=True, capture_output=True, text=True,
                          **kwargs)


def start_stop(work, grove, hosts, mode, env):
    """Seconds from `grove start` to ready; the DVM is stopped after."""
    uri = os.path.join(work, "uri")
    if mode == "local":
        argv = [grove, "start", "--local", str(hosts + 1)]
    else:
        hostfile = os.path.join(work, f"hosts-{hosts}")
        argv = [grove, "start", "--hostfile", hostfile, "--mca", "plm_ssh_agent",
                f"ssh -F {work}/ssh_config", *MODES[mode]]
    argv += ["--daemonize", "--report-uri", uri]
    started = time.monotonic()
    subprocess.run([PY, SWARM, "exec", work, "node0", "--", *argv], env=env, check=True,
                   capture_output=True, timeout=300)
    took = time.monotonic() - started
    dvm = open(uri).read().strip()
    subprocess.run([PY, SWARM, "exec", work, "node0", "--", grove, "stop", "--dvm", dvm], env=env,
                   check=True, capture_output=True, timeout=120)
    return took


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    out = sys.argv[2] if len(sys.argv) > 2 else "benchmarks/results/dvm_start.json"
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    grove = os.path.join(build, "src", "grove")
    work = tempfile.mkdtemp(prefix="grove-bench-swarm-")
    env = dict(os.environ, TMPDIR=work, GROVE_GROVED=os.path.join(build, "src", "groved"))
    swarm("up", work, "--hosts", str(max(SIZES) + 1), "--timeout", "120")
    times = {mode: {n: [] for n in SIZES} for mode in MODES}
    try:
        for n in SIZES:
            with open(os.path.join(work, f"hosts-{n}"), "w") as handle:
                handle.writelines(f"node{i} slots=2\n" for i in range(1, n + 1))
        for _ in range(repeats):
            for n in SIZES:
                for mode in MODES:
                    times[mode][n].append(start_stop(work, grove, n, mode, env))
    finally:
        swarm("down", work)
    medians = {mode: {n: statistics.median(times[mode][n]) for n in SIZES} for mode in MODES}
    print(f"DVM start to ready, median of {repeats} (controller on node0 plus N hosts):")
    print("| hosts | " + " | ".join(MODES) + " | flat / tree-radix2 |")
    print("|---|" + "---|" * (len(MODES) + 1))
    for n in SIZES:
        cells = " | ".join(f"{medians[mode][n] * 1000:.0f} ms" for mode in MODES)
        ratio = medians["ssh-flat"][n] / medians["ssh-tree-radix2"][n]
        print(f"| {n} | {cells} | {ratio:.2f} |")
    with open(out, "w") as handle:
        json.dump({"benchmark": "dvm_start", "repeats": repeats, "sizes": SIZES,
                   "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "median_s": {mode: {str(n): v for n, v in row.items()}
                                for mode, row in medians.items()},
                   "samples_s": {mode: {str(n): v for n, v in row.items()}
                                 for mode, row in times.items()}}, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    main()
