# SPDX-License-Identifier: MIT
#
# Top-level build of the emulated PTO2 device.
#
#   make            build everything that runs natively (module included)
#   make deps       install the Debian packages the project needs (idempotent)
#   make demo       set up, build, boot the VM and run the demo
#   make check      set up and run every test: native, static, VM
#   make bench-peers set up, build and run bench/peers: our runtime side by
#                   side with StarPU, OpenMP tasks and oneTBB (ROUNDS=N)
#   make fuzz-soak  the fuzzers, ten times as long as in make check
#   make debug-kernel  build a 6.12 kernel with KASAN, lockdep, kmemleak,
#                   DEBUG_ATOMIC_SLEEP and UBSAN (cached outside the tree)
#   make check-debug   run the VM suites on it: no kernel report allowed
#
# Everything built goes under build/ (and kmod/ for Kbuild's own files).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --no-print-directory

TOP := $(abspath .)
BUILD := $(TOP)/build

# Debian 12's packaged 6.12 kernel: the VM runs it and pto.ko is built for it.
KDIR ?= $(firstword $(wildcard /usr/src/linux-headers-6.12*-amd64))
# Debian 12's own 6.1 kernel: check-kmod builds pto.ko for it too, and
# check-vm-6.1 runs the device's kselftests on it.
KDIR61 ?= $(firstword $(wildcard /usr/src/linux-headers-6.1.*-amd64))
KREL61 := $(patsubst linux-headers-%,%,$(notdir $(KDIR61)))
KO61 := $(BUILD)/kmod-check/$(notdir $(KDIR61))/kmod/pto.ko

# Userspace: one target per directory, each after the directories whose
# libraries it links, so that make -j builds the rest side by side. Each
# directory's Makefile includes scripts/Makefile.user (flags and rules).
USER_DIRS := common libpto daemon daemon/aicore daemon/sandbox daemon/ptod \
	tools/pto-run tools/pto-gm tools/pto-hws-sim tools/pto-trace tools/ptoctl \
	tools/ptolat examples selftests/pto selftests/e2e bench/roundtrip \
	bench/submit bench/e2e bench/hws bench/peers
SUB := PTO_FROM_TOP=1

libpto daemon: common
daemon/aicore daemon/sandbox daemon/ptod bench/submit examples: daemon
tools/pto-hws-sim bench/hws bench/peers: daemon
bench/peers: libpto daemon/ptod daemon/aicore
bench/hws tools/pto-trace: tools/pto-hws-sim
tools/pto-run selftests/e2e bench/e2e: libpto
tools/ptoctl: common
selftests/e2e: selftests/pto
bench/e2e: daemon

.PHONY: all deps kmod user $(USER_DIRS) check check-native check-e2e-user check-e2e-asan check-kmod check-vm \
	check-vm-6.1 fuzz-soak debug-kernel check-debug demo bench bench-native \
	bench-vm bench-peers clean

all: kmod user

deps:
	@scripts/deps.sh

kmod:
	$(MAKE) -C kmod KDIR=$(KDIR)

user: $(USER_DIRS)

$(USER_DIRS):
	$(MAKE) -C $@ $(SUB)

# Native tests (fast, no VM): the runtime core's and the HWS library's unit
# tests (also under ASan + UBSan and TSan), libpto's and pto-aicore's, pto-gm's,
# ptoctl's, ptolat's, pto-run's and pto-bench-peers' refusals of bad
# arguments, the HWS simulator's checks (DAG
# files replay identically, a live run recorded by the runtime replays; its
# target experiments print their tables), pto-trace's (a recording as
# JSON, SVG and DOT), the examples' kernels against their golden
# references, the examples end to end on the runtime core over in-process
# simulated cores, and the end-to-end suite (ptod, pto-aicore, libpto, the
# examples) on ptod's user-mode device.
check-native: user
	python3 selftests/pto/pto_nlspec.py header
	$(MAKE) -C daemon test test-asan test-tsan $(SUB)
	$(MAKE) -C libpto test $(SUB)
	$(MAKE) -C daemon/ptod test $(SUB)
	$(MAKE) -C daemon/aicore test $(SUB)
	tools/pto-gm/check_args.sh $(BUILD)/tools/pto-gm
	tools/ptoctl/check_args.sh $(BUILD)/tools/ptoctl
	tools/ptolat/check_args.sh $(BUILD)/tools/ptolat/ptolat
	tools/pto-run/check_args.sh $(BUILD)/tools/pto-run \
		$(BUILD)/examples/bgemm/orch.so
	bench/peers/check_args.sh $(BUILD)/bench/peers/pto-bench-peers
	tools/pto-hws-sim/check.sh $(BUILD)/tools/pto-hws-sim \
		$(BUILD)/bench/hws/pto-bench-makespan
	$(MAKE) -C tools/pto-hws-sim fuzz
	tools/pto-trace/check.sh $(BUILD)/tools/pto-trace \
		$(BUILD)/bench/hws/pto-bench-makespan
	$(MAKE) -C examples check $(SUB)
	$(MAKE) -C examples check-sim $(SUB)
	$(MAKE) check-e2e-user
	$(MAKE) check-e2e-asan

