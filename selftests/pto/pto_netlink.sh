#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pto_netlink.sh: the generic netlink family "pto" through ptoctl (TAP):
#   - the module's family matches Documentation/netlink/specs/pto.yaml
#     (pto_nlspec.py kernel);
#   - every operation as root: dev-get and counters-get (do and dump),
#     hws-get, hws-set with valid and invalid settings, and the JSON of
#     each parsed;
#   - an unprivileged user (uid 65534, no capabilities): the get
#     operations work, hws-set is refused with EPERM and ptoctl says why,
#     and the configuration did not change;
#   - every multicast event, as ptoctl events sees it, from its source:
#     exec-attach, core-fault and exec-gone (an executor dies with cores),
#     aicpu-gone, hws-changed from hws-set and from PTO_IOC_HWS_CONFIG;
#   - hws-set while the AICPU writes the registers through its mapping
#     undoes none of the AICPU's writes;
#   - while an hws-get waits for the AICPU's write to end, a dev-get is
#     answered (pto_nlspec.py parallel: no genetlink mutex held);
#   - with a second device (loaded with nr_devices=2), that dumps list both
#     and the index selects one, in requests and in events.
#
# Needs root, pto.ko loaded (device 0 only), build/tools/ptoctl and
# build/selftests/pto_nlev; scripts/vm-selftest selftests/pto/pto_netlink.sh

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$TOP" || exit 1
BIN=${PTO_SELFTEST_BIN:-build/selftests}
PTOCTL=${PTOCTL:-build/tools/ptoctl}
NLEV=$BIN/pto_nlev
NOBODY=65534
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=selftests/pto/pto_tap.sh
. "$TOP/selftests/pto/pto_tap.sh"

# json FILE EXPR: python3 evaluates EXPR with j = the JSON of FILE; the
# check passes if EXPR is true.
json() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    j = json.load(f)
if not eval("(" + sys.argv[2] + ")"):
    print("false:", sys.argv[2])
    print(json.dumps(j)[:2000])
    sys.exit(1)
EOF
}

# as_nobody COMMAND...: COMMAND as an unprivileged user, no capabilities.
as_nobody() {
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
		--inh-caps=-all --bounding-set=-all "$@"
}

# aicpu_start ACTION NAME: pto_nlev ACTION in the background as $aicpu,
# its standard input the fifo $TMP/NAME held open on fd 9 (closing fd 9
# ends it), its output in $TMP/NAME.out; returns once it holds the role.
aicpu_start() {
	mkfifo "$TMP/$2"
	"$NLEV" "$1" <"$TMP/$2" >"$TMP/$2.out" 2>&1 &
	aicpu=$!
	exec 9>"$TMP/$2"
	for _ in $(seq 100); do
		grep -q held "$TMP/$2.out" && return 0
		sleep 0.1
	done
	return 1
}

for f in "$PTOCTL" "$NLEV"; do
	if [[ ! -x $f ]]; then
		echo "Bail out! $f missing (make user)"
		exit 1
	fi
done

check "family matches the spec" python3 selftests/pto/pto_nlspec.py kernel

# --- dev-get, counters-get -------------------------------------------------
nr_aic=$(cat /sys/class/misc/pto0/nr_aic)
"$PTOCTL" -j info >"$TMP/info" 2>&1
check "info (dump) JSON" json "$TMP/info" \
	"j[0]['index'] == 0 and j[0]['name'] == 'pto0' and
	 j[0]['nr-aic'] == $nr_aic and
	 j[0]['nr-cores'] == j[0]['nr-aic'] + j[0]['nr-aiv'] and
	 j[0]['gm-free'] <= j[0]['gm-size'] and j[0]['aicpu-pid'] == 0"
"$PTOCTL" -j -d 0 info >"$TMP/info0" 2>&1
check "info -d 0 (do) JSON" json "$TMP/info0" \
	"len(j) == 1 and j[0]['index'] == 0 and len(j[0]) == 13"
