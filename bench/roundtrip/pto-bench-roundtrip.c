// SPDX-License-Identifier: MIT
/*
 * pto-bench-roundtrip - notification latencies of /dev/ptoN.
 *
 * One process, two threads, two files: the main thread holds the AICPU
 * role, a second thread is an executor with one core attached. Three
 * measurements, N iterations each, in the same run:
 *
 *   park_kick_wake  the executor is asleep in PTO_IOC_CORE_WAIT (parked);
 *                   the AICPU stores DATA_MAIN_BASE, sees "parked" and
 *                   kicks. Time from the AICPU's store to the executor's
 *                   return from CORE_WAIT.
 *   irq             the AICPU is asleep in PTO_IOC_IRQ_WAIT; the executor
 *                   writes COND FIN and raises the interrupt. Time from the
 *                   executor's FIN store to the AICPU's return.
 *   spin            baseline: the executor spins on DATA_MAIN_BASE (no
 *                   system call); time from the AICPU's store to the
 *                   executor seeing it.
 *
 * Before each timed store the storing side waits until the other thread
 * is really asleep, off the CPU (pto-private/asleep.h), so that every
 * sample is a full sleep/wake. Timestamps are CLOCK_MONOTONIC from both
 * threads. Output, one line per measurement, stable and parseable:
 *
 *   roundtrip park_kick_wake n=2000 median_us=.. p99_us=.. min_us=.. max_us=.. mean_us=..
 *   roundtrip irq ...
 *   roundtrip spin ...
 *   roundtrip ratio park_kick_wake/spin median=.. p99=..
 *   roundtrip ratio irq/spin median=.. p99=..
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/pto.h>
#include <pto-private/asleep.h>
#include <pto-private/parse.h>
#include <pto-private/regs.h>

#include "pto-dev.h"

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define FENCE()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

#define WAIT_NS		(5 * 1000000000LL)	/* any single wait */

enum phase { PH_PARK, PH_IRQ, PH_SPIN, PH_DONE };

struct bench {
	const char *dev;
	unsigned int n;
	unsigned int warmup;
	unsigned int core;
	bool pin;
	bool yield_spin;	/* one CPU: spinning must yield */

	int aicpu_fd;
	int exec_fd;
	void *aregs;		/* AICPU's mapping of the register file */
	void *eregs;		/* executor's mapping */
	volatile struct pto_core_regs *acore;
	volatile struct pto_core_regs *ecore;
	volatile struct pto_regs_info *ainfo;
	volatile struct pto_regs_info *einfo;

	pid_t aicpu_tid;
	pid_t exec_tid;

	/* Main -> executor: which phase, DATA_MAIN_BASE at its start;
	 * executor -> main: its result.
	 */
	int phase;
	uint32_t dmb0;
	int exec_err;
	int64_t t_exec;		/* executor's timestamp of this iteration */
	uint32_t no_sleep;	/* park: DMB already changed, no CORE_WAIT */

	double *lat[3];
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cores_op(int fd, unsigned long req, unsigned int core)
{
	struct pto_cores c = { .size = sizeof(c) };

	c.mask[core / 64] = 1ULL << (core % 64);
	return pto_xioctl(fd, req, &c);
}

static int core_wait(int fd, uint32_t core, uint32_t last,
		     struct pto_core_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->size = sizeof(*w);
	w->core = core;
	w->last_dmb = last;
	w->timeout_ns = now_ns() + WAIT_NS;
	return pto_xioctl(fd, PTO_IOC_CORE_WAIT, w);
}

static int raise_irq(int fd, uint32_t core)
{
	struct pto_raise_irq r = { .size = sizeof(r), .core = core };

	return pto_xioctl(fd, PTO_IOC_RAISE_IRQ, &r);
}

static int irq_wait(int fd, uint32_t count, uint32_t *out)
{
	struct pto_irq_wait w = { .size = sizeof(w), .count = count,
				  .timeout_ns = now_ns() + WAIT_NS };
	int ret = pto_xioctl(fd, PTO_IOC_IRQ_WAIT, &w);

	if (!ret)
		*out = w.count;
	return ret;
}

/* The register file, as the AICPU (all of it writable) or an executor. */
static void *map_regs(int fd, bool executor)
{
	void *p = executor ?
		  pto_regs_map_executor(fd, PTO_REGS_SIZE, PTO_MMAP_REGS) :
		  mmap(NULL, PTO_REGS_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, PTO_MMAP_REGS);

	return p == MAP_FAILED ? NULL : p;
}

static volatile struct pto_core_regs *core_regs(void *regs, unsigned int c)
{
	return pto_regs_core(regs, c);
}

/* Wait until thread @tid sleeps; -ETIMEDOUT after 5 s. */
static int wait_asleep(pid_t tid)
{
	int64_t end = now_ns() + WAIT_NS;
	int r;

	while ((r = pto_thread_asleep(tid)) == 0) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		sched_yield();
	}
	return r < 0 ? r : 0;
}

