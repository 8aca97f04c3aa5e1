#!/usr/bin/env python3
"""Runs the docs' blocks that start a DVM across hosts (a hostfile, a host
list, Slurm) on a namespace swarm of 4 hosts (test/swarm/swarm.py, with a
real Slurm when a block uses it), line by line on node0, as check_docs.py
runs the local ones (docs_sessions.py says how). A `--hostfile FILE` a
block names is written in its sandbox with the swarm's hosts; ssh reaches
them through `GROVE_MCA_plm_ssh_agent` (the swarm's ssh config) and Slurm
through `SLURM_CONF`, as a site's own settings would. Needs root.

Usage: docs_swarm.py GROVE_BINARY PMIX_FENCE_CLIENT SWARM_PY SOURCE_ROOT
"""
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True
from docs_sessions import Session, run_block, session_blocks  # noqa: E402
from docs_text import fenced_blocks, grove_commands  # noqa: E402

HOSTS = 4


def hostfiles(block):
    """The files the block's commands give to --hostfile."""
    names = set()
    for line in [*block.setup, *block.lines]:
        for words in grove_commands(line):
            for at, word in enumerate(words[:-1]):
                if word == "--hostfile":
                    names.add(words[at + 1])
            names.update(w.split("=", 1)[1] for w in words if w.startswith("--hostfile="))
    return names


def swarm(script, *args, timeout=600):
    return subprocess.run(["/usr/bin/python3", script, *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def main():
    grove, fence_client, script, root = sys.argv[1:5]
    root = Path(root)
    blocks = []
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        name = str(path.relative_to(root))
        blocks += [(name, block) for block in
                   session_blocks(fenced_blocks(path.read_text()), with_hosts=True)]
    if not blocks:
        print("docs: no block starts a DVM across hosts; expected README.md's")
        return 1
    slurm = any("salloc" in line or "sbatch" in line
                for _, block in blocks for line in block.lines)
    directory = tempfile.mkdtemp(prefix="grove-docs-swarm-")
    problems = []
    ran = 0
    try:
        up = swarm(script, "up", directory, "--hosts", str(HOSTS), *(["--slurm"] if slurm else []))
        if up.returncode != 0:
            print(f"docs: the swarm did not come up: {up.stderr.strip()[-600:]}")
            return 1
        env = {"GROVE_MCA_plm_ssh_agent": f"ssh -F {directory}/ssh_config",
               "SLURM_CONF": f"{directory}/slurm/slurm.conf"}
        wrapper = ["/usr/bin/python3", script, "exec", directory, "node0", "--"]
        for name, block in blocks:
            session = Session(grove, fence_client, wrapper, env, parent=directory)
            try:
                for hostfile in hostfiles(block):
                    names = "".join(f"node{k}\n" for k in range(HOSTS))
                    Path(session.dir, hostfile).write_text(names)
                ran += run_block(session, name, block, problems, with_hosts=True)
            finally:
                problems += [f"{name}:{block.first_line}: {p}" for p in session.close()]
    finally:
        swarm(script, "down", directory, timeout=300)
        shutil.rmtree(directory, ignore_errors=True)
    for problem in problems:
        print(problem)
    print(f"docs: {len(blocks)} block(s) across hosts, {ran} line(s) run on a {HOSTS}-host "
          f"swarm, {len(problems)} problem(s)")
    return 1 if problems or ran < 6 else 0


def on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # meson's timeout: the swarm still comes down


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    sys.exit(main())
