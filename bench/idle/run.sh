#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/idle/run.sh [-k] [SECONDS] - what ptod and pto-aicore cost while
# no client has work: CPU time of both processes (and their threads) over
# SECONDS (default 10) with the device up and nothing submitted, against a
# baseline of `sleep` over the same interval, in one run. The device is
# the user-mode one, or with -k pto.ko's /dev/pto0 (in the VM). Prints
# per process the CPU time used and its share of one CPU.
#
#   bench/idle/run.sh          (after make user)
#   scripts/vm-run --module kmod/pto.ko -- bench/idle/run.sh -k
set -eu -o pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
DEV=(-d user)
DEVNAME="user-mode device"
if [ "${1:-}" = -k ]; then
	DEV=()
	DEVNAME="pto.ko (/dev/pto0)"
	shift
fi
SECS=${1:-10}
tmp=$(mktemp -d)
ptod_pid=
cleanup() {
	[ -n "$ptod_pid" ] && kill -TERM "$ptod_pid" 2>/dev/null && wait "$ptod_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
# ns on a CPU of a process's threads (schedstat: exact, not in ticks)
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ n += $1 } END { printf "%.0f\n", n }'; }

"$TOP/build/daemon/ptod" "${DEV[@]}" -s "$tmp/ptod.sock" > "$tmp/ptod.log" 2>&1 &
ptod_pid=$!
for _ in $(seq 200); do
	grep -q "is ready" "$tmp/ptod.log" && break
	kill -0 "$ptod_pid" 2>/dev/null || { cat "$tmp/ptod.log"; exit 1; }
	sleep 0.05
done
grep -q "is ready" "$tmp/ptod.log" || { echo "ptod did not become ready"; cat "$tmp/ptod.log"; exit 1; }
aicore_pid=$(pgrep -P "$ptod_pid" -x pto-aicore | head -1)
[ -n "$aicore_pid" ] || { echo "no pto-aicore under ptod"; exit 1; }
sleep 1		# start-up done

sleep "$((SECS + 1))" &	# the baseline: a process that only sleeps
base_pid=$!
p0=$(cpu_ns "$ptod_pid"); a0=$(cpu_ns "$aicore_pid"); b0=$(cpu_ns "$base_pid")
t0=$(date +%s.%N)
sleep "$SECS"
b1=$(cpu_ns "$base_pid" 2>/dev/null || echo "$b0")
p1=$(cpu_ns "$ptod_pid"); a1=$(cpu_ns "$aicore_pid")
t1=$(date +%s.%N)
wait "$base_pid" || true

awk -v p="$((p1 - p0))" -v a="$((a1 - a0))" -v b="$((b1 - b0))" \
    -v t0="$t0" -v t1="$t1" -v dev="$DEVNAME" 'BEGIN {
	el = (t1 - t0) * 1e9
	printf "idle over %.2f s, %s\n", el / 1e9, dev
	printf "%-12s %10s %12s\n", "process", "cpu ms", "% of a CPU"
	printf "%-12s %10.3f %12.4f\n", "ptod", p / 1e6, p * 100 / el
	printf "%-12s %10.3f %12.4f\n", "pto-aicore", a / 1e6, a * 100 / el
	printf "%-12s %10.3f %12.4f\n", "baseline", b / 1e6, b * 100 / el
	printf "total ptod + pto-aicore: %.4f%% of one CPU (target < 1%%)\n", (p + a) * 100 / el
}'
