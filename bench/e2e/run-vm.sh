#!/bin/bash
# SPDX-License-Identifier: MIT
#
# pto-bench-e2e in the VM: builds on the host what the run needs, boots
# the VM rig with pto.ko, starts ptod (as selftests/e2e/run.sh does: a
# private socket, wait for "is ready" in its log), runs the benchmark
# (which first runs the sim baseline, pto-bench-e2e-sim, in the same VM)
# and stops ptod with SIGTERM (tools/ptod-vm/ptod-vm.sh).
#
#   bench/e2e/run-vm.sh [PTO-BENCH-E2E ARGS]     e.g. -n 1000 -l 200 -r 15
#   bench/e2e/run-vm.sh -K MODES [ARGS]         e.g. -K none,all -s
#
# -K: one ptod per MODE (comma-separated ptod -K values), one after the
# other in the same VM, each running the benchmark: -K none,all compares
# the kernels of this (root) client in pto-aicore with the same kernels
# in a sandbox (Documentation/execution-model.rst).
#
# Environment: VM_TIMEOUT (seconds, default 240); PTOD_HWS_CHECK (default
# 0: ptod as it is installed, without the HWS invariant checker that the
# tests turn on, as the sim baseline runs; 1 to measure with it).
# Inside the VM the script runs itself again with --in-vm.

set -u
TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR/../.. source=tools/ptod-vm/ptod-vm.sh
. "$TOP/tools/ptod-vm/ptod-vm.sh"

if [ "${1:-}" != --in-vm ]; then
	ptod_vm_boot "$TOP/bench/e2e/run-vm.sh" \
		--env PTOD_HWS_CHECK="${PTOD_HWS_CHECK:-0}" -- "$@"
fi
shift
export PTOD_HWS_CHECK="${PTOD_HWS_CHECK:-0}"

modes=default
if [ "${1:-}" = -K ]; then
	modes=$2
	shift 2
fi
rc=0
for mode in ${modes//,/ }; do
	PTOD_ARGS=
	[ "$mode" = default ] || PTOD_ARGS="-K $mode"
	echo "# ptod $PTOD_ARGS"
	ptod_vm_start bench-e2e || exit 1
	timeout 200 "$TOP/build/bench/e2e/pto-bench-e2e" "$@"
	ptod_vm_stop $? || rc=1
done
exit $rc
