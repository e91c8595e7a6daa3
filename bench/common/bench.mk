# SPDX-License-Identifier: MIT
#
# bench.mk - the sources every benchmark may share (bench/common), for a
# benchmark's Makefile after scripts/Makefile.user:
#
#	include ../common/bench.mk
#
# BENCH_STAT_OBJ (order statistics) and BENCH_SIM_OBJ (the runtime core
# over the sim device; link it with $(BENCH_SIM_LIBS)) are built into this
# directory's objects, BENCH_CPPFLAGS finds their headers.

BENCH_COMMON := $(TOP)/bench/common
BENCH_CPPFLAGS := -I$(BENCH_COMMON)
BENCH_STAT_OBJ := $(OBJDIR)/common/bench_stat.o
BENCH_SIM_OBJ := $(OBJDIR)/common/bench_sim.o
BENCH_SIM_LIBS := $(LIBPTOSIM) $(LIBPTOEXEC) $(LIBPTO2) $(LIBHWS) \
	$(LIBPTOCOMMON)

$(OBJDIR)/common/%.o: $(BENCH_COMMON)/%.c
	@mkdir -p $(@D)
	$(COMPILE.c) $(DAEMON_CPPFLAGS) $(BENCH_CPPFLAGS) -pthread -c $< -o $@
