#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The multi-tenant demo in the VM: builds on the host what it needs, boots
# the VM rig with pto.ko, starts ptod (scripts/ptod-lib.sh: a private
# socket, wait for "is ready" in its log), runs multi_tenant
# (K clients at once, each an example checked against its golden) and
# stops ptod with SIGTERM (tools/ptod-vm/ptod-vm.sh).
#
#   examples/multi_tenant/run-vm.sh [MULTI_TENANT ARGS]   e.g. -k 8
#
# Environment: VM_TIMEOUT (seconds, default 240); VM_GM_MB (pto.ko's GM
# size, default 256 MiB: each client's runtime takes about 36 MiB of it
# with ptod's default 32 MiB heap, so more than 6 clients need a larger GM
# or a smaller heap); PTO2_RING_HEAP, PTO2_RING_TASK_WINDOW,
# PTO2_RING_DEP_POOL and PTO2_READY_QUEUE_SHARDS are passed on to the
# clients (each sends them to ptod at connect).
# Inside the VM the script runs itself again with --in-vm.

set -u
TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR/../.. source=tools/ptod-vm/ptod-vm.sh
. "$TOP/tools/ptod-vm/ptod-vm.sh"

if [ "${1:-}" != --in-vm ]; then
	vmargs=()
	[ -z "${VM_GM_MB:-}" ] || vmargs+=(--param "gm_size_mb=$VM_GM_MB")
	for v in PTO2_RING_HEAP PTO2_RING_TASK_WINDOW PTO2_RING_DEP_POOL \
		PTO2_READY_QUEUE_SHARDS; do
		[ -z "${!v:-}" ] || vmargs+=(--env "$v=${!v}")
	done
	ptod_vm_boot "$TOP/examples/multi_tenant/run-vm.sh" "${vmargs[@]}" \
		-- "$@"
fi
shift

ptod_vm_start multi-tenant || exit 1

"$TOP/build/examples/multi_tenant/multi_tenant" "$@"
rc=$?

echo "# ptod's view of the clients:"
grep -E "client [0-9]+ .*(runtime of|gone)" "$PTOD_VM_DIR/ptod.log" |
	sed 's/^/#   /'
ptod_vm_stop $rc
