"""The keeper: one child-subreaper process per swarm that also starts sshd."""

import os
import signal
import time

from .sshd import sshd_argv, sshd_log_path
from .state import find_host, load_state


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
