#!/usr/bin/env python3
"""meson install into a DESTDIR, then use the staged tree as a user would:
grove --version, `man grove` from its man pages, the bash completion, and a
one-shot job (grove starting its own DVM from the staged groved and
grove-exec). Nothing is installed outside the temporary DESTDIR.

Usage: install_tree.py BUILD_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile


def fail(message):
    print(f"install_tree: {message}", file=sys.stderr)
    sys.exit(1)


def run(argv, env=None, timeout=120):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def main():
    if len(sys.argv) != 2:
        fail("usage: install_tree.py BUILD_DIR")
    build = sys.argv[1]
    stage = tempfile.mkdtemp(prefix="grove-install-")
    try:
        installed = run(["meson", "install", "-C", build, "--destdir", stage, "--no-rebuild",
                         "--quiet"], timeout=300)
        if installed.returncode != 0:
            fail(f"meson install failed:\n{installed.stdout}{installed.stderr}")
        found = [os.path.join(root, "grove") for root, _, files in os.walk(stage)
                 if "grove" in files and os.path.basename(root) == "bin"]
        if len(found) != 1:
            fail(f"expected one bin/grove under {stage}, found {found}")
        prefix = os.path.dirname(os.path.dirname(found[0]))
        grove = found[0]
        for part in ["bin/groved", "libexec/grove/grove-exec", "share/grove/help-grove.txt",
                     "share/man/man1/grove.1", "share/man/man8/groved.8",
                     "share/man/man7/grove-mca-params.7",
                     "share/bash-completion/completions/grove"]:
            if not os.path.isfile(os.path.join(prefix, part)):
                fail(f"{part} is not installed under {prefix}")
        version = run([grove, "--version"])
        if version.returncode != 0 or not version.stdout.startswith("grove "):
            fail(f"grove --version: {version.returncode} {version.stdout}{version.stderr}")

        if shutil.which("man") is None:
            fail("no man program (install man-db: .ci/install-deps --tests)")
        env = dict(os.environ, MANPATH=os.path.join(prefix, "share", "man"), MANWIDTH="100")
        where = run(["man", "-w", "grove"], env=env)
        if where.stdout.strip() != os.path.join(prefix, "share", "man", "man1", "grove.1"):
            fail(f"man -w grove: {where.stdout.strip()!r} {where.stderr}")
        page = run(["man", "-P", "cat", "grove"], env=env)
        if page.returncode != 0 or "grove run" not in page.stdout:
            fail(f"man grove: {page.returncode} {page.stderr}")
        run_page = run(["man", "-P", "cat", "grove-mca-params"], env=env)
        if run_page.returncode != 0 or "rml_base_radix" not in run_page.stdout:
            fail(f"man grove-mca-params: {run_page.returncode} {run_page.stderr}")

        # A job from the staged tree: its own DVM, its own groved and grove-exec.
        tmp = tempfile.mkdtemp(prefix="tmp-", dir=stage)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GROVE_")}
        env["TMPDIR"] = tmp
        job = run([grove, "run", "-n", "2", "--stdin", "none", "sh", "-c", "echo rank $GROVE_RANK"],
                  env=env)
        if job.returncode != 0 or sorted(job.stdout.splitlines()) != ["rank 0", "rank 1"]:
            fail(f"a job from the staged tree: exit {job.returncode}\n{job.stdout}{job.stderr}")
        print(f"installed under {stage}{os.sep}...: binaries, help, man pages, completion; "
              "man grove and a job ran from it")
        return 0
    finally:
        shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
