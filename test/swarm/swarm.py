#!/usr/bin/env python3
"""swarm.py - a "namespace swarm": N fake hosts on one Linux machine.

Each fake host is a network namespace attached to a private bridge, with its
own hostname (UTS namespace), its own /etc/hosts (a private mount namespace
in which DIR/hosts is bind-mounted over /etc/hosts) and a real OpenSSH sshd
listening on the host's address, port 22.  Everything the swarm creates on
disk lives in DIR; every kernel object it creates carries a short random id
that is stored in DIR/swarm.json, so several swarms can be up at once.

Needs root, iproute2, util-linux (nsenter, unshare, mount) and the Debian
package openssh-server (/usr/sbin/sshd, the "sshd" user).  Python 3.11,
stdlib only.

Process layout
--------------
* anchor (one per host): `sleep infinity` inside the host's network, UTS and
  mount namespaces.  Later commands enter the host with
  `nsenter -t ANCHORPID -n -u -m`.
* sshd (one per host): `/usr/sbin/sshd -D -f DIR/sshd_config.NAME`, entered
  the same way.
* keeper (one per swarm, root namespaces): a small process that is a child
  subreaper (PR_SET_CHILD_SUBREAPER) and the ancestor of the anchors and
  sshds, so that processes of the swarm that die are reaped even when PID 1
  of the machine does not reap orphans.  It also starts sshd for
  `start-sshd`.  Its command name (comm) is "swarmk-ID".
"""

import argparse
import json
import os
import signal
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


# --------------------------------------------------------------------------
# state (DIR/swarm.json)

def state_file(d):
    return os.path.join(d, STATE)


def load_state(d, required=True):
    text = read_text(state_file(d))
    if text is None:
        if required:
            raise SwarmError(f'{d}: no swarm here ({STATE} missing)')
        return None
    try:
        return json.loads(text)
    except ValueError as e:
        raise SwarmError(f'{state_file(d)}: corrupt: {e}')


def save_state(d, st):
    write_file(state_file(d), json.dumps(st, indent=1) + '\n')


class StateLock:
    """flock on DIR/swarm.lock around read-modify-write of the state."""

    def __init__(self, d):
        self.path = os.path.join(d, 'swarm.lock')

    def __enter__(self):
        import fcntl
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                          0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *a):
        os.close(self.fd)


def require_up(st):
    if st.get('state') != 'up':
        raise SwarmError(f'swarm {st.get("id")} is not up '
                         f'(state: {st.get("state")})')


def find_host(st, name):
    for h in st.get('hosts', []):
        if h['name'] == name:
            return h
    names = ', '.join(h['name'] for h in st.get('hosts', []))
    raise SwarmError(f'no host {name!r} in this swarm (hosts: {names})')


def host_lines(st):
    return [f'{h["name"]} {h["addr"]} {h["anchor"]}' for h in st['hosts']]


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
# sshd

def sshd_config_path(d, name):
    return os.path.join(d, f'sshd_config.{name}')


def sshd_log_path(d, name):
    return os.path.join(d, f'sshd.{name}.log')


def sshd_argv(d, h):
    return nsenter_argv(h['anchor']) + [
        '--', SSHD, '-D', '-f', sshd_config_path(d, h['name']),
        '-E', sshd_log_path(d, h['name'])]


def sshd_listeners(d, h):
    """pids of the host's listening sshd (not its per-connection children).
    The listener's command line keeps the -f path; session processes are
    retitled "sshd: root@notty" etc."""
    k = ns_key(h['netns'])
    if k is None:
        return []
    opt = f"-f {sshd_config_path(d, h['name'])} "
    return [p for p in scan_netns({k})[k]
            if proc_comm(p) == 'sshd' and opt in proc_cmdline(p) + ' ']


def tcp_accepts(addr, port=22, timeout=0.3):
    import socket
    try:
        with socket.create_connection((addr, port), timeout=timeout):
            return True
    except OSError:
        return False


