#!/usr/bin/env bash
# Side-by-side benchmark of two iSCSI LUNs (fastblock's gateway = A, a reference target such as tgtd = B),
# alternating A/B runs (A first in odd rounds, B first in even ones) so that a noisy machine hurts both
# alike, with the project's load generator and with `qemu-img bench` (QEMU's libiscsi driver). Prints
# medians per target and the ratio A/B as a markdown table.
#
#   bench/run-vs-tgt.sh FASTBLOCK_URL TGT_URL [--rounds 3] [--runtime 10s] [--ramp 2s] [--span 1G]
#                       [--out DIR] [--no-qemu] [--no-prefill] [--warmup 1] [--cpu-a PID,PID..] [--cpu-b PID,PID..]
#                       [--only REGEX] [--settle]
#
# --only REGEX runs only the workloads whose name matches (grep -E), e.g. --only write for the two write
# workloads. The names: 4k-qd32-randread, 4k-qd32-randwrite, 1m-qd32-read, 1m-qd32-write, 4k-qd1-randread.
#
# --warmup N runs every workload N times on each side before the measured rounds, not recorded (default 1):
# the first run of a path on freshly started JVMs is mostly JIT compilation (measured: 8.9 of 15.7 s of the
# servers' CPU in a first 4 KiB read run), which says nothing about the steady state either side serves.
# The qemu-img runs are warmed up too: qemu-img's commands take paths the load generator's do not (merged
# small sequential writes, its Data-In sizes), and unwarmed, each first qemu-img round ran at 0.77-0.93 of
# the later ones on fastblock and not on tgtd (docs/performance.md).
#
# --settle writes every dirty page of the machine back (`sync`) before each measured run, and records how long
# that took after each run: the write-back the run left behind, per side. Without it, a run inherits the dirty pages
# of the runs before it (the kernel writes them back 30 s after they were dirtied), and a target that waits for the
# disk (fastblock forces its log before it answers) pays for write-back that a target writing into its page cache
# (tgtd with its write cache on) left behind, while the reverse costs that target nothing. The table then gives each
# side's median write-back time per run. Measured once (4 KiB writes, docs/performance.md): the ratios did not move.
#
# --cpu-a/--cpu-b name the processes serving each side (fastblock: gateway and storage servers; tgtd); the
# table then also gives the CPU time they used per I/O in the load generator's runs (us per I/O, from
# /proc/PID/stat), the figure that stays comparable when other work on the machine moves the throughput.
#
# Both URLs look like iscsi://127.0.0.1:3260/<iqn>/<lun>. Before measuring, the first --span bytes of each
# LUN are written once (1 MiB sequential), so reads hit written data on both. Needs java 17, python3 and,
# unless --no-qemu, qemu-img; builds bench/target/fastblock-bench.jar if it is missing.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,20p' "$0"; exit 2; }
A=$1 B=$2; shift 2
rounds=3 runtime=10s ramp=2s span=1G out= qemu=1 prefill=1 warmup=1 cpu_a= cpu_b= only= settle=0
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2;; --runtime) runtime=$2; shift 2;; --ramp) ramp=$2; shift 2;;
    --span) span=$2; shift 2;; --out) out=$2; shift 2;; --no-qemu) qemu=0; shift;; --no-prefill) prefill=0; shift;;
    --warmup) warmup=$2; shift 2;;
    --cpu-a) cpu_a=$2; shift 2;; --cpu-b) cpu_b=$2; shift 2;; --only) only=$2; shift 2;;
    --settle) settle=1; shift;;
    *) echo "run-vs-tgt: unknown option $1" >&2; exit 2;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
jar=$here/target/fastblock-bench.jar
if [ ! -f "$jar" ]; then (cd "$here/.." && mvn -q -B -pl bench -am package -DskipTests); fi
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/run-vs-tgt.XXXXXX")}
mkdir -p "$out"
echo "results in $out" >&2