check "info for people" grep -q "^  nr-cores  *[0-9]" \
	<("$PTOCTL" info 2>&1)
check "info of a missing device fails clearly" \
	grep -q "info: No such device: no such device" \
	<("$PTOCTL" -d 7 info 2>&1)
"$PTOCTL" -j stats >"$TMP/stats" 2>&1
check "stats (dump) JSON" json "$TMP/stats" \
	"j[0]['index'] == 0 and len(j[0]) == 15 and j[0]['aicpu'] == 0"
"$PTOCTL" -j -d 0 stats >"$TMP/stats0" 2>&1
check "stats -d 0 (do) JSON" json "$TMP/stats0" \
	"len(j) == 1 and 'cores-dead' in j[0]"
# Every line of sysfs counters, under the same name (- for _) and with
# the same value (nothing runs meanwhile), and nothing else but index.
sysfs=$(awk '{ printf "%s\"%s\": %s", sep, $1, $2; sep = ", " }' \
	/sys/class/misc/pto0/counters)
"$PTOCTL" -j -d 0 stats >"$TMP/stats-sysfs" 2>&1
check "stats: sysfs counters, every one with its value" \
	json "$TMP/stats-sysfs" \
	"sorted(k.replace('_', '-') for k in {$sysfs}) ==
	 sorted(k for k in j[0] if k != 'index') and
	 all(j[0][k.replace('_', '-')] == v for k, v in {$sysfs}.items())"

# --- pids as the caller's pid namespace sees them --------------------------
# dev-get's aicpu-pid: the AICPU's pid here, 0 in a new pid namespace,
# which does not see it (events carry pids of the initial namespace).
aicpu_start aicpu-hold hold
holder=$aicpu
"$PTOCTL" -j info >"$TMP/pid-here" 2>&1
unshare --pid --fork "$PTOCTL" -j info >"$TMP/pid-ns" 2>&1
exec 9>&-
wait $holder
check "aicpu-pid: the AICPU's pid" json "$TMP/pid-here" \
	"j[0]['aicpu-pid'] == $holder"
check "aicpu-pid: 0 in a pid namespace that does not see it" \
	json "$TMP/pid-ns" "j[0]['aicpu-pid'] == 0"

# --- hws-get, hws-set ------------------------------------------------------
"$PTOCTL" -j hws get >"$TMP/hws" 2>&1
check "hws get JSON" json "$TMP/hws" \
	"j['index'] == 0 and j['cfg-seq'] % 2 == 0 and
	 len(j['scale-ratio']) == 20 and len(j['usage']) == 20 and
	 j['cluster-sip-num'] == 3"
field() {
	python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
seq0=$(field cfg-seq <"$TMP/hws")
threshold0=$(field promote-threshold <"$TMP/hws")

"$PTOCTL" -j hws set promote-threshold=7 usage=1:2:0-3,5 \
	>"$TMP/set" 2>&1
check "hws set (valid) replies with the new configuration" json "$TMP/set" \
	"j['promote-threshold'] == 7 and j['cfg-seq'] == $seq0 + 2 and
	 {'ctx': 1, 'class': 2, 'cores': [0, 1, 2, 3, 5]} in j['usage']"
"$PTOCTL" -j hws get >"$TMP/hws2" 2>&1
check "hws get sees the change" json "$TMP/hws2" \
	"j['promote-threshold'] == 7 and j['cfg-seq'] == $seq0 + 2"

# invalid: a value the HWS_CONFIG rules reject, a value the policy rejects
out=$("$PTOCTL" hws set promote-threshold=0 2>&1)
rc=$?
check "hws set (invalid value) fails with EINVAL and says why" \
	test $rc = 1 -a -n "$(echo "$out" | grep "Invalid argument.*rejected")"
out=$("$PTOCTL" hws set usage=9:0:0 2>&1)
rc=$?
check "hws set (ctx out of the policy's range) fails" \
	test $rc = 1 -a -n "$(echo "$out" | grep "Numerical result\|Invalid\|range")"
"$PTOCTL" -j hws get >"$TMP/hws3" 2>&1
check "invalid settings changed nothing" json "$TMP/hws3" \
	"j['promote-threshold'] == 7 and j['cfg-seq'] == $seq0 + 2"

# --- an unprivileged user --------------------------------------------------
check "unprivileged: info" as_nobody "$PTOCTL" -j info
check "unprivileged: stats" as_nobody "$PTOCTL" -j stats
check "unprivileged: hws get" as_nobody "$PTOCTL" -j hws get
out=$(as_nobody "$PTOCTL" hws set promote-threshold=9 2>&1)
rc=$?
echo "$out" | comment
check "unprivileged: hws set refused with EPERM and a clear message" \
	test $rc = 1 -a -n "$(echo "$out" |
		grep "hws set: permission denied: .*run it as root")"
