#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The scheduler-latency bpftrace scripts of tools/bpftrace against a known
# workload (TAP). Inside the VM with pto.ko loaded:
#
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/trace/pto_schedlat.sh
#
# ptod runs; pto-schedlat.bt, pto-cores.bt, pto-slowest.bt,
# pto-submitlat.bt and ptolat attach together (READY from each); pto_e2e bgemm runs its graphs
# through ptod; then Ctrl-C. ptod's log says how many tasks each graph ran; each
# per-task probe (submit, ready, done, retire) must have counted exactly
# that many, each per-core-execution probe (dispatch, start, end,
# complete) as many as the others, the phases must add up to the total,
# the cores' task counts to the core executions, and the slowest tasks'
# phases to no more than their totals; ptolat's histograms must hold as
# many tasks and core executions; every client submit (libpto) must join
# ptod's, with the task id the runtime announced; with a promotion
# threshold of 1 the HWS must reserve cores (task_reserve).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=$TOP/build
BT=$TOP/tools/bpftrace
DIR=$(mktemp -d /tmp/pto-schedlat.XXXXXX)
PTO_TOP=$TOP
PTOD_PID=
# shellcheck source-path=SCRIPTDIR/../.. source=scripts/ptod-lib.sh
. "$TOP/scripts/ptod-lib.sh"
# shellcheck source-path=SCRIPTDIR source=selftests/trace/bt-lib.sh
. "$TOP/selftests/trace/bt-lib.sh"

echo "1..9"
ptod_start "$DIR" || exit 1
# the probe stream below has thousands of tasks in flight at once
export BPFTRACE_MAP_KEYS_MAX=65536
pids=
pidfiles=
for s in schedlat cores slowest; do
	bpftrace "$BT/pto-$s.bt" "$B/daemon/ptod" "$B/daemon/pto-aicore" \
		> "$DIR/$s.out" 2>&1 &
	pids="$pids $!"
	pidfiles="$pidfiles $!:$DIR/$s.out"
done
bpftrace "$BT/pto-submitlat.bt" "$B/libpto/libpto.so.1" "$B/daemon/ptod" \
	> "$DIR/submitlat.out" 2>&1 &
pids="$pids $!"
pidfiles="$pidfiles $!:$DIR/submitlat.out"
"$B/tools/ptolat/ptolat" > "$DIR/ptolat.out" 2>&1 &
pids="$pids $!"
pidfiles="$pidfiles $!:$DIR/ptolat.out"
# a tracer that cannot attach (e.g. a probe missing from a binary) exits
i=0
gone=
until grep -q READY "$DIR/schedlat.out" && grep -q READY "$DIR/cores.out" &&
      grep -q READY "$DIR/slowest.out" && grep -q READY "$DIR/ptolat.out" &&
      grep -q READY "$DIR/submitlat.out"; do
	i=$((i + 1))
	for p in $pids; do
		kill -0 "$p" 2>/dev/null || gone="$gone $p"
	done
	[ $i -ge 3000 ] || [ -n "$gone" ] && break
	sleep 0.1
done
if [ $i -ge 3000 ] || [ -n "$gone" ]; then
	echo "not ok 1 - the four scripts and ptolat attached (exited:${gone:- none})"
	for s in schedlat cores slowest submitlat ptolat; do
		sed "s/^/# $s: /" "$DIR/$s.out"
	done
else
	echo "ok 1 - the four scripts and ptolat attached after $((i / 10)) s"
