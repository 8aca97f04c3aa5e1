#!/usr/bin/env python3
"""Collecting fences with many keys, next to a release of the same bytes.

openpmix's own fence_timing example (unpacked from
../shared/anchors/openpmix-*.tar.gz and compiled at run time, never copied
here) publishes K keys of V bytes per rank, then times a barrier and one
collecting fence. Two ranks, one per daemon (--map-by node), on local DVMs
of 1 and 2 daemons; each case runs REPS times and the medians are reported.
Beside each 2-daemon row, `grove bench release` of as many bytes as that
fence releases, on the same DVM, in the same run: a fence should cost the
release of its bytes plus a constant (issue 37). A third DVM runs with
rml_frame_protection none, to show what sealing the frames costs.

Usage: benchmarks/fence_keys.py [--build BUILD] [--reps N] [--json FILE]
"""
import argparse
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "test", "corpus"))
sys.dont_write_bytecode = True
from openpmix_examples import processes_with_tmpdir  # noqa: E402  (this DVM and its ranks)
ANCHORS = os.path.join(TOP, "..", "shared", "anchors")
LINE = re.compile(r"barrier=([-\d.]+) us modex=([-\d.]+) us")
MEDIAN = re.compile(r"median ([\d.]+) us")
# (keys, value bytes, compressible): the three cases and two more.
CASES = [(1, 1024, False), (32, 1024, False), (128, 1024, False), (32, 8192, False),
         (128, 1024, True)]


def compile_fence_timing(work):
    tarballs = sorted(glob.glob(os.path.join(ANCHORS, "openpmix-*.tar.gz")))
    if not tarballs:
        sys.exit(f"fence_keys: no openpmix-*.tar.gz in {os.path.normpath(ANCHORS)}")
    with tarfile.open(tarballs[-1]) as tar:
        for name in ("fence_timing.c", "examples.h"):
            member = next((m for m in tar.getmembers()
                           if m.isfile() and m.name.split("/")[1:] == ["examples", name]), None)
            if member is None:
                sys.exit(f"fence_keys: {tarballs[-1]} has no examples/{name}")
            with open(os.path.join(work, name), "wb") as out:
                out.write(tar.extractfile(member).read())
        source = os.path.join(work, "fence_timing.c")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "pmix"], capture_output=True,
                           text=True, check=True).stdout.split()
    binary = os.path.join(work, "fence_timing")
    subprocess.run(["gcc", "-O2", "-I", work, "-o", binary, source, *flags], check=True)
    return binary


class Dvm:
    def __init__(self, grove, daemons, params):
        self.grove = grove
        self.tmp = tempfile.mkdtemp(prefix=f"grove-fence-keys-{daemons}-")
        self.env = dict(os.environ, TMPDIR=self.tmp)
        uri = os.path.join(self.tmp, "uri")
        mca = [arg for name, value in params.items() for arg in ("--mca", name, value)]
        subprocess.run([grove, "start", "--local", str(daemons), "--daemonize", "--report-uri",
                        uri, *mca], env=self.env, check=True, capture_output=True, timeout=60)
        self.uri = open(uri).read().strip()

    def fence(self, binary, keys, valsz, compressible):
        env = ["--env", f"PMIX_PERF_KEYS={keys}", "--env", f"PMIX_PERF_VALSZ={valsz}",
               "--env", f"PMIX_PERF_COMPRESSIBLE={int(compressible)}"]
        out = subprocess.run([self.grove, "run", "--dvm", self.uri, "-n", "2", "--map-by",
                              "node", "--timeout", "60", *env, binary], env=self.env,
                             capture_output=True, text=True, timeout=90)
        match = LINE.search(out.stdout)
        if out.returncode != 0 or not match:
            raise RuntimeError(f"fence_timing failed ({out.returncode}):\n{out.stdout}{out.stderr}")
        return float(match[1]), float(match[2])

    def release(self, size, count):
        out = subprocess.run([self.grove, "bench", "release", "--dvm", self.uri, "--size",
                              str(size), "--count", str(count)], env=self.env,
                             capture_output=True, text=True, timeout=120, check=True)
        return float(MEDIAN.search(out.stdout)[1])

    def close(self):
        subprocess.run([self.grove, "stop", "--dvm", self.uri], env=self.env,
                       capture_output=True, timeout=30)
        deadline = time.monotonic() + 10
        while processes_with_tmpdir(self.tmp) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in processes_with_tmpdir(self.tmp):
            os.kill(pid, signal.SIGKILL)


def measure(dvm, binary, reps):
    rows = {}
    for keys, valsz, compressible in CASES:
        samples = [dvm.fence(binary, keys, valsz, compressible) for _ in range(reps)]
        rows[(keys, valsz, compressible)] = {
            "barrier_us": statistics.median(s[0] for s in samples),
            "modex_us": statistics.median(s[1] for s in samples),
            "modex_min_us": min(s[1] for s in samples),
            "modex_max_us": max(s[1] for s in samples)}
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(TOP, "build"))
    parser.add_argument("--reps", type=int, default=15, help="runs per case (default 15)")
    parser.add_argument("--json", default=os.path.join(TOP, "benchmarks", "results",
                                                       "fence_keys.json"))
    opts = parser.parse_args()
    grove = os.path.join(os.path.abspath(opts.build), "src", "grove")
    work = tempfile.mkdtemp(prefix="grove-fence-keys-")
    binary = compile_fence_timing(work)
    results = {}
    for label, daemons, params in (("one_daemon", 1, {}), ("two_daemons", 2, {}),
                                   ("two_daemons_unsealed", 2, {"rml_frame_protection": "none"})):
        dvm = Dvm(grove, daemons, params)
        try:
            rows = measure(dvm, binary, opts.reps)
            if daemons == 2:
                for (keys, valsz, _), row in rows.items():
                    # What the fence releases: both ranks' values, about.
                    row["release_bytes"] = 2 * keys * valsz
                    row["release_us"] = dvm.release(row["release_bytes"], 30)
        finally:
            dvm.close()
        results[label] = rows
    print(f"fence_timing, 2 ranks, medians of {opts.reps} runs (us)")
    print(f"{'case':>22} {'1 daemon':>9} {'2 daemons':>9} {'barrier':>8} {'release':>8} "
          f"{'rest':>7} {'unsealed':>9}")
    table = []
    for case in CASES:
        keys, valsz, compressible = case
        one, two = results["one_daemon"][case], results["two_daemons"][case]
        bare = results["two_daemons_unsealed"][case]
        rest = two["modex_us"] - two["release_us"]
        name = f"{keys} x {valsz} B {'pattern' if compressible else 'random'}"
        print(f"{name:>22} {one['modex_us']:9.0f} {two['modex_us']:9.0f} "
              f"{two['barrier_us']:8.0f} {two['release_us']:8.0f} {rest:7.0f} "
              f"{bare['modex_us']:9.0f}")
        table.append({"keys": keys, "value_bytes": valsz, "compressible": compressible,
                      "one_daemon": one, "two_daemons": two, "two_daemons_unsealed": bare,
                      "modex_minus_release_us": rest})
    with open(opts.json, "w") as handle:
        json.dump({"benchmark": "fence_keys", "ranks": 2, "reps": opts.reps,
                   "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "rows": table}, handle, indent=2)
        handle.write("\n")
    print(f"results: {opts.json}")


if __name__ == "__main__":
    main()
