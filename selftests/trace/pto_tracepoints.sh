#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The device's tracepoints seen from bpftrace, as a user would trace them
# (TAP). Inside the VM with pto.ko loaded:
#
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/trace/pto_tracepoints.sh
#
# bpftrace counts every pto tracepoint and prints READY once attached (it
# takes tens of seconds under TCG); then the round-trip benchmark drives
# park, kick, wake and irq, and pto-gm drives alloc, map, fault and free;
# each event must have fired. Then tools/bpftrace/pto-kicklat.bt (kernel
# tracepoints and pto-aicore's USDT probes) watches a graph run through
# ptod and must print both histograms.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=$TOP/build
OUT=$(mktemp /tmp/pto-trace.XXXXXX)
# shellcheck source-path=SCRIPTDIR source=selftests/trace/bt-lib.sh
. "$TOP/selftests/trace/bt-lib.sh"

echo "1..4"
bpftrace -e '
BEGIN { printf("READY\n"); }
tracepoint:pto:* { @[probe] = count(); }
' > "$OUT" 2>&1 &
bt=$!
i=0
until grep -q READY "$OUT"; do
	i=$((i + 1))
	if [ $i -ge 1800 ] || ! kill -0 $bt 2>/dev/null; then
		sed 's/^/# /' "$OUT"
		echo "not ok 1 - bpftrace attached to tracepoint:pto:*"
		echo "not ok 2 - every pto tracepoint fired"
		echo "not ok 3 - pto-kicklat.bt attached"
		echo "not ok 4 - pto-kicklat.bt histograms"
		exit 1
	fi
	sleep 0.1
done
echo "ok 1 - bpftrace attached to tracepoint:pto:* after $((i / 10)) s"

"$B/bench/pto-bench-roundtrip" -n 50 -w 5 > /dev/null 2>&1
"$B/tools/pto-gm" > /dev/null 2>&1
bt_stop $bt "$OUT"
sed 's/^/# /' "$OUT"
missing=
for ev in alloc free map fault attach detach park wake kick irq; do
	grep -q "tracepoint:pto:pto_$ev\]: [1-9]" "$OUT" || missing="$missing $ev"
done
if [ -z "$missing" ]; then
	echo "ok 2 - every pto tracepoint fired"
else
	echo "not ok 2 - every pto tracepoint fired (silent:$missing)"
fi

# A user's view: the shipped tool over a graph run through ptod.
PTO_TOP=$TOP
PTOD_PID=
# shellcheck source-path=SCRIPTDIR/../.. source=scripts/ptod-lib.sh
. "$TOP/scripts/ptod-lib.sh"
DIR=$(mktemp -d /tmp/pto-trace.XXXXXX)
ptod_start "$DIR" || exit 1
bpftrace "$TOP/tools/bpftrace/pto-kicklat.bt" "$B/daemon/pto-aicore" > "$OUT" 2>&1 &
bt=$!
i=0
until grep -q READY "$OUT"; do
	i=$((i + 1))
	if [ $i -ge 1800 ] || ! kill -0 $bt 2>/dev/null; then
		break
	fi
	sleep 0.1
done
grep -q READY "$OUT"
r=$?
if [ $r = 0 ]; then
	echo "ok 3 - pto-kicklat.bt attached"
else
	echo "not ok 3 - pto-kicklat.bt attached"
fi
"$B/selftests/e2e/pto_e2e" bgemm | sed 's/^/# /'
bt_stop $bt "$OUT"
ptod_stop
sed 's/^/# /' "$OUT"
grep -q "^@kick_to_wake_us:" "$OUT" && grep -q "^@task_run_us:" "$OUT"
r4=$?
if [ $r4 = 0 ]; then
	echo "ok 4 - pto-kicklat.bt histograms"
else
	echo "not ok 4 - pto-kicklat.bt histograms"
fi
rm -rf "$OUT" "$DIR"
[ -z "$missing" ] && [ $r = 0 ] && [ $r4 = 0 ]
