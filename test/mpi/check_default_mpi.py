#!/usr/bin/env python3
"""Installing MPICH for the PMI tests must not change the system's default
MPI: Debian switches mpicc and mpirun through update-alternatives, and Open
MPI must stay the one they name (the Open MPI tests and users' habits call
them bare). Fails naming what mpicc and mpirun resolve to otherwise."""
import os
import shutil
import sys

problems = []
for name, expected in (("mpicc", "opal_wrapper"), ("mpirun", "orterun")):
    path = shutil.which(name)
    if path is None:
        problems.append(f"{name} is not on PATH")
        continue
    target = os.path.realpath(path)
    if os.path.basename(target) != expected:
        problems.append(f"{name} resolves to {target}, not Open MPI's {expected}")
for name in ("mpicc.mpich", "mpiexec.hydra"):
    if shutil.which(name) is None:
        problems.append(f"{name} is not installed (MPICH, .ci/packages-tests)")
if problems:
    sys.exit("default MPI: " + "; ".join(problems))
print("default MPI: mpicc and mpirun are Open MPI's; MPICH is there by name")
