#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ptod_no_netlink.sh: ptod on a pto.ko whose netlink family it cannot see
# (TAP). The family lives in the initial network namespace only, so a
# ptod started in a new one (unshare -n) finds no family "pto", as on a
# module older than the family:
#   - ptod starts, with one warning that it follows no events;
#   - a client's run passes (pto_e2e vector Const);
#   - a kernel that crashes pto-aicore fails its run with the signal, and
#     the next run on the same connection passes (pto_e2e crash-next:
#     ptod learnt of the death from SIGCHLD and restarted pto-aicore);
#   - SIGTERM: ptod exits 0.
#
# Needs root, pto.ko loaded and no ptod on /dev/pto0; make user and
# make -C selftests/e2e. In the VM:
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/e2e/ptod_no_netlink.sh

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$TOP" || exit 1
PTOD=build/daemon/ptod
E2E=build/selftests/e2e/pto_e2e
TMP=$(mktemp -d)
ptod_pid=

cleanup() {
	[[ -n $ptod_pid ]] && kill -KILL "$ptod_pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# shellcheck source=selftests/pto/pto_tap.sh
. "$TOP/selftests/pto/pto_tap.sh"

for f in "$PTOD" "$E2E"; do
	if [[ ! -x $f ]]; then
		echo "Bail out! $f missing (make user; make -C selftests/e2e)"
		exit 1
	fi
done
export PTO_SOCKET=$TMP/ptod.sock

unshare -n "$PTOD" -d /dev/pto0 -s "$PTO_SOCKET" 2>"$TMP/log" &
ptod_pid=$!

# up to a minute for the socket (TCG is slow), not a timing assumption
listening() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "listening on" "$TMP/log" && return 0
		kill -0 "$ptod_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/log"
	return 1
}
check "ptod starts without the netlink family" listening
check "it says it follows no events" \
	grep "no events of pto.ko's netlink family" "$TMP/log"

client() {
	timeout 120 "$E2E" "$@" >"$TMP/out" 2>&1
	local rc=$?
	cat "$TMP/out"
	[[ $rc == 0 ]] && ! grep -q "FAIL" "$TMP/out"
}
check "a run passes (vector Const)" client vector Const
check "crash kernel fails its run, the next passes (SIGCHLD)" \
	client crash-next

# (check runs its command in a subshell, which cannot wait for ptod) A
# minute to exit, then it is killed: a ptod that never exits fails.
kill -TERM "$ptod_pid"
for ((i = 0; i < 600; i++)); do
	kill -0 "$ptod_pid" 2>/dev/null || break
	sleep 0.1
done
kill -KILL "$ptod_pid" 2>/dev/null && echo "ptod did not exit: killed" >>"$TMP/log"
wait "$ptod_pid"
rc=$?
ptod_pid=
exited() {
	cat "$TMP/log"
	[[ $1 == 0 ]]
}
check "SIGTERM: ptod exits 0" exited "$rc"

echo "1..$n"
[[ $failed == 0 ]]
