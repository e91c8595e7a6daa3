// SPDX-License-Identifier: GPL-2.0
/*
 * pto_hold: helper of pto_module.sh. Opens the device, takes a role, maps
 * the part of the register file an executor writes (executor) or a
 * buffer (client), CLOSES the file descriptor, prints "ready" and keeps
 * the mapping until stdin reaches EOF. The mapping alone must keep the file, and so the module, alive.
 * With quota: takes the AICPU role, gives uid PTO_HOLD_QUOTA_UID a GM
 * quota of its own and closes the file: the quota outlives it, and the
 * module must free it at unload (kmemleak on the debug kernel).
 *
 *   pto_hold executor|client|quota
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <linux/pto.h>

#define PTO_HOLD_QUOTA_UID	54321

/* AICPU: an own quota that outlives the file. 0 or 1. */
static int hold_quota(int fd)
{
	struct pto_set_role r = { .size = sizeof(r), .role = PTO_ROLE_AICPU };
	struct pto_gm_quota q = { .size = sizeof(q),
				  .flags = PTO_GM_QUOTA_SET | PTO_GM_QUOTA_UID,
				  .uid = PTO_HOLD_QUOTA_UID, .bytes = 1 << 20 };

	if (ioctl(fd, PTO_IOC_SET_ROLE, &r) ||
	    ioctl(fd, PTO_IOC_GM_QUOTA, &q)) {
		fprintf(stderr, "pto_hold: quota: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	printf("ready\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("PTO_DEV") ? getenv("PTO_DEV") : "/dev/pto0";
	struct pto_set_role r = { .size = sizeof(r) };
	struct pto_gm_alloc a = { .size = sizeof(a), .len = 4096 };
	volatile unsigned char *p;
	size_t len = PTO_REGS_SIZE - PTO_REGS_EXEC_WRITE_OFFSET;
	off_t off = PTO_MMAP_REGS + PTO_REGS_EXEC_WRITE_OFFSET;
	char c;
	int fd;

	if (argc != 2 || (strcmp(argv[1], "executor") &&
			  strcmp(argv[1], "client") &&
			  strcmp(argv[1], "quota"))) {
		fprintf(stderr, "usage: pto_hold executor|client|quota\n");
		return 2;
	}
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "pto_hold: %s: %s\n", dev, strerror(errno));
		return 1;
	}
	if (argv[1][0] == 'q')
		return hold_quota(fd);
	r.role = argv[1][0] == 'e' ? PTO_ROLE_EXECUTOR : PTO_ROLE_CLIENT;
	if (ioctl(fd, PTO_IOC_SET_ROLE, &r)) {
		fprintf(stderr, "pto_hold: SET_ROLE: %s\n", strerror(errno));
		return 1;
	}
	if (r.role == PTO_ROLE_CLIENT) {
		if (ioctl(fd, PTO_IOC_GM_ALLOC, &a)) {
			fprintf(stderr, "pto_hold: GM_ALLOC: %s\n",
				strerror(errno));
			return 1;
		}
		len = 4096;
		off = (off_t)a.mmap_offset;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pto_hold: mmap: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	p[0] = p[0];	/* fault it in */
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	munmap((void *)p, len);
	return 0;
}
