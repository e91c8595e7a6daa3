#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check.sh SIM [MAKESPAN] - the simulator's checks and the HWS target
# experiments. Fails if a DAG file does not replay to the same results,
# if the parser accepts a bad file, or if a recording of a live run (made
# by the runtime through pto-bench-makespan -w, when MAKESPAN is given)
# does not replay; otherwise prints the tables (the figures are for
# reading: Documentation/hws.rst records them).
set -eu -o pipefail
SIM=${1:-build/tools/pto-hws-sim}
MAKESPAN=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=scripts/check-refused.sh
. "$(dirname "$0")/../../scripts/check-refused.sh"

echo "== DAG files: generated workloads replay to the same results"
# generator | machine and model
while IFS='|' read -r gen run; do
	# shellcheck disable=SC2086
	$SIM $gen $run --dump "$tmp/w.dag" > "$tmp/a.out"
	# shellcheck disable=SC2086
	$SIM $run "$tmp/w.dag" > "$tmp/b.out" 2>&1 ||
		{ cat "$tmp/b.out"; exit 1; }
	if ! diff -q "$tmp/a.out" "$tmp/b.out" > /dev/null; then
		echo "round trip differs for: $gen $run"
		diff "$tmp/a.out" "$tmp/b.out"
		exit 1
	fi
	echo "ok: $gen $run"
done <<'CASES'
--random 3 --arrive 5ms|--cores 8
--pa 3 --pa-shape 4:3 --arrive 50us|--device 24 --noise 0.1
--forkjoin 2 --dynamic|--cores 6:6 --early predict:50us
--random 2 --forkjoin 1 --pa 2 --arrive 1ms|--device 8
CASES

echo "== generated kinds together: each its count, taking turns"
names=$($SIM --random 2 --forkjoin 1 --pa 2 --cores 4 --dump - |
	awk '$1 == "dag" { printf "%s ", $2 }')
want="random0 forkjoin0 pa0 random1 pa1 "
if [ "$names" != "$want" ]; then
	echo "generated DAGs: \"$names\", want \"$want\""; exit 1
fi
echo "ok: $names"

echo "== DAG files: errors name the line"
# file contents (\n for newlines) | the error expected
while IFS='|' read -r body want; do
	printf '%b' "$body" > "$tmp/bad.dag"
	if $SIM --cores 2 "$tmp/bad.dag" > "$tmp/e.out" 2>&1; then
		echo "a bad file was accepted: $body"; exit 1
	fi
	grep -qF "$want" "$tmp/e.out" || { cat "$tmp/e.out"; exit 1; }
	echo "ok: $(cat "$tmp/e.out")"
