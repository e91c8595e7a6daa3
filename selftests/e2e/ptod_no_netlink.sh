#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ptod_no_netlink.sh: ptod on a pto.ko whose netlink family it cannot see
# (TAP). The family lives in the initial network namespace only, so a
# ptod started in a new one (unshare -n) finds no family "pto", as on a
# module older than the family:
#   - ptod starts, with one warning that it follows no events;
#   - a client's run passes (pto_e2e vector Const);
#   - a kernel that crashes pto-aicore fails its run with the signal, and
#     the next run on the same connection passes (pto_e2e crash-next:
#     ptod learnt of the death from SIGCHLD and restarted pto-aicore);
#   - SIGTERM: ptod exits 0.
#
# Needs root, pto.ko loaded and no ptod on /dev/pto0; make user and
# make -C selftests/e2e. In the VM:
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/e2e/ptod_no_netlink.sh

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$TOP" || exit 1
# shellcheck source=selftests/e2e/ptod_sh.sh
. "$TOP/selftests/e2e/ptod_sh.sh"

# (check runs its command in a subshell, which cannot start ptod)
start_ptod -n
rc=$?
check "ptod starts without the netlink family" test "$rc" = 0
check "it says it follows no events" \
	grep "no events of pto.ko's netlink family" "$TMP/log"
check "a run passes (vector Const)" client vector Const
check "crash kernel fails its run, the next passes (SIGCHLD)" \
	client crash-next
stop_ptod TERM
rc=$?
check "SIGTERM: ptod exits 0" exited "$rc"

echo "1..$n"
[[ $failed == 0 ]]
