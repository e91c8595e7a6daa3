// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel that tries what a hostile client's kernel would (hostile.h):
 * the e2e sandbox tests check that it runs as its client, in its
 * client's memory, with the system calls the sandbox allows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pto/pto_kernel.h>

#include "hostile.h"

/* errno of a call that returned @ret (< 0 on failure), else 0. */
static int32_t err_of(long ret)
{
	return ret < 0 ? errno : 0;
}

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	struct pto_hostile_rec *r;
	int fd;

	(void)ctx;
	if (nargs < 3 || !args[0])
		return -EINVAL;
	r = (struct pto_hostile_rec *)(uintptr_t)args[0];
	r->pid = (int32_t)getpid();
	r->uid = (int32_t)getuid();
	r->euid = (int32_t)geteuid();
	fd = open("/etc/shadow", O_RDONLY | O_CLOEXEC);
	r->open_err = err_of(fd);
	if (fd >= 0)
		close(fd);
	fd = open(PTO_HOSTILE_FILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	r->creat_err = err_of(fd);
	if (fd >= 0)
		close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r->socket_err = err_of(fd);
	if (fd >= 0)
		close(fd);
	r->ptrace_err = err_of(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	if (args[2]) {
		/* another buffer, where the executor would map it */
		const volatile uint64_t *p = (const volatile uint64_t *)
			(uintptr_t)(args[0] - args[1] + args[2]);

		r->peek = *p;
	}
	return 0;
}
