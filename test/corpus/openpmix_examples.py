#!/usr/bin/env python3
"""openpmix's examples/ as a corpus of PMIx jobs under grove (docs/testing.md).

Unpacks examples/ of ../shared/anchors/openpmix-*.tar.gz into a temporary
directory (nothing is copied into this repository), compiles each example
against the installed libpmix (pkg-config pmix), and runs each that is a job
on local DVMs of 1 and 2 daemons with the rank count its source asks for,
judged by what the example itself says is success (EXAMPLES below). Each run
gets a DVM of its own (own TMPDIR; grove stop, then anything left ended by
pid): one starts and stops in well under a second, and a failed example can
leave a DVM in a state the next should not inherit (libpmix 4.2 keeps a
failed group's record; PMIX_TIMEOUT can leave its thread spinning).
Prints a markdown table and writes JSON; exits 0 when every run listed as
passing today passes (a new pass is printed NEW PASS, a lost one REGRESSION).
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANCHORS = os.path.join(TOP, "..", "shared", "anchors")

# Output lines that mean an example failed, unless its entry says otherwise.
# grove's own lines ("grove: job 3: rank 1 exited ...") are never matched.
FORBID = [r"FAILED", r"\bfailed\b", r"mismatch", r"returned wrong", r"\bERROR\b"]
COMPLETE_OK = r"COMPLETE \(rc SUCCESS\)"  # the group_* examples' last line per rank
RECOVERABLE = ("the victim rank exits without PMIx_Finalize and the survivors must go on: "
               "needs a launcher that keeps the job (prterun --rtos recoverable); grove "
               "ends a job when a rank exits without PMIx_Finalize, as PRRTE does by "
               "default (docs/jobs.md)")
LIBPMIX_ONLY = ("the same on 1 daemon, where no event leaves libpmix's server: libpmix 4.2 "
                "(openpmix#3936, the example's subject)")
TOOL = "a tool (PMIx_tool_init) that attaches to a running server; grove admits no tools"


def job(ranks, status=0, require=(), forbid=(), allow=(), daemons=(1, 2, 4), args=(), env=None,
        timeout=None, passes=(1, 2, 4), flaky=False, why="", notes="", grow=True):
    """One example that runs as a job.

    ranks: how many (the example's own minimum, or what its header asks for).
    status: what grove run must exit with: 0, "nonzero", or None (any).
    require: (regex, count) pairs: lines that must appear at least count
      times; count is a number or an expression of R, the rank count.
    forbid: regexes added to FORBID; allow: lines no forbid pattern applies to.
    daemons: the DVM sizes it can be judged on.
    args, env: extra grove run options and rank environment.
    passes: the DVM sizes on which it passes today; why: the reason it fails
      on the others (for the table); flaky: its result depends on timing, so
      neither a pass nor a failure is news; notes: anything else worth knowing.
    grow: the example takes any rank count from `ranks` up, so a DVM of more
      daemons than that runs one rank per daemon (every daemon takes part).
    """
    return dict(kind="job", ranks=ranks, status=status, require=list(require),
                forbid=FORBID + list(forbid), allow=list(allow), daemons=tuple(daemons),
                args=list(args), env=env or {}, timeout=timeout, passes=tuple(passes),
                flaky=flaky, why=why, notes=notes, grow=grow)


def skip(why):
    """An example that is not a job grove can run: a tool, a server, or one
    that needs a harness this runner does not have."""
    return dict(kind="skip", why=why, passes=(), flaky=False)


# Every example of openpmix's examples/ (commit 494e9d9d), read one by one.
# Those that do not compile against libpmix 4.2 are found at run time and
# reported with their first compiler error; their entries are here for
# the day they do.
EXAMPLES = {
    "abi_no_init": job(2, require=[(r"ABI \(Stable\)", "R"), (r"ABI \(Provisional\)", "R")],
                       forbid=[r"^Error:"],
                       notes="never calls PMIx_Init: libpmix answers the ABI query itself"),
    "abi_with_init": job(2, require=[(r"Query_nb returned SUCCESS", "R")], forbid=[r"^Error:"]),
    "abort": job(2, status="nonzero", require=[(r"rank 0 called PMIx_Abort", 1)],
                 forbid=[r"rank 1: Finalizing"],
                 notes="rank 0's PMIx_Abort must end the job before rank 1 wakes (10 s)"),
    "bad_exit": job(2, status=1, require=[(r"rank 0 exited with status 1", 1)],
                    notes="rank 0's exit(1) without PMIx_Finalize must end the job"),
    "client2": job(2, require=[(r"PMIx_Finalize successfully completed", "R")]),
    "client3": job(2, require=[(r"local procs GOOD", "R"), (r"nodeID GOOD", "R"),
                               (r"hostname GOOD", "R")], passes=(),
                   why="PMIx_Get(own rank, PMIX_LOCAL_PROCS) is NOT-FOUND, the wildcard get "
                       "works; grove files PMIX_LOCAL_PROCS in the node's info array, PRRTE at "
                       "job level (docs/pmix.md); the nodeID and hostname checks never run"),
    "connect_die": job(4, status=None, require=[(r"Connect complete on survivors", "R-1"),
                                              (r"FINALIZED", "R-1")], passes=(),
                       why=RECOVERABLE),
    "dmdx_departed": job(2, require=[(r"DMDX-DEPARTED done", "R-1"),
                                     (r"DMDX-DEPARTED answered", 1)],
                         notes="any prompt answer passes, as its header says"),
    "dynamic": job(2, require=[(r"PMIx_Connect GOOD", 2), (r"PMIx_Disconnect GOOD", 2),
                               (r"PMIx_Group_construct GOOD", 2),
                               (r"PMIx_Group_destruct GOOD", 2),
                               (r"PMIx_Finalize successfully completed", "R+2")],
                   notes="rank 0 spawns 2 ranks; both jobs connect, disconnect, group"),
    "fault": job(2, status="nonzero", require=[(r"NOTIFIED TERMINATED", "R-1")], passes=(),
                 why="rank 1 waits for PMIX_ERR_PROC_ABORTED or PMIX_ERR_JOB_TERMINATED after "
                     "rank 0's exit(1); grove raises other codes for it (docs/pmix.md, Events) "
                     "and ends the job at once, so no handler runs"),
    "fence_timing": job(2, require=[(r"fence_timing: nprocs=", 1)], forbid=[r"could not read"],
                        notes="one rank per daemon, as its header asks; timings not judged"),
    "get_timing": job(2, require=[(r"get_timing:\s+self", 1)],
                      forbid=[r"error\(s\)", r"does not resolve"],
                      notes="timings not judged"),
    "group_construct_abort": job(4, status=None, require=[(r"ABORT on member loss: PASS", "R-1")],
                                 passes=(), why=RECOVERABLE),
    "group_daemon_fail": skip("needs a harness that kills the victim's daemon mid-construct "
                              "and a job that outlives a lost daemon (prterun --rtos "
                              "recoverable); grove ends the jobs of a lost daemon"),
    "group_destruct_die": job(4, status=None, require=[(r"destruct complete on survivors", "R-1"),
                                                     (r"FINALIZED", "R-1")],
                              passes=(), why=RECOVERABLE),
    "group_die": job(4, status=None, require=[(r"construct complete on survivors", "R-1"),
                                            (r"FINALIZED", "R-1")], passes=(), why=RECOVERABLE),
    "group_invite": job(2, require=[(COMPLETE_OK, "R"), (r"CONSTRUCT_COMPLETE received", "R")]),
    "group_invite_abort": job(3, require=[(COMPLETE_OK, "R"),
                                          (r"CONSTRUCT_ABORT received: PASS", "R")], passes=(),
                              why="after rank 2 declines, the leader's invite never returns "
                                  "and no member gets PMIX_GROUP_CONSTRUCT_ABORT; " + LIBPMIX_ONLY),
    "group_invite_decline": job(3, require=[(COMPLETE_OK, "R"),
                                            (r"INVITE_FAILED for decliner: PASS", 1),
                                            (r"CONSTRUCT_COMPLETE received: PASS", "R-1")],
                                passes=(),
                                why="after rank 2 declines, the leader's invite never returns "
                                    "and rank 1 gets no PMIX_GROUP_CONSTRUCT_COMPLETE; "
                                    + LIBPMIX_ONLY),
    "group_invite_nb": job(2, require=[(COMPLETE_OK, "R"), (r"invite_nb completed: PASS", 1),
                                       (r"join_nb completed with group", "R-1"),
                                       (r"CONSTRUCT_COMPLETE received: PASS", "R")], passes=(),
                           why="the leader dies of SIGSEGV inside PMIx_Group_invite_nb: "
                               "libpmix 4.2 gives it its own invitation, its PMIx_Group_join_nb "
                               "completes the invite at once, and the release_fn handed to "
                               "its invite callback locks a NULL mutex (gdb)"),
    "group_invite_others": job(3, require=[(COMPLETE_OK, "R"),
                                           (r"CONSTRUCT_COMPLETE received: PASS", "R-1")]),
    "group_invite_suppress": job(2, require=[(COMPLETE_OK, "R"),
                                             (r"CONSTRUCT_COMPLETE received: PASS", "R")],
                                 passes=(),
                                 why="the leader's invite never returns although its own "
                                     "INVITE_ACCEPTED handler saw the acceptance: that handler "
                                     "ends the event chain before libpmix 4.2 counts it "
                                     "(openpmix#4059, the example's subject)"),
    "group_invite_timeout": job(3, require=[(COMPLETE_OK, "R"),
                                            (r"INVITE_FAILED for non-responder: PASS", 1),
                                            (r"CONSTRUCT_COMPLETE received: PASS", "R-1")],
                                passes=(),
                                why="the leader's invite with PMIX_TIMEOUT 3 never returns and "
                                    "rank 1 gets no PMIX_GROUP_CONSTRUCT_COMPLETE; "
                                    + LIBPMIX_ONLY),
    "group_leave": job(2, require=[(COMPLETE_OK, "R"), (r"GROUP_LEFT correctly received", "R-1")],
                       passes=(),
                       why="PMIx_Group_leave returns NOT-SUPPORTED: libpmix 4.2's server has no "
                           "leave operation to hand a host (only construct and destruct)"),
    "asyncgroup": job(4, require=[(r":\d+ COMPLETE$", "R"),
                                  (r"Group invite complete with status SUCCESS", 1)],
                      forbid=[r"Error in"]),
    "hello": job(2, require=[(r"Query returned", "R")],
                 notes="asks for PMIX_QUERY_NUM_PSETS and PSET_NAMES: grove has none and says so "
                       "(0, an empty list)"),
    "jctrl": job(2, require=[(r"PMIx_Finalize successfully completed", "R")], passes=(),
                 why="PMIx_Job_control_nb and PMIx_Process_monitor_nb: grove answers "
                     "NOT-SUPPORTED (-47) (docs/pmix.md)"),
    "log": job(2, require=[(r"stderr log message", 1),
                           (r"PMIx_Finalize successfully completed", "R")]),
    "modex_attach_fail": job(2, env={"PMIX_MCA_gds_shmem3_force_modex_attach_failure": "1"},
                             require=[(r"MODEX-ATTACH-FAIL OK", "R")],
                             notes="libpmix 4.2 has no gds/shmem3, so the forced attach "
                                   "failure never happens: a pass shows the plain modex only"),
    "modex_twice": job(2, require=[(r"first fence: every rank read every peer", 1),
                                   (r"second fence: new values visible", 1)]),
    "nodeinfo": job(2, require=[(r"PMIx_Finalize successfully completed", "R")], passes=(),
                    why="asks for PMIX_FABRIC_COORDINATES, which needs a fabric: there is "
                        "none here and grove registers none"),
    "pset": job(2, timeout=10, require=[(r"belongs to psets", "R")], passes=(),
                why="waits for a PMIX_PROCESS_SET_DEFINE event: grove defines no process "
                    "sets, so it waits until killed (run with a 10 s timeout)"),
    "pub": job(2, require=[(r"PUBLISH-LOOKUP SUCCEEDED", "R-1"), (r"UNPUBLISH SUCCEEDED", 1)]),
    "pub2": job(2, grow=False, require=[(r"PUBLISH-LOOKUP SUCCEEDED: \d", 3),
                            (r"PMIx_Finalize successfully completed", "R")]),
    "pubi": job(2, require=[(r"PUBLISH-LOOKUP SUCCEEDED", "R-1"), (r"UNPUBLISH SUCCEEDED", 1)],
                notes="rank 1 looks up with PMIX_WAIT 0: wait for every key (the standard's "
                      "default), so it waits for rank 0's publish"),
    "pubstress": job(4, require=[(r"PUBLISH-LOOKUP SUCCEEDED: \d", 10),
                                 (r"BIGTEST SUCCEEDED", "10*(R-3)"), (r"Purge succeeded", 1)],
                     allow=[r"correctly failed"]),
    "simple": job(2, notes="PMIx_Init and PMIx_Finalize twice; judged by exit status only"),
    "simple_resolve": job(2, require=[(r"ResPeers returned: SUCCESS", "R"),
                                      (r"ResNodes returned: SUCCESS", "R"),
                                      (r"ResPeers global returned: SUCCESS", "R"),
                                      (r"ResNodes global returned: SUCCESS", "R")], passes=(),
                          why="PMIx_Resolve_peers with a NULL node is NOT-FOUND in libpmix 4.2 "
                              "(given the node's name, 'vm' or 'vm.n0', the same call "
                              "succeeds on 1 and 2 daemons)"),
    "topology": job(4, daemons=(2,), args=["--bind-to", "core"],
                    require=[(r"TOPO rank \d+: \d+ passed, 0 failed", "R")],
                    forbid=[r"\bFAIL\b"], passes=(),
                    why="libpmix 4.2's PMIx_Get_relative_locality refuses the locality strings "
                        "its own server made (TAKE-NEXT-OPTION): the 'hwloc:' prefix defect "
                        "the example is about",
                    notes="bound to cores (grove stores locality strings only for bound ranks; "
                          "PRRTE binds by default); needs 2 nodes by its own check"),
    "debugger": skip("a debugger: a tool that launches a job and attaches to it"),
    "debuggerd": skip(TOOL), "iof_watcher": skip(TOOL), "launcher": skip(TOOL),
    "tool": skip(TOOL), "toolqry": skip(TOOL), "toolswitch": skip(TOOL),
    "server": skip("a PMIx server (PMIx_server_init) built on libpmix internals, not a client"),
    "simple_server": skip("a PMIx server (PMIx_server_init), not a client"),
    # These do not build against libpmix 4.2 (later API); rank counts from their sources.
    "group": job(4, passes=()), "group_bootstrap": job(6, passes=()),
    "group_dmodex": job(4, passes=()), "group_lcl_cid": job(4, passes=()),
}


def count_of(expr, ranks):
    """A require count: a number, or an expression of R (\"R-1\", \"10*(R-3)\")."""
    if isinstance(expr, int):
        return expr
    return int(eval(expr, {"__builtins__": {}}, {"R": ranks}))  # our own literals only


SKIP = 77  # meson's "skipped"


def find_tarball(given, skip_without):
    if given:
        if not os.path.isfile(given):
            sys.exit(f"openpmix_examples: no tarball at {given}")
        return given
    found = sorted(glob.glob(os.path.join(ANCHORS, "openpmix-*.tar.gz")), key=os.path.getmtime)
    if not found:
        print(f"openpmix_examples: no openpmix-*.tar.gz in {os.path.normpath(ANCHORS)} "
              "(give one with --tarball)", file=sys.stderr)
        sys.exit(SKIP if skip_without else 1)
    return found[-1]


def extract_examples(tarball, into):
    """Extracts only <top>/examples/... and returns the examples directory."""
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers()
                   if re.match(r"^[^/]+/examples/", m.name) and (m.isfile() or m.isdir())]
        if not members:
            sys.exit(f"openpmix_examples: {tarball} has no examples/ folder")
        for member in members:  # regular files and folders under examples/ only
            if ".." in member.name.split("/") or member.name.startswith("/"):
                sys.exit(f"openpmix_examples: refusing tar member {member.name}")
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, members=members, filter="data")
        else:
            tar.extractall(into, members=members)
    return os.path.join(into, members[0].name.split("/")[0], "examples")


