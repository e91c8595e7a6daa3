#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# deps.sh - install the Debian 12 packages this project needs to build and to
# run its tests (including the QEMU rig, scripts/vm-run), and create the
# system group "pto" that owns /dev/ptoN (kmod/60-pto.rules; the VM guest
# shares the host's /etc/group).  Idempotent: when everything is there it
# only asks dpkg and getent and exits, without apt-get update.
#
#   scripts/deps.sh            install what is missing (needs root)
#   scripts/deps.sh --check    only report what is missing (exit 1 if any)
#   scripts/deps.sh --list     print the package list

set -euo pipefail

# The one list of packages.  Keep it sorted within each group.
PACKAGES=(
	# Guest kernel for scripts/vm-run, its headers (pto.ko builds against
	# them) and its source (debug kernels, kselftest headers).
	linux-image-6.12-amd64
	linux-headers-6.12-amd64
	linux-headers-amd64
	linux-image-amd64
	linux-source-6.12

	# The VM rig: emulator, initramfs (static busybox as init, cpio),
	# module handling (modinfo/modprobe, .ko.xz/.ko.zst).
	busybox-static
	cpio
	kmod
	qemu-system-x86
	xz-utils
	zstd

	# Kernel module and userspace builds; the debug kernel (make
	# debug-kernel) also needs libssl-dev for its certificate tools;
	# libclang-rt-14-dev is clang's libFuzzer and sanitizer runtimes
	# (make -C tools/pto-hws-sim fuzz).
	bc
	build-essential
	bison
	clang
	flex
	libclang-rt-14-dev
	libelf-dev
	libssl-dev
	llvm
	pkg-config
	sparse

	# Userspace libraries.
	libbpf-dev
	libevent-dev
	libnl-genl-3-dev
	systemtap-sdt-dev

	# The peers bench/peers compares with (make bench-peers): StarPU,
	# LLVM's OpenMP runtime (with clang above), oneTBB.
	libomp-dev
	libstarpu-dev
	libtbb-dev

	# Tracing.
	bpftool
	bpftrace

	# Tests: prove (perl) for the kselftests, python3 for helpers (and
	# python3-yaml, python3-jsonschema for the netlink spec check),
	# shellcheck for the shell scripts.
	perl
	python3
	python3-jsonschema
	python3-yaml
	shellcheck
)

log() { printf 'deps.sh: %s\n' "$*"; }
die() {
	printf 'deps.sh: error: %s\n' "$*" >&2
	exit 1
}

# Print the packages of PACKAGES that are not fully installed.
missing_packages() {
	local pkg status
	for pkg in "${PACKAGES[@]}"; do
		status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
		if [[ $status != installed ]]; then
			printf '%s\n' "$pkg"
		fi
	done
}

# The group the device node belongs to (kmod/60-pto.rules).
PTO_GROUP=pto

# Create the group if it is missing (install mode); 1 if missing (check).
ensure_group() {
	local mode=$1
	getent group "$PTO_GROUP" >/dev/null && return 0
	[[ $mode == install ]] || {
		log "missing: group $PTO_GROUP"
		return 1
	}
	log "creating system group $PTO_GROUP"
	"${sudo[@]}" groupadd --system "$PTO_GROUP" ||
		die "groupadd $PTO_GROUP failed"
}

main() {
	local mode=install
	case ${1:-} in
	'') ;;
	--check) mode=check ;;
	--list)
		printf '%s\n' "${PACKAGES[@]}"
		exit 0
		;;
	-h | --help)
		sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac

	command -v dpkg-query >/dev/null 2>&1 ||
		die "dpkg-query not found: this script is for Debian 12"

	sudo=()
	if ((EUID != 0)) && [[ $mode == install ]]; then
		command -v sudo >/dev/null 2>&1 ||
			die "not root and no sudo: run as root"
		sudo=(sudo)
	fi
	ensure_group "$mode" || exit 1

	local -a missing=()
	mapfile -t missing < <(missing_packages)
	if ((${#missing[@]} == 0)); then
		log "all ${#PACKAGES[@]} packages are installed"
		exit 0
	fi
	log "missing: ${missing[*]}"
	[[ $mode == install ]] || exit 1

	export DEBIAN_FRONTEND=noninteractive
	log "apt-get update"
	"${sudo[@]}" apt-get update -q ||
		die "apt-get update failed"
	log "installing: ${missing[*]}"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${missing[@]}" ||
		die "apt-get install failed for: ${missing[*]}"

	mapfile -t missing < <(missing_packages)
	((${#missing[@]} == 0)) ||
		die "still not installed after apt-get: ${missing[*]}"
	log "done: all ${#PACKAGES[@]} packages are installed"
}

main "$@"
