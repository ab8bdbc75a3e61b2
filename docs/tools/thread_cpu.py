#!/usr/bin/env python3
"""CPU seconds of each thread group of the catch-up bench's agent processes during the round.

Usage: thread_cpu.py OUT [--sys]   (run it beside `reconcile bench --experiments catchup`;
`touch OUT.stop` ends it, and it then writes OUT). With --sys each group's kernel time (stime) is
its own group, `NAME:sys`: page faults on memory touched for the first time and system calls show
there.

Samples /proc/PID/task/*/stat of every `reconcile.jar agent` process every 0.1 s. The round is the
span in which the process has a thread named `round-...` (the round's worker: a pooled thread
that carries the round's name while it runs the round's steps); for each process OUT gets one line: its role (`new` or `source`), the round's span, the CPU
seconds used in it, and how they split between thread groups (worker `round-to`/`round-from`,
`vert.x-eventloop`, the JIT's `C1`/`C2 CompilerThread`, GC, RocksDB's background threads). JFR's
native samples cannot say this: an event loop waiting in epoll counts as a native sample.
Linux only.
"""
import collections
import os
import re
import sys
import time

out = sys.argv[1]
split_sys = "--sys" in sys.argv[2:]
snaps = {}  # pid -> (role, [(time, {tid: (name, ticks)})])
tck = os.sysconf("SC_CLK_TCK")


def group(name):
    kernel = name.endswith(" SYS")
    name = name[:-4] if kernel else name
    name = re.sub(r"[#\d]+$", "", name)
    return re.sub(r"-\d.*$", "", name).strip() + (":sys" if kernel else "")


def sample():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"agent" not in cmd or not any(x.endswith(b"reconcile.jar") for x in cmd):
            continue
        role = "new" if any(b"node-id=new" in x for x in cmd) else "source"
        threads = {}
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                try:
                    s = open(f"/proc/{pid}/task/{tid}/stat").read()
                except OSError:
                    continue
                fields = s[s.rindex(")") + 2:].split()
                name = s[s.index("(") + 1:s.rindex(")")]
                if split_sys:
                    threads[tid] = (name, int(fields[11]))
                    threads[tid + "s"] = (name + " SYS", int(fields[12]))
                else:
                    threads[tid] = (name, int(fields[11]) + int(fields[12]))
        except OSError:
            continue
        snaps.setdefault(pid, (role, []))[1].append((time.time(), threads))


def groups_until(series, last):
    merged = {}
    for _, threads in series[: last + 1]:
        for tid, (name, ticks) in threads.items():
            # A pooled round worker is renamed idle-round-worker-N between steps: it stays in the
            # group of the round it served, so its CPU does not hop between groups.
            earlier = merged.get(tid, (name, 0))[0]
            merged[tid] = (earlier if earlier.startswith("round-") else name, ticks)
    g = collections.Counter()
    for name, ticks in merged.values():
        g[group(name)] += ticks
    return g


while not os.path.exists(out + ".stop"):
    sample()
    time.sleep(0.1)
with open(out, "w") as o:
    for pid, (role, series) in sorted(snaps.items(), key=lambda x: int(x[0])):
        inside = [i for i, (_, th) in enumerate(series) if any(n.startswith("round-") for n, _ in th.values())]
        if not inside:
            continue
        a, b = max(0, inside[0] - 1), inside[-1]
        before, after = groups_until(series, a), groups_until(series, b)
        d = after - before
        o.write(f"{role:6} round {series[b][0] - series[a][0]:.1f}s cpu {sum(d.values()) / tck:.2f}s: "
                + ", ".join(f"{k}={v / tck:.2f}" for k, v in d.most_common(14 if split_sys else 9)) + "\n")
