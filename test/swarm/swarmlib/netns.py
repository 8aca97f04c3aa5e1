"""Namespaces, processes in them, subnet allocation, and tearing it all down."""

import json
import os
import signal
import time

from .common import (SUBNET_BASE, SwarmError, bridge_name, ip_batch,
                     keeper_comm, link_prefix, log, ns_prefix, read_text, run)
from .state import find_host


# --------------------------------------------------------------------------
# processes and namespaces

def ns_key(ns):
    """(dev, ino) of a named network namespace, or None."""
    try:
        s = os.stat(f'/run/netns/{ns}')
    except OSError:
        return None
    return (s.st_dev, s.st_ino)


def pid_ns_key(pid):
    try:
        s = os.stat(f'/proc/{pid}/ns/net')
    except OSError:
        return None            # gone, zombie, or kernel thread
    return (s.st_dev, s.st_ino)


def scan_netns(keys):
    """{key: [pid, ...]} of live processes in the given network namespaces."""
    out = {k: [] for k in keys}
    if not keys:
        return out
    me = os.getpid()
    for ent in os.listdir('/proc'):
        if not ent.isdigit():
            continue
        pid = int(ent)
        if pid == me:
            continue
        k = pid_ns_key(pid)
        if k in out:
            out[k].append(pid)
    return out


def proc_comm(pid):
    t = read_text(f'/proc/{pid}/comm')
    return t.strip() if t else None


def proc_cmdline(pid):
    t = read_text(f'/proc/{pid}/cmdline')
    return t.replace('\0', ' ').strip() if t else ''


def proc_stat(pid):
    """(state, ppid) or None."""
    t = read_text(f'/proc/{pid}/stat')
    if not t:
        return None
    rest = t[t.rfind(')') + 2:].split()
    return rest[0], int(rest[1])


def alive(pid):
    s = proc_stat(pid)
    return s is not None and s[0] != 'Z'


def kill_until_gone(find, what, timeout=15.0):
    """SIGKILL the pids returned by find() until it returns none."""
    deadline = time.monotonic() + timeout
    while True:
        pids = find()
        if not pids:
            return
        if time.monotonic() > deadline:
            raise SwarmError(f'could not kill {what}: still running: '
                             + ', '.join(f'{p} ({proc_comm(p)})' for p in pids))
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def anchor_ok(h):
    """True if the recorded anchor pid is alive and in the host's netns."""
    k = ns_key(h['netns'])
    return k is not None and alive(h['anchor']) and pid_ns_key(h['anchor']) == k


def host_anchor(st, name):
    h = find_host(st, name)
    if not anchor_ok(h):
        raise SwarmError(f'host {name}: anchor process {h["anchor"]} is gone '
                         f'(was the swarm brought down?)')
    return h


def nsenter_argv(pid, *, mount=True):
    argv = ['nsenter', '-t', str(pid), '-n', '-u']
    if mount:
        argv.append('-m')
    return argv


# --------------------------------------------------------------------------
# subnet allocation (serialised between swarms by an abstract-socket lock)

class GlobalLock:
    """Machine-wide (per network namespace) lock without a file: an abstract
    unix socket can be bound by one process at a time and is released when
    the process dies."""

    NAME = '\0grove-swarm-subnet-lock'

    def __enter__(self):
        import socket
        deadline = time.monotonic() + 30
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.bind(self.NAME)
                self.sock = s
                return self
            except OSError:
                s.close()
                if time.monotonic() > deadline:
                    raise SwarmError('timed out waiting for the swarm subnet '
                                     'lock (another swarm.py up is stuck?)')
                time.sleep(0.05)

    def __exit__(self, *a):
        self.sock.close()


def used_networks():
    import ipaddress
    nets = []
    for a in json.loads(run(['ip', '-j', '-4', 'addr']).stdout or '[]'):
        for ai in a.get('addr_info', []):
            nets.append(ipaddress.ip_interface(
                f'{ai["local"]}/{ai["prefixlen"]}').network)
    for r in json.loads(run(['ip', '-j', '-4', 'route', 'show', 'table', 'all']
                            ).stdout or '[]'):
        dst = r.get('dst')
        if dst and dst != 'default':
            try:
                nets.append(ipaddress.ip_network(dst, strict=False))
            except ValueError:
                pass
    # Broad routes/addresses (e.g. a 10.0.0.0/8 VPN route) are shadowed by
    # our more specific /24, so only networks of /16 or narrower conflict.
    return [n for n in nets if n.prefixlen >= 16]


def pick_subnet():
    import ipaddress
    import random
    used = used_networks()
    start = random.randrange(256)
    for i in range(256):
        x = (start + i) % 256
        net = ipaddress.ip_network(f'{SUBNET_BASE[0]}.{SUBNET_BASE[1]}.{x}.0/24')
        if not any(net.overlaps(u) for u in used):
            return x
    raise SwarmError(f'no free /24 in {SUBNET_BASE[0]}.{SUBNET_BASE[1]}.0.0/16')


# --------------------------------------------------------------------------
# teardown (down)

def teardown(d, st):
    sid = st.get('id')
    if not sid:
        return
    # names from the state plus whatever exists with our id (robust against
    # a state file written before a crash)
    names = {h['netns'] for h in st.get('hosts', [])}
    for line in run(['ip', 'netns', 'list']).stdout.splitlines():
        nm = line.split()[0] if line.split() else ''
        if nm.startswith(ns_prefix(sid)):
            names.add(nm)
    keys = {k for k in (ns_key(nm) for nm in names) if k is not None}

    def in_swarm():
        return [p for ps in scan_netns(keys).values() for p in ps]

    kill_until_gone(in_swarm, f'processes of swarm {sid}')
    log('processes killed')

    links = []
    for line in run(['ip', '-o', 'link']).stdout.splitlines():
        parts = line.split(':')
        if len(parts) > 1:
            nm = parts[1].strip().split('@')[0]
            if nm.startswith(link_prefix(sid)):
                links.append(nm)
    links.sort(key=lambda nm: nm == bridge_name(sid))     # bridge last
    ip_batch([f'link del {nm}' for nm in links], force=True)
    ip_batch([f'netns del {nm}' for nm in sorted(names)
              if os.path.exists(f'/run/netns/{nm}')], force=True)
    log('links and netns deleted')

    # keeper last, after it reaped the processes killed above
    kp = st.get('keeper')
    if kp and proc_comm(kp) == keeper_comm(sid):
        end = time.monotonic() + 2
        while time.monotonic() < end:
            zombies = False
            for ent in os.listdir('/proc'):
                if ent.isdigit():
                    s = proc_stat(int(ent))
                    if s and s[1] == kp and s[0] == 'Z':
                        zombies = True
                        break
            if not zombies:
                break
            time.sleep(0.02)
        kill_until_gone(lambda: [kp] if alive(kp) and
                        proc_comm(kp) == keeper_comm(sid) else [],
                        'swarm keeper')

    left = [l for l in run(['ip', '-o', 'link']).stdout.splitlines()
            if f': {link_prefix(sid)}' in l]
    left += [l for l in run(['ip', 'netns', 'list']).stdout.splitlines()
             if l.startswith(ns_prefix(sid))]
    if left:
        raise SwarmError('left behind: ' + '; '.join(left))
