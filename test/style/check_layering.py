#!/usr/bin/env python3
"""The layout of src/ is the architecture: each folder may include only the
folders below it, and the pure layers (util, rml, grpcomm, sim) touch no
sockets, event loops, threads, libpmix or clocks. Fails naming every include
that breaks the rule. `--self-test` plants violations in a scratch tree and
shows each is caught."""
import re
import sys

import style_check

# Folder -> the folders its files may include (itself always allowed).
ALLOWED = {
    "util": set(),
    "os": {"util"},
    "rml": {"util"},
    "rml/transport": {"util", "os", "rml"},
    "grpcomm": {"util", "rml"},
    "jobs": {"util", "rml", "grpcomm"},
    "jobs/host": {"util", "os", "rml", "rml/transport", "grpcomm", "jobs"},
    "daemon/control_plane": {"util", "rml", "grpcomm", "jobs"},
    "sim": {"util", "rml", "grpcomm", "jobs", "daemon/control_plane"},
    "pmix": {"util", "os", "rml/transport"},
    "pmi": {"util"},
    "control": {"util", "os", "rml", "rml/transport", "grpcomm", "jobs"},
    "plm": {"util", "os", "rml", "rml/transport"},
    "daemon": {"util", "os", "rml", "rml/transport", "grpcomm", "jobs", "jobs/host", "control",
               "pmix", "pmi", "plm", "daemon/control_plane"},
    "launcher": {"util", "os", "rml", "rml/transport", "grpcomm", "sim", "jobs", "jobs/host",
                 "control", "pmix", "pmi", "plm", "daemon", "daemon/control_plane"},
}
PURE = {"util", "rml", "grpcomm", "jobs", "sim", "daemon/control_plane", "pmi"}
# What the pure layers must not include: sockets, event loops, threads, PMIx,
# process-global state (CPU binding, rlimits, the allocator) and children.
IMPURE_SYSTEM = re.compile(
    r"^(event2/|sys/socket\.h|sys/epoll\.h|netinet/|arpa/|netdb\.h|pmix|thread$|mutex$|"
    r"condition_variable$|future$|pthread\.h|unistd\.h|chrono$|sched\.h|sys/resource\.h|"
    r"malloc\.h|dirent\.h|sys/wait\.h|spawn\.h)")
# Nor read a clock: drivers hand the engine `now`.
CLOCK_CALLS = re.compile(r"\b(monotonic_now_ns|clock_gettime|steady_clock|system_clock)\b")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# Pure files allowed a clock: the one place grove reads it.
CLOCK_OWNERS = {"util/clock.cc", "util/clock.h", "util/log.cc"}
# libevent is called only by os/ (Timer, IoWatch, ...) and by the drivers:
# the network's (rml/transport) and the daemon's (daemon_runtime). Every
# other file uses os/'s types and sees no <event2/...>.
EVENT2_FOLDERS = {"os", "rml/transport"}
EVENT2_FILES = {"daemon/daemon_runtime.h", "daemon/daemon_runtime.cc"}


# Nor does any other file call libevent (through a header that includes it).
EVENT2_CALLS = re.compile(
    r"\b(event_new|evtimer_new|evsignal_new|event_base_\w+|event_add|event_del|event_free|"
    r"event_active|bufferevent_\w+|evconnlistener_\w+|evbuffer_\w+)\s*\(")
# Every process grove starts is started by os/child_process.h: no other file
# forks, execs or spawns (nor hides a fork in system() or popen()).
PROCESS_CALLS = re.compile(
    r"\b(fork|vfork|clone3?|execv|execve|execvp|execvpe|execl|execle|execlp|fexecve|"
    r"posix_spawnp?|posix_spawn_file_actions_\w+|posix_spawnattr_\w+|system|popen)\s*\(")


def starts_a_process(code):
    """A call of the C library's, bare, `::` or `std::`; not a member's."""
    for match in PROCESS_CALLS.finditer(code):
        before = code[:match.start()]
        if before.endswith((".", "->")):
            continue
        if before.endswith("::") and not re.search(r"(^|[^\w:])(std::|::)$", before):
            continue
        return True
    return False


def may_include_event2(rel, layer):
    return layer in EVENT2_FOLDERS or rel in EVENT2_FILES


def call_problems(rel, layer, text):
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//")[0]
        if not may_include_event2(rel, layer) and EVENT2_CALLS.search(code):
            problems.append(f"{rel}:{number}: a libevent call outside os/ and the drivers"
                            " (use os/event_loop.h, os/timer.h, ...)")
        if layer != "os" and starts_a_process(code):
            problems.append(f"{rel}:{number}: a process started outside os/"
                            " (use os/child_process.h)")
    return problems


