#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ptod_quota_restart.sh: GM quotas across ptod's restarts (TAP). pto.ko
# keeps the quotas an AICPU set after it goes, so that no user takes all
# of GM while ptod is down; the next ptod's are its own:
#   - ptod -q 64: a nobody client gets -EDQUOT beyond 64 MiB
#     (pto_e2e quota 64);
#   - ptod killed (SIGKILL, as a crash), then started without -q: the
#     quota is gone, a nobody client gets a buffer of 65 MiB
#     (pto_e2e noquota 64);
#   - SIGTERM: ptod exits 0.
# That no client file allocates beyond the quota while ptod is down is the
# kselftest quota.kept_when_aicpu_goes.
#
# Needs root, pto.ko loaded (with 256 MiB of GM or more) and no ptod on
# /dev/pto0; make user and make -C selftests/e2e. In the VM:
#   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/e2e/ptod_quota_restart.sh

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$TOP" || exit 1
# shellcheck source=selftests/e2e/ptod_sh.sh
. "$TOP/selftests/e2e/ptod_sh.sh"

# a small runtime per client, charged to its user under -q
export PTO2_RING_HEAP=65536

# (check runs its command in a subshell, which cannot start ptod)
start_ptod -q 64
rc=$?
check "ptod -q 64 starts" test "$rc" = 0
check "a nobody client: -EDQUOT beyond 64 MiB" nobody_client quota 64
stop_ptod KILL
start_ptod
rc=$?
check "ptod killed, then started without -q" test "$rc" = 0
check "a nobody client: 65 MiB, no quota" nobody_client noquota 64
stop_ptod TERM
rc=$?
check "SIGTERM: ptod exits 0" exited "$rc"

echo "1..$n"
[[ $failed == 0 ]]
