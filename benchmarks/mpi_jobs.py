#!/usr/bin/env python3
"""Whole MPI jobs, launch to exit: Open MPI's under grove and mpirun (issue 18),
MPICH's under grove and Hydra (issue 41).

Every row is one MPI program (test/mpi/) at one size, run by each runtime in
turn, round after round, so machine noise hits all of them alike:

  grove-dvm      `grove run --dvm URI ...` on a DVM started once
                 (`grove start --local D --daemonize`), as a user keeps one
  grove          one-shot `grove run ...` (`--daemons 2` between daemons):
                 starts its own DVM, runs, stops it
  mpirun         Debian's Open MPI 4.1 `mpirun --oversubscribe ...`
  prterun        PRRTE master's `prterun` (../shared/anchors/build-prrte.sh),
                 only with --prrte-prefix; its failures are recorded, and do
                 not fail the run (Open MPI 4.1's ranks crash under PRRTE
                 master from 16 ranks up, with its openpmix 7 server)

  grove-dvm-unbound  the kept DVM with --bind-to none (only with --unbound):
                 grove binds as mpirun does by default
  hydra          MPICH's own launcher, Debian's `mpiexec.hydra -n N ...`, for
                 the mpich-* rows (MPICH speaks PMI-1 to grove and to Hydra)

The mpich-* rows run the same programs built with MPICH (mpicc.mpich):
hello at 2, 16 and 64 ranks and collectives at 16, grove against Hydra.

Rows: hello (init, barrier, finalize) at 2, 16 and 64 ranks; collectives
(allreduce, alltoall, barrier) at 16; pingpong between two ranks within one
daemon (shared memory) and between two daemons (grove: a 2-daemon DVM,
`--map-by node`, so Open MPI talks TCP; mpirun and prterun have one daemon
per host, so they get `--mca btl self,tcp` for the same transport). The
pingpong rows also report the program's latency and bandwidth. Rows init16
and init64 (only with --rows) run test/mpi/mpi_init_profile.c and report
when every rank had reached main and when the last left MPI_Init, from the
first rank's start.

Prints a table of medians (and grove / mpirun, or grove / hydra for the
mpich rows, ratios) and writes JSON.

Usage: benchmarks/mpi_jobs.py [--build DIR] [--rounds N] [--prrte-prefix DIR]
           [--rows hello2,...] [--unbound] [--out benchmarks/results/mpi_jobs.json]
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PINGPONG = re.compile(r"pingpong latency_us=([\d.]+) bandwidth_MBps=([\d.]+)")
INIT_PROFILE = re.compile(r"init_profile ranks=\d+ start_spread_s=([\d.]+) init_done_first_s=[\d.]+ "
                          r"init_done_last_s=([\d.]+)")

# name -> (program, ranks, between daemons)
ROWS = {
    "hello2": ("mpi_hello", 2, False),
    "hello16": ("mpi_hello", 16, False),
    "hello64": ("mpi_hello", 64, False),
    "collectives16": ("mpi_collectives", 16, False),
    "pingpong-within": ("mpi_pingpong", 2, False),
    "pingpong-between": ("mpi_pingpong", 2, True),
    # Not run unless asked (--rows): where the time before MPI_Init returns goes.
    "init16": ("mpi_init_profile", 16, False),
    "init64": ("mpi_init_profile", 64, False),
    # MPICH (Hydra's simple PMI): grove against mpiexec.hydra.
    "mpich-hello2": ("mpich_hello", 2, False),
    "mpich-hello16": ("mpich_hello", 16, False),
    "mpich-hello64": ("mpich_hello", 64, False),
    "mpich-collectives16": ("mpich_collectives", 16, False),
}
# Which runtimes run a row: MPICH's programs under Hydra, Open MPI's under
# mpirun and PRRTE; grove runs both.
MPICH_ONLY = {"hydra"}
OMPI_ONLY = {"mpirun", "prterun"}


def runs_row(runtime, row):
    if row.startswith("mpich-"):
        return runtime not in OMPI_ONLY
    return runtime not in MPICH_ONLY


def baseline_of(row):
    return "hydra" if row.startswith("mpich-") else "mpirun"
DEFAULT_ROWS = [row for row in ROWS if not row.startswith("init")]


def log(message):
    print(message, file=sys.stderr, flush=True)


class Grove:
    """grove's DVMs: one single-daemon DVM and one two-daemon DVM, kept up."""

    def __init__(self, build, env, work):
        self.grove = os.path.join(build, "src", "grove")
        self.env = env
        self.work = work
        self.dvms = {}

    def start(self):
        for daemons in (1, 2):
            uri = os.path.join(self.work, f"dvm{daemons}.uri")
            subprocess.run([self.grove, "start", "--local", str(daemons), "--daemonize", "--another",
                            "--report-uri", uri], env=self.env, check=True,
                           capture_output=True, timeout=60)
            with open(uri) as handle:
                self.dvms[daemons] = handle.read().strip()

    def stop(self):
        for uri in self.dvms.values():
            subprocess.run([self.grove, "stop", "--dvm", uri], env=self.env,
                           capture_output=True, timeout=60)
        self.dvms = {}

    def dvm_argv(self, program, ranks, between):
        daemons = 2 if between else 1
        extra = ["--map-by", "node"] if between else []
        return [self.grove, "run", "--dvm", self.dvms[daemons], "-n", str(ranks), *extra, program]

    def unbound_argv(self, program, ranks, between):
        # grove binds as mpirun does unless told; this row shows what that buys.
        argv = self.dvm_argv(program, ranks, between)
        return [*argv[:-1], "--bind-to", "none", argv[-1]]

    def oneshot_argv(self, program, ranks, between):
        extra = ["--daemons", "2", "--map-by", "node"] if between else []
        return [self.grove, "run", "-n", str(ranks), *extra, program]