def compile_example(name, src_dir, bin_dir, pmix_flags):
    """None, or the compiler's first useful complaint (an undefined symbol, an error)."""
    command = ["gcc", "-O1", "-I", src_dir, "-o", os.path.join(bin_dir, name),
               os.path.join(src_dir, name + ".c"), *pmix_flags]
    log = subprocess.run(command, capture_output=True, text=True, timeout=300).stderr
    if os.access(os.path.join(bin_dir, name), os.X_OK):
        return None
    undefined = re.search(r"undefined reference to [`']([^'`]+)'", log)
    if undefined:
        return f"undefined reference to {undefined.group(1)}"
    errors = [line.split("error:", 1)[1].strip() for line in log.splitlines() if "error:" in line]
    return errors[0] if errors else "the compiler failed"


def start_time(pid):
    """The process's start time in clock ticks (to tell a reused pid apart)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def processes_with_tmpdir(tmpdir):
    """Pids of our processes whose environment has TMPDIR=tmpdir: a DVM run
    here (controller, daemons) and the ranks it started, nothing else."""
    mark = b"TMPDIR=" + tmpdir.encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if mark in handle.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            pass
    return found


def end_pids(pids, grace):
    """SIGTERM each pid still running as the same process, SIGKILL after grace s."""
    pids = {pid: start_time(pid) for pid in pids}
    pids = {pid: when for pid, when in pids.items() if when is not None}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid, when in pids.items():
            if start_time(pid) == when:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(start_time(p) == w for p, w in pids.items()):
            time.sleep(0.1)


def communicate(command, timeout, **kwargs):
    """Runs command in a session of its own; on timeout ends its process group.
    Returns (exit status or None on timeout, output)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True, text=True,
                            errors="replace", **kwargs)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except OSError:
                pass
            time.sleep(2 if sig == signal.SIGTERM else 0)
        out, _ = proc.communicate()
        return None, out


