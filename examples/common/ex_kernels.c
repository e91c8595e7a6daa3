// SPDX-License-Identifier: MIT
/* Loading and calling kernel shared objects directly (see ex_exec.h). */
#include "ex_exec.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pto/pto_orchestration_api.h>

void ex_kernels_unload(struct ex_kernel_set *ks)
{
	size_t i;

	for (i = 0; i < ks->n; i++)
		if (ks->k[i].dl)
			dlclose(ks->k[i].dl);
	memset(ks, 0, sizeof(*ks));
}

int ex_kernels_load(struct ex_kernel_set *ks, const char *dir,
		    const struct ex_kernel_desc *descs, size_t n)
{
	size_t i;

	memset(ks, 0, sizeof(*ks));
	if (n > EX_MAX_KERNELS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char path[4096];
		struct ex_kernel *k = &ks->k[i];

		snprintf(path, sizeof(path), "%s/%s", dir, descs[i].so);
		k->desc = descs[i];
		k->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!k->dl) {
			fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
			ks->n = i;
			ex_kernels_unload(ks);
			return -ENOENT;
		}
		*(void **)&k->entry = dlsym(k->dl, PTO_KERNEL_ENTRY_SYMBOL);
		if (!k->entry) {
			fprintf(stderr, "%s: no %s\n", path,
				PTO_KERNEL_ENTRY_SYMBOL);
			ks->n = i + 1;
			ex_kernels_unload(ks);
			return -ENOENT;
		}
	}
	ks->n = n;
	return 0;
}

const struct ex_kernel *ex_kernel_find(const struct ex_kernel_set *ks,
				       int32_t func_id)
{
	size_t i;

	for (i = 0; i < ks->n; i++)
		if (ks->k[i].desc.func_id == func_id)
			return &ks->k[i];
	return NULL;
}

int ex_kernel_run(struct ex_kernel_set *ks, int32_t func_id,
		  int32_t worker_type, const uint64_t *args, uint32_t nargs)
{
	const struct ex_kernel *k = ex_kernel_find(ks, func_id);
	struct pto_kernel_ctx ctx;
	int ret;

	if (!k) {
		fprintf(stderr, "task %lu: no kernel with func_id %d\n",
			ks->tasks, func_id);
		return -ENOENT;
	}
	if (worker_type != k->desc.worker_type) {
		fprintf(stderr, "task %lu: kernel %s (func %d) is %s, submitted as %s\n",
			ks->tasks, k->desc.name, func_id,
			k->desc.worker_type == PTO2_WORKER_CUBE ? "AIC" : "AIV",
			worker_type == PTO2_WORKER_CUBE ? "AIC" : "AIV");
		return -EPERM;
	}
	memset(&ctx, 0, sizeof(ctx));
	if (worker_type == PTO2_WORKER_CUBE) {
		uint32_t core = ks->next_aic++ % EX_NR_AIC;

		ctx.block_idx = core;
		ctx.block_num = EX_NR_AIC;
		ctx.sub_block_idx = 0;
		ctx.sub_block_num = 1;
		ctx.core_id = core;
	} else {
		uint32_t v = ks->next_aiv++ % EX_NR_AIV;

		ctx.block_idx = v / 2;
		ctx.block_num = EX_NR_AIC;
		ctx.sub_block_idx = v % 2;
		ctx.sub_block_num = 2;
		ctx.core_id = EX_NR_AIC + v;
	}
	ctx.task_id = (uint32_t)ks->tasks;
	ctx.kernel_id = func_id;
	ret = k->entry(&ctx, args, nargs);
	if (ret < 0)
		fprintf(stderr, "task %lu: kernel %s (func %d) failed: %d (%s)\n",
			ks->tasks, k->desc.name, func_id, ret, strerror(-ret));
	ks->tasks++;
	return ret;
}
