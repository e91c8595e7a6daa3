// SPDX-License-Identifier: GPL-2.0
/*
 * hostile.h - what the e2e hostile kernel (hostile_kernel.c) writes: who
 * it ran as and what it could do there
 *
 * Arguments: args[0] OUTPUT, one struct pto_hostile_rec at the start of a
 * client buffer; args[1] SCALAR, that buffer's device address; args[2]
 * SCALAR, a device address to read 8 bytes at (0: none), translated the
 * way the executor translates tensors (base + offset).
 */
#ifndef PTO_E2E_HOSTILE_H
#define PTO_E2E_HOSTILE_H

#include <stdint.h>

/* The file the kernel tries to create (the test removes it). */
#define PTO_HOSTILE_FILE	"/etc/pto-e2e-hostile"

/**
 * struct pto_hostile_rec - one run of the hostile kernel.
 * @done: 1 once every field but @peek is written.
 * @uid: getuid().
 * @euid: geteuid().
 * @open_err: errno of open("/etc/shadow", O_RDONLY), 0 if it opened.
 * @creat_err: errno of creating PTO_HOSTILE_FILE, 0 if created.
 * @socket_err: errno of socket(AF_UNIX, SOCK_STREAM), 0 if it worked.
 * @ptrace_err: errno of ptrace(PTRACE_TRACEME), 0 if it worked.
 * @pid: getpid(): the process the kernel ran in.
 * @peek: the 8 bytes read at args[2].
 */
struct pto_hostile_rec {
	int32_t done;
	int32_t uid;
	int32_t euid;
	int32_t open_err;
	int32_t creat_err;
	int32_t socket_err;
	int32_t ptrace_err;
	int32_t pid;
	uint64_t peek;
};

#endif /* PTO_E2E_HOSTILE_H */