class Dvm:
    """A local DVM of its own for one run, in a TMPDIR of its own."""

    def __init__(self, grove, groved, daemons, root):
        self.grove = grove
        self.tmp = tempfile.mkdtemp(prefix=f"dvm{daemons}-", dir=root)
        self.env = dict(os.environ, TMPDIR=self.tmp, GROVE_GROVED=groved)
        self.uri_file = os.path.join(self.tmp, "uri")
        self.log = []
        status, out = communicate([grove, "start", "--local", str(daemons), "--daemonize",
                                   "--report-uri", self.uri_file], 60, env=self.env)
        self.log.append(f"$ grove start --local {daemons} --daemonize -> {status}\n{out}")
        ready = status == 0 and os.path.exists(self.uri_file)
        self.uri = open(self.uri_file).read().strip() if ready else None

    def run(self, argv, timeout, extra_env, cwd):
        return communicate([self.grove, "run", "--dvm", self.uri, *argv], timeout,
                           env=dict(self.env, **extra_env), cwd=cwd)

    def close(self):
        """grove stop, then whatever process still carries this TMPDIR, by pid."""
        if self.uri:
            status, out = communicate([self.grove, "stop", "--dvm", self.uri], 30, env=self.env)
            self.log.append(f"$ grove stop -> {status}\n{out}")
        deadline = time.monotonic() + 10
        while processes_with_tmpdir(self.tmp) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = processes_with_tmpdir(self.tmp)
        if left:
            self.log.append(f"left running after grove stop, ended by pid: {left}")
            end_pids(left, 3)
        for path in glob.glob(os.path.join(self.tmp, "grove-*", "dvm-*.log")):
            with open(path, errors="replace") as handle:
                self.log.append(f"--- the DVM's log {os.path.basename(path)}\n{handle.read()}")
        shutil.rmtree(self.tmp, ignore_errors=True)
        return "\n".join(self.log)