fi
# A kernel that fails to launch once is promoted and reserves cores
# (task_reserve): a cooperative kernel of 48 AIV blocks, which needs every
# AIV core at once, while a stream of probe tasks keeps launching on them
# (bgemm's one-core kernels alone fit any free core and never fail).
thr1=ok
"$B/tools/ptoctl" hws set promote-threshold=1 > "$DIR/hws1.out" 2>&1 || thr1=
sed 's/^/# /' "$DIR/hws1.out"
"$B/selftests/e2e/pto_e2e" probe 2 > "$DIR/probe.out" 2>&1 &
prb=$!
i=0
until grep -q READY "$DIR/probe.out" || [ $i -ge 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
"$B/selftests/e2e/pto_e2e" rendezvous 48 | grep CASE | sed 's/^/# /'
wait $prb
grep '^CASE' "$DIR/probe.out" | sed 's/^/# /'
"$B/tools/ptoctl" hws set promote-threshold=4 | sed 's/^/# /'
"$B/selftests/e2e/pto_e2e" bgemm | sed 's/^/# /'
# Ctrl-C each tracer (bt-lib.sh)
for pf in $pidfiles; do
	bt_stop "${pf%%:*}" "${pf#*:}"
done
ptod_stop
for s in schedlat cores slowest submitlat; do
	echo "# ---- pto-$s.bt"
	grep -v '^$' "$DIR/$s.out" | sed 's/^/# /'
done
echo "# ---- ptolat"
grep -v '^$' "$DIR/ptolat.out" | sed 's/^/# /'

# tasks run, from ptod's log: "client C graph G: done (0), N/M tasks"
ran=$(sed -n 's/.*graph [0-9]*: done (0), \([0-9]*\)\/.*/\1/p' \
	"$DIR/ptod.log" | awk '{ n += $1 } END { printf "%.0f\n", n }')
count() {	# count FILE MAP KEY
	sed -n "s/^@$2\[$3\]: \([0-9]*\)$/\1/p" "$1"
}
S=$DIR/schedlat.out
bad=
for k in submit ready "done" retire; do
	[ "$(count "$S" tasks "$k")" = "$ran" ] || bad="$bad $k=$(count "$S" tasks "$k")"
done
if [ "$ran" -gt 0 ] && [ -z "$bad" ]; then
	echo "ok 2 - submit, ready, done and retire each saw the $ran tasks ptod ran"
else
	echo "not ok 2 - per-task counts ($ran tasks ran:$bad)"
fi
units=$(count "$S" units dispatch)
bad=
for k in start end complete; do
	[ "$(count "$S" units "$k")" = "$units" ] || bad="$bad $k=$(count "$S" units "$k")"
done
if [ -n "$units" ] && [ "$units" -ge "$ran" ] && [ -z "$bad" ]; then
	echo "ok 3 - dispatch, start, end and complete each saw $units core executions"
else
	echo "not ok 3 - per-core-execution counts (dispatch=$units:$bad)"
fi
total=$(sed -n 's/^@sum_ns\[total\]: \([0-9]*\)$/\1/p' "$S")
phases=$(sed -n 's/^@sum_ns\[[1-6] [a-z_]*\]: \([0-9]*\)$/\1/p' "$S" |
	awk '{ n += $1 } END { printf "%.0f\n", n }')
if [ -n "$total" ] && [ "$total" -gt 0 ] && [ "$total" = "$phases" ] &&
   [ "$(sed -n '/^@sum_ns\[[1-6] /p' "$S" | wc -l)" = 6 ]; then
	echo "ok 4 - the six phases add up to submit -> done ($total ns)"
else
	echo "not ok 4 - phases ($phases ns) vs total (${total:-none} ns)"
fi
cores=$(sed -n 's/^@tasks\[[0-9]*\]: \([0-9]*\)$/\1/p' "$DIR/cores.out" |
	awk '{ n += $1 } END { printf "%.0f\n", n }')
nbusy=$(grep -c '^@busy_us\[' "$DIR/cores.out")
if [ "$cores" = "$units" ] && [ "$nbusy" -gt 0 ]; then
	echo "ok 5 - pto-cores.bt: $cores core executions on $nbusy cores"
else
	echo "not ok 5 - pto-cores.bt: $cores core executions (want $units)"
fi
# @slowest[client, graph, task, kernel, core, p1, p2, p3, p4, p5]: total
slow=$(sed -n 's/^@slowest\[\([0-9, ]*\)\]: \([0-9]*\)$/\1, \2/p' \
	"$DIR/slowest.out" | tr -d ' ' |
	awk -F, 'NF == 11 && $6 + $7 + $8 + $9 + $10 <= $11 { n++ }
		 END { print n + 0 }')
want=10
[ "$ran" -lt 10 ] && want=$ran
if [ "$slow" = "$want" ]; then
	echo "ok 6 - pto-slowest.bt: $slow tasks, phases within their totals"
else
	echo "not ok 6 - pto-slowest.bt: $slow good lines (want $want)"
fi
L=$DIR/ptolat.out
lat() {		# lat PHASE: its count in ptolat's output
	sed -n "s/^$1: \([0-9]*\)$/\1/p" "$L"
}
if [ "$(lat 'submit -> ready')" = "$ran" ] &&
   [ "$(lat 'ready -> dispatch (queueing)')" = "$ran" ] &&
   [ "$(lat 'dispatch -> start')" = "$units" ] &&
   [ "$(lat run)" = "$units" ] && [ "$(lat 'end -> observed')" = "$units" ]; then
	echo "ok 7 - ptolat: $ran tasks, $units core executions in its histograms"
else
	echo "not ok 7 - ptolat's histograms (want $ran tasks, $units core executions)"
fi
U=$DIR/submitlat.out
one() {		# one MAP: the value of a map without keys
	sed -n "s/^@$1: \([0-9]*\)$/\1/p" "$U"
}
if [ "$(one lib)" = "$ran" ] && [ "$(one joined)" = "$ran" ] &&
   [ "$(one tasked)" = "$ran" ]; then
	echo "ok 8 - pto-submitlat.bt: the $ran client submits joined ptod's, each with the task id pto2 announced"
else
	echo "not ok 8 - pto-submitlat.bt: lib=$(one lib) joined=$(one joined) tasked=$(one tasked) (want $ran)"
fi
rsv=$(sed -n 's/^@reserve\[[0-9]*, [0-9]*\]: \([0-9]*\)$/\1/p' "$U" |
	awk '{ n += $1 } END { printf "%.0f\n", n }')
if [ -z "$thr1" ]; then
	echo "not ok 9 - ptoctl hws set promote-threshold=1 failed"
elif [ "$rsv" -gt 0 ]; then
	echo "ok 9 - task_reserve: $rsv core reservations (promote-threshold=1, a cooperative kernel of 48 blocks)"
else
	echo "not ok 9 - task_reserve never fired with promote-threshold=1"
fi
rm -rf "$DIR"
