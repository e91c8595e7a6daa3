/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pto_fuzz.h - the engine the fuzzers share (selftests/pto/pto_fuzz.c on
 * the device, selftests/e2e/pto_sockfuzz.c on ptod's socket): a seeded
 * PRNG, worker processes that run random operations until a shared count
 * reaches its target, a supervisor that SIGKILLs them at random moments
 * and starts new ones, a watchdog for hangs, per-operation tallies of the
 * results and a list of findings.
 *
 * Reproducibility: every worker process is a "generation" g (0, 1, 2, ...
 * in the order they are started) whose PRNG is seeded with
 * pto_rng_seed(seed, g), so its sequence of operations depends on the seed
 * only. What the other workers do meanwhile, and when the supervisor
 * kills, depends on timing; with one process and no kills
 * (<PREFIX>_PROCS=1 <PREFIX>_KILL_MS=0) a seed repeats a run exactly.
 *
 * Environment (PREFIX is the fuzzer's, e.g. PTO_FUZZ):
 *   PREFIX_SEED      seed (decimal or 0x hex; default: from the clock)
 *   PREFIX_OPS       operations in all (default: the fuzzer's)
 *   PREFIX_PROCS     worker processes at a time (1 .. PTO_FZ_MAX_PROCS)
 *   PREFIX_KILL_MS   mean time between two SIGKILLs (0: none)
 *
 * A finding is anything the fuzzer treats as a failure: a worker dead of a
 * signal it was not sent (SIGSEGV, SIGBUS...), a hang, a violated
 * invariant the fuzzer checks itself.
 */
#ifndef PTO_FUZZ_H
#define PTO_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define PTO_FZ_MAX_PROCS	16
#define PTO_FZ_MAX_OPS		32
#define PTO_FZ_NERR		134	/* errno buckets; larger ones: the last */
#define PTO_FZ_MAX_FINDINGS	16
#define PTO_FZ_FINDING_LEN	320
/* A worker that does not finish an operation within this is hung. */
#define PTO_FZ_HANG_MS		20000

/* ---- PRNG: splitmix64 ---------------------------------------------------- */

struct pto_rng {
	uint64_t s;
};

static inline uint64_t pto_rng_next(struct pto_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 0 .. n - 1 (0 if n is 0) */
static inline uint64_t pto_rng_below(struct pto_rng *r, uint64_t n)
{
	return n ? pto_rng_next(r) % n : 0;
}

/* true with probability pct / 100 */
static inline bool pto_rng_pct(struct pto_rng *r, unsigned int pct)
{
	return pto_rng_below(r, 100) < pct;
}

/* The seed of stream @stream of a run seeded @seed. */
static inline uint64_t pto_rng_seed(uint64_t seed, uint64_t stream)
{
	struct pto_rng r = { seed ^ (stream * 0xd1b54a32d192ed03ULL) };

	return pto_rng_next(&r);
}

/* Pick an index from @n weights. */
static inline unsigned int pto_rng_weighted(struct pto_rng *r,
					    const unsigned int *w,
					    unsigned int n)
{
	unsigned int i, total = 0;
	uint64_t x;

	for (i = 0; i < n; i++)
		total += w[i];
	x = pto_rng_below(r, total);
	for (i = 0; i < n; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return n - 1;
}

/* ---- shared state --------------------------------------------------------- */

/**
 * struct pto_fz_slot - one worker process of the pool.
 * @pid: the worker, 0 if the slot is free.
 * @gen: its generation (seeds its PRNG).
 * @killed: the supervisor sent it SIGKILL.
 * @hold: the worker checks something that takes time: no random kill now.
 * @ops: operations it completed.
 * @beat_ns: CLOCK_MONOTONIC when it started its current operation.
 * @op: that operation, @arg: what the fuzzer recorded about it.
 * @sig, @addr: a fatal signal the worker caught (and si_addr) before dying.
 */
struct pto_fz_slot {
	pid_t pid;
	uint32_t gen;
	uint32_t killed;
	uint32_t hold;
	uint64_t ops;
	int64_t beat_ns;
	uint32_t op;
	uint64_t arg[4];
	int sig;
	uint64_t addr;
};

/* Outcomes of one operation: successes and each errno. */
struct pto_fz_tally {
	uint64_t calls;
	uint64_t ok;
	uint64_t err[PTO_FZ_NERR];
};

/*
 * Shared (MAP_SHARED anonymous) by the supervisor and the workers. The
 * fuzzer's own shared state may follow it (@priv, PTO_FZ_PRIV bytes).
 */
#define PTO_FZ_PRIV		(64 * 1024)

struct pto_fz {
	const char *prefix;
	uint64_t seed;
	uint64_t target;		/* operations in all */
	uint32_t nr_procs;
	uint32_t kill_ms;
	uint32_t nr_ops;
	const char *const *op_names;

	uint64_t total;			/* operations done (atomic) */
	uint32_t stop;			/* workers: finish now */
	uint32_t nr_findings;		/* atomic; the first are kept */
	char finding[PTO_FZ_MAX_FINDINGS][PTO_FZ_FINDING_LEN];

	/* supervisor's statistics */
	uint32_t gens;			/* workers started */
	uint32_t kills;			/* SIGKILLs sent */
	uint32_t exits;			/* workers that finished */
	uint32_t orphans;		/* other descendants reaped */
	int64_t t0_ns, t1_ns;

	struct pto_fz_slot slot[PTO_FZ_MAX_PROCS];
	struct pto_fz_tally tally[PTO_FZ_MAX_OPS];
	_Alignas(64) unsigned char priv[PTO_FZ_PRIV];
};

static inline int64_t pto_fz_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline uint64_t pto_fz_env(const char *prefix, const char *name,
				  uint64_t def)
{
	char var[64];
	const char *s;
	char *end;
	uint64_t v;

	snprintf(var, sizeof(var), "%s_%s", prefix, name);
	s = getenv(var);
	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	return errno || *end ? def : v;
}

/*
 * The shared state, in memory every process of the run sees; NULL if mmap
 * fails. @def_*: defaults of the environment variables above.
 */
static inline struct pto_fz *pto_fz_new(const char *prefix,
					const char *const *op_names,
					unsigned int nr_ops, uint64_t def_ops,
					unsigned int def_procs,
					unsigned int def_kill_ms)
{
	struct pto_fz *fz;
	uint64_t procs;

	if (nr_ops > PTO_FZ_MAX_OPS)
		return NULL;
	fz = mmap(NULL, sizeof(*fz), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fz == MAP_FAILED)
		return NULL;
	fz->prefix = prefix;
	fz->op_names = op_names;
	fz->nr_ops = nr_ops;
	fz->seed = pto_fz_env(prefix, "SEED",
			      (uint64_t)pto_fz_now_ns() ^ (uint64_t)getpid() << 32);
	fz->target = pto_fz_env(prefix, "OPS", def_ops);
	procs = pto_fz_env(prefix, "PROCS", def_procs);
	fz->nr_procs = procs < 1 ? 1 : procs > PTO_FZ_MAX_PROCS ?
		       PTO_FZ_MAX_PROCS : (uint32_t)procs;
	fz->kill_ms = (uint32_t)pto_fz_env(prefix, "KILL_MS", def_kill_ms);
	return fz;
}

static inline void pto_fz_free(struct pto_fz *fz)
{
	munmap(fz, sizeof(*fz));
}

/* Record a finding (any process). */
__attribute__((format(printf, 2, 3)))
static inline void pto_fz_finding(struct pto_fz *fz, const char *fmt, ...)
{
	uint32_t i = __atomic_fetch_add(&fz->nr_findings, 1, __ATOMIC_RELAXED);
	va_list ap;

	if (i >= PTO_FZ_MAX_FINDINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(fz->finding[i], PTO_FZ_FINDING_LEN, fmt, ap);
	va_end(ap);
}

/* ---- worker side -------------------------------------------------------- */

static struct pto_fz_slot *pto_fz_self;	/* the worker's slot */

/* A fatal signal: note it in the slot, then die of it. */
static inline void pto_fz_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (pto_fz_self) {
		pto_fz_self->addr = (uint64_t)(uintptr_t)si->si_addr;
		__atomic_store_n(&pto_fz_self->sig, sig, __ATOMIC_RELEASE);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Operation @op starts; @a0..@a3 say what it is about (for reports). */
static inline void pto_fz_begin(struct pto_fz_slot *s, unsigned int op,
				uint64_t a0, uint64_t a1, uint64_t a2,
				uint64_t a3)
{
	if (!s)
		return;
	s->op = op;
	s->arg[0] = a0;
	s->arg[1] = a1;
	s->arg[2] = a2;
	s->arg[3] = a3;
	__atomic_store_n(&s->beat_ns, pto_fz_now_ns(), __ATOMIC_RELEASE);
}

/*
 * Hold off (@on) or allow again the supervisor's random SIGKILLs, around
 * a check that needs the worker alive for a while (the hang watchdog
 * still applies).
 */
static inline void pto_fz_hold(struct pto_fz_slot *s, bool on)
{
	if (s)
		__atomic_store_n(&s->hold, on, __ATOMIC_RELEASE);
}

/*
 * Operation @op ended with @ret (0 or -errno): tally it. Returns true when
 * the worker should stop (the run reached its target).
 */
static inline bool pto_fz_end(struct pto_fz *fz, struct pto_fz_slot *s,
			      unsigned int op, int ret)
{
	struct pto_fz_tally *t = &fz->tally[op];
	uint64_t total;

	__atomic_fetch_add(&t->calls, 1, __ATOMIC_RELAXED);
	if (ret >= 0) {
		__atomic_fetch_add(&t->ok, 1, __ATOMIC_RELAXED);
	} else {
		unsigned int e = (unsigned int)-ret;

		if (e >= PTO_FZ_NERR)
			e = PTO_FZ_NERR - 1;
		__atomic_fetch_add(&t->err[e], 1, __ATOMIC_RELAXED);
	}
	if (s)
		__atomic_fetch_add(&s->ops, 1, __ATOMIC_RELAXED);
	total = __atomic_add_fetch(&fz->total, 1, __ATOMIC_RELAXED);
	return total >= fz->target || __atomic_load_n(&fz->stop,
						      __ATOMIC_RELAXED);
}

/*
 * A worker: runs operations with @rng until it decides to end or
 * pto_fz_end() says stop; returns (the engine then _exit()s 0) or exits
 * itself. It runs in a process of its own, as a child of the supervisor.
 */
typedef void (*pto_fz_worker_fn)(struct pto_fz *fz, struct pto_fz_slot *s,
				 struct pto_rng *rng, void *ctx);

static inline pid_t pto_fz_spawn(struct pto_fz *fz, unsigned int i,
				 pto_fz_worker_fn fn, void *ctx)
{
	struct pto_fz_slot *s = &fz->slot[i];
	uint32_t gen = fz->gens++;
	pid_t ppid = getpid(), pid;

	memset(s, 0, sizeof(*s));
	s->gen = gen;
	s->beat_ns = pto_fz_now_ns();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_sigaction = pto_fz_fatal,
					.sa_flags = SA_SIGINFO };
		struct pto_rng rng = { pto_rng_seed(fz->seed, gen) };
		static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
					     SIGABRT };
		unsigned int k;

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != ppid)
			_exit(0);
		pto_fz_self = s;
		for (k = 0; k < sizeof(fatal) / sizeof(fatal[0]); k++)
			sigaction(fatal[k], &sa, NULL);
		fn(fz, s, &rng, ctx);
		_exit(0);
	}
	if (pid > 0)
		s->pid = pid;
	return pid;
}

/* ---- supervisor ----------------------------------------------------------- */

/* The kernel's view of a hung process, for the report. */
static inline void pto_fz_wchan(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, len - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
}

static inline const char *pto_fz_op_name(const struct pto_fz *fz,
					 unsigned int op)
{
	return op < fz->nr_ops ? fz->op_names[op] : "?";
}

/* A process ended: was it expected? */
static inline void pto_fz_reaped(struct pto_fz *fz, pid_t pid, int st)
{
	struct pto_fz_slot *s = NULL;
	unsigned int i;

	for (i = 0; i < fz->nr_procs; i++)
		if (fz->slot[i].pid == pid)
			s = &fz->slot[i];
	if (!s) {
		/* a worker's child, orphaned: only our SIGKILLs may end it */
		fz->orphans++;
		if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL)
			pto_fz_finding(fz, "a worker's child (pid %d) died of signal %d (%s)",
				       (int)pid, WTERMSIG(st),
				       strsignal(WTERMSIG(st)));
		else if (WIFEXITED(st) && WEXITSTATUS(st))
			pto_fz_finding(fz, "a worker's child (pid %d) exited %d",
				       (int)pid, WEXITSTATUS(st));
		return;
	}
	s->pid = 0;
	if (WIFEXITED(st) && !WEXITSTATUS(st)) {
		fz->exits++;
		return;
	}
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && s->killed)
		return;
	if (WIFSIGNALED(st))
		pto_fz_finding(fz, "worker generation %u (pid %d) died of signal %d (%s) in operation %u %s (%#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %#" PRIx64 "), fault address %#" PRIx64 "%s",
			       s->gen, (int)pid, WTERMSIG(st),
			       strsignal(WTERMSIG(st)), (unsigned int)s->ops,
			       pto_fz_op_name(fz, s->op), s->arg[0], s->arg[1],
			       s->arg[2], s->arg[3], s->addr,
			       s->sig ? "" : " (not caught)");
	else
		pto_fz_finding(fz, "worker generation %u (pid %d) exited %d in operation %s",
			       s->gen, (int)pid, WEXITSTATUS(st),
			       pto_fz_op_name(fz, s->op));
}

/*
 * The watchdog for slot @s at @now: a worker whose last operation began
 * PTO_FZ_HANG_MS ago is hung; report it with its wchan and kill it.
 */
static inline void pto_fz_watchdog(struct pto_fz *fz, struct pto_fz_slot *s,
				   int64_t now)
{
	int64_t beat = __atomic_load_n(&s->beat_ns, __ATOMIC_ACQUIRE);
	char wchan[64];

	if (s->killed || now - beat <= PTO_FZ_HANG_MS * 1000000LL)
		return;
	pto_fz_wchan(s->pid, wchan, sizeof(wchan));
	pto_fz_finding(fz, "hang: worker generation %u (pid %d) in operation %u %s (%#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %#" PRIx64 ") for %lld ms, wchan %s",
		       s->gen, (int)s->pid, (unsigned int)s->ops,
		       pto_fz_op_name(fz, s->op), s->arg[0], s->arg[1],
		       s->arg[2], s->arg[3],
		       (long long)((now - beat) / 1000000),
		       wchan[0] ? wchan : "?");
	s->killed = 1;
	kill(s->pid, SIGKILL);
}

/*
 * Every slot: start a worker in an empty one (unless @stopping), watch
 * the live ones for hangs. Returns how many are live, or -errno if a
 * fork failed.
 */
static inline int pto_fz_tend(struct pto_fz *fz, pto_fz_worker_fn fn,
			      void *ctx, int64_t now, bool stopping)
{
	unsigned int i;
	int live = 0;

	for (i = 0; i < fz->nr_procs; i++) {
		struct pto_fz_slot *s = &fz->slot[i];

		if (!s->pid && !stopping) {
			if (pto_fz_spawn(fz, i, fn, ctx) < 0)
				return -errno;
		}
		if (!s->pid)
			continue;
		live++;
		pto_fz_watchdog(fz, s, now);
	}
	return live;
}

/*
 * The random SIGKILL due at @now: a slot drawn from @rng loses its worker
 * if it has one that is not held; returns when the next one is due.
 */
static inline int64_t pto_fz_random_kill(struct pto_fz *fz,
					 struct pto_rng *rng, int64_t now)
{
	unsigned int k = (unsigned int)pto_rng_below(rng, fz->nr_procs);

	if (fz->slot[k].pid && !fz->slot[k].killed &&
	    !__atomic_load_n(&fz->slot[k].hold, __ATOMIC_ACQUIRE)) {
		fz->slot[k].killed = 1;
		fz->kills++;
		kill(fz->slot[k].pid, SIGKILL);
	}
	return now + (int64_t)(1 + pto_rng_below(rng, 2 * fz->kill_ms)) *
	       1000000;
}

/* Stopping for too long: every worker still there is reported and killed. */
static inline void pto_fz_overdue(struct pto_fz *fz)
{
	unsigned int i;

	for (i = 0; i < fz->nr_procs; i++) {
		if (!fz->slot[i].pid || fz->slot[i].killed)
			continue;
		pto_fz_finding(fz, "worker generation %u (pid %d) did not stop within %d ms, in operation %s",
			       fz->slot[i].gen, (int)fz->slot[i].pid,
			       PTO_FZ_HANG_MS,
			       pto_fz_op_name(fz, fz->slot[i].op));
		fz->slot[i].killed = 1;
		kill(fz->slot[i].pid, SIGKILL);
	}
}

/*
 * Run the pool until fz->target operations are done and every process the
 * workers started is gone. The caller's process becomes a child subreaper
 * so that it reaps (and judges) the workers' orphans too. Returns 0, or
 * -errno if it could not run (fork failed...).
 */
static inline int pto_fz_run(struct pto_fz *fz, pto_fz_worker_fn fn, void *ctx)
{
	struct pto_rng rng = { pto_rng_seed(fz->seed, ~0ULL) };
	int64_t now, next_kill, stop_ns = 0;
	bool stopping = false;
	pid_t pid;
	int st, live;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		return -errno;
	fz->t0_ns = pto_fz_now_ns();
	next_kill = fz->t0_ns + (int64_t)pto_rng_below(&rng, 2 * fz->kill_ms + 1) *
		    1000000;
	for (;;) {
		/* the ended processes, then whether to stop */
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			pto_fz_reaped(fz, pid, st);
		now = pto_fz_now_ns();
		if (!stopping && (__atomic_load_n(&fz->total, __ATOMIC_RELAXED) >=
				  fz->target ||
				  fz->nr_findings >= PTO_FZ_MAX_FINDINGS)) {
			stopping = true;
			stop_ns = now;
			__atomic_store_n(&fz->stop, 1, __ATOMIC_RELAXED);
			fz->t1_ns = now;
		}
		live = pto_fz_tend(fz, fn, ctx, now, stopping);
		if (live < 0)
			return live;
		if (!stopping && fz->kill_ms && now >= next_kill && live)
			next_kill = pto_fz_random_kill(fz, &rng, now);
		if (stopping && !live) {
			/* the workers' own children, if any are left */
			pid = waitpid(-1, &st, 0);
			if (pid > 0) {
				pto_fz_reaped(fz, pid, st);
				continue;
			}
			if (errno == EINTR)
				continue;
			break;
		}
		if (stopping && now - stop_ns > PTO_FZ_HANG_MS * 1000000LL)
			pto_fz_overdue(fz);
		usleep(2000);
	}
	if (!fz->t1_ns)
		fz->t1_ns = pto_fz_now_ns();
	return 0;
}

/* ---- report ------------------------------------------------------------- */

static inline const char *pto_fz_errname(unsigned int e)
{
	const char *n = e < PTO_FZ_NERR - 1 ? strerrorname_np((int)e) : NULL;

	return n ? n : "E?";
}

/* The per-operation tally and the run's figures, as "# " lines. */
static inline void pto_fz_report(const struct pto_fz *fz, FILE *f)
{
	double secs = (double)(fz->t1_ns - fz->t0_ns) / 1e9;
	unsigned int op, e;

	fprintf(f, "# %-14s %9s %9s  errors\n", "operation", "calls", "ok");
	for (op = 0; op < fz->nr_ops; op++) {
		const struct pto_fz_tally *t = &fz->tally[op];
		char line[1024];
		size_t n = 0;

		line[0] = 0;
		for (e = 1; e < PTO_FZ_NERR && n < sizeof(line) - 40; e++)
			if (t->err[e])
				n += (size_t)snprintf(line + n, sizeof(line) - n,
						      "%s%s %" PRIu64, n ? ", " : "",
						      pto_fz_errname(e), t->err[e]);
		fprintf(f, "# %-14s %9" PRIu64 " %9" PRIu64 "%s%s\n",
			fz->op_names[op], t->calls, t->ok, n ? "  " : "", line);
	}
	fprintf(f, "# %" PRIu64 " operations in %.1f s (%.0f/s), %u workers started, %u killed at random, %u finished, %u orphans reaped; seed %#" PRIx64 " (%s_SEED to repeat)\n",
		fz->total, secs, secs > 0 ? (double)fz->total / secs : 0.0,
		fz->gens, fz->kills, fz->exits, fz->orphans, fz->seed,
		fz->prefix);
	fflush(f);
}

#endif /* PTO_FUZZ_H */