def hydra_argv(program, ranks, between):
    return ["mpiexec.hydra", "-n", str(ranks), program]


def mpirun_argv(program, ranks, between):
    extra = ["--mca", "btl", "self,tcp"] if between else []
    return ["mpirun", "--oversubscribe", "-np", str(ranks), *extra, program]


def prterun_argv(prefix):
    def argv(program, ranks, between):
        # PRRTE's daemons export PREFIX/lib, whose libpmix (openpmix master)
        # has the soname of Debian's: Open MPI 4.1 must keep Debian's. Without
        # ORTE's schizo it takes PRRTE's PMIx environment as a direct launch
        # (else every rank is a singleton), as under grove.
        extra = ["OMPI_MCA_btl=self,tcp"] if between else []
        return [os.path.join(prefix, "bin", "prterun"), "--map-by", ":OVERSUBSCRIBE", "-n",
                str(ranks), "env", "-u", "LD_LIBRARY_PATH", "OMPI_MCA_schizo=^orte", *extra,
                program]
    return argv


def timed(argv, env, timeout):
    """Wall time of one job, launch to exit, and its output (or None, why)."""
    started = time.monotonic()
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    seconds = time.monotonic() - started
    if done.returncode != 0:
        return None, f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-400:]}"
    return seconds, done.stdout


def median(values):
    return statistics.median(values) if values else None