done <<'FILES'
dag a\ntask 0 cost 1ms\ntask 1 cost 1ms pred 7\n|bad.dag:3: task 1: predecessor 7
dag a\ntask 0 cost nan\n|bad.dag:2: task 0: bad cost 'nan'
dag a\ntask 0 cost 0x10\n|bad.dag:2: task 0: bad cost '0x10'
dag a\ntask 0 cost 1e3us\n|bad.dag:2: task 0: bad cost '1e3us'
dag a\ntask 0 cost 1ms\ntask 1 cost 1ms pred 0,,0\n|bad.dag:3: task 1: predecessor ''
dag a\ntask 0 cost 1ms\ntask 1 cost 1ms pred 0,\n|bad.dag:3: task 1: predecessor ''
dag a\ntask 5 cost 1ms\ndag b\ntask 0 cost 1ms pred 5\n|bad.dag:4: task 0: predecessor 5
dag a\ntask 0 cost 1ms cost 2ms\n|bad.dag:2: task 0: 'cost' given twice
dag a\ntask 0 cost 1ms type aic est 1us type aiv\n|bad.dag:2: task 0: 'type' given twice
dag a\ntask 0 cp cost 1ms cp\n|bad.dag:2: task 0: 'cp' given twice
dag a arrival 1ms arrival 2ms\ntask 0 cost 1ms\n|bad.dag:1: dag a: 'arrival' given twice
dag a static dynamic\ntask 0 cost 1ms\n|bad.dag:1: dag a: 'static|dynamic' given twice
dag a ctx 1 ctx 2\ntask 0 cost 1ms\n|bad.dag:1: dag a: 'ctx' given twice
dag a\ntask 0 cost 1ms\ntask 1 cost 1ms\0 pred 0\n|bad.dag:3: a NUL byte
dag a\ntask 0 cost 1ms\nblock 0 core 0 dispatch 0 start 1 end 4611686018427388416\n|bad.dag:3: block of task 0: bad end
dag a\ntask 0 cost 1ms\nblock 0 core 0 dispatch 0 start 1 end 4611686018.427387905s\n|bad.dag:3: block of task 0: bad end
dag a012345678901234567890123456789012345678901234567890123456789012\ntask 0 cost 1ms\n|bad.dag:1: dag: name 'a012345678901234...' longer than 63 bytes
dag a\ntask 0 cost 1ms\nblock 0 core 0 dispatch 0 start 1 end 2 end 3\n|bad.dag:3: block of task 0: 'end' given twice
dag a\001b\ntask 0 cost 1ms\n|bad.dag:1: dag: name is not text
dag a\0177\ntask 0 cost 1ms\n|bad.dag:1: dag: name is not text
dag \0302\0205\ntask 0 cost 1ms\n|bad.dag:1: dag: name is not text
dag a\0377b\ntask 0 cost 1ms\n|bad.dag:1: dag: name is not text
dag a\0303\ntask 0 cost 1ms\n|bad.dag:1: dag: name is not text
dag \0300\0257\ntask 0 cost 1ms\n|bad.dag:1: dag: name is not text
dag \0355\0240\0200\ntask 0 cost 1ms\n|bad.dag:1: dag: name is not text
dag \0364\0220\0200\0200\ntask 0 cost 1ms\n|bad.dag:1: dag: name is not text
FILES

echo "== DAG files: a name in UTF-8 is text"
# e-acute, a CJK ideograph, U+10FFFF
printf 'dag \303\251-\344\270\255-\364\217\277\277\ntask 0 cost 1ms\n' > "$tmp/utf8.dag"
$SIM --cores 2 --per-dag "$tmp/utf8.dag" > "$tmp/e.out" 2>&1 ||
	{ cat "$tmp/e.out"; exit 1; }
echo "ok: $(printf '\303\251-\344\270\255') accepted"

echo "== DAG files: each file is checked for itself"
# a good file first, then one without a DAG or one that cannot be read
printf 'dag a\ntask 0 cost 1ms\n' > "$tmp/good.dag"
printf '# nothing\n' > "$tmp/none.dag"
mkdir "$tmp/dir.dag"
while IFS='|' read -r file want; do
	if $SIM --cores 2 "$tmp/good.dag" "$tmp/$file" > "$tmp/e.out" 2>&1; then
		echo "$file was accepted after good.dag"; exit 1
	fi
	grep -qF "$tmp/$file: $want" "$tmp/e.out" || { cat "$tmp/e.out"; exit 1; }
	echo "ok: good.dag $file: $(cat "$tmp/e.out")"
done <<'FILES'
none.dag|no dag
dir.dag|Is a directory
FILES

echo "== --dump: a workload not written whole is an error"
for dst in /dev/full -; do
	if $SIM --random 2 --cores 2 --dump "$dst" > /dev/full 2> "$tmp/e.out"; then
		echo "--dump $dst to a full device: exit 0"; exit 1
	fi
	grep -qF "No space left on device" "$tmp/e.out" || { cat "$tmp/e.out"; exit 1; }
	echo "ok: --dump $dst: $(cat "$tmp/e.out")"
done

echo "== zero times: ratios of 0 ns to 0 ns are numbers or '-', never nan"
for run in "--random 2 --cores 2" "--experiment a --count 1" \
	"--experiment b --count 1 --arrive 0"; do
	# shellcheck disable=SC2086
	$SIM $run --cost 0-0 --lat 0,0,0,0 > "$tmp/z.out"
	if grep -qiwE "nan|inf" "$tmp/z.out"; then
		echo "$run --cost 0-0 --lat 0,0,0,0:"; cat "$tmp/z.out"; exit 1
	fi
	echo "ok: $run: $(tail -n 1 "$tmp/z.out")"
