#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_args.sh [PTO_GM] - pto-gm refuses a bad -s before it opens the
# device: exit 2 and "bad size", for a size that overflows 64 bits once
# scaled, a sign, trailing text, 0, or one that is not a multiple of 4.
# A good size gets past the parsing (to the missing device named here).
# An argument after the options (a device not given with -d), and -s
# with -i (which allocates nothing), are refused the same way.
set -eu -o pipefail
GM=${1:-build/tools/pto-gm}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for s in 18014398509481988K 17179869184g -4 12x '' 0 6 0x; do
	rc=0
	"$GM" -d /nonexistent/pto0 -s "$s" > "$out" 2>&1 || rc=$?
	if [ "$rc" != 2 ] || ! grep -q "bad size '$s'" "$out"; then
		echo "FAIL: -s '$s' (exit $rc): $(cat "$out")"
		exit 1
	fi
	echo "ok: -s '$s' refused"
done
# shellcheck source=scripts/check-refused.sh
. "$(dirname "$0")/../../scripts/check-refused.sh"
refused_each "$GM" -d /nonexistent/pto0 <<'ARGS'
/dev/pto1|unexpected argument '/dev/pto1'
-s 4 extra|unexpected argument 'extra'
-i -s 4|-i prints the device's info only
ARGS
accepted_each "$GM" -d /nonexistent/pto0 <<'ARGS'
-s 4|/nonexistent/pto0
-s 1m|/nonexistent/pto0
-s 0x10|/nonexistent/pto0
-s 2G|/nonexistent/pto0
ARGS
