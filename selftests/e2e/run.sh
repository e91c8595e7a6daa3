#!/bin/bash
# SPDX-License-Identifier: MIT
#
# End-to-end tests of the emulated device, as root inside the VM with
# pto.ko loaded (TAP, for prove):
#
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/e2e/run.sh
#   (or: make -C selftests/e2e run)
#
# Starts ptod (which spawns pto-aicore) on a private socket, then: every
# example case with golden checks, two concurrent clients, runs of two
# clients on disjoint blocks of cores at the same time, a client
# killed mid-stream (its GM freed, the other client unaffected), a kernel
# that segfaults (the task fails with a clear error, pto-aicore is
# restarted, the next run passes), the flow-control deadlock error, an
# address the client does not own, malformed socket messages, pto-run
# with an unchanged orchestration .so, and SIGTERM with a client
# connected.

set -u
TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
B=$TOP/build
E2E=$B/selftests/e2e/pto_e2e
CNT=/sys/class/misc/pto0/counters
TMP=$(mktemp -d /tmp/pto-e2e.XXXXXX)
PTO_TOP=$TOP
PTOD_PID=
# shellcheck source-path=SCRIPTDIR/../.. source=scripts/ptod-lib.sh
. "$TOP/scripts/ptod-lib.sh"
n=0
fails=0

echo "1..16"

ok() {	# ok COND DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}

counter() {	# counter NAME
	awk -v k="$1" '$1 == k { print $2 }' $CNT
}

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	[ -n "$PTOD_PID" ] && kill -9 "$PTOD_PID" 2>/dev/null
	echo "# --- ptod log ---"
	sed 's/^/# /' "$TMP/ptod.log" 2>/dev/null | tail -60
	rm -rf "$TMP"
}
trap cleanup EXIT

# a client; output indented as TAP comments, status returned
client() {
	timeout 120 "$E2E" "$@" > "$TMP/out.$$" 2>&1
	local rc=$?
	sed 's/^/# /' "$TMP/out.$$"
	return $rc
}

# 1. daemon up
ptod_start "$TMP"
ok $? "ptod listens and pto-aicore attached $(counter cores_online) cores"
GM_IDLE=$(counter gm_bytes_used)

# 2-4. examples with golden checks
client vector; ok $? "vector_example (Const, Random) matches the golden"
client bgemm; ok $? "bgemm matches the golden"
client pa; ok $? "paged_attention (all cases) matches the golden"

# 5. two concurrent clients
"$E2E" pa Case2 CaseVarLen > "$TMP/c1" 2>&1 &
c1=$!
"$E2E" bgemm > "$TMP/c2" 2>&1 &
c2=$!
wait $c1; r1=$?
wait $c2; r2=$?
sed 's/^/# c1: /' "$TMP/c1"; sed 's/^/# c2: /' "$TMP/c2"
[ $r1 = 0 ] && [ $r2 = 0 ]
ok $? "two concurrent clients both pass"

# 6. runs of two clients at the same time, on disjoint blocks: an idle
# third client makes each run's fair share half the device or less
"$E2E" idle 30 > "$TMP/o0" 2>&1 &
o0=$!
for _ in $(seq 400); do grep -q READY "$TMP/o0" && break; sleep 0.05; done
l0=$(wc -l < "$TMP/ptod.log")
"$E2E" stream 6 > "$TMP/o1" 2>&1 &
o1=$!
for _ in $(seq 400); do grep -q READY "$TMP/o1" && break; sleep 0.05; done
"$E2E" stream 1 > "$TMP/o2" 2>&1 &
o2=$!
wait $o1; r1=$?
wait $o2; r2=$?
kill $o0 2>/dev/null
wait $o0 2>/dev/null
sed 's/^/# o1: /' "$TMP/o1"; sed 's/^/# o2: /' "$TMP/o2"
tail -n +$((l0 + 1)) "$TMP/ptod.log" | grep -E "run (start|end) on blocks" | sed 's/^/# /'
[ $r1 = 0 ] && [ $r2 = 0 ] &&
	tail -n +$((l0 + 1)) "$TMP/ptod.log" | grep -q "run start on blocks .*, 2 runs active"
