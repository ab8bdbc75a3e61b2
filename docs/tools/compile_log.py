#!/usr/bin/env python3
"""What HotSpot's JIT compiled in a catch-up agent, from its compilation log.

Usage:
  compile_log.py LOG [--since PATTERN] [--top N]   compiles from the first compile of a method
                                                     matching PATTERN (default: the receiver's
                                                     row reader, RowBatches), by tier, the N
                                                     costliest (wall ms), the on-stack ones
  compile_log.py LOG --inlining METHOD             each C2 compile of METHOD (a substring of
                                                     "holder name"): its size and what C2
                                                     inlined into it or refused

The log comes from an agent run with
  --catchup-jvm-option -XX:+UnlockDiagnosticVMOptions --catchup-jvm-option -XX:+LogCompilation
  --catchup-jvm-option -XX:LogFile=DIR/c-%p.log
(one file per agent process; the agent's role is its `node-id` in the file). A compile's duration
here is the wall time between its task's stamp and its task_done's, so it grows when the compiler
thread waits for a core; the bench's `new_jit_cpu_s` column is the compiler threads' CPU time.
"""
import collections
import html
import re
import sys

TASK = re.compile(
    r"<task (compile_id='(\d+)'[^>]*?method='([^']*)'[^>]*?stamp='([\d.]+)'[^>]*)>(.*?)"
    r"<task_done ([^>]*)/>",
    re.S)


def tasks(text):
    """(start stamp, wall seconds, tier, method, on-stack?, attributes, body, done) per compile."""
    out = []
    for m in TASK.finditer(text):
        attrs = m.group(1)
        level = re.search(r"level='(\d)'", attrs)
        start = float(m.group(4))
        done = float(re.search(r"stamp='([\d.]+)'", m.group(6)).group(1))
        out.append((start, done - start, int(level.group(1)) if level else 4,
                    html.unescape(m.group(3)), "osr_bci" in attrs, attrs, m.group(5), m.group(6)))
    return out


def summary(text, since, top):
    ts = tasks(text)
    starts = [t[0] for t in ts if since in t[3]]
    t0 = min(starts) if starts else 0.0
    sel = [t for t in ts if t[0] >= t0 and t[1] >= 0]
    role = re.search(r"node-id=(\S+)", text)
    print("agent %s: %d compiles from %.3f s (first compile of %s), %.3f s of compile wall time"
          % (role.group(1) if role else "?", len(sel), t0, since, sum(t[1] for t in sel)))
    by_tier = collections.defaultdict(lambda: [0, 0.0])
    for t in sel:
        by_tier[t[2]][0] += 1
        by_tier[t[2]][1] += t[1]
    for tier in sorted(by_tier):
        print("  tier %d: %d compiles, %.3f s" % (tier, by_tier[tier][0], by_tier[tier][1]))
    print("costliest:")
    for t in sorted(sel, key=lambda t: -t[1])[:top]:
        print("  %6.1f ms  tier %d%s  %s" % (t[1] * 1e3, t[2], " osr" if t[4] else "", t[3]))
    osr = [t for t in sel if t[4]]
    print("on-stack replacement compiles: %d, %.3f s" % (len(osr), sum(t[1] for t in osr)))


def inlining(text, method):
    for t in tasks(text):
        if method not in t[3] or t[2] != 4:
            continue
        body = t[6]
        klass = {m.group(1): m.group(2).split("/")[-1]
                 for m in re.finditer(r"<klass id='(\d+)' name='([^']*)'", body)}
        meth = {}
        for m in re.finditer(r"<method id='(\d+)' holder='(\d+)' name='([^']*)'[^>]*?bytes='(\d+)'",
                             body):
            meth[m.group(1)] = (klass.get(m.group(2), "?") + "." + html.unescape(m.group(3)),
                                int(m.group(4)))
        inlined, refused = [], []
        for m in re.finditer(r"<call method='(\d+)'[^>]*/>\s*(?:<[^>]*/>\s*)*?"
                             r"<inline_(success|fail)(?: reason='([^']*)')?", body):
            name, size = meth.get(m.group(1), ("?", 0))
            if m.group(2) == "success":
                inlined.append("%s(%d)" % (name, size))
            else:
                refused.append("%s [%s]" % (name, html.unescape(m.group(3) or "")))
        nm = re.search(r"nmsize='(\d+)'", t[7])
        print("compile %s%s at %.3f s: %.1f ms wall, %s B of code, %d methods inlined"
              % (re.search(r"compile_id='(\d+)'", t[5]).group(1), " osr" if t[4] else "", t[0],
                 t[1] * 1e3, nm.group(1) if nm else "?", len(inlined)))
        print("  inlined: " + ", ".join(inlined))
        print("  refused: " + ", ".join(refused))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    text = open(argv[1], errors="replace").read()
    if "--inlining" in argv:
        inlining(text, argv[argv.index("--inlining") + 1])
        return 0
    since = argv[argv.index("--since") + 1] if "--since" in argv else "dev.reconcile.core.RowBatches"
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 20
    summary(text, since, top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
