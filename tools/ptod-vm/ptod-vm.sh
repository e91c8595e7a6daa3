# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# ptod-vm.sh - what the scripts that run ptod clients in the VM share
# (examples/multi_tenant/run-vm.sh, bench/e2e/run-vm.sh). Such a script
# runs twice: on the host it builds and boots the VM rig, which runs the
# script again with --in-vm; in the VM it starts ptod, runs its clients
# and stops ptod. Source this file from bash with TOP set to the top of
# the tree.
#
#   ptod_vm_boot SCRIPT [VM-RUN ARGS] -- [ARGS]
#       host: make kmod user (the module and every program, up to date),
#       then scripts/vm-run --module kmod/pto.ko [VM-RUN ARGS] --timeout
#       $VM_TIMEOUT (default 240) -- SCRIPT --in-vm [ARGS]. Does not
#       return.
#   ptod_vm_start NAME
#       VM: start ptod on a private socket in a new directory
#       $PTOD_VM_DIR (/tmp/pto-NAME.XXXXXX; its log is ptod.log there),
#       as selftests/e2e/run.sh does (scripts/ptod-lib.sh: PTO_SOCKET is
#       exported, ready when ptod's log says "is ready"). On exit, a ptod
#       still running is killed and the end of its log shown, and the
#       directory is removed. 1 if ptod does not become ready.
#   ptod_vm_stop RC
#       VM: stop ptod with SIGTERM (the end of its log if it fails);
#       succeeds if RC is 0 and ptod exited with 0.

ptod_vm_boot() {
	local script=$1 vmargs=()

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vmargs+=("$1")
		shift
	done
	[ $# -eq 0 ] || shift
	set -e
	make -C "$TOP" kmod user
	cd "$TOP"
	exec scripts/vm-run --module kmod/pto.ko "${vmargs[@]}" \
		--timeout "${VM_TIMEOUT:-240}" -- "$script" --in-vm "$@"
}

_ptod_vm_log_tail() {
	sed 's/^/# /' "$PTOD_VM_DIR/ptod.log" | tail -40
}

_ptod_vm_cleanup() {
	if [ -n "$PTOD_PID" ]; then
		kill -9 "$PTOD_PID" 2>/dev/null
		echo "# --- ptod log ---"
		_ptod_vm_log_tail
	fi
	rm -rf "$PTOD_VM_DIR"
}

ptod_vm_start() {
	PTOD_VM_DIR=$(mktemp -d "/tmp/pto-$1.XXXXXX")
	PTO_TOP=$TOP
	PTOD_PID=
	# shellcheck source-path=SCRIPTDIR/../.. source=scripts/ptod-lib.sh
	. "$TOP/scripts/ptod-lib.sh"
	trap _ptod_vm_cleanup EXIT
	ptod_start "$PTOD_VM_DIR" || return 1
	echo "# ptod ready; guest $(uname -r), $(nproc) CPUs"
}

ptod_vm_stop() {
	local rc=$1 rd

	ptod_stop
	rd=$?
	if [ "$rd" != 0 ]; then
		echo "ptod exited with $rd" >&2
		_ptod_vm_log_tail
	fi
	[ "$rc" = 0 ] && [ "$rd" = 0 ]
}