static void cpu_relax(struct bench *b)
{
	if (b->yield_spin)
		sched_yield();
	else
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		__asm__ __volatile__("" ::: "memory");
#endif
}

static int pin_to(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ------------------------------------------------------------------------
 * Executor thread
 * ------------------------------------------------------------------------
 */
static int exec_park(struct bench *b, uint32_t total)
{
	volatile struct pto_core_regs *c = b->ecore;
	uint32_t last = b->dmb0;
	struct pto_core_wait w;
	uint32_t i, d;
	int ret;

	for (i = 0; i < total; i++) {
		for (;;) {
			STORE(c->parked, 1);
			FENCE();
			d = LOAD(c->data_main_base);
			if (d != last) {
				STORE(c->parked, 0);
				b->no_sleep++;
				break;
			}
			ret = core_wait(b->exec_fd, b->core, last, &w);
			if (ret)
				return ret;
			d = w.dmb;
			if (d != last)
				break;
			/* a stale latched kick: park again */
		}
		STORE(b->t_exec, now_ns());
		last = d;
		STORE(c->cond, PTO_COND_DONE(d - 1));
	}
	return 0;
}

static int exec_irq(struct bench *b, uint32_t total)
{
	volatile struct pto_core_regs *c = b->ecore;
	uint32_t last = b->dmb0;
	uint32_t i, d;
	int ret;

	for (i = 0; i < total; i++) {
		int64_t end = now_ns() + WAIT_NS;

		while ((d = LOAD(c->data_main_base)) == last) {
			if (now_ns() > end)
				return -ETIMEDOUT;
			cpu_relax(b);
		}
		last = d;
		/* The AICPU must be asleep in IRQ_WAIT for a full round. */
		ret = wait_asleep(b->aicpu_tid);
		if (ret)
			return ret;
		STORE(b->t_exec, now_ns());
		STORE(c->cond, PTO_COND_DONE(d - 1));
		FENCE();
		if (LOAD(b->einfo->aicpu_irq_en)) {
			ret = raise_irq(b->exec_fd, b->core);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int exec_spin(struct bench *b, uint32_t total)
{
	volatile struct pto_core_regs *c = b->ecore;
	uint32_t last = b->dmb0;
	uint32_t i, d;

	for (i = 0; i < total; i++) {
		int64_t end = now_ns() + WAIT_NS;
		unsigned int spins = 0;

		while ((d = LOAD(c->data_main_base)) == last) {
			if (!(++spins & 0xffff) && now_ns() > end)
				return -ETIMEDOUT;
			cpu_relax(b);
		}
		STORE(b->t_exec, now_ns());
		last = d;
		STORE(c->cond, PTO_COND_DONE(d - 1));
	}
	return 0;
}

static void *exec_main(void *arg)
{
	struct bench *b = arg;
	uint32_t total = b->n + b->warmup;
	int ret = 0, ph;

	if (b->pin)
		pin_to(1);
	b->exec_tid = gettid();
	for (;;) {
		while ((ph = LOAD(b->phase)) < 0)
			sched_yield();
		if (ph == PH_PARK)
			ret = exec_park(b, total);
		else if (ph == PH_IRQ)
			ret = exec_irq(b, total);
		else if (ph == PH_SPIN)
			ret = exec_spin(b, total);
		else
			break;
		STORE(b->exec_err, ret);
		STORE(b->phase, -1);	/* done with this phase */
		if (ret)
			break;
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * AICPU side (main thread)
 * ------------------------------------------------------------------------
 */

/*
 * Wait for the executor's COND FIN of task id. This wait is never timed,
 * so after a short spin it sleeps: under TCG a spinning vCPU takes a host
 * CPU away from the vCPU whose wakeup is being measured.
 */
static int wait_fin(struct bench *b, uint32_t id)
{
	const struct timespec nap = { 0, 50000 };
	int64_t start = now_ns(), end = start + WAIT_NS;

	while (LOAD(b->acore->cond) != PTO_COND_DONE(id)) {
		int64_t t = now_ns();

		if (t > end)
			return -ETIMEDOUT;
		if (LOAD(b->exec_err))
			return LOAD(b->exec_err);
		if (t - start < 20000)
			cpu_relax(b);
		else
			nanosleep(&nap, NULL);
	}
	return 0;
}

static void start_phase(struct bench *b, int ph)
{
	b->dmb0 = LOAD(b->acore->data_main_base);
	STORE(b->exec_err, 0);
	STORE(b->phase, ph);
}

static int end_phase(struct bench *b)
{
	int64_t end = now_ns() + WAIT_NS;

	while (LOAD(b->phase) >= 0) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		sched_yield();
	}
	return LOAD(b->exec_err);
}

/* The DATA_MAIN_BASE after @dmb (task id + 1): never EXIT or IDLE. */
static uint32_t next_dmb(uint32_t dmb)
{
	dmb++;
	return dmb == PTO_DMB_EXIT || dmb == PTO_DMB_IDLE ? 1 : dmb;
}

/*
 * Wait for the executor's FIN of @dmb, then keep iteration @i's latency
 * if it is past the warm-up: from the AICPU's store at @t to the
 * executor's timestamp, or (irq) from that timestamp to the AICPU's
 * wake-up at @t.
 */
static int finish(struct bench *b, int ph, uint32_t i, uint32_t dmb,
		  int64_t t)
{
	int64_t t_exec;
	int ret = wait_fin(b, dmb - 1);

	if (ret || i < b->warmup)
		return ret;
	t_exec = LOAD(b->t_exec);
	b->lat[ph][i - b->warmup] = (ph == PH_IRQ ? t - t_exec :
						    t_exec - t) / 1000.0;
	return 0;
}

static int run_park(struct bench *b)
{
	volatile struct pto_core_regs *c = b->acore;
	uint32_t total = b->n + b->warmup, i, dmb = LOAD(c->data_main_base);
	int ret;

	start_phase(b, PH_PARK);
	for (i = 0; i < total; i++) {
		int64_t t0;

		/* The executor is parked and asleep in the device. */
		ret = wait_asleep(b->exec_tid);
		if (ret)
			return ret;
		dmb = next_dmb(dmb);
		t0 = now_ns();
		STORE(c->data_main_base, dmb);
		FENCE();
		if (LOAD(c->parked)) {
			ret = cores_op(b->aicpu_fd, PTO_IOC_KICK, b->core);
			if (ret)
				return ret;
		}
		ret = finish(b, PH_PARK, i, dmb, t0);
		if (ret)
			return ret;
	}
	return end_phase(b);
}

static int run_irq(struct bench *b)
{
	volatile struct pto_core_regs *c = b->acore;
	uint32_t total = b->n + b->warmup, i, dmb = LOAD(c->data_main_base);
	uint32_t seen = LOAD(b->ainfo->irq_count), cnt;
	int ret;

	STORE(b->ainfo->aicpu_irq_en, 1);
	start_phase(b, PH_IRQ);
	for (i = 0; i < total; i++) {
		int64_t t1;

		dmb = next_dmb(dmb);
		STORE(c->data_main_base, dmb);
		ret = irq_wait(b->aicpu_fd, seen, &cnt);
		t1 = now_ns();
		if (ret)
			return ret;
		seen = cnt;
		ret = finish(b, PH_IRQ, i, dmb, t1);
		if (ret)
			return ret;
	}
	STORE(b->ainfo->aicpu_irq_en, 0);
	return end_phase(b);
}

static int run_spin(struct bench *b)
{
	volatile struct pto_core_regs *c = b->acore;
	uint32_t total = b->n + b->warmup, i, dmb = LOAD(c->data_main_base);
	int64_t t0;
	int ret;

	start_phase(b, PH_SPIN);
	for (i = 0; i < total; i++) {
		dmb = next_dmb(dmb);
		t0 = now_ns();
		STORE(c->data_main_base, dmb);
		ret = finish(b, PH_SPIN, i, dmb, t0);
		if (ret)
			return ret;
	}
	return end_phase(b);
}

/* ------------------------------------------------------------------------
 * Statistics and output
 * ------------------------------------------------------------------------
 */
struct stats {
	double median, p99, min, max, mean;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void stats_of(double *v, unsigned int n, struct stats *s)
{
	unsigned int i, k;
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	k = (unsigned int)((99ULL * n + 99) / 100);	/* ceil(0.99 n) */
	s->p99 = v[(k ? k : 1) - 1];
	s->min = v[0];
	s->max = v[n - 1];
	s->mean = sum / n;
}

static void print_stats(const char *name, unsigned int n,
			const struct stats *s)
{
	printf("roundtrip %s n=%u median_us=%.2f p99_us=%.2f min_us=%.2f "
	       "max_us=%.2f mean_us=%.2f\n", name, n, s->median, s->p99,
	       s->min, s->max, s->mean);
}

/* The most iterations of -n and of -w: their sum stays in 32 bits. */
#define ROUNDTRIP_MAX_N	10000000u

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pto-bench-roundtrip [-d DEV] [-n N] [-w WARMUP] [-c CORE] [-P]\n"
		"  -d DEV     device (default /dev/pto0)\n"
		"  -n N       iterations per measurement (default 2000, at most %u)\n"
		"  -w WARMUP  untimed iterations first (default 50, at most %u)\n"
		"  -c CORE    core the executor attaches (default 0)\n"
		"  -P         do not pin the two threads to CPUs 0 and 1\n",
		ROUNDTRIP_MAX_N, ROUNDTRIP_MAX_N);
}

static int setup(struct bench *b)
{
	int ret, i;

	b->aicpu_fd = pto_open_dev(b->dev);
	if (b->aicpu_fd < 0)
		return b->aicpu_fd;
	b->exec_fd = pto_open_dev(b->dev);
	if (b->exec_fd < 0)
		return b->exec_fd;
	ret = pto_set_role(b->aicpu_fd, PTO_ROLE_AICPU);
	if (ret) {
		fprintf(stderr, "pto-bench-roundtrip: AICPU role: %s%s\n",
			strerror(-ret), ret == -EBUSY ?
			" (is ptod running?)" : "");
		return ret;
	}
	ret = pto_set_role(b->exec_fd, PTO_ROLE_EXECUTOR);
	if (ret)
		return ret;
	ret = cores_op(b->exec_fd, PTO_IOC_CORE_ATTACH, b->core);
	if (ret) {
		fprintf(stderr, "pto-bench-roundtrip: attach core %u: %s\n",
			b->core, strerror(-ret));
		return ret;
	}
	b->aregs = map_regs(b->aicpu_fd, false);
	b->eregs = map_regs(b->exec_fd, true);
	if (!b->aregs || !b->eregs)
		return -errno;
	b->acore = core_regs(b->aregs, b->core);
	b->ecore = core_regs(b->eregs, b->core);
	b->ainfo = (volatile struct pto_regs_info *)
		((char *)b->aregs + PTO_REGS_INFO_OFFSET);
	b->einfo = (volatile struct pto_regs_info *)
		((char *)b->eregs + PTO_REGS_INFO_OFFSET);
	for (i = 0; i < 3; i++) {
		b->lat[i] = calloc(b->n, sizeof(double));
		if (!b->lat[i])
			return -ENOMEM;
	}
	return 0;
}

/* Options into @b: 0, or -1 and the exit status in *@exit_code. */
static int parse_opts(int argc, char **argv, struct bench *b, int *exit_code)
{
	uint64_t v;
	int opt;

	while ((opt = getopt(argc, argv, "d:n:w:c:Ph")) != -1) {
		switch (opt) {
		case 'd':
			b->dev = optarg;
			break;
		case 'n':
		case 'w':
		case 'c':
			if (pto_parse_u64_all(optarg, 10, opt == 'c' ?
					      PTO_MAX_CORES - 1 : ROUNDTRIP_MAX_N,
					      &v)) {
				fprintf(stderr, "pto-bench-roundtrip: bad value for -%c: '%s'\n",
					opt, optarg);
				*exit_code = 2;
				return -1;
			}
			*(opt == 'n' ? &b->n : opt == 'w' ? &b->warmup :
			  &b->core) = (unsigned int)v;
			break;
		case 'P':
			b->pin = false;
			break;
		case 'h':
			usage(stdout);
			*exit_code = 0;
			return -1;
		default:
			usage(stderr);
			*exit_code = 2;
			return -1;
		}
	}
	if (!b->n) {
		usage(stderr);
		*exit_code = 2;
		return -1;
	}
	return 0;
}

/* The executor thread, and both threads' /proc stat files. 0 or -1. */
static int start_exec(struct bench *b, pthread_t *th)
{
	int ret;

	if (b->pin)
		pin_to(0);
	b->aicpu_tid = gettid();
	ret = pthread_create(th, NULL, exec_main, b);
	if (ret) {
		fprintf(stderr, "pto-bench-roundtrip: pthread_create: %s\n",
			strerror(ret));
		return -1;
	}
	while (!LOAD(b->exec_tid))
		sched_yield();
	return 0;
}

/* The three measurements, in this order. 0 or negative errno. */
static int run_phases(struct bench *b)
{
	int ret = run_park(b);

	if (!ret)
		ret = run_irq(b);
	if (!ret)
		ret = run_spin(b);
	return ret;
}

static void print_results(struct bench *b)
{
	static const char *const names[3] = { "park_kick_wake", "irq",
					      "spin" };
	struct stats s[3];
	int i;

	for (i = 0; i < 3; i++) {
		stats_of(b->lat[i], b->n, &s[i]);
		print_stats(names[i], b->n, &s[i]);
	}
	printf("roundtrip ratio park_kick_wake/spin median=%.1f p99=%.1f\n",
	       s[PH_PARK].median / s[PH_SPIN].median,
	       s[PH_PARK].p99 / s[PH_SPIN].p99);
	printf("roundtrip ratio irq/spin median=%.1f p99=%.1f\n",
	       s[PH_IRQ].median / s[PH_SPIN].median,
	       s[PH_IRQ].p99 / s[PH_SPIN].p99);
	printf("roundtrip park no_sleep=%u kicks=%u parks=%u\n", b->no_sleep,
	       LOAD(b->acore->kick_count), LOAD(b->acore->park_count));
}

int main(int argc, char **argv)
{
	static struct bench b = { .dev = "/dev/pto0", .n = 2000, .warmup = 50,
				  .pin = true, .phase = -1 };
	struct utsname u;
	pthread_t th;
	long ncpu;
	int ret;

	if (parse_opts(argc, argv, &b, &ret))
		return ret;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 2) {
		b.pin = false;
		b.yield_spin = true;
	}

	ret = setup(&b);
	if (ret) {
		fprintf(stderr, "pto-bench-roundtrip: %s: %s\n", b.dev,
			strerror(-ret));
		return 1;
	}
	if (start_exec(&b, &th))
		return 1;

	uname(&u);
	printf("roundtrip config dev=%s core=%u n=%u warmup=%u cpus=%ld "
	       "pinned=%d kernel=%s\n", b.dev, b.core, b.n, b.warmup, ncpu,
	       b.pin, u.release);
	fflush(stdout);

	ret = run_phases(&b);
	if (ret) {
		fprintf(stderr, "pto-bench-roundtrip: %s\n", strerror(-ret));
		return 1;
	}
	STORE(b.phase, PH_DONE);
	pthread_join(th, NULL);
	print_results(&b);
	return 0;
}