lg() { java -XX:+UseParallelGC -jar "$jar" "$@"; }
# With --settle: writes the machine's dirty pages back and records the seconds it took in file $1 (if given).
settle() {
  [ $settle = 1 ] || return 0
  local t0 t1; t0=$(date +%s.%N); sync; t1=$(date +%s.%N)
  [ -z "${1:-}" ] || python3 -c "print(f'{$t1 - $t0:.3f}')" >"$1"
}
# CPU ticks (user + system, 1/CLK_TCK s) used so far by a comma-separated list of processes; empty if none given
ticks() { [ -n "$1" ] || return 0; local t=0 p; for p in ${1//,/ }; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }

# name|load generator options|qemu-img bench options (sequential from offset 0: qemu-img bench has no random
# mode; writes use a non-zero pattern byte: qemu-img bench writes zeros by default, which reads back like
# lost data). qemu-img sees each LUN through a raw window of the first --span bytes (the prefilled ones),
# so a count larger than the window wraps around inside it. The counts make each run last about a second
# or more on either side: with 10 000 4 KiB or 500 1 MiB commands a run took 0.1-0.4 s, and one hiccup
# (a session's first write taking the volume's lease, a collection) decided a round.
workloads=(
  "4k-qd32-randread|--rw randread --bs 4k --iodepth 32|-c 100000 -d 32 -s 4096"
  "4k-qd32-randwrite|--rw randwrite --bs 4k --iodepth 32|-c 100000 -d 32 -s 4096 -w --pattern=165"
  "1m-qd32-read|--rw read --bs 1M --iodepth 32|-c 2000 -d 32 -s 1048576"
  "1m-qd32-write|--rw write --bs 1M --iodepth 32|-c 2000 -d 32 -s 1048576 -w --pattern=165"
  "4k-qd1-randread|--rw randread --bs 4k --iodepth 1|-c 20000 -d 1 -s 4096"
)
if [ -n "$only" ]; then
  selected=()
  for w in "${workloads[@]}"; do
    if grep -Eq -- "$only" <<<"${w%%|*}"; then selected+=("$w"); fi
  done
  [ ${#selected[@]} -gt 0 ] || { echo "run-vs-tgt: --only $only matches no workload" >&2; exit 2; }
  workloads=("${selected[@]}")
fi

if [ $prefill = 1 ]; then
  for url in "$A" "$B"; do
    echo "prefill $span of $url" >&2
    lg --url "$url" --rw write --bs 1M --iodepth 8 --size "$span" --span "$span" >/dev/null
  done
fi

# Bytes of a size like 512M or 1G.
bytes() {
  case $1 in
    *[kK]) echo $(( ${1%[kK]} << 10 ));; *[mM]) echo $(( ${1%[mM]} << 20 ));; *[gG]) echo $(( ${1%[gG]} << 30 ));;
    *) echo "$1";;
  esac
}

