#!/bin/sh
# SPDX-License-Identifier: MIT
#
# usdt-cost.sh ROUNDS WITH WITHOUT - what the USDT probes cost when
# nobody traces them: bench_submit built with the probes (WITH) and
# without (WITHOUT, -DPTO_NO_USDT) run in turns ROUNDS times each; per
# row the median over the rounds of each build's median submit cost, and
# the ratio WITH / WITHOUT of the sums of those medians (all rows, and
# the "alone" rows: the orchestrator on its own).
set -eu
rounds=$1
with=$2
without=$3
out=$(mktemp /tmp/usdt-cost.XXXXXX)
trap 'rm -f "$out"' EXIT

i=0
while [ "$i" -lt "$rounds" ]; do
	"$with" | sed -n 's/^submit, \([0-9]\) deps, \([a-z]*\) *\([0-9]*\) .*/with \1-\2 \3/p' >> "$out"
	"$without" | sed -n 's/^submit, \([0-9]\) deps, \([a-z]*\) *\([0-9]*\) .*/without \1-\2 \3/p' >> "$out"
	i=$((i + 1))
done

echo "# submit cost, median ns over $rounds rounds of each build's median"
printf '%-16s %12s %12s %8s\n' row probes_off no_probes ratio
awk '{ print $2 }' "$out" | sort -u | while read -r row; do
	a=$(awk -v r="$row" '$1 == "with" && $2 == r { print $3 }' "$out" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	b=$(awk -v r="$row" '$1 == "without" && $2 == r { print $3 }' "$out" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	printf '%-16s %12s %12s %8s\n' "$row" "$a" "$b" \
		"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
	echo "$row $a $b" >> "$out.sum"
done
# alone: the orchestrator on its own; concurrent rows also measure how
# the scheduler thread competes with it for the 2 CPUs (noisier)
awk '{ a += $2; b += $3 } /alone/ { aa += $2; ab += $3 } END {
	printf "all rows: %d ns with probes (disabled), %d ns without: ratio %.3f\n",
	       a, b, a / b
	printf "alone rows: %d ns with probes (disabled), %d ns without: ratio %.3f\n",
	       aa, ab, aa / ab }' "$out.sum"
rm -f "$out.sum"
