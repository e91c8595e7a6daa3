// SPDX-License-Identifier: MIT
/*
 * bench_hws.c - cycles per HWS decision on the device layout
 *
 * The device layout of 24 blocks (72 SIPs in 96 positions: two mask
 * words). For each case (DAGs x ready kernels) NSTATES random states are
 * built through the library's own calls: a random 30-90% of the SIPs busy
 * with kernels of random remaining time, then the ready kernels (40% one
 * AIC, 40% one AIV, 10% two AIVs, 10% a whole block; 70% of one block,
 * the rest 2..24 blocks; random priorities, on-cp flags and estimates) of
 * static DAGs. A state is a plain struct hws, so it is saved with a copy.
 *
 * A sample: copy a saved state into the working struct, read it once
 * (the copy passes 40 KB through L1; this brings the 20 KB state back in),
 * drain the stores (mfence), all untimed; then time one hws_decide()
 * between two rdtsc reads fenced with lfence. Each case is measured twice:
 * rotating (every sample from the next state: the branch predictors meet
 * a new state each time) and warm (each state ROUNDS / NSTATES times in
 * a row: predictors warm, like the caches). The line's final figures are
 * the warm ones. Samples go
 * round the states ROUNDS times; each line gives the median and p99.
 *
 * Baselines in the same run: the same timing around an empty function
 * (the timer's own cost, included in every figure) and the FIFO policy
 * (PTO2's default) deciding from the same states.
 *
 * After each HWS case, the invariant checker (hws_check(), what ptod
 * runs after every decision under PTO_HWS_CHECK=1) on the state a
 * decision left: one line ending "check cycles median N p99 M".
 *
 * Cycles are TSC ticks (constant rate; on a VM the host's nominal clock).
 *
 * bench_hws --replay DAGS KERNELS POLICY runs the same decisions untimed
 * through one_decision(), for an instruction count that no noise moves:
 *
 *   valgrind --tool=callgrind --toggle-collect=one_decision \
 *	build/bench/hws/bench_hws --replay 24 32 0
 *
 * (instructions per decision = the total / NSTATES / ROUNDS).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include <pto/pto_orchestration_api.h>
#include <pto-private/compiler.h>
#include <pto-private/parse.h>

#include "hws.h"

#define NSTATES	64
#define ROUNDS	200
#define NSAMP	(NSTATES * ROUNDS)

static struct hws saved[NSTATES];
static struct hws work;
static uint64_t samples[NSAMP];
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
/* the part of struct hws a state occupies: the per-SIP records come last
 * and only the layout's positions are ever touched */
static size_t state_bytes;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)((rng >> 16) % n);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void stats(uint64_t *s, int n, uint64_t *med, uint64_t *p99)
{
	qsort(s, (size_t)n, sizeof(*s), cmp_u64);
	*med = s[n / 2];
	*p99 = s[(size_t)n * 99 / 100];
}

static __attribute__((noinline)) int empty(struct hws *h, uint64_t now,
					      struct hws_launch *o)
{
	__asm__ __volatile__("" : : "r"(h), "r"(now), "r"(o) : "memory");
	return 0;
}

