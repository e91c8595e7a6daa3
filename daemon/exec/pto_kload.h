// SPDX-License-Identifier: MIT
/*
 * pto_kload.h - kernels uploaded into GM, loaded into the executor
 *
 * A client uploads a kernel as a blob in one of its GM buffers
 * (function_bin_addr: struct pto_kblob_hdr + the .so bytes, wire.h). An
 * executor that runs it (pto-aicore for its own clients, pto-sandbox for
 * its client) copies the .so into a memfd, dlopens /proc/self/fd/N and
 * keeps it, cached by (device address, upload id): a buffer reused for
 * another kernel is never mistaken for the old one.
 */
#ifndef PTO_KLOAD_H
#define PTO_KLOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <pto/pto_kernel.h>

struct pto_exec;
struct pto_kentry;

/**
 * struct pto_kcache - the kernels one executor process has loaded.
 * @lock: protects @head and serializes loading.
 * @head: the loaded kernels, a list that only grows (a kernel's memfd
 *	stays open as long as it is loaded, so /proc/self/fd/N names stay
 *	unique).
 * @verbose: log every kernel loaded.
 */
struct pto_kcache {
	pthread_mutex_t lock;
	struct pto_kentry *head;
	bool verbose;
};

void pto_kcache_init(struct pto_kcache *kc, bool verbose);

/*
 * The entry point of the kernel blob at device address @addr, read
 * through @ex's mapping of GM, loading it the first time; @core names
 * the core in messages (ex->ops->log). 0, or -EFAULT (outside the
 * mapping), -ENOEXEC (no blob, or no loadable kernel), -ENOMEM, -errno.
 */
int pto_kcache_get(struct pto_kcache *kc, struct pto_exec *ex, uint64_t addr,
		   uint32_t core, pto_kernel_entry_fn *out);

#endif /* PTO_KLOAD_H */
