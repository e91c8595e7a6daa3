#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the pto kselftests under prove: the harness programs (built by
# `make -C selftests/pto` into build/selftests/), the shell-level module
# tests (pto_module.sh) and the netlink family's (pto_netlink.sh, which
# needs build/tools/ptoctl). Meant for the guest of scripts/vm-run, as root,
# with pto.ko loaded; scripts/vm-selftest does all of that.
#
#   selftests/pto/run.sh [TEST...]     default: every test program
#
# Environment:
#   PTO_SELFTEST_BIN  where the programs are (default build/selftests)
#   PTO_MODULE        pto.ko for the reload tests (default kmod/pto.ko)
#   PTO_VERBOSE=1     prove -v: every TAP line, not only failures
#
# Every program runs through dmesg-check, which fails it if the kernel log
# gained a WARNING/BUG/Oops while it ran (liburing style).

set -u

HERE=$(cd "$(dirname "$0")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
cd "$TOP" || exit 1

BIN=${PTO_SELFTEST_BIN:-build/selftests}
PROGS=(pto_ioctl pto_gm pto_mmap pto_core pto_lifecycle pto_hws pto_quota
       pto_pin pto_fuzz)

if [[ $# -gt 0 ]]; then
	tests=("$@")
else
	tests=()
	for p in "${PROGS[@]}"; do
		tests+=("$BIN/$p")
	done
	tests+=("$HERE/pto_module.sh" "$HERE/pto_netlink.sh")
fi

for t in "${tests[@]}"; do
	if [[ ! -x $t ]]; then
		echo "run.sh: $t missing: run make -C selftests/pto" >&2
		exit 2
	fi
done
if [[ ! -e /dev/pto0 ]]; then
	echo "run.sh: /dev/pto0 missing: load pto.ko first" >&2
	exit 2
fi

export PTO_MODULE=${PTO_MODULE:-$TOP/kmod/pto.ko}

args=(--exec "$HERE/dmesg-check" --timer)
[[ ${PTO_VERBOSE:-0} == 1 ]] && args+=(-v)

echo "run.sh: $(uname -r), $(nproc) CPU(s), module $PTO_MODULE"
echo "run.sh: $(cat /sys/class/misc/pto0/info 2>/dev/null)"
prove "${args[@]}" "${tests[@]}"