def sshd_config_text(d, h):
    return f"""# generated by swarm.py for host {h['name']}
Port 22
ListenAddress {h['addr']}
AddressFamily inet
HostKey {d}/keys/ssh_host_ed25519_key
PidFile {d}/run/sshd.{h['name']}.pid
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile {d}/keys/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
HostbasedAuthentication no
StrictModes no
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
LogLevel ERROR
LoginGraceTime 30
MaxStartups 1000
MaxSessions 1000
Subsystem sftp internal-sftp
"""


def ssh_config_text(d):
    return f"""# generated by swarm.py; use as: ssh -F {d}/ssh_config HOST CMD
Host *
  User root
  Port 22
  IdentityFile {d}/keys/id_ed25519
  IdentitiesOnly yes
  IdentityAgent none
  PreferredAuthentications publickey
  PasswordAuthentication no
  KbdInteractiveAuthentication no
  UserKnownHostsFile {d}/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking no
  UpdateHostKeys no
  CheckHostIP no
  HashKnownHosts no
  BatchMode yes
  LogLevel ERROR
  ConnectTimeout 5
  ConnectionAttempts 1
  ControlMaster no
  ControlPath none
  AddressFamily inet
  ForwardAgent no
  ForwardX11 no
"""


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
# up

ANCHOR_SCRIPT = r'''set -e
printf 'link set lo up\naddr add %s/24 dev eth0\nlink set eth0 up\n' "$2" | ip -batch -
hostname "$1"
mount --bind "$3" /etc/hosts
# Our private mount namespace got copies of every /run/netns/* mount, which
# would keep other swarms' namespaces alive after they are deleted.
umount -l /run/netns 2>/dev/null || true
echo ready
exec sleep infinity </dev/null >/dev/null 2>&1
'''


def check_prereqs():
    import pwd
    import shutil
    if os.geteuid() != 0:
        raise SwarmError('must run as root')
    missing = [c for c in ('ip', 'nsenter', 'unshare', 'mount', 'hostname',
                           'sleep', 'ssh', 'ssh-keygen')
               if shutil.which(c) is None]
    if not os.access(SSHD, os.X_OK):
        missing.append(SSHD + ' (install openssh-server)')
    if missing:
        raise SwarmError('missing: ' + ', '.join(missing))
    try:
        pwd.getpwnam('sshd')
    except KeyError:
        raise SwarmError('user "sshd" does not exist (install openssh-server)')


def validate_names(names):
    import re
    ok = re.compile(r'^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$')
    for n in names:
        if not ok.match(n) or n.isdigit():
            raise SwarmError(f'bad host name {n!r}: use letters, digits and '
                             f'"-", not all digits')
        if n.lower() in ('localhost', 'ip6-localhost', 'ip6-loopback'):
            raise SwarmError(f'host name {n!r} is reserved')
    if len({n.lower() for n in names}) != len(names):
        raise SwarmError('host names must be unique')


def validate_dir(d):
    bad = set(' \t\n\r"\'%\\#')
    if any(c in bad or not c.isprintable() for c in d):
        raise SwarmError(f'{d!r}: DIR must not contain whitespace, quotes, '
                         f'"%", "#" or "\\" (it is written into ssh configs)')


def make_keys(d):
    import subprocess
    kd = os.path.join(d, 'keys')
    os.makedirs(kd, exist_ok=True)
    os.chmod(kd, 0o700)
    procs = []
    for f, comment in (('ssh_host_ed25519_key', 'swarm-host'),
                       ('id_ed25519', 'swarm-user')):
        path = os.path.join(kd, f)
        for p in (path, path + '.pub'):
            if os.path.exists(p):
                os.unlink(p)
        procs.append(subprocess.Popen(
            ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', comment,
             '-f', path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True))
    for p in procs:
        out = p.communicate(timeout=30)[0]
        if p.returncode != 0:
            raise SwarmError(f'ssh-keygen failed: {out.strip()}')
    pub = read_text(os.path.join(kd, 'id_ed25519.pub'))
    write_file(os.path.join(kd, 'authorized_keys'), pub, 0o600)
    return read_text(os.path.join(kd, 'ssh_host_ed25519_key.pub')).split()[:2]