ok $? "runs of two clients overlap on disjoint blocks and both pass"

# 7-8. a client killed mid-stream; a second one waiting behind it
"$E2E" stream 60 > "$TMP/s1" 2>&1 &
s1=$!
for _ in $(seq 400); do grep -q READY "$TMP/s1" && break; sleep 0.05; done
sleep 1
"$E2E" vector Const > "$TMP/s2" 2>&1 &
s2=$!
sleep 0.5
used_during=$(counter gm_bytes_used)
kill -9 $s1
wait $s1 2>/dev/null
wait $s2; r2=$?
sed 's/^/# other: /' "$TMP/s2"
ok $r2 "the other client passes after a client is killed mid-stream"
for _ in $(seq 100); do
	[ "$(counter gm_bytes_used)" = "$GM_IDLE" ] && break
	sleep 0.05
done
echo "# gm_bytes_used: idle $GM_IDLE, during $used_during, after $(counter gm_bytes_used)"
[ "$(counter gm_bytes_used)" = "$GM_IDLE" ] && [ "$used_during" != "$GM_IDLE" ] &&
	grep -q "client.*gone" "$TMP/ptod.log"
ok $? "the killed client's runtime drained and its GM freed"

# 9-10. a kernel that segfaults
client crash; ok $? "a crashing kernel fails its task with a clear error"
for _ in $(seq 200); do
	[ "$(grep -c 'is ready' "$TMP/ptod.log")" -ge 2 ] && break
	sleep 0.05
done
client vector Const
r=$?
[ $r = 0 ] && [ "$(counter cores_online)" -gt 0 ] && [ "$(counter cores_dead)" = 0 ]
ok $? "ptod restarted pto-aicore and the next run passes"

# 11. flow-control deadlock, reported cleanly
PTO2_RING_TASK_WINDOW=16 client deadlock 33
ok $? "PTO2_RING_TASK_WINDOW=16 with a 33-task scope: clean deadlock error"

# 12. an address the client does not own
client badbuf; ok $? "a buffer the client does not own is refused"

# malformed messages on the socket: clear errors, nothing lost
client proto; ok $? "short, early and bogus hello messages get clear errors"

# 13. ptod still healthy after all that
kill -0 "$PTOD_PID" 2>/dev/null && client vector Const
ok $? "ptod is still serving"

# 14. pto-run: an unchanged orchestration .so; a = b = 0 gives f = 2
VX=$B/examples/vector_example
timeout 60 "$B/tools/pto-run" --orch "$VX/orch.so" \
	--kernel "0:aiv:$VX/aiv_add.so" --kernel "1:aiv:$VX/aiv_add_scalar.so" \
	--kernel "2:aiv:$VX/aiv_mul.so" \
	buf:64K buf:64K "out:64K:$TMP/f.bin" 16384 2>&1 | sed 's/^/# /'
vals=$(od -An -v -tf4 "$TMP/f.bin" 2>/dev/null | tr -s ' ' '\n' | grep -v '^$' | sort -u)
echo "# distinct values of f: $vals"
[ "$vals" = 2 ]
ok $? "pto-run runs vector_example's orch.so unchanged"

# 15. SIGTERM with a client in the middle of a graph
"$E2E" stream 60 > "$TMP/t1" 2>&1 &
t1=$!
for _ in $(seq 400); do grep -q READY "$TMP/t1" && break; sleep 0.05; done
sleep 0.5
ptod_stop; rd=$?
wait $t1
sed 's/^/# client: /' "$TMP/t1"
[ $rd = 0 ] && grep -q "status=-108" "$TMP/t1" && [ "$(counter cores_online)" = 0 ] &&
	[ "$(counter aicpu)" = 0 ] && [ "$(counter gm_bytes_used)" = 0 ]
ok $? "SIGTERM: the client gets -ESHUTDOWN, ptod exits 0, device released"

exit $((fails > 0))
