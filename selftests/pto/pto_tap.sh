# SPDX-License-Identifier: GPL-2.0
#
# pto_tap.sh: TAP helpers of the shell-level tests (pto_module.sh,
# pto_netlink.sh), sourced. Counts in $n and $failed; the test ends with
#   echo "1..$n"; [[ $failed == 0 ]]
# shellcheck shell=bash

n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n $1"
}

not_ok() {
	n=$((n + 1))
	echo "not ok $n $1"
	failed=$((failed + 1))
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

# Diagnostics go to stderr, which prove shows even when not verbose.
comment() { sed 's/^/# /' >&2; }

# check NAME COMMAND...: one TAP line; COMMAND's output as comments if it
# failed.
check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [[ $rc == 0 ]]; then
		ok "$name"
	else
		printf '%s\n' "$out" | tail -n 40 | comment
		not_ok "$name"
	fi
}
