#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pto_module.sh: module-level tests that need a shell (TAP output):
#   - rmmod is refused while a file of the device is open;
#   - loading with an invalid parameter fails cleanly (no device, no module);
#   - reloading with other parameters: GET_INFO, sysfs and the register file
#     report them (pto_ioctl with PTO_EXPECT_*), GM and core limits follow,
#     and so do the HWS usage masks (pto_hws at 12 and 192 cores);
#   - several devices (nr_devices=2): /dev/pto1 works on its own.
# It leaves the module loaded with the parameters it found.
#
# Needs root and pto.ko loaded. PTO_MODULE: the .ko to reload (run.sh sets
# it), PTO_SELFTEST_BIN: the test programs (default build/selftests).

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$TOP" || exit 1
BIN=${PTO_SELFTEST_BIN:-build/selftests}
MODULE=${PTO_MODULE:-$TOP/kmod/pto.ko}
PARAMS=/sys/module/pto/parameters

# shellcheck source=selftests/pto/pto_tap.sh
. "$TOP/selftests/pto/pto_tap.sh"

loaded() { [[ -d /sys/module/pto ]]; }

wait_dev() {
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -c ${1:-/dev/pto0} ]] && return 0
		sleep 0.1
	done
	echo "${1:-/dev/pto0} did not appear"
	return 1
}

# The node's group and mode, as udev would set them (kmod/60-pto.rules):
# vm-run's guest has no udevd and gives the rules as /run/vm-run/dev-rules.
dev_rules() {
	[[ ! -x /run/vm-run/dev-rules ]] || /run/vm-run/dev-rules
}

load() {
	# shellcheck disable=SC2068 # parameters split on purpose
	insmod "$MODULE" $@ && wait_dev && dev_rules
}

unload() {
	loaded || return 0
	rmmod pto
}

# Expect insmod to fail and leave nothing behind.
load_fails() {
	if insmod "$MODULE" "$@" 2>&1; then
		echo "insmod $* succeeded"
		rmmod pto
		return 1
	fi
	if loaded || [[ -e /dev/pto0 ]]; then
		echo "module or device left behind after a failed insmod"
		return 1
	fi
	return 0
}

rmmod_refused_while_open() {
	local rc
	exec 3<>/dev/pto0 || return 1
	rmmod pto 2>&1
	rc=$?
	exec 3>&-
	if [[ $rc == 0 ]]; then
		echo "rmmod succeeded with /dev/pto0 open"
		return 1
	fi
	loaded || { echo "module gone"; return 1; }
	return 0
}

# A mapping outlives its file descriptor and pins the file, hence the
# module: rmmod fails until the mapping goes.
rmmod_refused_while_mapped() {
	local role=$1 line rc wfd
	coproc HOLD { "$BIN/pto_hold" "$role"; }
	read -r -t 30 line <&"${HOLD[0]}"
	if [[ $line != ready ]]; then
		echo "pto_hold $role did not get ready"
		return 1
	fi
	rmmod pto 2>&1
	rc=$?
	wfd=${HOLD[1]}
	exec {wfd}>&-
	wait "$HOLD_PID"
	if [[ $rc == 0 ]]; then
		echo "rmmod succeeded while pto_hold $role had a mapping"
		load
		return 1
	fi
	return 0
}

# The test program's TAP is not ours: run it quietly, report by status.
prog() {
	"$@" >/tmp/pto_module_prog.log 2>&1
	local rc=$?
	[[ $rc == 0 ]] || cat /tmp/pto_module_prog.log
	return $rc
}

echo "TAP version 13"

if [[ $(id -u) != 0 ]] || ! loaded || [[ ! -f $MODULE ]]; then
	echo "1..0 # SKIP needs root, pto loaded and $MODULE"
	exit 0
fi

orig=()
for p in nr_devices nr_aic gm_size_mb profile; do
	[[ -r $PARAMS/$p ]] && orig+=("$p=$(cat "$PARAMS/$p")")
done
echo "# module $MODULE, loaded with: ${orig[*]}"

check rmmod_refused_while_open rmmod_refused_while_open
check rmmod_refused_while_regs_mapped rmmod_refused_while_mapped executor
check rmmod_refused_while_buffer_mapped rmmod_refused_while_mapped client
# an own GM quota outlives the AICPU that set it: unload frees it
# (kmemleak after rmmod, scripts/debug-kernel)
check own_quota_left_at_unload prog "$BIN/pto_hold" quota
check rmmod_after_close unload

