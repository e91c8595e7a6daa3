#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ptod_cgroup.sh: where ptod makes its sandboxes' memory cgroups (TAP).
# ptod hands the memory controller down from its own cgroup v2 and makes
# pto-sandboxes.DEV there; a cgroup that hands a controller down may hold
# no process, so outside the root ptod first moves into a leaf "ptod" of
# its cgroup, and where that cannot work it undoes what it did:
#   - ptod alone in a cgroup: it moves into the leaf ptod, its sandboxes'
#     cgroups are made beside it, a nobody client's run passes, and that
#     sandbox's cgroup is gone with the client;
#   - ptod sharing its cgroup with another process: it says there is no
#     memory cgroup, and is back in its cgroup, with no leaf and no
#     memory controller handed down; a nobody client's run passes;
#   - SIGTERM: ptod exits 0 both times.
#
# Needs root, pto.ko loaded, cgroup v2 with the memory controller at
# /sys/fs/cgroup, and no ptod on /dev/pto0; make user and make -C
# selftests/e2e. In the VM:
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/e2e/ptod_cgroup.sh

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$TOP" || exit 1
CG=/sys/fs/cgroup
A=$CG/pto-test-alone
B=$CG/pto-test-shared
sleeper=

# shellcheck source=selftests/e2e/ptod_sh.sh
. "$TOP/selftests/e2e/ptod_sh.sh"

# rmdir a cgroup and what is below it (no process may be left in it)
cg_rm() {
	[[ -d $1 ]] || return 0
	find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
}

cleanup() {
	[[ -n $ptod_pid ]] && kill -KILL "$ptod_pid" 2>/dev/null
	[[ -n $sleeper ]] && kill -KILL "$sleeper" 2>/dev/null
	wait 2>/dev/null
	cg_rm "$A"
	cg_rm "$B"
	ptod_sh_cleanup
}
trap cleanup EXIT

if ! grep -qw memory "$CG/cgroup.controllers" 2>/dev/null; then
	echo "1..0 # SKIP no cgroup v2 memory controller at $CG"
	exit 0
fi
echo +memory >"$CG/cgroup.subtree_control" || exit 1
mkdir -p "$A" "$B" || exit 1

# ptod alone in $A
start_ptod -g "$A"
rc=$?
check "ptod alone in a cgroup starts" test "$rc" = 0
in_leaf() {
	cat "/proc/$ptod_pid/cgroup"
	grep -qx "0::/${A#"$CG"/}/ptod" "/proc/$ptod_pid/cgroup"
}
check "it moved into the leaf ptod" in_leaf
check "it says where its sandboxes' cgroups are" \
	grep "a memory cgroup each under $A/pto-sandboxes.pto0," "$TMP/log"
check "a nobody client's run passes" nobody_client vector Const
leaf_gone() {
	local pid i

	pid=$(sed -n 's/.*: sandbox [0-9]* (pid \([0-9]*\), uid.*/\1/p' "$TMP/log" | tail -1)
	echo "sandbox pid ${pid:-none}"
	[[ -n $pid ]] || return 1
	for ((i = 0; i < 50; i++)); do
		[[ -d $A/pto-sandboxes.pto0/sbx-$pid ]] || return 0
		sleep 0.1
	done
	return 1
}
check "its sandbox's cgroup is gone with the client" leaf_gone
stop_ptod TERM
rc=$?
check "SIGTERM: ptod exits 0" exited "$rc"

# ptod sharing $B with another process
sleep 600 &
sleeper=$!
echo "$sleeper" >"$B/cgroup.procs" || exit 1
start_ptod -g "$B"
rc=$?
check "ptod in a cgroup with another process starts" test "$rc" = 0
check "it says its sandboxes have no memory cgroup" \
	grep "sandboxes: no memory cgroup (" "$TMP/log"
undone() {
	cat "/proc/$ptod_pid/cgroup" "$B/cgroup.subtree_control"
	grep -qx "0::/${B#"$CG"/}" "/proc/$ptod_pid/cgroup" &&
		[[ ! -d $B/ptod ]] && ! grep -qw memory "$B/cgroup.subtree_control"
}
check "it is back in its cgroup, nothing left" undone
check "a nobody client's run passes" nobody_client vector Const
stop_ptod TERM
rc=$?
check "SIGTERM: ptod exits 0" exited "$rc"

echo "1..$n"
[[ $failed == 0 ]]