static void build(struct hws *h, const struct hws_layout *l, uint32_t policy,
		  uint32_t dags, uint32_t kernels)
{
	struct hws_config c;
	struct hws_kernel k;
	struct hws_launch o;
	uint32_t s, i, busy;
	char msg[128];

	hws_config_default(&c, l);
	c.policy = policy;
	if (hws_init(h, l, &c, msg, sizeof(msg))) {
		fprintf(stderr, "bench_hws: %s\n", msg);
		exit(1);
	}
	/* busy SIPs: DAG 31, one kernel pinned to each */
	hws_dag_open(h, 31, 0, true);
	busy = 30 + rnd(61);
	for (s = 0; s < l->nr_sips; s++) {
		if (!hws_mask_test(&l->present, s) || rnd(100) >= busy)
			continue;
		memset(&k, 0, sizeof(k));
		k.cookie = 1000000 + s;
		k.dag = 31;
		k.thread_num = 1;
		k.block_num = 1;
		k.est_time = 1000 + rnd(100000);
		hws_mask_set(&k.affinity, s);
		hws_add(h, &k, 0);
		hws_decide(h, 0, &o);
	}
	for (i = 0; i < dags; i++)
		hws_dag_open(h, i, 20 + rnd(200), false);
	for (i = 0; i < kernels; i++) {
		uint32_t kind = rnd(10);

		memset(&k, 0, sizeof(k));
		k.cookie = i + 1;
		k.dag = i < dags ? i : rnd(dags);
		k.block_num = rnd(10) < 7 ? 1 : (uint16_t)(2 + rnd(23));
		k.offline_priority = 1 + rnd(1000);
		k.on_cp = rnd(3) == 0;
		k.est_time = 1000 + rnd(100000);
		if (kind < 4) {
			k.thread_num = 1;
			k.affinity = l->type[PTO2_WORKER_CUBE];
		} else if (kind < 8) {
			k.thread_num = 1;
			k.affinity = l->type[PTO2_WORKER_VECTOR];
		} else if (kind < 9) {
			k.thread_num = 2;
			k.affinity = l->type[PTO2_WORKER_VECTOR];
		} else {
			k.thread_num = 3;
			k.affinity = l->present;
		}
		hws_add(h, &k, 10);
	}
}

/*
 * Read the working state back after the copy: copying 20 KB from a cold
 * source through a 32 KB L1 leaves part of the destination in L2 only.
 */
static void warm(const struct hws *h)
{
	const volatile uint64_t *p = (const volatile uint64_t *)h;
	size_t i;

	for (i = 0; i < state_bytes / 8; i += 8)
		(void)p[i];
}

/*
 * Median, p99 and mean of NSAMP timed calls of @fn. @rotate: every sample
 * from the next state (branch predictors see a new state each time);
 * else each state ROUNDS times in a row (predictors warm, as caches are).
 * @decided: a decision is made on the state first, untimed. *@hit: the
 * mean of @fn's results.
 */
static void measure(int (*fn)(struct hws *, uint64_t, struct hws_launch *),
		    bool rotate, bool decided, uint64_t *med, uint64_t *p99,
		    double *mean, double *hit)
{
	struct hws_launch o;
	uint64_t t0, t1, launched = 0, sum = 0;
	int r, i, s, n = 0;

	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NSTATES; i++) {
			s = rotate ? i : r * NSTATES / ROUNDS;
			memcpy(&work, &saved[s], state_bytes);
			if (decided)	/* untimed: fn sees what it left */
				hws_decide(&work, 20, &o);
			warm(&work);
			/* drain the copy's stores before the clock starts */
			_mm_mfence();
			_mm_lfence();
			t0 = __rdtsc();
			_mm_lfence();
			launched += (uint64_t)fn(&work, 20, &o);
			_mm_lfence();
			t1 = __rdtsc();
			_mm_lfence();
			samples[n++] = t1 - t0;
			sum += t1 - t0;
		}
	}
	stats(samples, n, med, p99);
	*mean = (double)sum / n;
	*hit = (double)launched / n;
}

/*
 * The invariant checker as ptod runs it (PTO_HWS_CHECK=1), on the state a
 * decision left: 1 if it finds the state broken. Timed by measure() with
 * @decided (the decision itself untimed).
 */
static __attribute__((noinline)) int check_broken(struct hws *h, uint64_t now,
						  struct hws_launch *o)
{
	(void)now;
	(void)o;
	return hws_check(h, NULL, 0) != 0;
}

static __attribute__((noipa)) int one_decision(struct hws *h,
					      struct hws_launch *o)
{
	return hws_decide(h, 20, o);
}

static int replay(uint32_t d, uint32_t k, uint32_t policy)
{
	struct hws_layout l;
	struct hws_launch o;
	long launched = 0;
	int r, s;

	hws_layout_device(&l, 24, 48);
	state_bytes = offsetof(struct hws, sip) + l.nr_sips * sizeof(work.sip[0]);
	for (s = 0; s < NSTATES; s++)
		build(&saved[s], &l, policy, d, k);
	for (r = 0; r < ROUNDS; r++) {
		for (s = 0; s < NSTATES; s++) {
			memcpy(&work, &saved[s], state_bytes);
			launched += one_decision(&work, &o);
		}
	}
	printf("%d decisions, %ld launched\n", NSTATES * ROUNDS, launched);
	return 0;
}

