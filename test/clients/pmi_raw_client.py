#!/usr/bin/env python3
"""Speaks raw PMI on PMI_FD, as no library would: for the tests that a
malformed or unknown command costs its rank an error answer (and, malformed,
its connection) and never the daemon. Prints every reply as
'rank R: <reply>' and 'rank R: closed' at end of stream.

  pmi_raw_client.py garbage    a line that is not PMI
  pmi_raw_client.py unknown    init, an unknown command, then get_appnum and finalize
  pmi_raw_client.py v2garbage  a PMI-2 init, then bytes that are no PMI-2 command
  pmi_raw_client.py nofinalize init, then exit 0 without finalize
  pmi_raw_client.py spawn      MPICH's spawn of two of this script ("child"), with a
                               preput PARENT_ROOT_PORT_NAME; each child reads it back
"""
import os
import socket
import sys

rank = os.environ.get("PMI_RANK", "?")
conn = socket.socket(fileno=int(os.environ["PMI_FD"]))
pending = b""


def say(text):
    print(f"rank {rank}: {text}", flush=True)


def reply():
    """One PMI-1 reply line, or None at end of stream."""
    global pending
    while b"\n" not in pending:
        chunk = conn.recv(4096)
        if not chunk:
            return None
        pending += chunk
    line, _, pending = pending.partition(b"\n")
    return line.decode()


def rest():
    """Everything until the daemon closes the connection."""
    global pending
    data = pending
    while True:
        chunk = conn.recv(4096)
        if not chunk:
            return data.decode(errors="replace")
        data += chunk


mode = sys.argv[1]
if mode == "garbage":
    conn.sendall(b"this is not pmi\n")
    say(rest().strip())
    say("closed")
elif mode == "unknown":
    for command in ("cmd=init pmi_version=1 pmi_subversion=1", "cmd=frobnicate x=1",
                    "cmd=get_appnum", "cmd=finalize"):
        conn.sendall(command.encode() + b"\n")
        say(reply())
elif mode == "v2garbage":
    conn.sendall(b"cmd=init pmi_version=2 pmi_subversion=0\n")
    say(reply())
    conn.sendall(b"zz    cmd=fullinit;")
    say(rest().strip())
    say("closed")
elif mode == "nofinalize":
    conn.sendall(b"cmd=init pmi_version=1 pmi_subversion=1\n")
    say(reply())
elif mode == "spawn":
    conn.sendall(b"cmd=init pmi_version=1 pmi_subversion=1\n")
    reply()
    conn.sendall(("mcmd=spawn\nnprocs=2\nexecname=" + sys.executable + "\ntotspawns=1\n"
                  "spawnssofar=1\nargcnt=2\narg1=" + os.path.abspath(__file__) + "\narg2=child\n"
                  "preput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=port-of-rank-" +
                  rank + "\ninfo_num=0\nendcmd\n").encode())
    say(reply())
    conn.sendall(b"cmd=finalize\n")
    say(reply())
elif mode == "child":
    conn.sendall(b"cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_my_kvsname\n")
    reply()
    kvsname = reply().split("kvsname=")[1]
    conn.sendall(f"cmd=get kvsname={kvsname} key=PARENT_ROOT_PORT_NAME\n".encode())
    value = reply()
    say(f"child of {kvsname} spawned={os.environ.get('PMI_SPAWNED')} size={os.environ.get('PMI_SIZE')}: {value}")
    conn.sendall(b"cmd=finalize\n")
    reply()
else:
    sys.exit(f"unknown mode {mode}")
