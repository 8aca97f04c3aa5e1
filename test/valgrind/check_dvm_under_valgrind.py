#!/usr/bin/env python3
"""Runs a whole DVM under valgrind memcheck and fails on any memory error.

Usage: check_dvm_under_valgrind.py GROVE PMIX_FENCE_CLIENT

The controller, every groved and every rank they start run under memcheck
(--trace-children). The DVM starts, runs a barrier benchmark and a PMIx fence
job, and stops. AddressSanitizer cannot see reads that libevent or libpmix
make of memory grove freed (those libraries are not instrumented); memcheck
can, which is how an event freed after its event base was caught.
Every process started here is ended by PID, with timeouts.
"""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time

READY_TIMEOUT_S = 180
COMMAND_TIMEOUT_S = 300


def run(args, env, timeout):
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        print(f"FAILED: {' '.join(args)} exited {result.returncode}")
        print(result.stdout + result.stderr)
    return result.returncode == 0


def wait_ready(controller, out_path):
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        with open(out_path, encoding="utf-8", errors="replace") as handle:
            if "DVM ready" in handle.read():
                return True
        if controller.poll() is not None:
            return False
        time.sleep(0.2)
    return False


def end_by_pid(controller):
    """Ends whatever is left of the DVM: the controller's process group holds
    the controller and its groveds (ranks are ended by their groved)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(controller.pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGTERM:
            try:
                controller.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            time.sleep(1)  # the groveds see their controller go
    controller.wait()


def memcheck_errors(log_dir):
    """The valgrind logs that report anything (with -q, only errors are logged)."""
    reports = []
    for path in sorted(glob.glob(os.path.join(log_dir, "valgrind.*.log"))):
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read().strip()
        if text:
            reports.append(f"--- {os.path.basename(path)}\n{text}")
    return reports


def main(grove, fence_client):
    with tempfile.TemporaryDirectory(prefix="grove-valgrind-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        out_path = os.path.join(tmp, "controller.out")
        command = ["valgrind", "-q", "--error-exitcode=99", "--trace-children=yes",
                   f"--log-file={tmp}/valgrind.%p.log", grove, "start", "--local", "3"]
        with open(out_path, "w") as out:
            controller = subprocess.Popen(command, env=env, stdout=out,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        ok = False
        try:
            if not wait_ready(controller, out_path):
                print("the DVM never became ready under valgrind:")
                print(open(out_path, encoding="utf-8", errors="replace").read())
            else:
                ok = run([grove, "bench", "barrier", "--count", "3"], env, COMMAND_TIMEOUT_S)
                ok = run([grove, "run", "-n", "4", fence_client], env, COMMAND_TIMEOUT_S) and ok
                ok = run([grove, "stop"], env, COMMAND_TIMEOUT_S) and ok
                try:
                    code = controller.wait(timeout=COMMAND_TIMEOUT_S)
                    if code != 0:
                        print(f"the controller exited {code} (99: memcheck found errors)")
                        ok = False
                except subprocess.TimeoutExpired:
                    print("the controller did not exit after grove stop")
                    ok = False
        finally:
            end_by_pid(controller)
        reports = memcheck_errors(tmp)
        for report in reports:
            print(report)
        processes = len(glob.glob(os.path.join(tmp, "valgrind.*.log")))
        print(f"{processes} processes ran under memcheck; {len(reports)} reported errors")
        return 0 if ok and not reports and processes >= 3 else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