done

echo "== DAG files: times are exact to the nanosecond, up to 2^62"
# a double would round the first, the third and the largest
printf 'dag a\ntask 0 cost 3.0005us est 0.0000005us\nblock 0 core 0 dispatch 9007199254740993 start 4611686018.4273879044s end 4611686018427387904\n' \
	> "$tmp/exact.dag"
$SIM --cores 1 --dump - "$tmp/exact.dag" | grep -E '^(task|block) ' > "$tmp/exact.out"
printf 'task 0 cost 3001 est 0 type any\nblock 0 core 0 dispatch 9007199254740993 start 4611686018427387904 end 4611686018427387904\n' |
	diff - "$tmp/exact.out" || { echo "times not read exactly"; exit 1; }
echo "ok: $(tr '\n' ';' < "$tmp/exact.out")"

echo "== DAG files: a predecessor named twice is one edge"
# within a list and across two pred fields of the same line; a task of
# the next line may name the same predecessors again
printf 'dag a\ntask 0 cost 1ms\ntask 1 cost 1ms\ntask 2 cost 1ms pred 0,1,0 pred 1,0\ntask 3 cost 1ms pred 1,0,1\n' \
	> "$tmp/dup.dag"
$SIM --cores 2 --dump - "$tmp/dup.dag" | grep '^task [23] ' > "$tmp/dup.out"
printf 'task 2 cost 1ms type any pred 0,1\ntask 3 cost 1ms type any pred 1,0\n' |
	diff - "$tmp/dup.out" || { echo "want each predecessor once, as named first"; exit 1; }
echo "ok: $(tr '\n' ';' < "$tmp/dup.out")"

echo "== generated DAGs: a predecessor drawn twice is one edge"
# small layers and a large fan-in draw the same predecessor often
$SIM --random 3 --tasks 200 --width 3 --fanin 30 --cores 2 --dump - |
	awk '$1 == "task" {
		for (i = 3; i < NF; i++)
			if ($i == "pred") {
				n = split($(i + 1), p, ",")
				delete seen
				for (k = 1; k <= n; k++)
					if (seen[p[k]]++) {
						print "repeated: " $0; bad = 1
					}
				edges += n
			}
	}
	END { if (bad || !edges) exit 1; print "ok: " edges " edges, none repeated" }'

echo "== --prio norm orders one DAG's kernels as --prio rank does"
# the ranks over a per-DAG constant: the same order, the same schedule,
# also when the first task's rank is 0 (a zero-cost task without successors)
{
	echo "dag a"
	echo "task 0 cost 0"
	for i in $(seq 1 41); do echo "task $i cost 1ms"; done
	for i in $(seq 42 50); do echo "task $i cost 1ms pred $((i - 1))"; done
} > "$tmp/norm.dag"
for p in rank norm; do
	$SIM --cores 2 --check --prio "$p" "$tmp/norm.dag" | grep '^hws' \
		> "$tmp/$p.out"
done
diff "$tmp/rank.out" "$tmp/norm.out" ||
	{ echo "--prio norm schedules differently from --prio rank"; exit 1; }
echo "ok: $(cat "$tmp/norm.out")"

echo "== early launch by SIP report: the kernel in a shadow slot reports too"
# one SIP, kernels shorter than the offset: each reports pre-complete as
# soon as it runs, so every kernel but the first launches early
{
	echo "dag a"
	for i in $(seq 0 19); do echo "task $i cost 10us"; done
} > "$tmp/early.dag"
$SIM --cores 1 --early report:15us --check "$tmp/early.dag" | grep '^hws' \
	> "$tmp/early.out"
read -r _ _ _ _ _ launches _ _ early < "$tmp/early.out"
if [ "$launches" != 20 ] || [ "$early" != 19 ]; then
	echo "want 20 launches, 19 early: $(cat "$tmp/early.out")"
	exit 1
fi
echo "ok: $(cat "$tmp/early.out")"

