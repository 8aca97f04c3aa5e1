#!/usr/bin/env python3
"""swarm.py - a "namespace swarm": N fake hosts on one Linux machine.

Each fake host is a network namespace attached to a private bridge, with its
own hostname (UTS namespace), its own /etc/hosts (a private mount namespace
in which DIR/hosts is bind-mounted over /etc/hosts), an empty home (DIR/home
bind-mounted over root's, so logins run none of the machine's shell start-up
files) and a real OpenSSH sshd
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

Code layout
-----------
This file is the command line: argument parsing, help text and the
commands.  The machinery lives in swarmlib/ next to it: common (constants,
naming, helpers), state (DIR/swarm.json), netns (namespaces, processes,
subnet, teardown), sshd (keys, configs, sshd), keeper (the subreaper) and
up (bring-up).
"""

import argparse
import os
import signal
import sys
import time

# swarmlib/ lives next to this file; find it from any cwd.  No __pycache__
# in the source tree (the script itself was never cached either).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from swarmlib import common  # noqa: E402
from swarmlib.common import (EXEC_ERROR, MAX_HOSTS, SwarmError,  # noqa: E402
                             abs_dir, keeper_comm, keeper_sock, log, run,
                             tail)
from swarmlib.netns import (alive, host_anchor, kill_until_gone,  # noqa: E402
                            ns_key, nsenter_argv, proc_comm, scan_netns,
                            teardown)
from swarmlib.sshd import (sshd_argv, sshd_listeners,  # noqa: E402
                           sshd_log_path, tcp_accepts)
from swarmlib.state import (StateLock, host_lines, load_state,  # noqa: E402
                            require_up, save_state, state_file)
from swarmlib.up import launch, validate_dir, validate_names  # noqa: E402


# --------------------------------------------------------------------------
# up and down

def cmd_up(args):
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
    return launch(d, names, args.timeout, args.slurm)


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
    on_host = lambda: [p for p in scan_netns({k})[k] if p != h['anchor']]
    # A host dies all at once: freeze every process on it first, so that no
    # daemon reaps and reports its SIGKILLed rank before it dies itself.
    for p in on_host():
        try:
            os.kill(p, signal.SIGSTOP)
        except ProcessLookupError:
            pass
    kill_until_gone(on_host, f'processes on {h["name"]}')
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
  up DIR --hosts N [--names a,b,...] [--slurm]
                        create the hosts (default names node0..nodeN-1), wait
                        until every sshd accepts a real ssh login from the
                        first host, print "NAME ADDRESS ANCHORPID" per host;
                        --slurm adds a real Slurm cluster (munged, slurmctld
                        on the first host, slurmd everywhere; clients need
                        SLURM_CONF=DIR/slurm/slurm.conf)
  list DIR              print the same lines again
  exec DIR HOST -- CMD...
                        run CMD inside HOST (its network, hostname and mount
                        namespaces); stdio and exit status pass through and
                        CMD keeps swarm.py's pid (exec, no fork).  Exit 125 if
                        swarm.py itself fails
  kill-host DIR HOST    SIGSTOP, then SIGKILL, every process of HOST but its anchor
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
  home/                 empty; bind-mounted over root's home on every host
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
    sp.add_argument('--slurm', action='store_true',
                    help='also run a real Slurm cluster: munged and slurmctld '
                         'on the first host, slurmd on every host (clients '
                         'need SLURM_CONF=DIR/slurm/slurm.conf)')
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
    common.VERBOSE = getattr(args, 'verbose', False)
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