def ensure_privsep_dir():
    # sshd's privilege-separation chroot; must be root-owned, not writable by
    # group/others.  This is the one path outside DIR that we create.
    d = '/run/sshd'
    if not os.path.isdir(d):
        os.makedirs(d, mode=0o755, exist_ok=True)
        os.chmod(d, 0o755)
    s = os.stat(d)
    if s.st_uid != 0 or s.st_mode & 0o022:
        raise SwarmError(f'{d} must be owned by root and not group/world '
                         f'writable (sshd refuses to start otherwise)')


def bring_up(d, st, names, timeout):
    """Create everything; st is saved as we go so that down can clean up."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor
    sid = st['id']
    n = len(names)
    deadline = time.monotonic() + timeout

    check_prereqs()
    hostkey = make_keys(d)
    log('keys generated')
    ensure_privsep_dir()
    os.makedirs(os.path.join(d, 'run'), exist_ok=True)
    os.makedirs(os.path.join(d, 'hidden'), exist_ok=True)

    # bridge + subnet
    br = bridge_name(sid)
    with GlobalLock():
        x = pick_subnet()
        prefix = f'{SUBNET_BASE[0]}.{SUBNET_BASE[1]}.{x}'
        st['bridge'] = br
        st['subnet'] = f'{prefix}.0/24'
        save_state(d, st)
        ip_batch([f'link add {br} type bridge',
                  f'addr add {prefix}.254/24 dev {br}',
                  f'link set {br} up'])
    log(f'bridge {br} {prefix}.254/24')

    hosts = [{'name': nm, 'index': k, 'netns': ns_name(sid, k),
              'veth': veth_name(sid, k), 'addr': f'{prefix}.{k + 1}',
              'anchor': None} for k, nm in enumerate(names)]
    st['hosts'] = hosts
    save_state(d, st)

    # files
    hosts_text = ('# generated by swarm.py ' + sid + '\n'
                  '127.0.0.1\tlocalhost\n'
                  '::1\tlocalhost ip6-localhost ip6-loopback\n'
                  + ''.join(f'{h["addr"]}\t{h["name"]}\n' for h in hosts))
    write_file(os.path.join(d, 'hosts'), hosts_text)
    write_file(os.path.join(d, 'known_hosts'), ''.join(
        f'{h["name"]},{h["addr"]} {hostkey[0]} {hostkey[1]}\n' for h in hosts))
    write_file(os.path.join(d, 'ssh_config'), ssh_config_text(d))
    write_file(os.path.join(d, 'ssh'),
               f'#!/bin/sh\nexec ssh -F {d}/ssh_config "$@"\n', 0o755)
    for h in hosts:
        write_file(sshd_config_path(d, h['name']), sshd_config_text(d, h))

    # namespaces and links
    ip_batch([f'netns add {h["netns"]}' for h in hosts])
    lines = []
    for h in hosts:
        lines.append(f'link add {h["veth"]} type veth peer name eth0 '
                     f'netns {h["netns"]}')
        lines.append(f'link set {h["veth"]} master {br} up')
    ip_batch(lines)
    log(f'{n} netns + veths')

    # anchors
    anchors = []
    for h in hosts:
        anchors.append(subprocess.Popen(
            ['ip', 'netns', 'exec', h['netns'],
             'unshare', '--uts', '--mount', '--propagation', 'private', '--',
             'sh', '-c', ANCHOR_SCRIPT, 'anchor', h['name'], h['addr'],
             os.path.join(d, 'hosts')],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True))
    for h, p in zip(hosts, anchors):
        h['anchor'] = p.pid       # ip, unshare and sh all exec: pid is final
    save_state(d, st)
    import select
    for h, p in zip(hosts, anchors):
        r = select.select([p.stdout], [], [],
                          max(0.0, deadline - time.monotonic()))[0]
        line = p.stdout.readline() if r else ''
        if line.strip() != 'ready':
            if not r:
                raise SwarmError(f'host {h["name"]}: anchor did not start '
                                 f'within the timeout')
            p.wait(timeout=5)
            raise SwarmError(f'host {h["name"]}: anchor setup failed: '
                             f'{p.stderr.read().strip()}')
        p.stdout.close()
        p.stderr.close()
    for h in hosts:   # sleep must be running in the netns by now
        for _ in range(100):
            if proc_comm(h['anchor']) == 'sleep':
                break
            time.sleep(0.005)
        if not anchor_ok(h) or proc_comm(h['anchor']) != 'sleep':
            raise SwarmError(f'host {h["name"]}: anchor pid {h["anchor"]} is '
                             f'not a sleep in {h["netns"]}')
    log(f'{n} anchors ready')

    # sshd
    sshds = []
    for h in hosts:
        logf = open(sshd_log_path(d, h['name']), 'ab')
        sshds.append(subprocess.Popen(
            sshd_argv(d, h), stdin=subprocess.DEVNULL, stdout=logf,
            stderr=logf, start_new_session=True))
        logf.close()
    log(f'{n} sshd started')
    pending = list(zip(hosts, sshds))
    while pending:
        rest = []
        for h, p in pending:
            if p.poll() is not None:
                raise SwarmError(f'host {h["name"]}: sshd exited with status '
                                 f'{p.returncode}; log '
                                 f'{sshd_log_path(d, h["name"])}:\n'
                                 + tail(sshd_log_path(d, h['name'])))
            if not tcp_accepts(h['addr']):
                rest.append((h, p))
        pending = rest
        if pending:
            if time.monotonic() > deadline:
                raise SwarmError('sshd not listening on: ' + ', '.join(
                    h['name'] for h, _ in pending))
            time.sleep(0.02)
    log(f'{n} sshd listening')

    # A real ssh login from host 0 to every host.  Most probes open the sftp
    # subsystem (internal-sftp: key exchange, host key check, pubkey login
    # and a session, but no login shell, whose rc files can be slow); the
    # last host runs `hostname` through the shell to check that path too.
    h0 = hosts[0]
    ssh_cfg = os.path.join(d, 'ssh_config')

    def probe(h):
        last = ''
        full = h is hosts[-1]
        cmd = [h['name'], 'hostname'] if full else ['-s', h['name'], 'sftp']
        while True:
            left = deadline - time.monotonic()
            try:
                p = subprocess.run(
                    nsenter_argv(h0['anchor']) + ['--', 'ssh', '-F', ssh_cfg]
                    + cmd, stdin=subprocess.DEVNULL, capture_output=True,
                    text=True, timeout=max(1.0, min(15.0, left)))
                if p.returncode == 0 and (not full or
                                          p.stdout.strip() == h['name']):
                    return None
                last = (f'exit {p.returncode}, stdout {p.stdout.strip()!r}, '
                        f'stderr {p.stderr.strip()!r}')
            except subprocess.TimeoutExpired:
                last = 'ssh timed out'
            if time.monotonic() > deadline:
                return (f'ssh {h0["name"]} -> {h["name"]} failed ({last}); '
                        f'sshd log:\n' + tail(sshd_log_path(d, h['name'])))
            time.sleep(0.1)

    with ThreadPoolExecutor(max_workers=min(8, n)) as ex:
        errs = [e for e in ex.map(probe, hosts) if e]
    if errs:
        raise SwarmError('\n'.join(errs))
    log(f'ssh from {h0["name"]} to all {n} hosts works')

    st['state'] = 'up'
    save_state(d, st)


# --------------------------------------------------------------------------
# keeper: child subreaper + sshd starter, one per swarm

def set_subreaper_and_name(name):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_NAME, PR_SET_CHILD_SUBREAPER = 15, 36
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return False
    libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)
    return True


def keeper_main(d, sid, srv, worker_pid):
    """Runs forever (until SIGKILLed by down, or the worker fails)."""
    worker_status = [None]

    def reap(*_):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == worker_pid:
                worker_status[0] = os.waitstatus_to_exitcode(status)

    signal.signal(signal.SIGCHLD, reap)
    reap()
    srv.settimeout(None)
    while True:
        if worker_status[0] is not None and worker_status[0] != 0:
            # bring-up failed and was torn down: reap leftovers and leave
            end = time.monotonic() + 5
            while time.monotonic() < end:
                try:
                    pid, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    time.sleep(0.02)
            os._exit(0)
        try:
            srv.settimeout(0.5 if worker_status[0] is None else None)
            conn, _ = srv.accept()
        except (TimeoutError, OSError):
            continue
        with conn:
            try:
                conn.settimeout(5)
                req = conn.recv(512).decode().split()
                if len(req) == 2 and req[0] == 'start-sshd':
                    st = load_state(d)
                    h = find_host(st, req[1])
                    log_path = sshd_log_path(d, h['name'])
                    argv = sshd_argv(d, h)
                    import shutil
                    pid = os.posix_spawn(
                        shutil.which(argv[0]), argv, os.environ,
                        file_actions=[
                            (os.POSIX_SPAWN_OPEN, 0, '/dev/null', os.O_RDONLY, 0),
                            (os.POSIX_SPAWN_OPEN, 1, log_path,
                             os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
                            (os.POSIX_SPAWN_DUP2, 1, 2)],
                        setsid=True,
                        setsigdef=(signal.SIGINT, signal.SIGTERM,
                                   signal.SIGHUP))
                    conn.sendall(f'OK {pid}\n'.encode())
                else:
                    conn.sendall(b'ERR bad request\n')
            except Exception as e:   # keep serving
                try:
                    conn.sendall(f'ERR {e}\n'.encode())
                except OSError:
                    pass


def cmd_up(args):
    import secrets
    import socket
    d = abs_dir(args.dir)
    validate_dir(d)
    if args.names:
        names = [x for x in args.names.split(',') if x]
        if args.hosts is not None and args.hosts != len(names):
            raise SwarmError(f'--hosts {args.hosts} but {len(names)} --names')
    else:
        if args.hosts is None:
            raise SwarmError('give --hosts N (and/or --names)')
        names = [f'node{k}' for k in range(args.hosts)]
    if not 1 <= len(names) <= MAX_HOSTS:
        raise SwarmError(f'number of hosts must be 1..{MAX_HOSTS}')
    validate_names(names)
    old = load_state(d, required=False)
    if old and old.get('state') != 'down':
        raise SwarmError(f'{d} already holds swarm {old.get("id")} (state '
                         f'{old.get("state")}); run "swarm.py down {d}" first')
    if os.geteuid() != 0:
        raise SwarmError('must run as root')

    existing = run(['ip', '-o', 'link']).stdout + run(['ip', 'netns', 'list']).stdout
    while True:
        sid = secrets.token_hex(3)
        if link_prefix(sid) not in existing and ns_prefix(sid) not in existing:
            break
    st = {'version': VERSION, 'id': sid, 'dir': d, 'state': 'creating',
          'hosts': [], 'keeper': None, 'created': time.time()}
    save_state(d, st)

    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(keeper_sock(sid))
    srv.listen(64)
    rfd, wfd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()

    keeper = os.fork()
    if keeper == 0:
        # ---- keeper
        try:
            os.close(rfd)
            os.setsid()
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(s, signal.SIG_IGN)
            set_subreaper_and_name(keeper_comm(sid))
            worker = os.fork()
            if worker == 0:
                # ---- worker: does the bring-up, reports on wfd
                srv.close()
                os._exit(worker_main(d, st, names, args.timeout, wfd))
            os.close(wfd)
            os.chdir('/')
            nul = os.open('/dev/null', os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(nul, fd)
            os.close(nul)
            keeper_main(d, sid, srv, worker)
        finally:
            os._exit(1)

    # ---- original process: relay the worker's result
    srv.close()
    os.close(wfd)
    worker_pid = [None]

    def forward(sig, _frame):
        if worker_pid[0]:
            try:
                os.kill(worker_pid[0], sig)
            except ProcessLookupError:
                pass

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, forward)
    code = None
    with os.fdopen(rfd) as r:
        for line in r:
            tag, _, val = line.strip().partition(' ')
            if tag == 'P':
                worker_pid[0] = int(val)
            elif tag == 'X':
                code = int(val)
    if code is None:
        sys.stderr.write('swarm: up: worker process died unexpectedly\n')
        code = 1
    if code != 0:
        try:
            os.waitpid(keeper, 0)     # it exits once the worker has failed
        except ChildProcessError:
            pass
    return code


def worker_main(d, st, names, timeout, wfd):
    """Returns the exit code for `up`; prints to the inherited stdout/err."""
    def report(s):
        os.write(wfd, (s + '\n').encode())

    class Interrupted(Exception):
        pass

    def on_signal(sig, _frame):
        raise Interrupted(f'interrupted by signal {sig}')

    report(f'P {os.getpid()}')
    code = 0
    try:
        st['keeper'] = os.getppid()
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, on_signal)
        bring_up(d, st, names, timeout)
        out = ''.join(l + '\n' for l in host_lines(st))
        sys.stdout.write(out)
        sys.stdout.flush()
        log('up done')
    except Exception as e:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if isinstance(e, (SwarmError, Interrupted)):
            msg = str(e)
        else:
            import traceback
            msg = f'internal error: {e!r}\n{traceback.format_exc()}'
        sys.stderr.write(f'swarm: up failed: {msg}\n')
        try:
            st['keeper'] = None        # exits by itself once we fail
            save_state(d, st)
            teardown(d, st)
            st['state'] = 'down'
            save_state(d, st)
            sys.stderr.write('swarm: everything created so far was removed\n')
        except Exception as e2:
            sys.stderr.write(f'swarm: teardown after failure also failed: '
                             f'{e2}\n  run: {sys.argv[0]} down {d}\n')
        sys.stderr.flush()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    report(f'X {code}')
    return code


# --------------------------------------------------------------------------
# down

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


def cmd_down(args):
    d = os.path.realpath(args.dir)
    if not os.path.isfile(state_file(d)):
        return 0        # nothing here (never up, or DIR already removed)
    with StateLock(d):
        st = load_state(d, required=False)
        if not st:
            return 0
        teardown(d, st)
        st['state'] = 'down'
        st['keeper'] = None
        for h in st.get('hosts', []):
            h['hidden'] = []
        save_state(d, st)
    return 0


# --------------------------------------------------------------------------
# other commands

def cmd_list(args):
    d = abs_dir(args.dir)
    st = load_state(d)
    require_up(st)
    sys.stdout.write(''.join(l + '\n' for l in host_lines(st)))
    return 0


def cmd_exec(args):
    cmd = list(args.cmd)
    if cmd and cmd[0] == '--':
        cmd = cmd[1:]
    if not cmd:
        raise SwarmError('exec: no command given (exec DIR HOST -- CMD ...)')
    d = abs_dir(args.dir)
    st = load_state(d)
    require_up(st)
    h = host_anchor(st, args.host)
    argv = nsenter_argv(h['anchor'])
    try:
        # without -w, entering the mount namespace would leave us in "/";
        # nsenter opens this directory before entering, then fchdir()s.
        argv.append('--wd=' + os.getcwd())
    except OSError:
        pass
    argv += ['--'] + cmd
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(argv[0], argv)   # no fork: the caller's child pid is CMD's
    except OSError as e:
        raise SwarmError(f'cannot exec nsenter: {e}')


def cmd_kill_host(args):
    d = abs_dir(args.dir)
    st = load_state(d)
    require_up(st)
    h = host_anchor(st, args.host)
    k = ns_key(h['netns'])
    kill_until_gone(lambda: [p for p in scan_netns({k})[k] if p != h['anchor']],
                    f'processes on {h["name"]}')
    return 0


def cmd_ps(args):
    d = abs_dir(args.dir)
    st = load_state(d)
    require_up(st)
    h = host_anchor(st, args.host)
    k = ns_key(h['netns'])
    for pid in sorted(scan_netns({k})[k]):
        if pid == h['anchor']:
            continue
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmdline = f.read().replace(b'\0', b' ').decode(errors='replace').strip()
        except OSError:
            continue  # gone meanwhile
        print(f'{pid} {cmdline}')
    return 0


def cmd_stop_sshd(args):
    d = abs_dir(args.dir)
    st = load_state(d)
    require_up(st)
    h = host_anchor(st, args.host)
    kill_until_gone(lambda: sshd_listeners(d, h), f'sshd on {h["name"]}')
    return 0


def cmd_start_sshd(args):
    import socket
    d = abs_dir(args.dir)
    st = load_state(d)
    require_up(st)
    h = host_anchor(st, args.host)
    if sshd_listeners(d, h):
        return 0
    pid = None
    kp = st.get('keeper')
    if kp and proc_comm(kp) == keeper_comm(st['id']):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(10)
                s.connect(keeper_sock(st['id']))
                s.sendall(f'start-sshd {h["name"]}\n'.encode())
                reply = s.recv(512).decode().split(None, 1)
            if reply and reply[0] == 'OK':
                pid = int(reply[1])
            else:
                log(f'keeper refused: {reply}')
        except OSError as e:
            log(f'keeper unreachable: {e}')
    if pid is None:   # no keeper: start it ourselves (not reaped on a bad init)
        import subprocess
        with open(sshd_log_path(d, h['name']), 'ab') as logf:
            pid = subprocess.Popen(sshd_argv(d, h), stdin=subprocess.DEVNULL,
                                   stdout=logf, stderr=logf,
                                   start_new_session=True).pid
    deadline = time.monotonic() + args.timeout
    while not tcp_accepts(h['addr']):
        if not alive(pid) or time.monotonic() > deadline:
            raise SwarmError(f'sshd on {h["name"]} did not start; log:\n'
                             + tail(sshd_log_path(d, h['name'])))
        time.sleep(0.02)
    return 0


def cmd_hide(args):
    d = abs_dir(args.dir)
    if not os.path.isabs(args.path):
        raise SwarmError('PATH must be absolute')
    path = os.path.normpath(args.path)
    with StateLock(d):
        st = load_state(d)
        require_up(st)
        h = host_anchor(st, args.host)
        hidden = h.setdefault('hidden', [])
        if path in hidden:
            return 0
        empty = os.path.join(d, 'hidden', f'{h["name"]}.{len(hidden)}.'
                             f'{int(time.time() * 1000)}')
        os.makedirs(empty, mode=0o755)
        p = run(['nsenter', '-t', str(h['anchor']), '-m', '--',
                 'mount', '--bind', empty, path], check=False)
        if p.returncode != 0:
            os.rmdir(empty)
            raise SwarmError(f'hide {path} on {h["name"]}: '
                             f'{p.stderr.strip()}')
        hidden.append(path)
        save_state(d, st)
    return 0


def cmd_unhide(args):
    d = abs_dir(args.dir)
    path = os.path.normpath(args.path)
    with StateLock(d):
        st = load_state(d)
        require_up(st)
        h = host_anchor(st, args.host)
        hidden = h.setdefault('hidden', [])
        if path not in hidden:
            raise SwarmError(f'{path} is not hidden on {h["name"]}')
        run(['nsenter', '-t', str(h['anchor']), '-m', '--', 'umount', path])
        hidden.remove(path)
        save_state(d, st)
    return 0


# --------------------------------------------------------------------------
# CLI

HELP = """\
Build and tear down a "namespace swarm": N fake hosts on this machine, each a
network namespace on a private bridge with its own hostname, its own
/etc/hosts and a real sshd on port 22 of its own address.  Needs root and
openssh-server.  DIR is a directory created by the caller; the swarm keeps
all its files and state there.