def folder_of(relpath):
    parts = relpath.split("/")
    if len(parts) >= 3 and parts[0] == "rml" and parts[1] == "transport":
        return "rml/transport"
    if len(parts) >= 3 and parts[0] == "daemon" and parts[1] == "control_plane":
        return "daemon/control_plane"
    if len(parts) >= 3 and parts[0] == "jobs" and parts[1] == "host":
        return "jobs/host"
    return parts[0] if len(parts) > 1 else ""


def include_problems(rel, layer, text):
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        match = INCLUDE.match(line)
        if not match:
            continue
        kind, target = match.groups()
        if kind == '"':
            other = folder_of(target)
            if other != layer and other not in ALLOWED[layer]:
                problems.append(f"{rel}:{number}: {layer} may not include {target}")
        elif layer in PURE and IMPURE_SYSTEM.match(target):
            problems.append(f"{rel}:{number}: pure layer {layer} includes <{target}>")
        if ((kind == "<" and target.startswith("event2/")
             or kind == '"' and target == "os/event_handles.h")
                and not may_include_event2(rel, layer)):
            problems.append(f"{rel}:{number}: <{target}> outside os/ and the drivers"
                            " (use os/timer.h, os/io_watch.h, ...)")
    return problems


def check(src_root):
    problems = []
    for rel, text in style_check.sources(src_root):
        layer = folder_of(rel)
        if layer not in ALLOWED:
            problems.append(f"{rel}: folder '{layer}' has no place in the layering")
            continue
        problems.extend(include_problems(rel, layer, text))
        problems.extend(call_problems(rel, layer, text))
        if layer in PURE and rel not in CLOCK_OWNERS:
            for number, line in enumerate(text.splitlines(), 1):
                if CLOCK_CALLS.search(line.split("//")[0]):
                    problems.append(f"{rel}:{number}: pure layer {layer} reads a clock")
    return problems


def self_test():
    planted = {
        "grpcomm/a.cc": '#include "daemon/controller.h"\n',
        "sim/b.cc": "#include <event2/event.h>\n",
        "rml/c.h": '#include "rml/transport/tcp_transport.h"\n',
        "jobs/d.h": '#include "control/control_request.h"\n',
        "grpcomm/e.cc": "auto t = monotonic_now_ns();\n",
        "stray/f.cc": "\n",
        "daemon/control_plane/g.cc": '#include "daemon/controller.h"\n',
        "daemon/control_plane/h.h": "#include <event2/event.h>\n",
        "util/i.cc": "#include <sched.h>\n",
        "daemon/ok.cc": '#include "jobs/job_map.h"\n',
        "jobs/j.cc": "#include <event2/event.h>\n",
        "daemon/controller.h": "#include <event2/event.h>\n",
        "daemon/daemon_runtime.cc": '#include "jobs/job_map.h"\n#include <event2/event.h>\n',
        "os/k.cc": "#include <event2/bufferevent.h>\n",
        "rml/transport/l.cc": "#include <event2/listener.h>\n",
        "daemon/m.cc": "void f() { event_base_dispatch(base); }\n",
        "launcher/n.cc": "pid_t pid = fork();\n",
        "plm/o.cc": "int r = std::system(\"true\");\n",
        "os/p.cc": "pid_t pid = vfork();\n",
        "jobs/q.cc": ("auto c = start_child(spec);  // fork() inside os/\nx.system(3);\n"
                      "Tree::fork(2);\n"),
        "daemon/r.cc": "::execv(path, argv);\n",
        "pmix/s.h": '#include "os/event_handles.h"\n',
        "jobs/t.cc": '#include "os/timer.h"\n',
        "jobs/host/u.cc": '#include "os/timer.h"\n#include "jobs/job_map.h"\n',
    }
    clean = {"daemon/ok.cc", "daemon/daemon_runtime.cc", "os/k.cc", "rml/transport/l.cc",
             "os/p.cc", "jobs/q.cc", "jobs/host/u.cc"}
    problems = style_check.check_planted(planted, check)
    caught = {p.split(":")[0] for p in problems}
    expected = set(planted) - clean
    if caught != expected:
        print(f"self-test: caught {sorted(caught)}, expected {sorted(expected)}")
        return 1
    print(f"self-test: all {len(expected)} planted violations caught, the {len(clean)} clean files"
          " passed")
    return 0


if __name__ == "__main__":
    sys.exit(style_check.run(sys.argv, check, self_test,
                             lambda count: f"{count} layering violation(s)",
                             "layering: every include respects the layers"))