echo "== a workload whose simulated clock could pass 2^62 ns is refused"
# an arrival at the limit and one task after it; 65 tasks of 65535
# blocks of 2^40 ns (65 x 2^56 ns on one SIP)
{
	echo "dag late arrival 4611686018427387904"
	echo "task 0 cost 1"
} > "$tmp/late.dag"
{
	echo "dag long"
	for i in $(seq 0 64); do
		echo "task $i cost 1099511627776 shape 65535x1"
	done
} > "$tmp/long.dag"
# and generated arrivals whose gaps add up past it (199 of mean 2^62 ns,
# some of them past 2^64 ns)
for run in "$tmp/late.dag" "$tmp/long.dag" \
	"--random 200 --arrive 4611686018427387904"; do
	# shellcheck disable=SC2086
	if $SIM --cores 1 $run > "$tmp/e.out" 2>&1; then
		echo "$run was run: $(tail -1 "$tmp/e.out")"
		exit 1
	fi
	grep -F "the simulated clock could wrap" "$tmp/e.out" > "$tmp/w.out" ||
		{ cat "$tmp/e.out"; exit 1; }
	echo "ok: ${run#"$tmp/"}: $(cat "$tmp/w.out")"
done

echo "== options: a value out of range is refused, not wrapped or cast"
while read -r opt val; do
	echo "$opt $val|pto-hws-sim: bad value for $opt: '$val'"
done <<'OPTS' | refused_each "$SIM" --forkjoin 1 --cores 2
--branches 4294967295
--branches 4294967296
--noise nan
--noise 1
--seed 12x
--threshold 0
--count -1
--cores -1
--cores 4x
--pa-shape 4294967295:3
--tasks 4294967295
--tasks 0
--tasks 9-8
--fanin 1-2x
--pa-cost 4000000000s,1,1,1,1
--lat 0,0,4e18,0
--launch-delay 2000s
--margin -2000s
--margin +1ms
--arrive +5ms
--noise -0
--cost 1ms-+2ms
--cost 0x1p3ms
--arrive 1e3
--tasks 1-2-3
--lat 0,0,0,0,0
--lat 0,0,,0
--pa-cost 1,1,1,1,1,1
--pa-cost 1,1,1,1,
--promote threshold,,cp
--promote cp,
--scale 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,
--mix 1
OPTS

echo "== machines: one the HWS cannot lay out is refused, named"
# the run | the machine
while IFS='|' read -r run machine; do
	echo "$run $machine|pto-hws-sim: $machine: "
done <<'MACHINES' | refused_each "$SIM"
--forkjoin 1|--cores 8:5
--forkjoin 1|--cores 1000:4
--forkjoin 1|--device 100
--experiment b --count 1|--cores 8:5
MACHINES

echo "== experiments: an option one would ignore is refused, named"
# the run | the error, after "pto-hws-sim: "
sed 's/|/|pto-hws-sim: /' <<'EXPERIMENTS' | refused_each "$SIM"
--experiment c|bad value for --experiment: 'c'
--experiment ab|bad value for --experiment: 'ab'
--experiment a --device 24|--experiment a does not take --device
--experiment b --device 24|--experiment b does not take --device
--experiment a --cores 4|--experiment a does not take --cores
--experiment a --arrive 5ms|--experiment a does not take --arrive
--experiment a --mix 3|--experiment a does not take --mix
--experiment b --random 3|--experiment b does not take --random
--experiment b --per-dag|--experiment b does not take --per-dag
--experiment a --digest|--experiment a does not take --per-dag or --digest
--experiment b --dump -|--experiment b does not take --dump
--experiment a one.dag|--experiment a does not take DAG files
--random 1 --count 3|--count and --mix are --experiment's
--random 1 --mix 3|--count and --mix are --experiment's
--experiment b --branches 3|--branches is --forkjoin's (nothing else reads it)
--experiment a --pa-shape 4:3|--pa-shape and --pa-cost are --pa's
--random 1 --pa-cost 1,1,1,1,1|--pa-shape and --pa-cost are --pa's
--forkjoin 1 --pa-shape 2:2|--pa-shape and --pa-cost are --pa's
--pa 1 --branches 2|--branches is --forkjoin's
EXPERIMENTS