commands:
  up DIR --hosts N [--names a,b,...]
                        create the hosts (default names node0..nodeN-1), wait
                        until every sshd accepts a real ssh login from the
                        first host, print "NAME ADDRESS ANCHORPID" per host
  list DIR              print the same lines again
  exec DIR HOST -- CMD...
                        run CMD inside HOST (its network, hostname and mount
                        namespaces); stdio and exit status pass through and
                        CMD keeps swarm.py's pid (exec, no fork).  Exit 125 if
                        swarm.py itself fails
  kill-host DIR HOST    SIGKILL every process of HOST except its anchor
                        (sshd included) and wait until they are gone
  stop-sshd DIR HOST    kill HOST's listening sshd (ssh then gets "connection
                        refused"; established sessions survive)
  start-sshd DIR HOST   start HOST's sshd again (no-op if it is running)
  hide DIR HOST PATH    on HOST only, bind-mount an empty directory over the
                        directory PATH (e.g. to simulate "not installed")
  unhide DIR HOST PATH  undo hide
  down DIR              kill everything in the swarm and delete its
                        namespaces, veths and bridge; idempotent, silent

files in DIR after up:
  swarm.json            state (id, subnet, hosts, pids)
  hosts                 bind-mounted over /etc/hosts on every host
  ssh_config            client config: ssh -F DIR/ssh_config HOST CMD
                        (root, key DIR/keys/id_ed25519, BatchMode, no agent)
  ssh                   wrapper script: DIR/ssh HOST CMD
  known_hosts           pre-filled with every host's name and address
  keys/                 per-run host key, user key, authorized_keys
  sshd_config.NAME, sshd.NAME.log, run/sshd.NAME.pid
                        per-host sshd config, log (LogLevel ERROR), pid file

