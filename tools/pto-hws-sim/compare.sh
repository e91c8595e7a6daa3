#!/bin/bash
# SPDX-License-Identifier: MIT
#
# compare.sh OLD NEW - the same decisions from two builds of the HWS
# library: runs two pto-hws-sim binaries over the same fixed-seed
# workloads and register settings (every promotion rule, fill-up, backfill
# margins, both early-launch modes, multi-SIP and cooperative kernels,
# layouts of one to six mask words) and fails on the first difference in
# the output: makespans, counters and --digest, a hash of every launch of
# the HWS and FIFO runs in order (time, kernel, blocks, SIPs, early SIPs,
# pool, flags). --check runs the invariant checker after every decision
# of both. Then the target experiments a and b, diffed whole.
#
#   tools/pto-hws-sim/compare.sh /tmp/old/pto-hws-sim build/tools/pto-hws-sim
set -eu -o pipefail
OLD=$1
NEW=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0

# same ARGS...: both binaries, the outputs must be equal; --digest
# unless ARGS run an experiment (which prints a line per run, no digest)
same() {
	local digest=--digest

	case " $* " in *" --experiment "*) digest= ;; esac
	"$OLD" $digest --check "$@" > "$tmp/old.out" 2>&1 ||
		{ echo "old failed: $*"; cat "$tmp/old.out"; exit 1; }
	"$NEW" $digest --check "$@" > "$tmp/new.out" 2>&1 ||
		{ echo "new failed: $*"; cat "$tmp/new.out"; exit 1; }
	if ! diff "$tmp/old.out" "$tmp/new.out"; then
		echo "differs: $*"
		exit 1
	fi
	n=$((n + 1))
}

# shaped SEED SIZES < DAG file > DAG file: a shape on about half the tasks
# (blocks 1..4, threads from SIZES, every fifth cooperative)
shaped() {
	awk -v seed="$1" -v sizes="$2" '
	BEGIN { srand(seed); ns = split(sizes, sz, ",") }
	/^task / && rand() < 0.5 {
		b = 1 + int(rand() * 4); t = sz[1 + int(rand() * ns)]
		$0 = $0 " shape " b "x" t (rand() < 0.2 ? "c" : "")
	}
	{ print }'
}

regs=(
	""
	"--promote 15 --threshold 1"
	"--promote 15 --threshold 2 --fillup"
	"--promote threshold,top1 --threshold 3 --rsvd-first --margin 200us"
	"--promote cp,skipped --margin -100us --early report:100us"
	"--promote 15 --threshold 1 --fillup --rsvd-first --early predict:200us"
	"--promote top1,skipped --scale flat --launch-delay 10us --early report:1ms"
	"--promote 0 --fillup --early predict:0"
)

for r in "${regs[@]}"; do
	# shellcheck disable=SC2086
	{
	same --random 6 --arrive 1ms --cores 8 $r
	same --random 4 --arrive 500us --cores 6:3 --noise 0.2 --seed 3 $r
	same --forkjoin 4 --dynamic --cores 12:6 --seed 5 $r
	same --pa 4 --pa-shape 4:3 --arrive 30us --device 24 --noise 0.1 $r
	same --pa 3 --device 9 --seed 7 --scale linear $r
	same --random 8 --arrive 200us --cores 300:4 --seed 11 $r
	}
done

# multi-SIP and cooperative kernels: DAG files with shapes
for c in "32:8 1,2,3,4,6,8" "96:16 1,2,4,8,9,12,16" "16:4 1,2,3,4" \
	 "200:8 1,2,4,6,8"; do
	set -- $c
	"$NEW" --random 5 --tasks 40-80 --arrive 300us --seed 13 --cores "$1" \
		--dump "$tmp/raw.dag" > /dev/null
	shaped 17 "$2" < "$tmp/raw.dag" > "$tmp/w.dag"
	for r in "${regs[@]}"; do
		# shellcheck disable=SC2086
		same --cores "$1" $r "$tmp/w.dag"
	done
done

for e in "--experiment a --count 30" "--experiment b --count 6" \
	 "--experiment b --count 4 --arrive 5ms --promote 15"; do
	# shellcheck disable=SC2086
	same $e
done
echo "ok: $n runs, the same output from $OLD and $NEW"
