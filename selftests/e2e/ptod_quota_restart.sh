#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ptod_quota_restart.sh: GM quotas across ptod's restarts (TAP). pto.ko
# keeps the quotas an AICPU set after it goes, so that no user takes all
# of GM while ptod is down; the next ptod's are its own:
#   - ptod -q 64: a nobody client gets -EDQUOT beyond 64 MiB
#     (pto_e2e quota 64);
#   - ptod killed (SIGKILL, as a crash), then started without -q: the
#     quota is gone, a nobody client gets a buffer of 65 MiB
#     (pto_e2e noquota 64);
#   - SIGTERM: ptod exits 0.
# That no client file allocates beyond the quota while ptod is down is the
# kselftest quota.kept_when_aicpu_goes.
#
# Needs root, pto.ko loaded (with 256 MiB of GM or more) and no ptod on
# /dev/pto0; make user and make -C selftests/e2e. In the VM:
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/e2e/ptod_quota_restart.sh

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$TOP" || exit 1
PTOD=build/daemon/ptod
E2E=build/selftests/e2e/pto_e2e
NOBODY=65534
TMP=$(mktemp -d)
chmod 0755 "$TMP"
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
# a small runtime per client, charged to its user under -q
export PTO2_RING_HEAP=65536

# start_ptod ARG...: ptod on /dev/pto0 in the background, its log in
# $TMP/log; up to a minute for the socket (TCG is slow)
start_ptod() {
	local i

	: >"$TMP/log"
	"$PTOD" -d /dev/pto0 -s "$PTO_SOCKET" "$@" 2>"$TMP/log" &
	ptod_pid=$!
	for ((i = 0; i < 600; i++)); do
		grep -q "listening on" "$TMP/log" && return 0
		kill -0 "$ptod_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/log"
	return 1
}

# stop_ptod SIGNAL: ptod's exit status (a minute to exit, then killed)
stop_ptod() {
	local i

	kill "-$1" "$ptod_pid"
	for ((i = 0; i < 600; i++)); do
		kill -0 "$ptod_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$ptod_pid" 2>/dev/null && echo "ptod did not exit: killed" >>"$TMP/log"
	wait "$ptod_pid"
	local rc=$?
	ptod_pid=
	return $rc
}

nobody_client() {
	# a user the administrator put in the device's group
	timeout 120 setpriv --reuid=$NOBODY --regid=$NOBODY \
		--groups="$(stat -c %g /dev/pto0)" "$E2E" "$@" >"$TMP/out" 2>&1
	local rc=$?
	cat "$TMP/out"
	[[ $rc == 0 ]] && ! grep -q "FAIL" "$TMP/out"
}

# (check runs its command in a subshell, which cannot start ptod)
start_ptod -q 64
rc=$?
check "ptod -q 64 starts" test "$rc" = 0
check "a nobody client: -EDQUOT beyond 64 MiB" nobody_client quota 64
stop_ptod KILL
start_ptod
rc=$?
check "ptod killed, then started without -q" test "$rc" = 0
check "a nobody client: 65 MiB, no quota" nobody_client noquota 64
stop_ptod TERM
rc=$?
exited() {
	cat "$TMP/log"
	[[ $1 == 0 ]]
}
check "SIGTERM: ptod exits 0" exited "$rc"

echo "1..$n"
[[ $failed == 0 ]]
