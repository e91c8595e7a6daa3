// SPDX-License-Identifier: MIT
/*
 * sbx_seccomp.h - the system calls a sandbox (pto-sandbox) may make
 */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

/*
 * Set no_new_privs and install the sandbox's seccomp filter on the
 * calling thread, inherited by every thread it starts: what kernels and
 * the executor need (memory, futexes, clocks, threads but no process,
 * loading a kernel from a memfd, the device's GM_LOOKUP ioctl); clone3
 * fails with ENOSYS (glibc then uses clone), every other system call
 * with EPERM, and a call of another architecture kills the process.
 * 0 or -errno.
 */
int sbx_seccomp_install(void);

#endif /* SBX_SECCOMP_H */
