#!/usr/bin/env python3
"""Sorts the samples of a `perf record` profile (as `perf script` prints
them) into the cost buckets of a grove fence (benchmarks/profile_fence.sh):

  pmix        libpmix and its plugins (the PMIx server's work)
  engine      grove's collective engine and trees (grpcomm, VpidSet, trees)
  encoding    frames, wire encoding, the frame MAC (libsodium), compression (zlib)
  transport   grove's transport and routing above the kernel (rml)
  event_loop  libevent
  kernel      the kernel: syscalls, sockets, scheduling
  libc        samples whose whole stack is libc/libstdc++
  other       everything else (grove's daemon glue, unknown symbols)

Usage: perf_buckets.py FILE -> prints one JSON object: {"buckets": {bucket:
percent}, "hottest": the 15 costliest symbols}. FILE is `perf script
-F comm,tid,period,ip,sym,dso` output with call chains: a sample counts for
the first frame outside libc and the C++ runtime, so a memcpy libpmix calls
is libpmix's.
"""
import json
import re
import sys

ENGINE = ("grpcomm", "Engine", "Fence", "Xcast", "Rollup", "Release", "Tree", "VpidSet",
          "Membership", "Routing", "Census", "Bench")
ENCODING = ("Wire", "wire_", "encode", "decode", "Frame", "frame", "crc", "Checksum", "deflate",
            "inflate", "compress", "Bytes")
TRANSPORT = ("rml", "Tcp", "Connection", "Transport", "Mailbox", "Route", "Link", "send_",
             "on_readable", "on_writable", "Peer")


def bucket(dso, kind, symbol):
    if kind == "k" or dso.startswith("[kernel"):
        return "kernel"
    if "libpmix" in dso or dso.startswith("pmix_mca") or "mca_" in dso:
        return "pmix"
    if "libz" in dso or "libsodium" in dso:
        return "encoding"
    if "libevent" in dso:
        return "event_loop"
    if dso.startswith("libc") or dso.startswith("libstdc++") or dso.startswith("ld-linux") \
            or dso.startswith("libm"):
        return "libc"
    if dso in ("groved", "grove") or "grove" in dso:
        for words, name in ((ENCODING, "encoding"), (ENGINE, "engine"), (TRANSPORT, "transport")):
            if any(word in symbol for word in words):
                return name
    return "other"


SAMPLE = re.compile(r"^\S.*\s(\d+)\s*$")  # "comm tid period" opens a sample
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")
HELPERS = ("libc.so", "libstdc++", "ld-linux", "libm.so", "libgcc", "[unknown]", "inlined")


def owner(frames):
    """The frame a sample's cost belongs to: the leaf if it runs in the
    kernel, else the first frame (leaf to root) outside libc and friends, so
    that a memcpy called by libpmix counts as libpmix's."""
    if not frames:
        return None
    leaf_symbol, leaf_dso = frames[0]
    if leaf_dso.startswith("[kernel"):
        return frames[0]
    for symbol, dso in frames:
        if not any(helper in dso for helper in HELPERS):
            return symbol, dso
    return frames[0]


def from_script(path):
    """perf script -F comm,tid,period,ip,sym,dso output (with call chains)."""
    buckets, symbols, total = {}, {}, 0
    frames, period = [], 0

    def flush():
        nonlocal total
        chosen = owner(frames)
        if chosen is None:
            return
        symbol, dso = chosen
        dso_name = dso.rsplit("/", 1)[-1]
        name = bucket(dso_name, "k" if dso.startswith("[kernel") else ".", symbol)
        buckets[name] = buckets.get(name, 0) + period
        key = (dso_name, symbol[:100], name)
        symbols[key] = symbols.get(key, 0) + period
        total += period

    with open(path, encoding="utf-8", errors="replace") as script:
        for line in script:
            frame = FRAME.match(line)
            if frame:
                frames.append((frame[1], frame[2]))
                continue
            sample = SAMPLE.match(line)
            if sample:
                flush()
                frames, period = [], int(sample[1])
        flush()
    if total == 0:
        return {}, []
    hottest = sorted(((100.0 * v / total, k[0], k[1], k[2]) for k, v in symbols.items()),
                     reverse=True)
    return {k: 100.0 * v / total for k, v in buckets.items()}, hottest


def main():
    path = sys.argv[1]
    buckets, hottest = from_script(path)
    print(json.dumps({"buckets": {k: round(v, 2) for k, v in sorted(buckets.items())},
                      "hottest": [{"percent": round(p, 2), "dso": d, "symbol": s, "bucket": b}
                                  for p, d, s, b in hottest[:15]]}))


if __name__ == "__main__":
    main()
