#!/usr/bin/env bash
# The floor of fastblock's I/O path on this machine: chainfloor.c (see its header) run in fastblock's
# layout (client -> gateway -> head -> middle -> tail; in-place writes at head, middle and tail, the
# tail's log forced before it answers) and in a one-target layout like tgtd's file LUN (client -> one
# node writing to the page cache), alternating, and the ratio of their medians. The chain runs three
# ways: the tail's fdatasync on a commit thread (as fastblock), in the tail's loop, and on the commit
# thread with the tail answering the gateway directly; and as fastblock lays it out today
# (chain-log): the tail only appends to its log (no in-place copy) and answers the gateway directly.
# Reads (4 KiB, queue depth 1, p50 latency) go client -> gateway -> head and back, or to the one
# target. No layout runs any of fastblock's code: the chain's figures are what a perfect implementation
# of the same message flow would reach here.
#
#   bench/floor/run.sh [--rounds 3] [--seconds 8] [--dir /var/tmp/chainfloor] [--port 7400]
#
# Writes go to files under --dir (on the disk the servers use; not tmpfs). Prints per run and per
# layout: IOPS, MB/s or p50 latency, and CPU per I/O of all processes (client included), from /proc.
set -euo pipefail
rounds=3 seconds=8 dir=/var/tmp/chainfloor port=7400
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2;; --seconds) seconds=$2; shift 2;; --dir) dir=$2; shift 2;;
    --port) port=$2; shift 2;;
    *) echo "run.sh: unknown option $1" >&2; exit 2;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
bin=$dir/chainfloor
gcc -O2 -Wall -pthread -o "$bin" "$here/chainfloor.c"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }

# run LAYOUT BS QD [--sequential|--read]: prints "iops MBps cpu_us_per_io p50_us"
run() {
  local layout=$1 bs=$2 qd=$3; shift 3
  local prefill=; [ "${1:-}" = --read ] && prefill="--prefill 536870912" # reads find data in the page cache
  pids=()
  rm -f "$dir"/*.dat
  exec 3>&1 1>/dev/null # the nodes say which port they listen on; not wanted here
  if [ "$layout" != one ]; then
    local commit= ackto= acklisten=
    [ "$layout" = chain-inline ] && commit=--inline-commit
    local tailfile="--file $dir/tail.dat"
    case $layout in chain-direct|chain-log) ackto="--ack-to $((port + 4))" acklisten="--ack-listen $((port + 4))";; esac
    [ "$layout" = chain-log ] && tailfile=
    # shellcheck disable=SC2086
    "$bin" node --listen $((port + 3)) $tailfile --log "$dir/tail-log.dat" --fsync $commit $ackto & pids+=($!)
    "$bin" node --listen $((port + 2)) --next $((port + 3)) --file "$dir/middle.dat" & pids+=($!)
    # shellcheck disable=SC2086
    "$bin" node --listen $((port + 1)) --next $((port + 2)) --file "$dir/head.dat" $prefill & pids+=($!)
    # shellcheck disable=SC2086
    "$bin" node --listen "$port" --next $((port + 1)) $acklisten & pids+=($!)
  else
    # shellcheck disable=SC2086
    "$bin" node --listen "$port" --file "$dir/single.dat" $prefill & pids+=($!)
  fi
  exec 1>&3 3>&-
  sleep 0.3; [ -n "$prefill" ] && sleep 2
  local t0 out t1
  t0=$(ticks "${pids[@]}")
  out=$("$bin" client --connect "$port" --bs "$bs" --qd "$qd" --seconds "$seconds" --ramp 1 --span 536870912 "$@")
  t1=$(ticks "${pids[@]}")
  cleanup
  # client CPU comes from the client itself (getrusage); servers' from /proc (1/100 s ticks)
  python3 - "$out" "$t0" "$t1" <<'PY'
import sys
f = sys.argv[1].split(); d = dict(zip(f[::2], f[1::2]))
ios = int(d['ios']); servers = (int(sys.argv[3]) - int(sys.argv[2])) * 10000.0 / max(ios, 1)
print("%s %s %.0f %s" % (d['iops'], d['MBps'], servers + float(d['client_cpu_us_per_io']), d['p50_us']))
PY
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "| workload | chain, commit thread | chain, inline commit | chain, tail answers the gateway | chain, log-only tail answers the gateway | one target | chain / one (thread, inline, direct, log-only) | CPU us per I/O (thread / inline / direct / log-only / one) |"
echo "|---|---|---|---|---|---|---|---|"
for w in "4k-qd32-randwrite|4096|32|" "1m-qd32-write|1048576|32|--sequential" "4k-qd1-randread-p50|4096|1|--read"; do
  IFS='|' read -r name bs qd extra <<<"$w"
  declare -A res=()
  for r in $(seq "$rounds"); do
    for layout in chain chain-inline chain-direct chain-log one; do
      # shellcheck disable=SC2086
      x=$(run $layout "$bs" "$qd" $extra)
      echo "round $r $name $layout: $x" >&2
      res[$layout]+="$x"$'\n'
    done
  done
  col=1 unit=IOPS; [ "$bs" -ge 1048576 ] && col=2 unit=MB/s; [ "$extra" = --read ] && col=4 unit=us
  med() { printf '%s' "${res[$1]}" | awk -v c="$2" 'NF {print $c}' | median; }
  ct=$(med chain $col) ci=$(med chain-inline $col) cd=$(med chain-direct $col) cl=$(med chain-log $col) one=$(med one $col)
  echo "| $name | $ct $unit | $ci $unit | $cd $unit | $cl $unit | $one $unit" \
       "| $(python3 -c "print('%.2f / %.2f / %.2f / %.2f' % ($ct / $one, $ci / $one, $cd / $one, $cl / $one))")" \
       "| $(med chain 3) / $(med chain-inline 3) / $(med chain-direct 3) / $(med chain-log 3) / $(med one 3) |"
done