/* The cases: every pair of a DAG count and a ready-kernel count. */
static const uint32_t dag_counts[] = { 1, 2, 4, 8, 16, 24 };
static const uint32_t kernel_counts[] = { 1, 2, 4, 8, 16, 32 };
#define MAX_DAGS	dag_counts[PTO_ARRAY_SIZE(dag_counts) - 1]
#define MAX_KERNELS	kernel_counts[PTO_ARRAY_SIZE(kernel_counts) - 1]

int main(int argc, char **argv)
{
	struct hws_layout l;
	uint64_t med, p99, rmed, rp99;
	double hit, mean, rmean;
	size_t a, b;
	int policy, s;

	if (argc > 1 && !strcmp(argv[1], "--replay")) {
		uint64_t rd, rk, rp;

		/* up to the cases' largest; POLICY 0 = HWS, 1 = FIFO */
		if (argc != 5 || pto_parse_dec(argv[2], 1, MAX_DAGS, &rd) ||
		    pto_parse_dec(argv[3], 1, MAX_KERNELS, &rk) ||
		    pto_parse_dec(argv[4], 0, HWS_POLICY_FIFO, &rp)) {
			fprintf(stderr, "usage: bench_hws [--replay DAGS KERNELS POLICY]\n"
				"  DAGS 1..%u, KERNELS 1..%u, POLICY 0 (HWS) or 1 (FIFO)\n",
				MAX_DAGS, MAX_KERNELS);
			return 2;
		}
		return replay((uint32_t)rd, (uint32_t)rk, (uint32_t)rp);
	}
	hws_layout_device(&l, 24, 48);
	state_bytes = offsetof(struct hws, sip) + l.nr_sips * sizeof(work.sip[0]);
	printf("# HWS decision cost, device layout 24 blocks (72 SIPs), %d states x %d rounds per case\n",
	       NSTATES, ROUNDS);
	printf("# sizeof(struct hws) = %zu bytes, %zu of them per state here\n",
	       sizeof(struct hws), state_bytes);
	printf("# TSC ticks; the mean resolves below the TSC's granularity\n");

	for (s = 0; s < NSTATES; s++)
		build(&saved[s], &l, HWS_POLICY_HWS, 1, 1);
	measure(empty, false, false, &med, &p99, &mean, &hit);
	printf("baseline empty call (timer overhead, mean %.1f): cycles median %llu p99 %llu\n",
	       mean, (unsigned long long)med, (unsigned long long)p99);

	for (policy = HWS_POLICY_FIFO; policy >= HWS_POLICY_HWS; policy--) {
		for (a = 0; a < PTO_ARRAY_SIZE(dag_counts); a++) {
			for (b = 0; b < PTO_ARRAY_SIZE(kernel_counts); b++) {
				uint32_t d = dag_counts[a], k = kernel_counts[b];

				if (k < d)
					continue;
				for (s = 0; s < NSTATES; s++)
					build(&saved[s], &l, (uint32_t)policy, d, k);
				measure(hws_decide, true, false, &rmed, &rp99,
					&rmean, &hit);
				measure(hws_decide, false, false, &med, &p99,
					&mean, &hit);
				printf("%s dags %2u kernels %2u (%3.0f%% launch; rotating: median %3llu p99 %3llu mean %5.1f; warm: mean %5.1f): decision cycles median %llu p99 %llu\n",
				       policy == HWS_POLICY_FIFO ? "baseline fifo" : "hws",
				       d, k, hit * 100, (unsigned long long)rmed,
				       (unsigned long long)rp99, rmean, mean,
				       (unsigned long long)med,
				       (unsigned long long)p99);
				if (policy != HWS_POLICY_HWS)
					continue;
				measure(check_broken, false, true, &med, &p99,
					&mean, &hit);
				if (hit > 0) {
					fprintf(stderr, "bench_hws: the invariant checker failed a state\n");
					return 1;
				}
				printf("invariant checker after a decision, dags %2u kernels %2u: check cycles median %llu p99 %llu\n",
				       d, k, (unsigned long long)med,
				       (unsigned long long)p99);
			}
		}
	}
	return 0;
}
