// SPDX-License-Identifier: MIT
/*
 * test_config.c - environment variables and configuration validation
 */
#include <errno.h>
#include <string.h>

#include <pto-private/sandbox.h>

#include "pto2_runtime.h"
#include "tap.h"

struct fake_env {
	const char *names[8];
	const char *values[8];
	int n;
};

static const char *fake_getenv(void *ctx, const char *name)
{
	struct fake_env *e = ctx;
	int i;

	for (i = 0; i < e->n; i++)
		if (!strcmp(e->names[i], name))
			return e->values[i];
	return NULL;
}

static int try1(const char *name, const char *value, struct pto2_config *cfg,
		char *err, size_t len)
{
	struct fake_env e = { { name }, { value }, 1 };

	pto2_config_default(cfg);
	err[0] = '\0';
	return pto2_config_from_getenv(cfg, fake_getenv, &e, err, len);
}

static void expect_invalid(const char *name, const char *value)
{
	struct pto2_config cfg, def;
	char err[256];
	int ret = try1(name, value, &cfg, err, sizeof(err));

	pto2_config_default(&def);
	ok(ret == -EINVAL && strstr(err, name) && strstr(err, "invalid") &&
	   !memcmp(&cfg, &def, sizeof(cfg)),
	   "%s=\"%s\" rejected, config unchanged (%s)", name, value, err);
}

/* pto2_config_validate() on configurations built in code. */
static void t_validate(const struct pto2_config *def)
{
	struct pto2_config cfg;
	char err[256];

	cfg = *def;
	cfg.task_window = 12;
	ok(pto2_config_validate(&cfg, err, sizeof(err)) == -EINVAL,
	   "validate rejects a window that is not a power of 2");
	cfg = *def;
	cfg.sched_threads = 0;
	ok(pto2_config_validate(&cfg, err, sizeof(err)) == -EINVAL,
	   "validate rejects 0 scheduler threads");

	cfg = *def;
	cfg.exec_ctx = PTO_SBX_MAX;
	ok(pto2_config_validate(&cfg, err, sizeof(err)) == 0,
	   "validate takes the last sandbox number as exec_ctx");
	cfg.exec_ctx = PTO_SBX_MAX + 1;
	ok(pto2_config_validate(&cfg, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "exec_ctx"),
	   "validate rejects an exec_ctx beyond the sandbox numbers");
	cfg = *def;
	cfg.heap_dev = 0x100000040ULL;
	ok(pto2_config_validate(&cfg, err, sizeof(err)) == 0,
	   "validate takes a 64-byte aligned heap_dev");
	ok(pto2_runtime_mem_size(&cfg, 6) == pto2_sm_size(cfg.task_window,
							cfg.dep_pool_size, 6),
	   "a heap elsewhere leaves only the SM region in the runtime's memory");
	cfg.heap_dev = 0x100000020ULL;
	ok(pto2_config_validate(&cfg, err, sizeof(err)) == -EINVAL,
	   "validate rejects a heap_dev that is not 64-byte aligned");
}

int main(void)
{
	struct pto2_config cfg, def;
	struct fake_env e;
	char err[256];
	int ret;

	pto2_config_default(&def);
	ok(def.task_window == 65536 && def.heap_size == (1ULL << 30) &&
	   def.dep_pool_size == 65536 && def.ready_queue_shards == 3 &&
	   def.sched_threads == 3 && def.spin_limit == 100000 &&
	   def.warn_interval == 10000,
	   "defaults are PTO2's (window 65536, heap 1 GiB, dep pool 65536, 3 shards)");
	ok(pto2_config_validate(&def, err, sizeof(err)) == 0,
	   "defaults validate");

	memset(&e, 0, sizeof(e));
	cfg = def;
	ret = pto2_config_from_getenv(&cfg, fake_getenv, &e, err, sizeof(err));
	ok(ret == 0 && !memcmp(&cfg, &def, sizeof(cfg)), "no variables: defaults");

	e.n = 4;
	e.names[0] = "PTO2_RING_TASK_WINDOW"; e.values[0] = "16";
	e.names[1] = "PTO2_RING_HEAP"; e.values[1] = "64K";
	e.names[2] = "PTO2_RING_DEP_POOL"; e.values[2] = "16";
	e.names[3] = "PTO2_READY_QUEUE_SHARDS"; e.values[3] = "1";
	cfg = def;
	ret = pto2_config_from_getenv(&cfg, fake_getenv, &e, err, sizeof(err));
	ok(ret == 0 && cfg.task_window == 16 && cfg.heap_size == 65536 &&
	   cfg.dep_pool_size == 16 && cfg.ready_queue_shards == 1,
	   "valid values at the lower bounds are applied");

	ok(try1("PTO2_RING_TASK_WINDOW", "4", &cfg, err, sizeof(err)) == 0 &&
	   cfg.task_window == 4, "window 4 accepted");
	ok(try1("PTO2_RING_TASK_WINDOW", "4194304", &cfg, err, sizeof(err)) == 0 &&
	   cfg.task_window == 4194304, "window 2^22 accepted");
	ok(try1("PTO2_RING_HEAP", "1024", &cfg, err, sizeof(err)) == 0 &&
	   cfg.heap_size == 1024, "heap 1024 accepted");
	ok(try1("PTO2_RING_HEAP", "2g", &cfg, err, sizeof(err)) == 0 &&
	   cfg.heap_size == (2ULL << 30), "heap 2g accepted");
	ok(try1("PTO2_READY_QUEUE_SHARDS", "16", &cfg, err, sizeof(err)) == 0 &&
	   cfg.ready_queue_shards == 16, "shards 16 accepted");

	expect_invalid("PTO2_RING_TASK_WINDOW", "24");
	expect_invalid("PTO2_RING_TASK_WINDOW", "2");
	expect_invalid("PTO2_RING_TASK_WINDOW", "0");
	expect_invalid("PTO2_RING_TASK_WINDOW", "");
	expect_invalid("PTO2_RING_TASK_WINDOW", "16x");
	expect_invalid("PTO2_RING_TASK_WINDOW", "-16");
	expect_invalid("PTO2_RING_TASK_WINDOW", " 16");
	expect_invalid("PTO2_RING_TASK_WINDOW", "0x10");
	expect_invalid("PTO2_RING_TASK_WINDOW", "8388608");
	expect_invalid("PTO2_RING_TASK_WINDOW", "16K");
	expect_invalid("PTO2_RING_HEAP", "1023");
	expect_invalid("PTO2_RING_HEAP", "1T");
	expect_invalid("PTO2_RING_HEAP", "99999999999999999999999");
	expect_invalid("PTO2_RING_HEAP", "2048KB");
	expect_invalid("PTO2_RING_DEP_POOL", "15");
	expect_invalid("PTO2_RING_DEP_POOL", "abc");
	expect_invalid("PTO2_READY_QUEUE_SHARDS", "0");
	expect_invalid("PTO2_READY_QUEUE_SHARDS", "17");

	t_validate(&def);

	ok(pto2_sm_size(16, 16, 6) ==
	   PTO2_ALIGN_UP(sizeof(PTO2SharedMemoryHeader), 64) +
	   PTO2_ALIGN_UP(16 * sizeof(PTO2TaskDescriptor), 64) +
	   PTO2_ALIGN_UP(17 * sizeof(PTO2DepListEntry), 64) +
	   PTO2_ALIGN_UP(6 * PTO2_PAYLOAD_STRIDE, 64),
	   "SM size formula (header, descriptors, dep pool + sentinel, payload area)");
	ok(sizeof(struct pto_core_regs) == 64, "core register block is 64 bytes");
	return tap_done();
}
