"""Swarm state: DIR/swarm.json, its lock, and looking up hosts in it."""

import json
import os

from .common import STATE, SwarmError, read_text, write_file


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
