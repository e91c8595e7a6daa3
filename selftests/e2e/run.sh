#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end tests of the emulated device, as root inside the VM with
# pto.ko loaded (TAP, for prove):
#
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/e2e/run.sh
#   (or: make -C selftests/e2e run)
#
# or natively on ptod's user-mode device (no module):
#
#   PTO_DEVICE=user prove -v selftests/e2e/run.sh    (make check-e2e-user)
#
# The suite is build/selftests/e2e/e2e_test (selftests/e2e/e2e_test.c, on
# the kselftest harness; arguments go to it: -l lists the tests, -t NAME
# runs one). It starts ptod itself.

TOP=$(cd "$(dirname "$0")/../.." && pwd -P) || exit 1
T=$TOP/build/selftests/e2e/e2e_test
if [ ! -x "$T" ]; then
	echo "run.sh: $T missing: run make -C selftests/e2e deps all" >&2
	exit 2
fi
exec "$T" "$@"
