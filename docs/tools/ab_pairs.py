#!/usr/bin/env python3
"""Alternated A/B pairs of `reconcile bench`, and the ratios of their run medians.

This machine's speed moves by 10-40 % from hour to hour (benchmarks.md, "the targets table, stop by
stop"), so a change is judged by pairs run side by side: A and B alternate (A first in odd pairs, B
first in even ones, so that a drift during the session falls on both), and each pair gives B's run
median over A's. A ratio from a run whose results were not all correct is not given.

Usage:
  ab_pairs.py run --out DIR --pairs N --a JAR [--b JAR] [--java OPT]... [--a-arg ARG]...
              [--b-arg ARG]... -- BENCH_ARGS...
  ab_pairs.py summary DIR

`run` starts `java OPT... -jar JAR bench --out DIR/<pair>-<A|B> BENCH_ARGS [side args]` for each
run (B's jar defaults to A's: then only --b-arg tells the sides apart, for example
`--b-arg=--catchup-jvm-option=-XX:TieredStopAtLevel=1`), writes each run's log beside it, then
prints the summary. What it reads from a run folder:

- catchup-trials.csv (`--experiments catchup`): by value size, the median of `records_per_s` and of
  `mb_per_s` over the run's trials; correct when every trial's `correct` is true.
- stream-trials.csv (`--experiments stream`): by value size (runs of more than one record), the
  median of trials 1-4 (listed records) and trial 0 (bulk), records/s for values up to 1 KiB,
  MB/s above; correct when every trial's `differing_records` is 0.

Example (stop 60, the agents' JIT limited to C1 in B; about 9 minutes):
  ab_pairs.py run --out ab-c1 --pairs 3 --java=-Xmx2g --a cli/target/reconcile.jar \\
      --b-arg=--catchup-jvm-option=-XX:TieredStopAtLevel=1 -- \\
      --experiments catchup --catchup-trials 3
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys


def run_medians(folder):
    """{metric: (median, correct)} of one run folder."""
    out = {}
    path = os.path.join(folder, "catchup-trials.csv")
    if os.path.exists(path):
        rows = list(csv.DictReader(open(path)))
        for vb in sorted({r["value_bytes"] for r in rows}, key=int):
            rs = [r for r in rows if r["value_bytes"] == vb]
            ok = all(r["correct"] == "true" for r in rs)
            out[f"catchup {vb} B records/s"] = (
                statistics.median(float(r["records_per_s"]) for r in rs), ok)
            out[f"catchup {vb} B MB/s"] = (
                statistics.median(float(r["mb_per_s"]) for r in rs), ok)
    path = os.path.join(folder, "stream-trials.csv")
    if os.path.exists(path):
        rows = [r for r in csv.DictReader(open(path)) if int(r["records"]) > 1]
        for vb in sorted({r["value_bytes"] for r in rows}, key=int):
            rs = [r for r in rows if r["value_bytes"] == vb]
            ok = all(int(r["differing_records"]) == 0 for r in rs)
            unit = "records_per_s" if int(vb) <= 1024 else "mb_per_s"
            listed = [float(r[unit]) for r in rs if 1 <= int(r["trial"]) <= 4]
            bulk = [float(r[unit]) for r in rs if int(r["trial"]) == 0]
            name = unit.replace("_per_s", "/s").replace("mb", "MB")
            if listed:
                out[f"stream {vb} B listed {name}"] = (statistics.median(listed), ok)
            if bulk:
                out[f"stream {vb} B bulk {name}"] = (bulk[0], ok)
    return out


def summary(folder):
    pairs = sorted(
        {int(d.split("-")[0]) for d in os.listdir(folder) if d.endswith(("-A", "-B"))
         and os.path.isdir(os.path.join(folder, d))})
    ratios = {}
    for p in pairs:
        a = run_medians(os.path.join(folder, f"{p}-A"))
        b = run_medians(os.path.join(folder, f"{p}-B"))
        for metric in sorted(set(a) & set(b)):
            (va, oka), (vb, okb) = a[metric], b[metric]
            if not (oka and okb):
                print(f"pair {p}: {metric}: a run with incorrect results, no ratio")
                continue
            ratios.setdefault(metric, []).append((p, va, vb, vb / va))
    for metric, rs in ratios.items():
        print(f"{metric}:")
        for p, va, vb, r in rs:
            print(f"  pair {p}: A {va:,.1f}  B {vb:,.1f}  B/A {r:.2f}")
        rr = [r for _, _, _, r in rs]
        above = sum(r > 1 for r in rr)
        print(f"  ratios {', '.join(f'{r:.2f}' for r in rr)}; median {statistics.median(rr):.2f};"
              f" B faster in {above} of {len(rr)}")
    return 0 if ratios else 1


def main(argv):
    if argv[:1] == ["summary"] and len(argv) == 2:
        return summary(argv[1])
    if argv[:1] != ["run"] or "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    cut = argv.index("--")
    ap = argparse.ArgumentParser(prog="ab_pairs.py run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", type=int, required=True)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b")
    ap.add_argument("--java", action="append", default=[])
    ap.add_argument("--a-arg", action="append", default=[])
    ap.add_argument("--b-arg", action="append", default=[])
    o = ap.parse_args(argv[1:cut])
    bench = argv[cut + 1:]
    os.makedirs(o.out, exist_ok=True)
    sides = {"A": (o.a, o.a_arg), "B": (o.b or o.a, o.b_arg)}
    for p in range(1, o.pairs + 1):
        for side in ("AB" if p % 2 else "BA"):
            jar, extra = sides[side]
            run = os.path.join(o.out, f"{p}-{side}")
            cmd = ["java", *o.java, "-jar", jar, "bench", "--out", run, *bench, *extra]
            print(f"pair {p} {side}: {' '.join(cmd)}", flush=True)
            with open(run + ".log", "w") as log:
                rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
            if rc != 0:
                print(f"pair {p} {side}: bench exited {rc}; see {run}.log", file=sys.stderr)
                return rc
    return summary(o.out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
