# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ptod_sh.sh - ptod and its clients for the shell tests of selftests/e2e
# (ptod_no_netlink.sh, ptod_quota_restart.sh, ptod_cgroup.sh), which are
# TAP through selftests/pto/pto_tap.sh (sourced here). Source it with TOP
# set to the top of the tree: it makes TMP (mode 0755: the socket is in
# it, and nobody's clients reach it), removed at exit with ptod killed
# (a test with more to undo sets its own EXIT trap and calls
# ptod_sh_cleanup), and bails out if ptod or pto_e2e is not built.
#
#   start_ptod [-g CGROUP | -n] ARG...  build/daemon/ptod on /dev/pto0
#                    in the background (-g: alone in cgroup v2 directory
#                    CGROUP; -n: in a network namespace of its own), its
#                    log in $TMP/log; sets ptod_pid; 0 once it listens, 1
#                    (and the log) if it does not within a minute (TCG is
#                    slow)
#   stop_ptod SIGNAL ptod's exit status (a minute to exit, then killed)
#   client ARG...    build/selftests/e2e/pto_e2e ARG... as root: 0 if it
#                    passed
#   nobody_client ARG...  the same as nobody in the device's group
#   exited STATUS    the log, and 0 if STATUS is

PTOD=$TOP/build/daemon/ptod
E2E=$TOP/build/selftests/e2e/pto_e2e
NOBODY=65534
ptod_pid=
TMP=$(mktemp -d) && chmod 0755 "$TMP" || exit 1
export PTO_SOCKET=$TMP/ptod.sock

ptod_sh_cleanup() {
	[[ -n $ptod_pid ]] && kill -KILL "$ptod_pid" 2>/dev/null
	rm -rf "$TMP"
}
trap ptod_sh_cleanup EXIT

# shellcheck source=selftests/pto/pto_tap.sh
. "$TOP/selftests/pto/pto_tap.sh"

for f in "$PTOD" "$E2E"; do
	if [[ ! -x $f ]]; then
		echo "Bail out! $f missing (make user; make -C selftests/e2e)"
		exit 1
	fi
done

start_ptod() {
	local i pre=()

	if [[ ${1:-} == -g ]]; then
		# shellcheck disable=SC2016 # $$ is the inner shell's
		pre=(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$2")
		shift 2
	elif [[ ${1:-} == -n ]]; then
		pre=(unshare -n)
		shift
	fi
	: >"$TMP/log"
	"${pre[@]}" "$PTOD" -d /dev/pto0 -s "$PTO_SOCKET" "$@" 2>"$TMP/log" &
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

client() {
	timeout 120 "$E2E" "$@" >"$TMP/out" 2>&1
	local rc=$?
	cat "$TMP/out"
	[[ $rc == 0 ]] && ! grep -q "FAIL" "$TMP/out"
}

nobody_client() {
	# a user the administrator put in the device's group
	timeout 120 setpriv --reuid=$NOBODY --regid=$NOBODY \
		--groups="$(stat -c %g /dev/pto0)" "$E2E" "$@" >"$TMP/out" 2>&1
	local rc=$?
	cat "$TMP/out"
	[[ $rc == 0 ]] && ! grep -q "FAIL" "$TMP/out"
}

exited() {
	cat "$TMP/log"
	[[ $1 == 0 ]]
}
