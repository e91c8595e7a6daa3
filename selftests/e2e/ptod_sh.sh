# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ptod_sh.sh - ptod and nobody's clients for the shell tests of
# selftests/e2e (ptod_quota_restart.sh, ptod_cgroup.sh). Source it with
# TOP set to the top of the tree and TMP to a directory of the test's
# (mode 0755: the socket is in it, and nobody's clients reach it).
#
#   start_ptod [-g CGROUP] ARG...  build/daemon/ptod on /dev/pto0 in the
#                    background (in cgroup v2 directory CGROUP, alone,
#                    with -g), its log in $TMP/log; sets ptod_pid; 0 once
#                    it listens, 1 (and the log) if it does not within a
#                    minute (TCG is slow)
#   stop_ptod SIGNAL ptod's exit status (a minute to exit, then killed)
#   nobody_client ARG...  build/selftests/e2e/pto_e2e ARG... as nobody
#                    in the device's group: 0 if it passed

PTOD=$TOP/build/daemon/ptod
E2E=$TOP/build/selftests/e2e/pto_e2e
NOBODY=65534
ptod_pid=
export PTO_SOCKET=$TMP/ptod.sock

start_ptod() {
	local i cg=

	if [[ ${1:-} == -g ]]; then
		cg=$2
		shift 2
	fi
	: >"$TMP/log"
	if [[ -n $cg ]]; then
		# shellcheck disable=SC2016 # $$ is the inner shell's
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh \
			"$cg" "$PTOD" -d /dev/pto0 -s "$PTO_SOCKET" "$@" \
			2>"$TMP/log" &
	else
		"$PTOD" -d /dev/pto0 -s "$PTO_SOCKET" "$@" 2>"$TMP/log" &
	fi
	ptod_pid=$!
	for ((i = 0; i < 600; i++)); do
		grep -q "listening on" "$TMP/log" && return 0
		kill -0 "$ptod_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/log"
	return 1
}

stop_ptod() {
	local i rc

	kill "-$1" "$ptod_pid"
	for ((i = 0; i < 600; i++)); do
		kill -0 "$ptod_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$ptod_pid" 2>/dev/null && echo "ptod did not exit: killed" >>"$TMP/log"
	wait "$ptod_pid"
	rc=$?
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
