#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check.sh TRACE [MAKESPAN] - pto-trace's checks. A hand-written recording
# with known blocks must come out as JSON with one slice per block and one
# task span per task that ran, an SVG with one bar per block, a DOT graph
# with one edge per producer; bad "block" lines are refused with their
# line; a live recording (pto-bench-makespan -w, when MAKESPAN is given)
# has one block line per task that ran and converts.
set -eu -o pipefail
TRACE=${1:-build/tools/pto-trace}
MAKESPAN=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# counts FILE: "slices spans" of a Chrome trace, "bars" of an SVG
json_counts() {
	python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
b = [e for e in ev if e["ph"] == "b"]
e = [e for e in ev if e["ph"] == "e"]
assert len(b) == len(e), "unbalanced task spans"
t0 = {s["id"]: s["ts"] for s in b}
assert all(s["ts"] >= t0[s["id"]] for s in e), "a span ends before it begins"
assert all(s["dur"] >= 0 for s in x), "negative duration"
print(len(x), len(b))' "$1"
}
svg_bars() {
	python3 -c '
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(sum(1 for e in r.iter("{http://www.w3.org/2000/svg}rect")
          if e.find("{http://www.w3.org/2000/svg}title") is not None))' "$1"
}

cat > "$tmp/r.dag" <<'EOF'
# two clients; task 2 of c1.1 ran twice (two blocks), task 3 never ran
dag uid0.c1.1 arrival 0 static
task 0 cost 10us type aic func 4
task 1 cost 20us type aiv func 5 pred 0
task 2 cost 5us type aiv shape 2x1 func 5 pred 0
task 3 cost 1us type aiv pred 1,2
block 0 core 0 dispatch 1us start 2us end 12us
block 1 core 3 dispatch 12us start 13us end 33us
block 2 core 4 dispatch 12us start 14us end 19us
block 2 core 5 dispatch 12us start 15us end 20us
dag uid1000.c2.7 arrival 5us dynamic
task 0 cost 3us type any
block 0 core 1 dispatch 6us start 6500 end 9.5us
EOF

echo "== a known recording"
"$TRACE" -f json -o "$tmp/r.json" "$tmp/r.dag"
[ "$(json_counts "$tmp/r.json")" = "5 4" ] ||
	fail "json: $(json_counts "$tmp/r.json") slices/spans, expected 5 4"
grep -q '"name":"uid1000.c2"' "$tmp/r.json" || fail "json: no client uid1000.c2"
grep -q '"tid":5,"ts":14.000,"dur":5.000' "$tmp/r.json" ||
	fail "json: core 5's block not at 14 us for 5 us (time 0: the first dispatch)"