"$PTOCTL" -j hws get >"$TMP/hws4" 2>&1
check "unprivileged: the configuration did not change" json "$TMP/hws4" \
	"j['promote-threshold'] == 7 and j['cfg-seq'] == $seq0 + 2"

# --- events ----------------------------------------------------------------
# listen OUT ARGS...: ptoctl ARGS in the background (killed after 60 s if
# it has not stopped by itself after its count of events), output to OUT,
# once it has joined the group (it says so on stderr); its pid in
# $listener.
listen() {
	local out=$1
	shift
	timeout 60 "$PTOCTL" "$@" >"$out" 2>"$out.err" &
	listener=$!
	for _ in $(seq 600); do
		grep -q listening "$out.err" && return 0
		sleep 0.1
	done
	return 1
}

listen "$TMP/events" -j -n 6 events
exec_pid=$("$NLEV" attach 2)
aicpu_pid=$("$NLEV" aicpu)
"$PTOCTL" hws set promote-threshold=8 >/dev/null
ioctl_pid=$("$NLEV" hws)
wait $listener
# one line per kind: KIND ok, or KIND and what is wrong
python3 - "$TMP/events" "$exec_pid" "$aicpu_pid" "$ioctl_pid" \
	>"$TMP/events.py" 2>&1 <<'EOF'
import json, sys
ev = [json.loads(line) for line in open(sys.argv[1])]
exe, aicpu, ioctl = (int(x) for x in sys.argv[2:5])
want = {
    "exec-attach": [{"index": 0, "pid": exe, "cores": [0, 1]}],
    "core-fault": [{"index": 0, "pid": exe, "cores": [0, 1]}],
    "exec-gone": [{"index": 0, "pid": exe, "cores": [0, 1]}],
    "aicpu-gone": [{"index": 0, "pid": aicpu}],
}
for kind, w in want.items():
    got = [{k: v for k, v in e.items() if k != "event"}
           for e in ev if e["event"] == kind]
    print(kind, "ok" if got == w else f"got {got}, want {w}")
# hws-set's, then HWS_CONFIG's, each advancing cfg-seq by 2
hws = [e for e in ev if e["event"] == "hws-changed"]
ok = len(hws) == 2 and hws[1]["pid"] == ioctl and \
    hws[1]["cfg-seq"] == hws[0]["cfg-seq"] + 2
print("hws-changed", "ok" if ok else f"got {hws}")
order = [e["event"] for e in ev]
print("order", "ok" if order[:3] == ["exec-attach", "core-fault",
                                     "exec-gone"] else f"got {order}")
EOF
for kind in exec-attach core-fault exec-gone aicpu-gone hws-changed order; do
	line=$(grep "^$kind " "$TMP/events.py")
	if [[ $line == "$kind ok" ]]; then
		ok "event $kind"
	else
		{ echo "${line:-no result}"; cat "$TMP/events.py"; } | comment
		not_ok "event $kind"
	fi
