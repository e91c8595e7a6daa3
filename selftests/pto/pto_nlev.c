// SPDX-License-Identifier: GPL-2.0
/*
 * pto_nlev: helper of pto_netlink.sh. Does what makes the device send
 * one kind of netlink event, then exits.
 *
 *   pto_nlev attach N   executor: attach cores 0..N-1 (exec-attach), exit
 *                       without detaching them (core-fault, exec-gone)
 *   pto_nlev aicpu      take the AICPU role and exit (aicpu-gone)
 *   pto_nlev aicpu-hold take the AICPU role, print "held", and keep it
 *                       until standard input ends (then aicpu-gone)
 *   pto_nlev hws        PTO_IOC_HWS_CONFIG: write the configuration in
 *                       force back (hws-changed)
 *   pto_nlev aicpu-write
 *                       take the AICPU role, print "held", and until
 *                       standard input ends write backfill_margin through
 *                       the mapping, 1, 2, 3..., under the sequence
 *                       count; before each write, check that the value
 *                       is still its last one (no other writer touches
 *                       that register). Prints "writes N lost M"; exit
 *                       status 1 if M > 0.
 *   pto_nlev aicpu-odd  take the AICPU role, make the HWS sequence count
 *                       odd (a write of its own under way), print
 *                       "held", and keep it odd until standard input
 *                       ends; then end the write (an even count)
 *
 * PTO_DEV: the device (default /dev/pto0). Prints its pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/pto.h>

static int fail(const char *what)
{
	fprintf(stderr, "pto_nlev: %s: %s\n", what, strerror(errno));
	return 1;
}

static int set_role(int fd, __u32 role)
{
	struct pto_set_role r = { .size = sizeof(r), .role = role };

	return ioctl(fd, PTO_IOC_SET_ROLE, &r);
}

static int attach(int fd, unsigned int n)
{
	struct pto_cores c = { .size = sizeof(c) };
	unsigned int i;

	if (set_role(fd, PTO_ROLE_EXECUTOR))
		return fail("SET_ROLE executor");
	for (i = 0; i < n && i < PTO_MAX_CORES; i++)
		c.mask[i / 64] |= 1ULL << (i % 64);
	if (ioctl(fd, PTO_IOC_CORE_ATTACH, &c))
		return fail("CORE_ATTACH");
	return 0;	/* exit with the cores attached: they die */
}

static int hws(int fd)
{
	struct pto_hws_config h = { .size = sizeof(h) };

	if (ioctl(fd, PTO_IOC_HWS_CONFIG, &h))
		return fail("HWS_CONFIG read");
	h.flags = PTO_HWS_CONFIG_SET;
	if (ioctl(fd, PTO_IOC_HWS_CONFIG, &h))
		return fail("HWS_CONFIG set");
	return 0;
}

static int aicpu_hold(int fd)
{
	char buf[64];

	if (set_role(fd, PTO_ROLE_AICPU))
		return fail("SET_ROLE aicpu");
	printf("held\n");
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	return 0;
}

/* Standard input has ended (or failed). */
static int stdin_done(void)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char buf[64];

	if (poll(&p, 1, 0) <= 0)
		return 0;
	return read(STDIN_FILENO, buf, sizeof(buf)) <= 0;
}

/* Take the AICPU role and map the HWS registers writable: NULL, said, if not. */
static struct pto_regs_hws *aicpu_hws(int fd)
{
	char *regs;

	if (set_role(fd, PTO_ROLE_AICPU)) {
		fail("SET_ROLE aicpu");
		return NULL;
	}
	regs = mmap(NULL, PTO_REGS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, PTO_MMAP_REGS);
	if (regs == MAP_FAILED) {
		fail("mmap registers");
		return NULL;
	}
	return (struct pto_regs_hws *)(regs + PTO_REGS_HWS_OFFSET);
}

static int aicpu_write(int fd)
{
	const struct timespec gap = { .tv_nsec = 20 * 1000 };
	struct pto_regs_hws *h;
	unsigned long writes = 0, lost = 0;
	__u32 last, s;

	h = aicpu_hws(fd);
	if (!h)
		return 1;
	last = __atomic_load_n(&h->cfg.backfill_margin, __ATOMIC_ACQUIRE);
	printf("held\n");
	fflush(stdout);
	while (!stdin_done()) {
		s = __atomic_load_n(&h->cfg_seq, __ATOMIC_ACQUIRE);
		if ((s & 1) ||
		    !__atomic_compare_exchange_n(&h->cfg_seq, &s, s + 1, false,
						 __ATOMIC_SEQ_CST,
						 __ATOMIC_RELAXED)) {
			nanosleep(&gap, NULL);
			continue;
		}
		if (__atomic_load_n(&h->cfg.backfill_margin,
				    __ATOMIC_RELAXED) != last)
			lost++;
		last = (__u32)++writes;
		__atomic_store_n(&h->cfg.backfill_margin, last,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&h->cfg_seq, s + 2, __ATOMIC_RELEASE);
		nanosleep(&gap, NULL);
	}
	printf("writes %lu lost %lu\n", writes, lost);
	return lost ? 1 : 0;
}

static int aicpu_odd(int fd)
{
	struct pto_regs_hws *h = aicpu_hws(fd);
	char buf[64];
	__u32 s;

	if (!h)
		return 1;
	do {
		s = __atomic_load_n(&h->cfg_seq, __ATOMIC_ACQUIRE) & ~1U;
	} while (!__atomic_compare_exchange_n(&h->cfg_seq, &s, s + 1, false,
					      __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	printf("held\n");
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	__atomic_store_n(&h->cfg_seq, s + 2, __ATOMIC_RELEASE);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("PTO_DEV") ? getenv("PTO_DEV") : "/dev/pto0";
	int fd;

	if (argc < 2 || (!strcmp(argv[1], "attach") && argc != 3)) {
		fprintf(stderr, "usage: pto_nlev attach N | aicpu | aicpu-hold | aicpu-write | aicpu-odd | hws\n");
		return 2;
	}
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail(dev);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	if (!strcmp(argv[1], "attach"))
		return attach(fd, strtoul(argv[2], NULL, 0));
	if (!strcmp(argv[1], "aicpu"))
		return set_role(fd, PTO_ROLE_AICPU) ? fail("SET_ROLE aicpu") : 0;
	if (!strcmp(argv[1], "aicpu-hold"))
		return aicpu_hold(fd);
	if (!strcmp(argv[1], "aicpu-write"))
		return aicpu_write(fd);
	if (!strcmp(argv[1], "aicpu-odd"))
		return aicpu_odd(fd);
	if (!strcmp(argv[1], "hws"))
		return hws(fd);
	fprintf(stderr, "pto_nlev: unknown action %s\n", argv[1]);
	return 2;
}