echo "== SLR: a DAG of zero-cost tasks has no critical path to compare with"
# 0, not inf: "-" alone, left out of the mean beside a DAG that has one
printf 'dag z\ntask 0 cost 0\ntask 1 cost 0 pred 0\n' > "$tmp/zero.dag"
printf 'dag a\ntask 0 cost 1ms\ntask 1 cost 1ms pred 0\n' > "$tmp/one.dag"
for f in zero one; do
	$SIM --cores 2 "$tmp/$f.dag" | grep '^hws' > "$tmp/$f.out"
done
$SIM --cores 2 "$tmp/zero.dag" "$tmp/one.dag" | grep '^hws' > "$tmp/both.out"
read -r _ _ slr_zero _ < "$tmp/zero.out"
read -r _ _ slr_one _ < "$tmp/one.out"
read -r _ _ slr_both _ < "$tmp/both.out"
if [ "$slr_zero" != - ] || [ "$slr_both" != "$slr_one" ]; then
	echo "SLR: want -, and $slr_one with the zero-cost DAG beside"
	cat "$tmp/zero.out" "$tmp/both.out"
	exit 1
fi
echo "ok: SLR - alone, $slr_both beside a 2 ms DAG"

if [ -n "$MAKESPAN" ]; then
	echo "== DAG files: a live run recorded by the runtime replays"
	"$MAKESPAN" -n 2 -c 2 -t 20-40 -k 100us-200us -w "$tmp/live.dag" \
		> "$tmp/l.out" || { cat "$tmp/l.out"; exit 1; }
	$SIM --cores 2 "$tmp/live.dag" > "$tmp/r.out" 2>&1 ||
		{ cat "$tmp/r.out"; exit 1; }
	[ "$(grep -c '^dag ' "$tmp/live.dag")" = 2 ] ||
		{ echo "the recording has no 2 DAGs"; exit 1; }
	echo "ok: $(grep -c '^task ' "$tmp/live.dag") recorded tasks replay"

	echo "== pto-bench-makespan: a bad value is refused, named"
	# (one DAG of one 1 us task should a bad value get through)
	while read -r opt val; do
		echo "$opt $val|pto-bench-makespan: bad value for $opt: '$val'"
	done <<'OPTS' | refused_each "$MAKESPAN" -n 1 -c 1 -t 1-1 -k 1us-1us
-n 12x
-n 0
-c 0
-c 17
-c 2,,4x
-c 2,,4
-c 2,
-s -1
-t 0-3
-f 1-2x
-k 2ms-1ms
-k 1ms-+2ms
-e +1us
-W 4294967296
OPTS
	echo "== pto-bench-makespan: the generator's options with DAG files"
	for opt in "-n 3" "-s 2" "-t 5-9" "-f 1-2" "-k 1ms-2ms" "-W 3"; do
		echo "$opt $tmp/live.dag|pto-bench-makespan: ${opt%% *} shapes the random DAGs, which the DAG files replace"
	done | refused_each "$MAKESPAN" -c 1
fi

echo
echo "== compare.sh against itself: the same decisions twice, and the script runs"
"$(dirname "$0")/compare.sh" "$SIM" "$SIM"

echo
echo "== target a: one static DAG, 2 / 4 / 8 cores"
$SIM --experiment a --count 100
echo
echo "== target a, no AICPU latencies (--lat 0,0,0,0), HWS only"
$SIM --experiment a --count 100 --lat 0,0,0,0 | grep -E '^(cores| *[0-9]+ +hws)'
echo
echo "== target b: 6 static DAGs arriving over time, 8 cores"
$SIM --experiment b --count 20
echo
echo "== target b across loads (mean gap between arrivals)"
for gap in 5ms 10ms 20ms 40ms 80ms; do
	printf '%-5s ' "$gap"
	$SIM --experiment b --count 20 --arrive "$gap" | tail -1 |
		sed 's/; mixes with.*//'
done
echo
echo "== paged attention on the device (24 blocks): 4 DAGs of 4 chunks, 10% noise"
$SIM --pa 4 --pa-shape 4:3 --arrive 30us --device 24 --noise 0.1 --per-dag
