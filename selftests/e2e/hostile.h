// SPDX-License-Identifier: GPL-2.0
/*
 * hostile.h - what the e2e hostile kernel (hostile_kernel.c) writes: who
 * it ran as and what it could do there
 *
 * Arguments: args[0] OUTPUT, one struct pto_hostile_rec at the start of a
 * client buffer; args[1] SCALAR, that buffer's device address; args[2]
 * SCALAR, a device address to read 8 bytes at (0: none), translated the
 * way the executor translates tensors (base + offset); args[3], if given
 * and not 0: PTO_HOSTILE_FLOOD, only flood standard error (@flood_bytes),
 * or PTO_HOSTILE_MEMFD, only write into a memfd (@memfd_mib,
 * @memfd_err), nothing else.
 */
#ifndef PTO_E2E_HOSTILE_H
#define PTO_E2E_HOSTILE_H

#include <stdint.h>

/* The file the kernel tries to create (the test removes it). */
#define PTO_HOSTILE_FILE	"/etc/pto-e2e-hostile"
/* The file the kernel tries to create in shared memory (the test removes it) */
#define PTO_HOSTILE_SHM_FILE	"/dev/shm/pto-e2e-hostile"
/* What the kernel tries to malloc(), MiB: this much past its RLIMIT_DATA,
 * and this much in all */
#define PTO_HOSTILE_OVER_MIB	64
#define PTO_HOSTILE_SMALL_MIB	16
/* The flood: newlines written to standard error for this long, or this
 * many in all, whichever comes first */
#define PTO_HOSTILE_FLOOD_MS	2000
#define PTO_HOSTILE_FLOOD_MIB	4
/* The most threads the kernel starts (each waits until it has them all) */
#define PTO_HOSTILE_THREADS	2048
/* args[3]: what the kernel does instead of its probes */
#define PTO_HOSTILE_FLOOD	1
#define PTO_HOSTILE_MEMFD	2
/* The memfd: written a MiB at a time up to this, or until write() fails */
#define PTO_HOSTILE_MEMFD_MIB	1024

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
 * @fork_err: errno of fork(), 0 if it forked.
 * @fork_pid: the child fork() made (it sleeps 30 s), 0 if none.
 * @clone_err: errno of clone(CLONE_NEWUSER | SIGCHLD), 0 if it worked.
 * @clone_pid: the child that clone made (it exits at once), 0 if none.
 * @cparent_err: errno of clone(CLONE_PARENT | SIGCHLD), 0 if it worked.
 * @cparent_pid: the child that clone made (ptod's child: it exits at
 *	once), 0 if none.
 * @thread_err: what pthread_create() returned (0: a thread started).
 * @thread_ran: 1 if that thread ran (and was joined).
 * @proc_uid: owner of /proc/self/mem (root's, 0, once the process is
 *	not dumpable; its own uid while it is), or -errno.
 * @stdin_null: 1 if descriptor 0 is /dev/null, 0 if it is something
 *	else, -errno if fstat() failed (-EBADF: closed).
 * @stdout_null: the same for descriptor 1.
 * @env_len: bytes of the environment (environ's strings and their NULs:
 *	0 if it is empty).
 * @oom_adj: /proc/self/oom_score_adj, or -10000 if it could not be read.
 * @data_soft_mib: its RLIMIT_DATA's soft limit (/proc/self/limits), MiB,
 *	-1 if none.
 * @data_hard_mib: the hard limit, the same way.
 * @over_alloc_err: errno of malloc() of PTO_HOSTILE_OVER_MIB MiB more
 *	than the soft limit, 0 if it got them (freed at once), -1 if not
 *	tried (no limit).
 * @small_alloc_err: errno of malloc() of PTO_HOSTILE_SMALL_MIB MiB.
 * @raise_err: errno of setrlimit() raising the hard limit by 1 MiB, 0 if
 *	it could, -1 if not tried (no limit).
 * @nproc_soft: its RLIMIT_NPROC's soft limit (/proc/self/limits), -1 if
 *	none.
 * @nproc_hard: the hard limit, the same way.
 * @threads: how many threads it started before pthread_create() failed,
 *	at most PTO_HOSTILE_THREADS (all alive at once, then joined).
 * @threads_err: what that pthread_create() returned, 0 if none failed.
 * @flood_bytes: the flood's bytes that its standard error took (the rest
 *	found the pipe full: ptod did not read them).
 * @session: its session id (/proc/self/stat), -errno if unread: its own
 *	pid once the sandbox is a session of its own, without ptod's
 *	controlling terminal.
 * @tty_nr: its controlling terminal (/proc/self/stat; 0: none).
 * @shared_err: errno of mmap() of PTO_HOSTILE_OVER_MIB MiB of shared
 *	anonymous memory (which RLIMIT_DATA does not count), 0 if mapped
 *	(unmapped at once).
 * @wopen_err: errno of creating PTO_HOSTILE_SHM_FILE for writing (tmpfs:
 *	memory no limit of the sandbox counts), 0 if created.
 * @memfd_mib: MiB written into a memfd (PTO_HOSTILE_MEMFD), kept open.
 * @memfd_err: errno of the memfd_create() or write() that failed, 0 if
 *	all PTO_HOSTILE_MEMFD_MIB were written.
 * @cwd_root: 1 if its working directory is / (the same device and
 *	inode), 0 if it is another, -errno if either stat() failed.
 */
/* What the kernel writes to its standard error: a line of ptod's own? */
#define PTO_HOSTILE_FORGED \
	"ptod: error: client 1 (pid 1 uid 0): a line a kernel wrote"
/*
 * ... followed by terminal escapes (a C1 CSI in UTF-8, then a raw one),
 * a right-to-left override (U+202E), a line separator (U+2028) and a
 * UTF-8 letter; as ptod's log must show them (each of the others one
 * '?').
 */
#define PTO_HOSTILE_ESC		"\xc2\x9b" "31m" "\x9b" "32m" \
				"\xe2\x80\xae" "\xe2\x80\xa8" " caf\xc3\xa9"
#define PTO_HOSTILE_ESC_LOGGED	"?31m?32m?? caf\xc3\xa9"
/*
 * Then a line longer than ptod logs at once (its pieces are at most 256
 * bytes): PTO_HOSTILE_LONG, 'x' up to byte 255, a two-byte UTF-8
 * letter across bytes 256 and 257, then PTO_HOSTILE_LONG_END; ptod's
 * second piece must start with the whole letter.
 */
#define PTO_HOSTILE_LONG	"a line a kernel wrote, longer than a piece: "
#define PTO_HOSTILE_LONG_CUT	255
#define PTO_HOSTILE_LONG_END	"\xc3\xa9 is where it was cut"

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
	int32_t fork_err;
	int32_t fork_pid;
	int32_t clone_err;
	int32_t clone_pid;
	int32_t cparent_err;
	int32_t cparent_pid;
	int32_t thread_err;
	int32_t thread_ran;
	int32_t proc_uid;
	int32_t stdin_null;
	int32_t stdout_null;
	int32_t env_len;
	int32_t oom_adj;
	int32_t data_soft_mib;
	int32_t data_hard_mib;
	int32_t over_alloc_err;
	int32_t small_alloc_err;
	int32_t raise_err;
	int32_t nproc_soft;
	int32_t nproc_hard;
	int32_t threads;
	int32_t threads_err;
	int32_t flood_bytes;
	int32_t session;
	int32_t tty_nr;
	int32_t shared_err;
	int32_t wopen_err;
	int32_t memfd_mib;
	int32_t memfd_err;
	int32_t cwd_root;
};

#endif /* PTO_E2E_HOSTILE_H */
