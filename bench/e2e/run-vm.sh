#!/bin/bash
# SPDX-License-Identifier: MIT
#
# pto-bench-e2e in the VM: builds on the host what the run needs, boots
# the VM rig with pto.ko, starts ptod (as selftests/e2e/run.sh does: a
# private socket, wait for "is ready" in its log), runs the benchmark
# (which first runs the sim baseline, pto-bench-e2e-sim, in the same VM)
# and stops ptod with SIGTERM.
#
#   bench/e2e/run-vm.sh [PTO-BENCH-E2E ARGS]     e.g. -n 1000 -l 200 -r 15
#
# Environment: VM_TIMEOUT (seconds, default 240).
# Inside the VM the script runs itself again with --in-vm.

set -u
TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
B=$TOP/build

if [ "${1:-}" != --in-vm ]; then
	set -e
	make -C "$TOP" kmod user	# the module and every program, up to date
	cd "$TOP"
	exec scripts/vm-run --module kmod/pto.ko --timeout "${VM_TIMEOUT:-240}" \
		-- "$TOP/bench/e2e/run-vm.sh" --in-vm "$@"
fi
shift

TMP=$(mktemp -d /tmp/pto-bench-e2e.XXXXXX)
PTO_TOP=$TOP
PTOD_PID=
# shellcheck source-path=SCRIPTDIR/../.. source=scripts/ptod-lib.sh
. "$TOP/scripts/ptod-lib.sh"

cleanup() {
	if [ -n "$PTOD_PID" ]; then
		kill -9 "$PTOD_PID" 2>/dev/null
		echo "# --- ptod log ---"
		sed 's/^/# /' "$TMP/ptod.log" | tail -40
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

ptod_start "$TMP" || exit 1
echo "# ptod ready; guest $(uname -r), $(nproc) CPUs"

timeout 200 "$B/bench/e2e/pto-bench-e2e" "$@"
rc=$?

ptod_stop
rd=$?
[ $rd = 0 ] || { echo "ptod exited with $rd" >&2; sed 's/^/# /' "$TMP/ptod.log" | tail -40; }
[ $rc = 0 ] && [ $rd = 0 ]