"$TRACE" -f svg "$tmp/r.dag" > "$tmp/r.svg"
[ "$(svg_bars "$tmp/r.svg")" = 5 ] || fail "svg: $(svg_bars "$tmp/r.svg") bars, expected 5"
"$TRACE" -f dot "$tmp/r.dag" > "$tmp/r.dot"
[ "$(grep -c -- '->' "$tmp/r.dot")" = 4 ] || fail "dot: $(grep -c -- '->' "$tmp/r.dot") edges, expected 4"
[ "$("$TRACE" -f dot -d uid1000.c2.7 "$tmp/r.dag" | grep -c 'label="0')" = 1 ] ||
	fail "dot -d: not the one task of uid1000.c2.7"
echo "ok: 5 blocks, 4 task spans, 4 edges"

echo "== a span begins at the first dispatch before a start, else the start"
# block 1's dispatch is 0 (before the recording's time 0), block 2's
# after its start: neither has a wait to draw
cat > "$tmp/w.dag" <<'EOF'
dag c.1
task 0 cost 1us
task 1 cost 1us
task 2 cost 1us
block 0 core 0 dispatch 1us start 1us end 2us
block 1 core 1 dispatch 0 start 50us end 60us
block 2 core 2 dispatch 80us start 70us end 75us
EOF
"$TRACE" -f json -o "$tmp/w.json" "$tmp/w.dag"
json_counts "$tmp/w.json" > /dev/null || fail "json: bad spans"
spans=$(grep -o '"ph":"b"[^}]*"ts":[0-9.]*' "$tmp/w.json" |
	sed 's/.*"ts"://' | tr '\n' ' ')
[ "$spans" = "0.000 49.000 69.000 " ] ||
	fail "span starts $spans, expected 0.000 49.000 69.000 (us from 1 us)"
echo "ok: span starts $spans"

echo "== a client's DAGs share its process; clients in file order"
cat > "$tmp/c.dag" <<'EOF'
dag b.1
task 0 cost 1us
block 0 core 0 dispatch 0 start 1us end 2us
dag a.1
task 0 cost 1us
block 0 core 1 dispatch 0 start 1us end 2us
dag b.2
task 0 cost 1us
block 0 core 0 dispatch 0 start 3us end 4us
EOF
"$TRACE" -f json -o "$tmp/c.json" "$tmp/c.dag"
python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = sorted((e["pid"], e["args"]["name"]) for e in ev
               if e["ph"] == "M" and e["name"] == "process_name")
assert procs == [(1, "cores"), (2, "b"), (3, "a")], procs
spans = sorted((e["ts"], e["pid"]) for e in ev if e["ph"] == "b")
assert [p for t, p in spans] == [2, 3, 2], spans' "$tmp/c.json" ||
	fail "json: clients b, a with b.2 under b expected"
echo "ok: b.1 and b.2 under b, then a"

echo "== names with the characters JSON and XML reserve, and UTF-8"
# the parser takes any text as a name (not control characters); every
# format must still parse
printf 'dag <\303\251"&\\\344\270\255>.1\ntask 0 cost 1us\nblock 0 core 0 dispatch 0 start 1us end 2us\n' > "$tmp/n.dag"
"$TRACE" -f json -o "$tmp/n.json" "$tmp/n.dag"
[ "$(json_counts "$tmp/n.json")" = "1 1" ] || fail "json of n.dag"
"$TRACE" -f svg "$tmp/n.dag" > "$tmp/n.svg"
[ "$(svg_bars "$tmp/n.svg")" = 1 ] || fail "svg of n.dag"
python3 -c '
import json, sys
names = {e["args"]["name"] for e in json.load(open(sys.argv[1]))["traceEvents"]
         if e["ph"] == "M" and e["name"] == "process_name"}
assert "<\u00e9\"&\\\u4e2d>" in names, names' "$tmp/n.json" ||
	fail "json: the client's name did not come through"
echo "ok: $(head -n 1 "$tmp/n.dag")"

echo "== bad block lines are refused with their line"
bad() {
	printf 'dag a\ntask 0 cost 1us\n%s\n' "$1" > "$tmp/bad.dag"
	if "$TRACE" "$tmp/bad.dag" > /dev/null 2> "$tmp/e.out"; then
		fail "accepted: $1"
	fi
	grep -q "bad.dag:3: $2" "$tmp/e.out" || fail "$1: $(cat "$tmp/e.out")"
	echo "ok: $(cat "$tmp/e.out")"
}
bad "block 1 core 0 dispatch 0 start 1 end 2" "block: task 1 is not an earlier task"
bad "block 0 core 0 dispatch 0 start 5 end 2" "block of task 0: ends before it starts"
bad "block 0 core 0 start 1 end 2" "block of task 0: core, dispatch, start and end"
bad "block 0 core x dispatch 0 start 1 end 2" "block of task 0: bad core"
bad "block 0 core 0 dispatch 0 start 1 end 2 colour red" "block of task 0: unknown field"

if [ -n "$MAKESPAN" ]; then
	echo "== a live recording"
	"$MAKESPAN" -n 2 -c 4 -t 20-40 -k 50us-100us -w "$tmp/live.dag" \
		> "$tmp/l.out" || { cat "$tmp/l.out"; exit 1; }
	tasks=$(grep -c '^task ' "$tmp/live.dag")
	blocks=$(grep -c '^block ' "$tmp/live.dag")
	[ "$tasks" = "$blocks" ] || fail "live: $tasks tasks, $blocks block lines"
	"$TRACE" -f json -o "$tmp/l.json" "$tmp/live.dag"
	[ "$(json_counts "$tmp/l.json")" = "$blocks $tasks" ] ||
		fail "live json: $(json_counts "$tmp/l.json"), expected $blocks $tasks"
	"$TRACE" -f svg -o "$tmp/l.svg" "$tmp/live.dag"
	[ "$(svg_bars "$tmp/l.svg")" = "$blocks" ] || fail "live svg"
	echo "ok: $tasks tasks, $blocks blocks on $(grep -o '^block [0-9]* core [0-9]*' "$tmp/live.dag" |
		awk '{print $4}' | sort -u | wc -l) cores"
fi