def judge(spec, ranks, status, out):
    """(passed, symptom) by the example's own criterion."""
    if status is None:
        return False, "hard timeout (grove run did not return; process group killed)"
    if status == 124:
        return False, "timeout (grove run --timeout)"
    lines = out.splitlines()
    problems = []
    expect = spec["status"]
    if expect == "nonzero" and status == 0:
        problems.append("exit 0, a failure was expected")
    elif isinstance(expect, int) and status != expect:
        problems.append(f"exit {status}")
    for pattern, count in spec["require"]:
        want = count_of(count, ranks)
        have = sum(1 for line in lines if re.search(pattern, line))
        if have < want:
            problems.append(f"'{pattern}' {have} of {want}")
    for line in lines:
        if line.startswith("grove: ") or any(re.search(p, line) for p in spec["allow"]):
            continue
        if any(re.search(p, line) for p in spec["forbid"]):
            problems.append(f"'{line.strip()[:140]}'")
            break
    grove_line = next((line for line in lines if re.match(r"grove: job \d+: ", line)), None)
    if problems and grove_line:
        problems.append(grove_line.strip()[:140])
    return not problems, "; ".join(problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(TOP, "build"),
                        help="grove's build directory (default ./build)")
    parser.add_argument("--tarball", help="openpmix tarball (default ../shared/anchors/...)")
    parser.add_argument("--examples", help="comma-separated subset to run")
    parser.add_argument("--daemons", default="1,2,4", help="DVM sizes (default 1,2,4)")
    parser.add_argument("--timeout", type=int, default=30, help="seconds per run (default 30)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="runs at once, each on its own DVM (default 1)")
    parser.add_argument("--json", help="results file (default BUILD/openpmix_corpus.json)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--skip-without-tarball", action="store_true",
                        help=f"exit {SKIP} (skipped) instead of 1 when no tarball is found")
    opts = parser.parse_args()
    began = time.monotonic()
    grove = os.path.join(os.path.abspath(opts.build), "src", "grove")
    groved = os.path.join(os.path.abspath(opts.build), "src", "groved")
    if not (os.access(grove, os.X_OK) and os.access(groved, os.X_OK)):
        sys.exit(f"openpmix_examples: no grove and groved in {opts.build}/src (build first)")
    sizes = [int(d) for d in opts.daemons.split(",")]
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "pmix"], capture_output=True,
                           text=True)
    if flags.returncode != 0:
        sys.exit("openpmix_examples: pkg-config knows no pmix (install libpmix-dev)")
    libpmix = subprocess.run(["pkg-config", "--modversion", "pmix"], capture_output=True,
                             text=True).stdout.strip()
    tarball = find_tarball(opts.tarball, opts.skip_without_tarball)
    work = tempfile.mkdtemp(prefix="grove-openpmix-")
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    try:
        src = extract_examples(tarball, work)
        names = sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(src, "*.c")))
        if opts.examples:
            wanted = opts.examples.split(",")
            unknown = [n for n in wanted if n not in names]
            if unknown:
                sys.exit(f"openpmix_examples: no such example: {', '.join(unknown)}")
            names = wanted
        specs = {n: EXAMPLES.get(n) or job(2, passes=(), notes="not in the table: defaults")
                 for n in names}
        bin_dir = os.path.join(work, "bin")
        os.makedirs(bin_dir)
        print(f"openpmix examples from {os.path.basename(tarball)}, libpmix {libpmix}, "
              f"grove {grove}; work directory {work}", file=sys.stderr)
        # Compile the jobs in parallel; a tool or server is not even built.
        to_build = [n for n in names if specs[n]["kind"] == "job"]
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            errors = dict(zip(to_build, pool.map(
                lambda n: compile_example(n, src, bin_dir, flags.stdout.split()), to_build)))
        results = {}
        runs = []  # (name, daemons): each on a DVM of its own, so they may overlap
        for name in names:
            spec = specs[name]
            entry = results[name] = {"kind": spec["kind"], "why": spec["why"], "runs": {}}
            if spec["kind"] != "job":
                entry["runs"] = {d: {"status": "skip", "detail": spec["why"]} for d in sizes}
                continue
            entry.update(ranks=spec["ranks"], notes=spec["notes"])
            if errors[name]:
                entry["kind"] = "unbuilt"
                entry["why"] = f"does not build against libpmix {libpmix}: {errors[name]}"
                entry["runs"] = {d: {"status": "skip", "detail": entry["why"]} for d in sizes}
                continue
            runs.extend((name, daemons) for daemons in sizes)

        def run(item):
            name, daemons = item
            outcome = run_one(name, specs[name], daemons, grove, groved, work, bin_dir, logs,
                              opts.timeout)
            print(f"{name} on {daemons}: {outcome['status']} "
                  f"{outcome.get('detail', '')}".rstrip(), file=sys.stderr)
            return outcome

        with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
            for (name, daemons), outcome in zip(runs, pool.map(run, runs)):
                results[name]["runs"][daemons] = outcome
        seconds = time.monotonic() - began
        status = report(results, specs, sizes, seconds, libpmix, tarball, opts)
        if opts.keep:
            print(f"kept: {work} (logs in {logs})", file=sys.stderr)
        return status
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)


