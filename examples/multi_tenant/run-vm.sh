#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The multi-tenant demo in the VM: builds on the host what it needs, boots
# the VM rig with pto.ko, starts ptod (scripts/ptod-lib.sh: a private
# socket, wait for "is ready" in its log), runs multi_tenant
# (K clients at once, each an example checked against its golden) and
# stops ptod with SIGTERM.
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
B=$TOP/build

if [ "${1:-}" != --in-vm ]; then
	set -e
	make -C "$TOP" kmod user	# the module and every program, up to date
	cd "$TOP"
	vmargs=(--module kmod/pto.ko)
	[ -z "${VM_GM_MB:-}" ] || vmargs+=(--param "gm_size_mb=$VM_GM_MB")
	for v in PTO2_RING_HEAP PTO2_RING_TASK_WINDOW PTO2_RING_DEP_POOL \
		PTO2_READY_QUEUE_SHARDS; do
		[ -z "${!v:-}" ] || vmargs+=(--env "$v=${!v}")
	done
	exec scripts/vm-run "${vmargs[@]}" --timeout "${VM_TIMEOUT:-240}" \
		-- "$TOP/examples/multi_tenant/run-vm.sh" --in-vm "$@"
fi
shift

TMP=$(mktemp -d /tmp/pto-multi-tenant.XXXXXX)
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

"$B/examples/multi_tenant/multi_tenant" "$@"
rc=$?

echo "# ptod's view of the clients:"
grep -E "client [0-9]+ .*(runtime of|gone)" "$TMP/ptod.log" | sed 's/^/#   /'
ptod_stop
rd=$?
[ $rd = 0 ] || { echo "ptod exited with $rd" >&2; sed 's/^/# /' "$TMP/ptod.log" | tail -40; }
[ $rc = 0 ] && [ $rd = 0 ]