done
listen "$TMP/human" -n 1 events
"$NLEV" attach 2 >/dev/null
wait $listener
check "events for people" grep -q "^exec-attach pto0 pid [0-9]* cores 0-1$" \
	"$TMP/human"

# --- hws-set does not undo the AICPU's own writes --------------------------
# hws-set reads the registers, merges the request in and writes the whole
# back: an AICPU write through its mapping that lands in between must make
# it merge again, not be written over. The AICPU here writes one register
# hws-set is never given, over and over, and checks it keeps its value.
aicpu_start aicpu-write aw
writer=$aicpu
sets=0
for i in $(seq 200); do
	"$PTOCTL" hws set promote-threshold=$((7 + i % 2)) >/dev/null \
		2>>"$TMP/aw.err" && sets=$((sets + 1))
done
exec 9>&-
wait $writer
writer_rc=$?
{ cat "$TMP/aw.out"; echo "hws set: $sets of 200 done"; sort "$TMP/aw.err" |
	uniq -c; } | comment
check "hws set during AICPU writes loses none of them" \
	test "$writer_rc" = 0 -a "$sets" -gt 0
check "hws set during AICPU writes: the writer ran throughout" \
	grep -q "^writes [1-9][0-9][0-9]* lost 0$" "$TMP/aw.out"

# --- hws-get's wait holds up no other request -------------------------------
# An AICPU whose own write of the registers is under way (an odd count)
# makes hws-get wait for it, at most 10 ms; the family runs without the
# genetlink mutex, so a dev-get meanwhile is answered at once.
seq_before=$("$PTOCTL" -j hws get 2>&1 |
	python3 -c "import json, sys; print(json.load(sys.stdin)['cfg-seq'])")
aicpu_start aicpu-odd odd
odd=$aicpu
python3 selftests/pto/pto_nlspec.py parallel >"$TMP/par" 2>&1
par_rc=$?
exec 9>&-
wait $odd
comment <"$TMP/par"
check "dev-get answered while hws-get waits for the AICPU's write" \
	test "$par_rc" = 0
# The AICPU is gone: its write ended, by it or else by its file's
# release (which ends a write left open); either way one write on.
"$PTOCTL" -j hws get >"$TMP/hws-even" 2>&1
check "the AICPU's write is over: the count is even, one write on" \
	json "$TMP/hws-even" "j['cfg-seq'] == ${seq_before:-1} + 2 and
	 ${seq_before:-1} % 2 == 0"

# --- a second device (scripts/vm-selftest --param nr_devices=2) -----------
if [[ -e /dev/pto1 ]]; then
	"$PTOCTL" -j info >"$TMP/info2" 2>&1
	check "two devices: info dumps both" json "$TMP/info2" \
		"[d['index'] for d in j] == [0, 1] and j[1]['name'] == 'pto1'"
	"$PTOCTL" -j -d 1 stats >"$TMP/stats1" 2>&1
	check "two devices: stats -d 1" json "$TMP/stats1" \
		"len(j) == 1 and j[0]['index'] == 1"
	"$PTOCTL" -j -d 1 hws get >"$TMP/hws1" 2>&1
	check "two devices: hws get -d 1" json "$TMP/hws1" "j['index'] == 1"
	listen "$TMP/ev1" -j -n 1 events
	PTO_DEV=/dev/pto1 "$NLEV" hws >/dev/null
	wait $listener
	check "two devices: an event of pto1 names it" json "$TMP/ev1" \
		"j['event'] == 'hws-changed' and j['index'] == 1"
else
	for t in "info dumps both" "stats -d 1" "hws get -d 1" \
		"an event of pto1 names it"; do
		skip "two devices: $t" "one device (nr_devices=1)"
	done
fi

# leave the registers as they were for whatever runs next
"$PTOCTL" hws set promote-threshold="$threshold0" usage=1:2:0-$((nr_aic * 3 - 1)) \
	>/dev/null

echo "1..$n"
[[ $failed == 0 ]]