def run_one(name, spec, daemons, grove, groved, work, bin_dir, logs, timeout):
    """One example on a fresh DVM of `daemons` daemons; its log goes to logs/."""
    if daemons not in spec["daemons"]:
        needs = " or ".join(str(d) for d in spec["daemons"])
        return {"status": "n/a", "detail": f"judged on {needs} daemons only"}
    limit = spec["timeout"] or timeout
    ranks = max(spec["ranks"], daemons) if spec["grow"] else spec["ranks"]
    dvm = Dvm(grove, groved, daemons, work)
    began = time.monotonic()
    try:  # whatever happens (a timeout, Ctrl-C, SIGTERM), the DVM is ended
        status, out, passed, detail = -1, "", False, "the DVM did not start"
        if dvm.uri:
            argv = ["-n", str(ranks), "--map-by", "node", "--timeout", str(limit),
                    "--stdin", "none", *spec["args"], "./" + name]
            status, out = dvm.run(argv, limit + 15, spec["env"], bin_dir)
            passed, detail = judge(spec, ranks, status, out)
    finally:
        took = time.monotonic() - began
        dvm_log = dvm.close()
    with open(os.path.join(logs, f"{name}.d{daemons}.log"), "w") as handle:
        handle.write(f"{name} -n {ranks} on {daemons} daemon(s): exit {status}, "
                     f"{took:.1f} s, {'pass' if passed else 'FAIL: ' + detail}\n")
        handle.write(f"--- output\n{out}\n{dvm_log}\n")
    timed_out = detail.startswith(("timeout", "hard timeout"))
    return {"status": "pass" if passed else ("timeout" if timed_out else "fail"),
            "ranks": ranks, "exit": status, "seconds": round(took, 2), "detail": detail}


