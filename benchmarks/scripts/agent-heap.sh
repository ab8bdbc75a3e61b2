#!/usr/bin/env bash
# Heap of one agent as its record count n grows (docs/operations.md, "Memory").
#
#   benchmarks/scripts/agent-heap.sh [N ...]        default: 100000 1000000 10000000
#
# For each n: start `reconcile agent` (the shaded jar, default config: 16 partitions,
# iblt-max-log2 15; JAVA_OPTS, default -Xmx2g), load n records (key k + 10 digits, 32-byte
# value) through the bulk API POST /kv in requests of 100 000 lines, force two full
# collections (jcmd PID GC.run), then read /metrics: heap used after GC (the sum of
# jvm_memory_used_bytes{area="heap"}), the RocksDB memtables and block cache (off heap), and the
# process RSS from /proc. Then stop the agent, start it again on the same directory (sketches
# rebuilt from a scan) and measure again. Prints one Markdown table row per n and phase.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
jar="$root/cli/target/reconcile.jar"
[ -f "$jar" ] || { echo "no $jar: ./mvnw -B -ntp -pl cli -am package -DskipTests" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/agent-heap.XXXXXX")"
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000 10000000)

start() { # $1 = data dir; sets pid and http
  local out="$work/agent.out"
  : >"$out"
  # shellcheck disable=SC2086
  java ${JAVA_OPTS:--Xmx2g} -jar "$jar" agent --node-id heap --data "$1" \
    --peer-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --repair-interval 0 \
    >"$out" 2>>"$work/agent.log" &
  pid=$!
  for _ in $(seq 1 600); do
    http="$(sed -n 's/.* http=\([^ ]*\)$/\1/p' "$out")"
    [ -n "$http" ] && return 0
    sleep 0.5
  done
  echo "agent did not start: $(tail -5 "$work/agent.log")" >&2
  exit 2
}

stop() {
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
}

metric() { # sum of the samples of $1 (a prefix with labels) in $2
  awk -v p="$1" 'index($0, p) == 1 { s += $NF } END { printf "%.0f", s }' "$2"
}

measure() { # $1 = n, $2 = phase
  jcmd "$pid" GC.run >/dev/null
  sleep 1
  jcmd "$pid" GC.run >/dev/null
  sleep 1
  local m="$work/metrics"
  curl -fsS "http://$http/metrics" >"$m"
  local heap memtables cache rss
  heap="$(metric 'jvm_memory_used_bytes{area="heap"' "$m")"
  memtables="$(metric 'reconcile_rocksdb_memtable_bytes{' "$m")"
  cache="$(metric 'reconcile_rocksdb_block_cache_usage_bytes ' "$m")"
  rss="$(awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$pid/status")"
  printf '| %s | %s | %.1f | %.1f | %.1f | %.1f |\n' "$1" "$2" \
    "$(echo "$heap / 1048576" | bc -l)" "$(echo "$memtables / 1048576" | bc -l)" \
    "$(echo "$cache / 1048576" | bc -l)" "$(echo "$rss / 1048576" | bc -l)"
}

echo "| n | phase | heap used after full GC (MiB) | RocksDB memtables (MiB) | block cache (MiB) | process RSS (MiB) |"
echo "|---:|---|---:|---:|---:|---:|"
for n in "${sizes[@]}"; do
  data="$work/data-$n"
  start "$data"
  measure "$n" "empty"
  for ((from = 0; from < n; from += 100000)); do
    to=$((from + 100000 < n ? from + 100000 : n))
    awk -v a="$from" -v b="$to" 'BEGIN { for (i = a; i < b; i++) printf "k%010d\tvalue-%026d\n", i, i }' |
      curl -fsS -X POST --data-binary @- "http://$http/kv" >/dev/null
  done
  measure "$n" "loaded"
  stop
  start "$data"
  measure "$n" "restarted"
  stop
  rm -rf "$data"
done
