# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced by the trace suites (POSIX sh): stopping a bpftrace.
#
# bt_stop PID FILE: Ctrl-C the bpftrace PID that writes FILE and reap it.
# bpftrace 0.17 can miss a SIGINT that comes while it is between two polls
# and then sleeps until the next event, which never comes once the
# workload is over: repeat it until it is gone, but not while it prints
# its maps (its output grows; under TCG that takes seconds, and a run
# whose last map was missing was seen once). After 60 s it is killed,
# with a line saying so.

_bt_alive() {	# _bt_alive PID: running, not a zombie waiting to be reaped
	case $(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null) in
	'' | Z) return 1 ;;
	esac
}

_bt_size() {	# _bt_size FILE
	stat -c %s "$1" 2>/dev/null || echo 0
}

bt_stop() {
	_bt_i=0
	_bt_last=-1
	_bt_quiet=0
	while _bt_alive "$1" && [ $_bt_i -lt 120 ]; do
		_bt_now=$(_bt_size "$2")
		# again every 5 s of an unchanged output
		if [ "$_bt_now" != "$_bt_last" ]; then
			_bt_quiet=0
			_bt_last=$_bt_now
		fi
		[ $((_bt_quiet % 10)) = 0 ] && kill -INT "$1" 2>/dev/null
		_bt_quiet=$((_bt_quiet + 1))
		_bt_i=$((_bt_i + 1))
		sleep 0.5
	done
	_bt_alive "$1" && kill -KILL "$1" && echo "# $1 killed: it ignored SIGINT"
	wait "$1"
}