# qemu's --image-opts for a raw window of the first --span bytes of an iscsi:// URL (CHAP user%secret@ kept).
window() {
  local rest=${1#iscsi://} auth= opts
  local hostport=${rest%%/*}; rest=${rest#*/}
  if [[ $hostport == *@* ]]; then auth=${hostport%@*}; hostport=${hostport#*@}; fi
  opts="driver=raw,size=$(bytes "$span"),file.driver=iscsi,file.transport=tcp,file.portal=$hostport"
  opts+=",file.target=${rest%/*},file.lun=${rest##*/}"
  [ -z "$auth" ] || opts+=",file.user=${auth%%%*},file.password=${auth#*%}"
  echo "$opts"
}
for r in $(seq "$warmup"); do
  for w in "${workloads[@]}"; do
    IFS='|' read -r name lgopts qopts <<<"$w"
    for url in "$A" "$B"; do
      echo "warm-up $r $name $url" >&2
      # shellcheck disable=SC2086
      lg --url "$url" $lgopts --runtime "$runtime" --ramp "$ramp" --span "$span" >/dev/null \
        || echo "warm-up run failed: $name $url" >&2
      if [ $qemu = 1 ]; then
        # shellcheck disable=SC2086
        timeout 300 qemu-img bench -t none -n $qopts --image-opts "$(window "$url")" >/dev/null 2>&1 \
          || echo "qemu-img warm-up run failed: $name $url" >&2
      fi
    done
  done
done

# Odd rounds run A first, even rounds B first: the side that runs second inherits the first one's
# dirty pages (its writeback competes with the second side's fsyncs), which favoured A by up to ~1.4x in
# 4 KiB write A/Bs of one build against itself (docs/performance.md).
settle
for r in $(seq "$rounds"); do
  order="A B"; [ $((r % 2)) = 0 ] && order="B A"
  for w in "${workloads[@]}"; do
    IFS='|' read -r name lgopts qopts <<<"$w"
    for side in $order; do
      url=$A; [ $side = B ] && url=$B
      echo "round $r $name $side" >&2
      echo "round $r $name $side $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/loadavg.txt"
      # shellcheck disable=SC2086
      pids=$cpu_a; [ $side = B ] && pids=$cpu_b
      t0=$(ticks "$pids")
      lg --url "$url" $lgopts --runtime "$runtime" --ramp "$ramp" --span "$span" --json "$out/lg-$name-$side-$r.json" \
        >"$out/lg-$name-$side-$r.txt" || echo "load generator failed: $out/lg-$name-$side-$r.txt" >&2
      [ -z "$pids" ] || echo "$(( $(ticks "$pids") - t0 ))" >"$out/cpu-$name-$side-$r.txt"
      settle "$out/settle-lg-$name-$side-$r.txt"
      if [ $qemu = 1 ]; then
        # shellcheck disable=SC2086
        timeout 300 qemu-img bench -t none -n $qopts --image-opts "$(window "$url")" >"$out/qemu-$name-$side-$r.txt" 2>&1 \
          || echo "qemu-img bench failed: $out/qemu-$name-$side-$r.txt" >&2
        settle "$out/settle-qemu-$name-$side-$r.txt"
      fi
    done
  done
done

python3 - "$out" "$rounds" "$(for w in "${workloads[@]}"; do printf '%s\n' "${w%%|*}"; done)" <<'PY'
import json, re, statistics, sys, os
out, rounds = sys.argv[1], int(sys.argv[2])
names = sys.argv[3].split()
failed = {}
def lg(name, side):
    vals = []
    for r in range(1, rounds + 1):
        p = f"{out}/lg-{name}-{side}-{r}.json"
        if not os.path.exists(p):
            failed[("lg", name, side)] = failed.get(("lg", name, side), 0) + 1
            continue
        t = json.load(open(p))["total"]
        if t["errors"] > 0:  # a run with failed commands measures the failure, not the target
            failed[("lg", name, side)] = failed.get(("lg", name, side), 0) + 1
            continue
        d = t["write"] if "write" in name else t["read"]
        if name.startswith("4k-qd1"):
            vals.append(d["latency_us"]["p50"])
        elif name.startswith("1m"):
            vals.append(d["mb_per_s"])
        else:
            vals.append(d["iops"])
    return vals
def qemu(name, side):
    vals = []
    count, size = {"4k-qd32-randread": (100000, 4096), "4k-qd32-randwrite": (100000, 4096), "1m-qd32-read": (2000, 1 << 20),
                   "1m-qd32-write": (2000, 1 << 20), "4k-qd1-randread": (20000, 4096)}[name]
    for r in range(1, rounds + 1):
        p = f"{out}/qemu-{name}-{side}-{r}.txt"
        if not os.path.exists(p):
            continue
        m = re.search(r"Run completed in ([0-9.]+) seconds", open(p).read())
        if not m:
            failed[("qemu", name, side)] = failed.get(("qemu", name, side), 0) + 1
            continue
        secs = float(m.group(1))
        if name.startswith("4k-qd1"):
            vals.append(secs / count * 1e6)          # mean latency, us
        elif name.startswith("1m"):
            vals.append(count * size / secs / 1e6)   # MB/s
        else:
            vals.append(count / secs)                # IOPS
    return vals
unit = {"4k-qd32-randread": "IOPS", "4k-qd32-randwrite": "IOPS", "1m-qd32-read": "MB/s", "1m-qd32-write": "MB/s",
        "4k-qd1-randread": "p50 us"}
qunit = dict(unit); qunit["4k-qd1-randread"] = "mean us"
def row(tool, name, a, b, u, key, fmt=".0f"):
    fa, fb = failed.get((key, name, "A"), 0), failed.get((key, name, "B"), 0)
    runs = (" / ".join(f"{x:{fmt}}" for x in a) or "-") + (f" ({fa} failed)" if fa else "") + " vs " \
        + (" / ".join(f"{x:{fmt}}" for x in b) or "-") + (f" ({fb} failed)" if fb else "")
    if not a or not b:
        return f"| {tool} | {name} | {u} | n/a | n/a | n/a | {runs} |"
    ma, mb = statistics.median(a), statistics.median(b)
    ratio = ma / mb if mb else float("nan")
    return f"| {tool} | {name} | {u} | {ma:{fmt}} | {mb:{fmt}} | {ratio:.2f} | {runs} |"
print(f"| tool | workload | unit | A median | B median | A/B | runs A vs B |")
print("|---|---|---|---|---|---|---|")
for n in names:
    print(row("load generator", n, lg(n, "A"), lg(n, "B"), unit[n], "lg"))
tck = os.sysconf("SC_CLK_TCK")
def cpu_per_io(name, side):
    # CPU of the serving processes per I/O of the load generator's run (ramp included on both sides of the ratio)
    vals = []
    for r in range(1, rounds + 1):
        c, j = f"{out}/cpu-{name}-{side}-{r}.txt", f"{out}/lg-{name}-{side}-{r}.json"
        if os.path.exists(c) and os.path.exists(j):
            t = json.load(open(j))["total"]
            ios = t["read"]["ios"] + t["write"]["ios"] if "ios" in t.get("read", {}) else 0
            if ios > 0:
                vals.append(int(open(c).read()) / tck * 1e6 / ios)
    return vals
if any(os.path.exists(f"{out}/cpu-{n}-A-1.txt") or os.path.exists(f"{out}/cpu-{n}-B-1.txt") for n in names):
    for n in names:
        print(row("server CPU per I/O", n, cpu_per_io(n, "A"), cpu_per_io(n, "B"), "us", "cpu"))
for n in names:
    a, b = qemu(n, "A"), qemu(n, "B")
    if a or b or failed.get(("qemu", n, "A")) or failed.get(("qemu", n, "B")):
        print(row("qemu-img bench (sequential)", n, a, b, qunit[n], "qemu").replace(n, n.replace("rand", ""), 1))
def settled(tool, name, side):
    return [float(open(p).read()) for p in (f"{out}/settle-{tool}-{name}-{side}-{r}.txt" for r in range(1, rounds + 1))
            if os.path.exists(p)]
for tool, label in (("lg", "load generator"), ("qemu", "qemu-img bench")):
    for n in names:
        a, b = settled(tool, n, "A"), settled(tool, n, "B")
        if a or b:
            print(row(f"write-back left by a {label} run", n, a, b, "s", "settle", ".2f"))
PY
