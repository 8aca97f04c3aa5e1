"""Shared constants, errors, logging, object naming and small helpers."""

import os
import sys
import time

SSHD = '/usr/sbin/sshd'
STATE = 'swarm.json'
VERSION = 1
MAX_HOSTS = 253              # .1 .. .253; .254 is the bridge
SUBNET_BASE = (10, 211)      # hosts live in 10.211.X.0/24
EXEC_ERROR = 125             # exit status of `exec` when swarm.py itself fails
VERBOSE = False
T0 = time.monotonic()


class SwarmError(Exception):
    pass


def log(msg):
    if VERBOSE:
        sys.stderr.write(f'swarm: [{time.monotonic() - T0:6.3f}s] {msg}\n')
        sys.stderr.flush()


# --------------------------------------------------------------------------
# naming

def ns_name(sid, k):
    return f'swarm-{sid}-{k}'


def ns_prefix(sid):
    return f'swarm-{sid}-'


def link_prefix(sid):
    return f'sw{sid}'          # 8 chars; veths are swIDvK, bridge swIDbr


def bridge_name(sid):
    return f'sw{sid}br'


def veth_name(sid, k):
    return f'sw{sid}v{k}'


def keeper_comm(sid):
    return f'swarmk-{sid}'


def keeper_sock(sid):
    return f'\0grove-swarm-keeper-{sid}'   # abstract unix socket


# --------------------------------------------------------------------------
# small helpers

def run(argv, *, input=None, timeout=30, check=True):
    import subprocess
    try:
        p = subprocess.run(argv, input=input, capture_output=True, text=True,
                           timeout=timeout)
    except FileNotFoundError:
        raise SwarmError(f'command not found: {argv[0]}')
    except subprocess.TimeoutExpired:
        raise SwarmError(f'timed out after {timeout}s: {" ".join(argv)}')
    if check and p.returncode != 0:
        raise SwarmError(f'{" ".join(argv)} failed (exit {p.returncode}): '
                         f'{p.stderr.strip() or p.stdout.strip()}')
    return p


def ip_batch(lines, force=False):
    if not lines:
        return None
    argv = ['ip']
    if force:
        argv.append('-force')
    argv += ['-batch', '-']
    return run(argv, input=''.join(l + '\n' for l in lines), check=not force,
               timeout=120)


def read_text(path):
    try:
        with open(path, 'rb') as f:
            return f.read().decode(errors='replace')
    except OSError:
        return None


def tail(path, n=15):
    text = read_text(path)
    if not text:
        return ''
    lines = text.strip().splitlines()[-n:]
    return '\n'.join('    ' + l for l in lines)


def write_file(path, text, mode=0o644):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def abs_dir(d, must_exist=True):
    d = os.path.realpath(d)
    if must_exist and not os.path.isdir(d):
        raise SwarmError(f'{d}: no such directory (the caller creates DIR)')
    return d