def git_head():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def print_table(summary, runtimes):
    header = ("| row | " + " | ".join(runtimes) +
              " | grove-dvm / base | grove / base | base |")
    print(header)
    print("|" + "---|" * (len(runtimes) + 4))
    for row, cells in summary.items():
        parts = []
        for rt in runtimes:
            cell = cells.get(rt)
            if cell is None:
                parts.append("-")
                continue
            text = "fails" if cell.get("seconds_median") is None else \
                f"{cell['seconds_median'] * 1000:.0f} ms"
            if cell.get("latency_us_median") is not None:
                text += (f" ({cell['latency_us_median']:.1f} us, "
                         f"{cell['bandwidth_MBps_median']:.0f} MB/s)")
            if cell.get("init_done_s_median") is not None:
                text += (f" (all in main {cell['start_spread_s_median']:.2f} s, "
                         f"all past MPI_Init {cell['init_done_s_median']:.2f} s)")
            parts.append(text)
        ratios = [cells.get("ratios", {}).get(k) for k in ("grove-dvm", "grove")]
        ratio_text = ["-" if r is None else f"{r:.2f}" for r in ratios]
        print(f"| {row} | " + " | ".join(parts) + " | " + " | ".join(ratio_text) +
              f" | {baseline_of(row)} |")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--rows", default=",".join(DEFAULT_ROWS),
                        help="comma-separated subset of: " + ", ".join(ROWS))
    parser.add_argument("--prrte-prefix", default=None,
                        help="a PRRTE install (../shared/anchors/build-prrte.sh PREFIX)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per job")
    parser.add_argument("--unbound", action="store_true",
                        help="add grove-dvm-unbound: the kept DVM with --bind-to none")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "mpi_jobs.json"))
    args = parser.parse_args()
    rows = [r for r in args.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        parser.error(f"unknown row(s) {', '.join(unknown)}; known: {', '.join(ROWS)}")
    args.rows = rows
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.prrte_prefix and not os.access(os.path.join(args.prrte_prefix, "bin", "prterun"),
                                           os.X_OK):
        parser.error(f"--prrte-prefix {args.prrte_prefix}: no bin/prterun there")
    return args


def main():
    args = parse_args()
    needed = sorted({ROWS[row][0] for row in args.rows})
    programs = {name: os.path.join(args.build, "test", "mpi", name) for name in needed}
    for name, path in programs.items():
        if not os.access(path, os.X_OK):
            dev = "libmpich-dev" if name.startswith("mpich") else "Open MPI's libopenmpi-dev"
            sys.exit(f"mpi_jobs: {path} is missing (needs {dev} at setup)")
    if any(not row.startswith("mpich-") for row in args.rows) and shutil.which("mpirun") is None:
        sys.exit("mpi_jobs: mpirun is not installed (Debian's openmpi-bin)")
    if any(row.startswith("mpich-") for row in args.rows) and \
            shutil.which("mpiexec.hydra") is None:
        sys.exit("mpi_jobs: mpiexec.hydra is not installed (Debian's mpich)")
    work = tempfile.mkdtemp(prefix="grove-mpi-jobs-")
    env = dict(os.environ, TMPDIR=work, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", PRTE_ALLOW_RUN_AS_ROOT="1",
               PRTE_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    grove = Grove(args.build, env, work)
    # One-shot `grove run` starts its own DVM only when it sees none: it
    # gets a session directory where the kept DVMs are not.
    oneshot_tmp = os.path.join(work, "oneshot")
    os.makedirs(oneshot_tmp)
    envs = {"grove": dict(env, TMPDIR=oneshot_tmp)}
    runtimes = {"grove-dvm": grove.dvm_argv, "grove": grove.oneshot_argv, "mpirun": mpirun_argv,
                "hydra": hydra_argv}
    if args.unbound:
        runtimes["grove-dvm-unbound"] = grove.unbound_argv
    if args.prrte_prefix:
        runtimes["prterun"] = prterun_argv(args.prrte_prefix)
    samples = {row: {rt: {"seconds": [], "latency_us": [], "bandwidth_MBps": [], "failures": [],
                          "start_spread_s": [], "init_done_s": []}
                     for rt in runtimes if runs_row(rt, row)} for row in args.rows}
    grove.start()
    try:
        for round_index in range(args.rounds):
            log(f"round {round_index + 1} of {args.rounds}")
            # Alternate which runtime goes first, so none always runs warm.
            order = list(runtimes)
            shift = round_index % len(order)
            order = order[shift:] + order[:shift]
            for row in args.rows:
                program, ranks, between = ROWS[row]
                for rt in order:
                    if not runs_row(rt, row):
                        continue
                    argv = runtimes[rt](programs[program], ranks, between)
                    seconds, out = timed(argv, envs.get(rt, env), args.timeout)
                    cell = samples[row][rt]
                    if seconds is None:
                        cell["failures"].append(out)
                        log(f"  {row} {rt}: {out}")
                        continue
                    cell["seconds"].append(seconds)
                    match = PINGPONG.search(out)
                    if program == "mpi_pingpong" and match:
                        cell["latency_us"].append(float(match.group(1)))
                        cell["bandwidth_MBps"].append(float(match.group(2)))
                    match = INIT_PROFILE.search(out)
                    if program == "mpi_init_profile" and match:
                        cell["start_spread_s"].append(float(match.group(1)))
                        cell["init_done_s"].append(float(match.group(2)))
    finally:
        grove.stop()
        shutil.rmtree(work, ignore_errors=True)

    summary = {}
    for row in args.rows:
        cells = {}
        for rt, cell in samples[row].items():
            cells[rt] = {"seconds_median": median(cell["seconds"]),
                         "latency_us_median": median(cell["latency_us"]),
                         "bandwidth_MBps_median": median(cell["bandwidth_MBps"]),
                         "start_spread_s_median": median(cell["start_spread_s"]),
                         "init_done_s_median": median(cell["init_done_s"]),
                         "runs": len(cell["seconds"]), "failures": len(cell["failures"])}
        base = cells[baseline_of(row)]["seconds_median"]
        cells["ratios"] = {rt: (cells[rt]["seconds_median"] / base
                                if base and cells[rt]["seconds_median"] else None)
                           for rt in ("grove-dvm", "grove", "prterun") if rt in cells}
        summary[row] = cells
    print_table(summary, list(runtimes))
    result = {
        "benchmark": "mpi_jobs",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git": git_head(), "host": platform.node(), "cores": os.cpu_count(),
        "rounds": args.rounds, "rows": {row: dict(zip(("program", "ranks", "between_daemons"),
                                                      ROWS[row])) for row in args.rows},
        "summary": summary, "samples": samples,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    log(f"wrote {args.out}")
    failed = sum(c["failures"] for cells in summary.values() for rt, c in cells.items()
                 if rt not in ("ratios", "prterun"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