check invalid_nr_aic_0 load_fails nr_aic=0
check invalid_nr_aic_86 load_fails nr_aic=86
check invalid_nr_aic_negative load_fails nr_aic=-2
check invalid_gm_size_mb_1 load_fails gm_size_mb=1
check invalid_profile load_fails profile=a9
check invalid_nr_devices_0 load_fails nr_devices=0

if check_out=$(load nr_aic=4 gm_size_mb=32 profile=a5 2>&1); then
	ok load_small_a5
	check info_small_a5 prog env PTO_EXPECT_NR_AIC=4 \
		PTO_EXPECT_GM_SIZE_MB=32 PTO_EXPECT_PROFILE=a5 \
		"$BIN/pto_ioctl" -f info
	check gm_small_a5 prog "$BIN/pto_gm"
	check mmap_small_a5 prog "$BIN/pto_mmap"
	check core_small_a5 prog "$BIN/pto_core" -r core.attach_all_cores \
		-r core.attach_core_beyond_nr_cores \
		-r core.park_kick_irq_roundtrip
	check hws_small_a5 prog "$BIN/pto_hws"
	check unload_small_a5 unload
else
	printf '%s\n' "$check_out" | comment
	not_ok load_small_a5
	for t in info_small_a5 gm_small_a5 mmap_small_a5 core_small_a5 \
		hws_small_a5 unload_small_a5; do
		skip "$t" "load failed"
	done
fi

if check_out=$(load nr_aic=85 profile=a2a3 2>&1); then
	ok load_max_cores
	check info_max_cores prog env PTO_EXPECT_NR_AIC=85 \
		PTO_EXPECT_PROFILE=a2a3 "$BIN/pto_ioctl" -f info
	check core_max_cores prog "$BIN/pto_core" -r core.attach_all_cores \
		-r core.attach_core_beyond_nr_cores \
		-r core.kick_many_cores -r core.kick_beyond_nr_cores
	check hws_max_cores prog "$BIN/pto_hws"
	check unload_max_cores unload
else
	printf '%s\n' "$check_out" | comment
	not_ok load_max_cores
	for t in info_max_cores core_max_cores hws_max_cores \
		unload_max_cores; do
		skip "$t" "load failed"
	done
fi

# Without nr_aic a device has its profile's blocks: 72 on a5.
if check_out=$(load profile=a5 gm_size_mb=32 2>&1); then
	ok load_a5_default_blocks
	check info_a5_default_blocks prog env PTO_EXPECT_NR_AIC=72 \
		PTO_EXPECT_GM_SIZE_MB=32 PTO_EXPECT_PROFILE=a5 \
		"$BIN/pto_ioctl" -f info
	check unload_a5_default_blocks unload
else
	printf '%s\n' "$check_out" | comment
	not_ok load_a5_default_blocks
	for t in info_a5_default_blocks unload_a5_default_blocks; do
		skip "$t" "load failed"
	done
fi

if check_out=$(load nr_devices=2 2>&1) && wait_dev /dev/pto1 >/dev/null &&
	dev_rules; then
	ok load_two_devices
	check info_pto1 prog env PTO_DEV=/dev/pto1 \
		PTO_SYSFS=/sys/class/misc/pto1 "$BIN/pto_ioctl" -f info \
		-f roles
	check core_pto1 prog env PTO_DEV=/dev/pto1 \
		PTO_SYSFS=/sys/class/misc/pto1 "$BIN/pto_core" \
		-r core.park_kick_irq_roundtrip
	# The AICPU role is per device: both can be claimed at once.
	check aicpu_per_device prog "$BIN/pto_ioctl" -r roles.aicpu_per_device
	check unload_two_devices unload
else
	printf '%s\n' "$check_out" | comment
	not_ok load_two_devices
	unload >/dev/null 2>&1
	for t in info_pto1 core_pto1 aicpu_per_device unload_two_devices; do
		skip "$t" "load failed"
	done
fi

unload >/dev/null 2>&1
check reload_original load "${orig[@]}"

echo "1..$n"
[[ $failed == 0 ]]
