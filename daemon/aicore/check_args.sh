#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_args.sh [PTO-AICORE] - pto-aicore refuses a bad value of an option
# (a worker or kernel count: -w, -k, PTO_AICORE_WORKERS, PTO_AICORE_KERNELS;
# the park bound PTO_AICORE_PARK_MS;
# the idle spins -s and -t and PTO_EXEC_SPIN_YIELD; the descriptors -r
# and -C; a second device option; a leftover argument) with exit status 2
# and a message naming the value, before it touches a device; a good one
# gets past the check (on a device that is not there it then exits 1).
set -u
AICORE=${1:-build/daemon/pto-aicore}
fail=0

# expect STATUS TEXT [ENV=VALUE] -- ARGS...
expect() {
	local want=$1 text=$2 env=() out rc

	shift 2
	while [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	out=$(env "${env[@]}" "$AICORE" -d /dev/pto-none "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
		echo "not ok: ${env[*]} pto-aicore $*: status $rc (want $want), said: $out"
		fail=1
	else
		echo "ok: ${env[*]} pto-aicore $*: $rc"
	fi
}

for v in 0 -1 x 3x 65537 99999999999999999999 " 1" +1; do
	expect 2 "bad kernel count '$v' (1 .. 65536)" -- -k "$v"
done
expect 2 "bad kernel count 'abc'" PTO_AICORE_KERNELS=abc --
expect 2 "bad worker count '0'" -- -w 0
expect 2 "bad worker count ' 2'" PTO_AICORE_WORKERS=" 2" --
expect 2 "bad worker count 'many'" PTO_AICORE_WORKERS=many --
# an empty option is refused, an empty variable is an unset one
expect 2 "bad worker count ''" -- -w ""
expect 2 "bad kernel count ''" -- -k ""
expect 1 "" PTO_AICORE_WORKERS= PTO_AICORE_KERNELS= --
# one device, named once; no argument left over
expect 2 "-d and -u name the one device" -- -d /dev/pto-none
expect 2 "-d and -u name the one device" -- -u 3,4
expect 2 "unexpected argument 'extra'" -- -w 2 extra
# -k wins over the environment; good values pass the check
expect 1 "" PTO_AICORE_KERNELS=0 -- -k 1
expect 1 "" -- -k 65536 -w 2
for v in -1 x 1x 4294967296 "" " 1" +1 " -18446744073709551615"; do
	expect 2 "bad -s '$v' (0 .. 4294967295)" -- -s "$v"
done
for v in -1 1000000001 0x10 9223372036854775808; do
	expect 2 "bad -t '$v' (0 .. 1000000000)" -- -t "$v"
done
for o in r C; do
	for v in -1 x 2147483648 " 3" +3; do
		expect 2 "bad -$o '$v' (0 .. 2147483647)" -- "-$o" "$v"
	done
done
for v in 2 yes ""; do
	expect 2 "bad PTO_EXEC_SPIN_YIELD '$v' (0, 1 or auto)" PTO_EXEC_SPIN_YIELD="$v" --
done
expect 1 "" PTO_EXEC_SPIN_YIELD=0 --
expect 1 "" PTO_EXEC_SPIN_YIELD=1 --
expect 1 "" PTO_EXEC_SPIN_YIELD=auto --
expect 1 "" -- -s 0 -t 0
for v in 0 -5 x 3600001 " 5" +5; do
	expect 2 "bad PTO_AICORE_PARK_MS '$v' (1 .. 3600000)" PTO_AICORE_PARK_MS="$v" --
done
expect 1 "" PTO_AICORE_PARK_MS=60000 --
expect 1 "" -- -s 4294967295 -t 1000000000
exit $fail
