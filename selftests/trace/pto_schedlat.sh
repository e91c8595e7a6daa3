#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The scheduler-latency bpftrace scripts of tools/bpftrace against a known
# workload (TAP). Inside the VM with pto.ko loaded:
#
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/trace/pto_schedlat.sh
#
# ptod runs; pto-schedlat.bt, pto-cores.bt, pto-slowest.bt and ptolat
# attach together (READY from each); pto_e2e bgemm runs its graphs
# through ptod; then Ctrl-C. ptod's log says how many tasks each graph ran; each
# per-task probe (submit, ready, done, retire) must have counted exactly
# that many, each per-core-execution probe (dispatch, start, end,
# complete) as many as the others, the phases must add up to the total,
# the cores' task counts to the core executions, and the slowest tasks'
# phases to no more than their totals; ptolat's histograms must hold as
# many tasks and core executions.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=$TOP/build
BT=$TOP/tools/bpftrace
DIR=$(mktemp -d /tmp/pto-schedlat.XXXXXX)
PTO_TOP=$TOP
PTOD_PID=
# shellcheck source-path=SCRIPTDIR/../.. source=scripts/ptod-lib.sh
. "$TOP/scripts/ptod-lib.sh"

echo "1..7"
ptod_start "$DIR" || exit 1
pids=
for s in schedlat cores slowest; do
	bpftrace "$BT/pto-$s.bt" "$B/daemon/ptod" "$B/daemon/pto-aicore" \
		> "$DIR/$s.out" 2>&1 &
	pids="$pids $!"
done
"$B/tools/ptolat/ptolat" > "$DIR/ptolat.out" 2>&1 &
pids="$pids $!"
i=0
until grep -q READY "$DIR/schedlat.out" && grep -q READY "$DIR/cores.out" &&
      grep -q READY "$DIR/slowest.out" && grep -q READY "$DIR/ptolat.out"; do
	i=$((i + 1))
	[ $i -ge 3000 ] && break
	sleep 0.1
done
if [ $i -ge 3000 ]; then
	echo "not ok 1 - the three scripts and ptolat attached"
else
	echo "ok 1 - the three scripts and ptolat attached after $((i / 10)) s"
fi
"$B/selftests/e2e/pto_e2e" bgemm | sed 's/^/# /'
# Ctrl-C each tracer. bpftrace 0.17 can miss a SIGINT that comes while
# it is between two polls and then sleeps until the next event, which
# never comes once the workload is over: repeat it until each is gone.
alive() {	# alive PID: running, not a zombie waiting to be reaped
	case $(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null) in
	'' | Z) return 1 ;;
	esac
}
for p in $pids; do
	i=0
	while alive "$p" && [ $i -lt 60 ]; do
		kill -INT "$p"
		i=$((i + 1))
		sleep 1
	done
	alive "$p" && kill -KILL "$p" && echo "# $p killed: it ignored SIGINT"
	wait "$p"
done
ptod_stop
for s in schedlat cores slowest; do
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
rm -rf "$DIR"
