# SPDX-License-Identifier: MIT
# shellcheck shell=sh
#
# ptod-lib.sh - start and stop ptod for the scripts that run clients in the
# VM (the demo, selftests/trace, bench/e2e, examples/multi_tenant). Source
# it with PTO_TOP set to the top of the tree. POSIX sh.
#
#   ptod_start DIR   start build/daemon/ptod on DIR/ptod.sock (log in
#                    DIR/ptod.log), export PTO_SOCKET, set PTOD_PID, wait
#                    until it says it is ready; 1 and the log on stderr if
#                    it does not within 20 s; $PTOD_ARGS (unquoted: words)
#                    are added to ptod's command line; the HWS
#                    invariant checker is on (PTO_HWS_CHECK=1: a
#                    violation aborts ptod) unless PTOD_HWS_CHECK=0
#   ptod_stop        SIGTERM, wait; returns ptod's exit status

ptod_start() {
	PTO_SOCKET=$1/ptod.sock
	export PTO_SOCKET
	# shellcheck disable=SC2086 # PTOD_ARGS is a list of words
	PTO_HWS_CHECK=${PTOD_HWS_CHECK:-1} "$PTO_TOP/build/daemon/ptod" -s "$PTO_SOCKET" \
		${PTOD_ARGS:-} >"$1/ptod.log" 2>&1 &
	PTOD_PID=$!
	_ptod_i=0
	until [ -S "$PTO_SOCKET" ] && grep -q "is ready" "$1/ptod.log"; do
		_ptod_i=$((_ptod_i + 1))
		if [ "$_ptod_i" -ge 400 ] || ! kill -0 "$PTOD_PID" 2>/dev/null; then
			echo "ptod did not become ready:" >&2
			sed 's/^/  /' "$1/ptod.log" >&2
			return 1
		fi
		sleep 0.05
	done
}

ptod_stop() {
	[ -n "${PTOD_PID:-}" ] || return 0
	kill -TERM "$PTOD_PID" 2>/dev/null
	wait "$PTOD_PID"
	_ptod_rc=$?
	PTOD_PID=
	return "$_ptod_rc"
}