def report(results, specs, sizes, seconds, libpmix, tarball, opts):
    """The table on stdout, the JSON file; returns the exit status."""
    regressions, new_passes = [], []
    header = " | ".join(f"{d} daemon{'s' if d > 1 else ''}" for d in sizes)
    print(f"| example | ranks | {header} | notes / why not |")
    print("|---|---|" + "---|" * len(sizes) + "---|")
    for name, entry in results.items():
        notes = []
        for daemons in sizes:
            run = entry["runs"][daemons]
            expected = daemons in specs[name]["passes"]
            if specs[name]["flaky"] or run["status"] in ("n/a", "skip"):
                pass
            elif run["status"] == "pass" and not expected:
                new_passes.append(f"{name} on {daemons}")
            elif run["status"] != "pass" and expected:
                regressions.append(f"{name} on {daemons}: {run.get('detail')}")
            if run["status"] in ("fail", "timeout"):
                notes.append(f"{daemons}d: {run['detail'][:200]}")
        if entry["kind"] != "job":
            notes = [entry["why"]]
        else:
            notes = [n for n in (entry["why"], entry.get("notes")) if n] + notes
        cells = " | ".join(entry["runs"][d]["status"].replace("fail", "FAIL") for d in sizes)
        text = "; ".join(notes).replace("|", "\\|")
        ranks = entry.get("ranks", "") if entry["kind"] == "job" else ""
        print(f"| {name} | {ranks} | {cells} | {text} |")
    passed = sum(r["status"] == "pass" for e in results.values() for r in e["runs"].values())
    ran = sum(r["status"] in ("pass", "fail", "timeout")
              for e in results.values() for r in e["runs"].values())
    print(f"\n{passed} of {ran} runs passed ({len(results)} examples, {seconds:.0f} s)")
    for item in new_passes:
        print(f"NEW PASS: {item} (add it to its entry's passes)")
    for item in regressions:
        print(f"REGRESSION: {item}")
    path = opts.json or os.path.join(opts.build, "openpmix_corpus.json")
    with open(path, "w") as handle:
        json.dump({"tarball": os.path.basename(tarball), "libpmix": libpmix,
                   "daemons": sizes, "timeout": opts.timeout, "seconds": round(seconds, 1),
                   "passed": passed, "ran": ran, "examples": results,
                   "regressions": regressions, "new_passes": new_passes}, handle, indent=1)
    print(f"results: {path}", file=sys.stderr)
    return 1 if regressions else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    sys.exit(main())
