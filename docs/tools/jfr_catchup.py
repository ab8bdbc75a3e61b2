#!/usr/bin/env python3
"""Execution samples of a JFR recording of a catch-up agent (sender or receiver), by phase.

Usage: jfr_catchup.py RECORDING.jfr [--top N]

Each jdk.ExecutionSample (thread in Java code; native RocksDB time shows under the JNI method
that called it) goes to the first phase below one of whose methods is on its stack (64 frames).
--top N also prints the N most frequent top frames. Needs `jfr` (the JDK's bin) on PATH.
"""
import collections
import json
import subprocess
import sys

PHASES = [
    ("sketch upkeep (IBLT, symbols, estimator)", ["StoreSketches.replace", "PartitionState.",
                                                  "StoreSketches.addBulk", "PartitionState.addAll"]),
    ("apply: partition load (table files, ingest)", ["PartitionIngest.", "DigestKeys.order"]),
    ("apply: RocksDB write (WAL, memtable)", ["RocksDB.write"]),
    ("apply: read current (multiGet)", ["RecordWriter.readCurrent"]),
    ("apply: hash, encode, batch", ["RecordWriter.apply", "RecordWriter.applyBulk",
                                    "RecordWriter.writeWinners", "WriteBatch."]),
    ("receive: decode, check batch", ["RecordBatches.read", "RepairExchange.checkPartition",
                                      "RecordBatch.parseFrom", "Envelope.parseFrom",
                                      "RecordBatch$", "Envelope$"]),
    ("send: read records (RocksDB)", ["RecordReader.", "StoreSketches$IndexCursor.",
                                      "PartitionScan", "RepairExchange.fetchMore"]),
    ("send: batch, CRC, serialize", ["RecordBatches.batch", "RecordBatches.crc",
                                     "RepairExchange.nextFrame", "CodedOutputStream"]),
    ("session (sketches, tables, estimators)", ["ReconcileSession.", "TableExchange.",
                                                "RatelessExchange.", "FingerprintExchange."]),
    ("network (Vert.x, Netty)", ["io.netty.", "io.vertx."]),
    ("store open (sketch rebuild)", ["StoreSketches.<init>", "StoreSketches.scanIndex"]),
    ("JIT / class loading / start-up", ["java.lang.ClassLoader", "jdk.internal.loader",
                                        "picocli.", "AgentConfig."]),
]


def frame_name(f):
    m = f["method"]
    t = m["type"]["name"].replace("/", ".")
    return t + "." + m["name"]


def main():
    path = sys.argv[1]
    top_n = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 0
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events",
                          "jdk.ExecutionSample", path], check=True, capture_output=True).stdout
    events = json.loads(out)["recording"]["events"]
    phases = collections.Counter()
    tops = collections.Counter()
    for e in events:
        frames = [frame_name(f) for f in e["values"]["stackTrace"]["frames"]]
        if frames:
            tops[frames[0]] += 1
        phase = "other"
        for name, needles in PHASES:
            if any(n in fr for fr in frames for n in needles):
                phase = name
                break
        phases[phase] += 1
    total = sum(phases.values()) or 1
    print(f"{path}: {total} execution samples")
    for name, c in phases.most_common():
        print(f"  {100.0 * c / total:5.1f} %  {c:6d}  {name}")
    if top_n:
        print("  top frames:")
        for name, c in tops.most_common(top_n):
            print(f"  {100.0 * c / total:5.1f} %  {c:6d}  {name}")


if __name__ == "__main__":
    main()