kernel objects (ID = 6 hex digits in swarm.json): netns swarm-ID-K, bridge
swIDbr with address 10.211.X.254/24 (X picked free), veths swIDvK (eth0 in
the host, address 10.211.X.(K+1)).  A per-swarm "keeper" process (comm
swarmk-ID) reaps the swarm's processes and starts sshd for start-sshd.
Outside DIR only /run/sshd (sshd's privsep dir) is created if missing.

examples:
  d=$(mktemp -d); swarm.py up $d --hosts 4
  swarm.py exec $d node0 -- ssh -F $d/ssh_config node3 hostname
  swarm.py down $d; rm -rf $d
"""


def main(argv=None):
    global VERBOSE
    p = argparse.ArgumentParser(
        prog='swarm.py', description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('-v', '--verbose', action='store_true',
                   help='log progress with timestamps to stderr')
    sub = p.add_subparsers(dest='command', metavar='COMMAND', required=True)

    def add(name, helptext, host=False):
        sp = sub.add_parser(name, help=helptext, description=helptext)
        sp.add_argument('dir', metavar='DIR', help='the swarm directory')
        if host:
            sp.add_argument('host', metavar='HOST', help='host name')
        sp.add_argument('-v', '--verbose', action='store_true',
                        default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        return sp

    sp = add('up', 'create the swarm and wait until all sshd accept logins')
    sp.add_argument('--hosts', type=int, metavar='N',
                    help='number of hosts (1..253)')
    sp.add_argument('--names', metavar='A,B,...',
                    help='comma-separated host names (default node0..)')
    sp.add_argument('--timeout', type=float, default=60.0, metavar='SEC',
                    help='give up (and tear down) after SEC seconds '
                         '(default 60)')
    add('list', 'print "NAME ADDRESS ANCHORPID" for every host')
    sp = add('exec', 'run a command inside a host', host=True)
    sp.add_argument('cmd', nargs=argparse.REMAINDER, metavar='-- CMD ...',
                    help='command and arguments')
    add('kill-host', 'kill every process of a host but its anchor', host=True)
    add('ps', 'print "PID COMMAND LINE" for every process of a host but its anchor',
        host=True)
    add('stop-sshd', "kill a host's listening sshd", host=True)
    sp = add('start-sshd', "start a host's sshd again", host=True)
    sp.add_argument('--timeout', type=float, default=10.0, metavar='SEC')
    for name, h in (('hide', 'bind-mount an empty directory over PATH on '
                             'one host'),
                    ('unhide', 'undo hide')):
        sp = add(name, h, host=True)
        sp.add_argument('path', metavar='PATH', help='absolute directory path')
    add('down', 'tear the swarm down (idempotent)')

    args = p.parse_args(argv)
    VERBOSE = getattr(args, 'verbose', False)
    fn = {'up': cmd_up, 'list': cmd_list, 'exec': cmd_exec,
          'kill-host': cmd_kill_host, 'ps': cmd_ps, 'stop-sshd': cmd_stop_sshd,
          'start-sshd': cmd_start_sshd, 'hide': cmd_hide,
          'unhide': cmd_unhide, 'down': cmd_down}[args.command]
    try:
        return fn(args)
    except SwarmError as e:
        sys.stderr.write(f'swarm: {args.command}: {e}\n')
        return EXEC_ERROR if args.command == 'exec' else 1
    except KeyboardInterrupt:
        sys.stderr.write(f'swarm: {args.command}: interrupted\n')
        return 130


if __name__ == '__main__':
    sys.exit(main())