# The end-to-end suite natively, on the user-mode device (ptod -d user):
# no module, no VM.
check-e2e-user: user
	PTO_DEVICE=user prove -v selftests/e2e/run.sh

# The same with every program the suite runs built with ASan and UBSan
# into build/asan: any sanitizer report from ptod, pto-aicore, libpto or a
# client fails it (scripts/e2e-asan); then the simulator's checks on its
# sanitized build (a report fails them too: scripts/san-run).
ASAN_BUILD := $(BUILD)/asan
include scripts/sanflags.mk
ASAN_OPT := -O1 -g $(SANFLAGS)
E2E_DIRS := common libpto daemon daemon/aicore daemon/sandbox daemon/ptod \
	tools/pto-run tools/pto-hws-sim tools/pto-trace tools/ptoctl examples \
	selftests/pto selftests/e2e
check-e2e-asan:
	$(MAKE) $(E2E_DIRS) BUILD=$(ASAN_BUILD) OPT='$(ASAN_OPT)'
	scripts/e2e-asan $(ASAN_BUILD)
	scripts/san-run tools/pto-hws-sim/check.sh $(ASAN_BUILD)/tools/pto-hws-sim

# Static checks of the module: W=1 against 6.1 and 6.12, sparse, checkpatch.
check-kmod:
	$(MAKE) -C kmod check

# The VM suites: the device's kselftests, then ptod + pto-aicore + libpto
# end to end (every example against its golden, concurrency, crashes),
# then the tracepoints and USDT probes as bpftrace and ptolat see them.
# That last guest has one vCPU: attaching and detaching probes patches
# kernel text, which TCG now and then gets wrong while another vCPU runs
# it (an int3 oops; Documentation/vm-rig.rst).
check-vm: kmod user
	scripts/vm-selftest
	scripts/vm-run --module kmod/pto.ko --timeout 900 -- prove -v selftests/e2e/run.sh \
		selftests/e2e/ptod_no_netlink.sh selftests/e2e/ptod_quota_restart.sh \
		selftests/e2e/ptod_cgroup.sh
	scripts/vm-run --smp 1 --module kmod/pto.ko --timeout 600 -- \
		prove -v selftests/trace/pto_tracepoints.sh \
		selftests/trace/pto_schedlat.sh

# The device's kselftests again, on the 6.1 kernel with the module
# check-kmod built for it.
check-vm-6.1: user
	test -f $(KO61) || $(MAKE) check-kmod
	scripts/vm-run --kernel $(KREL61) --module $(KO61) \
		--env PTO_MODULE=$(KO61) --timeout 900 -- selftests/pto/run.sh

# The fuzzers at ten times the length they have in check-vm: the device's
# (selftests/pto/pto_fuzz, 2000000 operations) and ptod's socket's (the
# e2e test sockfuzz, 200000 operations). PTO_FUZZ_SEED=... and
# PTO_SOCKFUZZ_SEED=... on the command line repeat a run.
FUZZ_SEEDS := $(if $(PTO_FUZZ_SEED),--env PTO_FUZZ_SEED=$(PTO_FUZZ_SEED)) \
	$(if $(PTO_SOCKFUZZ_SEED),--env PTO_SOCKFUZZ_SEED=$(PTO_SOCKFUZZ_SEED))

fuzz-soak: kmod user
	scripts/vm-run --module kmod/pto.ko --timeout 1800 \
		--env PTO_FUZZ_OPS=2000000 --env PTO_VERBOSE=1 $(FUZZ_SEEDS) -- \
		selftests/pto/run.sh build/selftests/pto_fuzz
	scripts/vm-run --module kmod/pto.ko --timeout 1800 \
		--env PTO_SOCKFUZZ_OPS=200000 $(FUZZ_SEEDS) -- \
		prove -v selftests/e2e/run.sh :: -t ptod_ready -t sockfuzz

# The debug-kernel leg (not part of check: the first build takes an hour
# or more on two shared cores): Debian's linux-source-6.12 with the
# checkers of scripts/debug-kernel.config, pto.ko built against it, and
# the kselftests and the end-to-end suite run on it, failing on any report
# of a checker. See Documentation/vm-rig.rst, "The debug kernel".
debug-kernel: deps
	scripts/debug-kernel build

check-debug: user debug-kernel
	scripts/debug-kernel check --no-build

check: deps
	$(MAKE) all
	$(MAKE) check-native
	$(MAKE) check-kmod
	$(MAKE) check-vm
	$(MAKE) check-vm-6.1

demo: deps
	$(MAKE) all
	scripts/demo

bench: bench-native bench-vm

bench-native: user
	$(MAKE) -C bench/submit run $(SUB)
	$(MAKE) -C bench/hws run $(SUB)

bench-vm: kmod user
	scripts/vm-run --module kmod/pto.ko -- build/bench/pto-bench-roundtrip
	bench/e2e/run-vm.sh

# The peers side by side (bench/peers builds without them; its run needs
# every one, which deps installs).
bench-peers: deps
	$(MAKE) bench/peers
	$(MAKE) -C bench/peers run $(SUB)

clean:
	-$(MAKE) -C kmod clean
	rm -rf $(BUILD)
