#!/usr/bin/env python3
"""Execution samples of a JFR recording of `reconcile diff`, by phase.

Usage: jfr_phases.py RECORDING.jfr

Each jdk.ExecutionSample is given to the first phase below one of whose methods is on its
stack (64 frames), so a sample inside the hash of a record counts as hashing even though the
file reader is below it. Needs `jfr` (in the JDK's bin) on PATH.
"""
import collections
import json
import subprocess
import sys

PHASES = [
    ("hash: key, value, element", ["RecordTable.add", "RecordTable.addInPlace", "RecordTable.put"]),
    ("parse: split lines", ["FileSource.split", "FileSource.record", "FileSource.keyEnd",
                            "FileSource.lineEnd"]),
    ("read/inflate", ["FileSource.read", "FileSource.readInto", "InflaterInputStream.read"]),
    ("dedupe", ["RecordTable.dedupe"]),
    ("sketch: sort", ["DualPivotQuicksort.sort", "Arrays.sort"]),
    ("sketch: estimator + fingerprint", ["MemorySketches.<init>"]),
    ("sketch: partition arrays", ["MemorySketches.of", "RecordTable.sketches"]),
    ("protocol: tables (MemorySketches.iblt)", ["MemorySketches.iblt", "MemorySketches.insertAll"]),
    ("protocol: verification (containsAll)", ["MemorySketches.containsAll",
                                              "PartitionSketches.containsAll"]),
    ("protocol: estimators", ["ReconcileSession.onEstimator", "ReconcileSession.sendEstimators"]),
    ("protocol: other", ["LocalReconciliation.run"]),
    ("keys: map back, sort", ["RecordTable.keysOf", "KeyList$Builder.build"]),
    ("output", ["DiffWriter", "DiffCommand.merge"]),
    ("start-up: class loading, picocli", ["ClassLoader", "picocli", "ReconcileCommand.main"]),
]


def main(path):
    out = subprocess.check_output(
        ["jfr", "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample", path])
    events = json.loads(out)["recording"]["events"]
    counts = collections.Counter()
    for e in events:
        st = e["values"]["stackTrace"]
        frames = [f["method"]["type"]["name"].split("/")[-1] + "." + f["method"]["name"]
                  for f in (st["frames"] if st else [])]
        phase = "other"
        for label, methods in PHASES:
            if any(m in f for f in frames for m in methods):
                phase = label
                break
        counts[phase] += 1
    print("samples", len(events))
    for phase, c in counts.most_common():
        print(f"{c:6d} {100 * c / len(events):5.1f} %  {phase}")


if __name__ == "__main__":
    main(sys.argv[1])
