// SPDX-License-Identifier: MIT
/*
 * sbx_seccomp.c - the sandbox's seccomp filter (see sbx_seccomp.h)
 *
 * A classic BPF program, no library: check the architecture, then
 * compare the system call number with each allowed one. ioctl is allowed
 * with one request only, PTO_IOC_GM_LOOKUP (the buffers of the client's
 * own file); mmap of a buffer needs no ioctl.
 *
 * openat is allowed for reading only (no O_WRONLY, O_RDWR, O_CREAT nor
 * O_TRUNC) because dlopen() of /proc/self/fd/N needs it (and the dynamic
 * loader may open the kernel's libraries): what a kernel reads is limited
 * by the client's own uid and gid, the same as any program the client
 * runs. A file it could write might be in tmpfs: memory that the
 * sandbox's RLIMIT_DATA (ptod -M) does not count, and that outlives it.
 * So is shared anonymous memory: mmap() with MAP_SHARED (or
 * MAP_SHARED_VALIDATE) and MAP_ANONYMOUS together is refused; a buffer
 * of the client's is a shared mapping of the client's file, not
 * anonymous. memfd_create() stays (the kernel loader writes each kernel
 * into one): memory a kernel holds in memfds no rlimit bounds; the
 * sandbox's memory cgroup does, where ptod could make one (ptod_cgroup.c,
 * runtime.rst, "Sandboxes").
 *
 * Threads yes, processes no: clone is allowed only with CLONE_THREAD,
 * CLONE_VM and CLONE_SIGHAND all set and no namespace flag nor
 * CLONE_PARENT (what pthread_create() passes), so that everything a
 * kernel starts dies with the sandbox; a process of its own would outlive
 * it (PR_SET_PDEATHSIG is not inherited), holding the client's file. The
 * filter cannot read clone3's argument, a struct in memory: clone3 fails
 * with ENOSYS, on which glibc falls back to clone. fork and vfork are not
 * allowed (EPERM, as every call the filter does not allow).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/pto.h>
#include <linux/seccomp.h>

#include <pto-private/compiler.h>

#include "sbx_seccomp.h"

#if defined(__x86_64__)
#define SBX_AUDIT_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SBX_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#else
#error "pto-sandbox: no seccomp architecture for this target"
#endif

static const int sbx_allowed[] = {
	SYS_read, SYS_write, SYS_close, SYS_lseek, SYS_pread64,
	SYS_fstat, SYS_newfstatat,
	SYS_munmap, SYS_mprotect, SYS_mremap, SYS_madvise, SYS_brk,
	SYS_futex, SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep,
	SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_sigaltstack,
	SYS_exit, SYS_exit_group,
	SYS_set_robust_list, SYS_rseq, SYS_gettid, SYS_getpid, SYS_sched_yield,
	SYS_getrandom, SYS_memfd_create,
	SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid,
};

/* The clone flags of a thread: all of them ... */
#define SBX_CLONE_NEED	(CLONE_THREAD | CLONE_VM | CLONE_SIGHAND)
/* ... and none of these */
#define SBX_CLONE_DENY	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | \
			 CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | \
			 CLONE_NEWCGROUP | CLONE_PARENT)

/* mmap: shared and anonymous together are refused */
#define SBX_MMAP_DENY	(MAP_SHARED | MAP_ANONYMOUS)
/* openat: for reading only */
#define SBX_OPEN_DENY	(O_ACCMODE | O_CREAT | O_TRUNC)

#define SBX_ARCH_INSNS	3	/* load arch, compare, kill */
#define SBX_IOCTL_INSNS	5	/* compare nr, load cmd, compare, allow, deny */
#define SBX_FLAGS_INSNS	6	/* sbx_flags_rule() */
#define SBX_CLONE3_INSNS 2	/* compare nr, ENOSYS */
#define SBX_TAIL_INSNS	2	/* allow, deny */
#define SBX_INSNS	(SBX_ARCH_INSNS + 1 + SBX_IOCTL_INSNS + \
			 3 * SBX_FLAGS_INSNS + SBX_CLONE3_INSNS + \
			 PTO_ARRAY_SIZE(sbx_allowed) + SBX_TAIL_INSNS)

/*
 * A rule on the flags of system call @nr, the low 32 bits of args[@arg]
 * (the kernel ignores the rest): masked with @mask, equal to @eq, the
 * call gets @ret_eq, else @ret_ne. The accumulator holds the call's
 * number before; another call jumps over the rule with it still there.
 * Writes SBX_FLAGS_INSNS instructions at @f.
 */
static void sbx_flags_rule(struct sock_filter *f, int nr, unsigned int arg,
			   unsigned int mask, unsigned int eq,
			   unsigned int ret_eq, unsigned int ret_ne)
{
	f[0] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		(unsigned int)nr, 0, SBX_FLAGS_INSNS - 1);
	f[1] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, args[0]) + arg * sizeof(__u64));
	f[2] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask);
	f[3] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, eq,
		0, 1);
	f[4] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret_eq);
	f[5] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret_ne);
}

int sbx_seccomp_install(void)
{
	struct sock_filter f[SBX_INSNS];
	struct sock_fprog prog = { .filter = f };
	unsigned int n = 0, i, nr_allowed = PTO_ARRAY_SIZE(sbx_allowed);

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		SBX_AUDIT_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, nr));
	/* ioctl: only GM_LOOKUP (the low 32 bits of the request) */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		SYS_ioctl, 0, 4);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, args[1]));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		PTO_IOC_GM_LOOKUP, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ERRNO | EPERM);
	/* clone: a thread only */
	sbx_flags_rule(&f[n], SYS_clone, 0, SBX_CLONE_NEED | SBX_CLONE_DENY,
		       SBX_CLONE_NEED, SECCOMP_RET_ALLOW,
		       SECCOMP_RET_ERRNO | EPERM);
	n += SBX_FLAGS_INSNS;
	/* clone3: its flags are out of the filter's reach */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		SYS_clone3, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ERRNO | ENOSYS);
	/* mmap: not shared and anonymous at once */
	sbx_flags_rule(&f[n], SYS_mmap, 3, SBX_MMAP_DENY, SBX_MMAP_DENY,
		       SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ALLOW);
	n += SBX_FLAGS_INSNS;
	/* openat: for reading only */
	sbx_flags_rule(&f[n], SYS_openat, 2, SBX_OPEN_DENY, 0,
		       SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM);
	n += SBX_FLAGS_INSNS;
	/* x32 numbers on x86_64 differ from every number below: denied */
	for (i = 0; i < nr_allowed; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			(unsigned int)sbx_allowed[i],
			(unsigned char)(nr_allowed - i), 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ERRNO | EPERM);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}
