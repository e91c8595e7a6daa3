// SPDX-License-Identifier: MIT
/*
 * test_status.c - the HWS status registers as the engine publishes them
 * (pto2_status.c): after every step of random HWS activity (kernels of
 * every shape added, decided, their SIPs completed one by one, time
 * passing) on device and uniform layouts, with and without predicted
 * pre-idle cores and early launches, the registers written incrementally
 * hold what the status computed whole says; values scribbled over them
 * are rewritten within a sweep.
 */
#include <stdio.h>
#include <string.h>

#include "hws.h"
#include "pto2_status.h"
#include "tap.h"
#include "test_rng.h"

static struct hws H;
static struct hws_layout L;
static struct pto_regs_hws R;
static struct pto2_status S;
static uint32_t ncores;
/* steps after which a status mask had bits, by mask */
static unsigned long seen[PTO2_ST_MASKS];

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)((test_rng_next(&rng) >> 20) % n);
}

/* SIP of core @c, or -1. */
static int sip_of(uint32_t c)
{
	uint32_t s;

	for (s = 0; s < L.nr_sips; s++)
		if (hws_mask_test(&L.present, s) && L.core[s] == c)
			return (int)s;
	return -1;
}

/*
 * Registers that differ from the status computed whole at @now (at most
 * a few reported).
 */
static unsigned int mismatches(uint64_t now, const char *when)
{
	const volatile __u64 *reg[PTO2_ST_MASKS] = {
		R.sip_idle_status, R.sip_pre_idle_status, R.reserved_sip_mask,
	};
	hws_mask m[PTO2_ST_MASKS];
	unsigned int bad = 0;
	uint32_t c, k;

	hws_status(&H, now, &m[0], &m[1], &m[2]);
	for (k = 0; k < PTO2_ST_MASKS; k++)
		seen[k] += m[k].w[0] || m[k].w[1] || m[k].w[2];
	for (c = 0; c < PTO_MAX_CORES; c++) {
		int s = c < ncores ? sip_of(c) : -1;
		uint64_t want_t = s < 0 ? 0 :
				  hws_sip_remaining(&H, (uint32_t)s, now) / 1000;

		if (want_t > UINT32_MAX)
			want_t = UINT32_MAX;
		for (k = 0; k < PTO2_ST_MASKS; k++) {
			bool want = s >= 0 && hws_mask_test(&m[k], (uint32_t)s);
			bool got = (reg[k][c / 64] >> (c % 64)) & 1;

			if (want != got && bad++ < 3)
				tap_diag("%s: core %u mask %u: %d, want %d",
					 when, c, k, got, want);
		}
		if (c < ncores && R.sip_remain_exec_time[c] != want_t &&
		    bad++ < 3)
			tap_diag("%s: core %u remaining %u us, want %llu", when,
				 c, R.sip_remain_exec_time[c],
				 (unsigned long long)want_t);
	}
	return bad;
}

static int setup(bool device, uint32_t n, bool predict)
{
	struct hws_config c;
	char msg[160];
	uint32_t s, d;

	if (device ? hws_layout_device(&L, n, 2 * n) :
		     hws_layout_uniform(&L, n, (uint32_t[]){ 4, 8, 16 }[rnd(3)]))
		return -1;
	hws_config_default(&c, &L);
	c.early_launch = predict && rnd(2);
	c.early_mode = predict ? HWS_EARLY_PREDICT : c.early_mode;
	c.pre_idle_offset = predict ? 50000 + rnd(200000) : 0;
	if (hws_init(&H, &L, &c, msg, sizeof(msg))) {
		tap_diag("hws_init: %s", msg);
		return -1;
	}
	ncores = 0;
	for (s = 0; s < L.nr_sips; s++)
		if (hws_mask_test(&L.present, s) && L.core[s] + 1U > ncores)
			ncores = L.core[s] + 1U;
	for (d = 0; d < 4; d++)
		hws_dag_open(&H, d, 0, d == 3);
	/* whatever the registers held before: the first publication */
	memset(&R, 0xa5, sizeof(R));
	pto2_status_reset(&S);
	return 0;
}

static void add_kernel(uint64_t cookie, uint64_t now)
{
	static const uint16_t shapes[] = { 1, 1, 1, 2, 3, 4, 8 };
	struct hws_kernel k;

	memset(&k, 0, sizeof(k));
	k.cookie = cookie;
	k.dag = rnd(4);
	k.thread_num = shapes[rnd(7)];
	if (k.thread_num > L.cluster_sips)
		k.thread_num = 1;
	k.block_num = (uint16_t)(1 + rnd(3));
	k.offline_priority = rnd(1000);
	k.on_cp = rnd(4) == 0;
	k.est_time = 2000 + rnd(3000000);	/* 2 us .. 3 ms */
	k.affinity = L.present;
	hws_add(&H, &k, now);
}

/* Complete one to three busy SIPs. */
static void complete_some(uint64_t now)
{
	hws_mask busy, done = { { 0 } };
	uint32_t s, start = rnd(L.nr_sips), n = 1 + rnd(3), i;

	hws_busy(&H, &busy);
	for (i = 0; i < L.nr_sips && n; i++) {
		s = (start + i) % L.nr_sips;
		if (hws_mask_test(&busy, s)) {
			hws_mask_set(&done, s);
			n--;
		}
	}
	hws_sip_complete(&H, &done, now);
}

/* One layout's run: steps checked one by one; failing steps. */
static unsigned int run(bool device, uint32_t n, bool predict, int steps,
			unsigned long *launches)
{
	struct hws_launch o;
	uint64_t now = 1000000, cookie = 1;
	unsigned int bad = 0;
	char when[96];
	int i;

	if (setup(device, n, predict))
		return 1;
	for (i = 0; i < steps; i++) {
		switch (rnd(4)) {
		case 0:
			add_kernel(cookie++, now);
			break;
		case 1:
			*launches += hws_decide(&H, now, &o) == 1;
			break;
		case 2:
			complete_some(now);
			break;
		default:
			now += rnd(300000);
			break;
		}
		pto2_status_publish(&S, &H, &R, ncores, now);
		snprintf(when, sizeof(when), "%s %u, step %d",
			 device ? "device" : "uniform", n, i);
		bad += mismatches(now, when) != 0;
	}
	return bad;
}

/* Everything scribbled over; then publications without any change. */
static unsigned int sweep_back(uint32_t n)
{
	uint64_t now = 5000000;
	unsigned int i, left, nbusy = 0;
	hws_mask busy;

	if (setup(true, n, false))
		return 1;
	/* some cores busy, most idle */
	for (i = 0; i < 6; i++)
		add_kernel(i + 1, now);
	for (i = 0; i < 6; i++) {
		struct hws_launch o;

		hws_decide(&H, now, &o);
	}
	hws_busy(&H, &busy);
	for (i = 0; i < HWS_MASK_WORDS; i++)
		nbusy += (unsigned int)__builtin_popcountll(busy.w[i]);
	if (!nbusy || nbusy >= ncores) {
		tap_diag("%u of %u cores busy", nbusy, ncores);
		return 1;
	}
	pto2_status_publish(&S, &H, &R, ncores, now);
	memset(&R, 0x5a, sizeof(R));
	for (i = 0; i < (L.nr_sips + PTO2_STATUS_SWEEP - 1) / PTO2_STATUS_SWEEP;
	     i++)
		pto2_status_publish(&S, &H, &R, ncores, now);
	left = mismatches(now, "after a sweep");
	return left;
}

int main(void)
{
	static const uint32_t dev_blocks[] = { 1, 8, 24, 32 };
	static const uint32_t uni_sips[] = { 12, 64, 100 };
	unsigned long launches = 0;
	unsigned int bad, i;

	for (i = 0; i < 4; i++) {
		bad = run(true, dev_blocks[i], i & 1, 3000, &launches);
		ok(bad == 0,
		   "device layout, %u blocks%s: the registers equal the status computed whole after each of 3000 steps (%u differ)",
		   dev_blocks[i], i & 1 ? ", predicted pre-idle" : "", bad);
	}
	for (i = 0; i < 3; i++) {
		bad = run(false, uni_sips[i], true, 3000, &launches);
		ok(bad == 0,
		   "uniform layout of %u SIPs, predicted pre-idle: the registers equal the status computed whole after each of 3000 steps (%u differ)",
		   uni_sips[i], bad);
	}
	ok(launches > 1000 && seen[PTO2_ST_PRE_IDLE] > 1000 &&
	   seen[PTO2_ST_RESERVED] > 100,
	   "the steps launched kernels (%lu), had pre-idle cores (%lu steps) and reserved ones (%lu)",
	   launches, seen[PTO2_ST_PRE_IDLE], seen[PTO2_ST_RESERVED]);
	bad = sweep_back(24);
	ok(bad == 0,
	   "registers scribbled over hold the status again after nr_sips / PTO2_STATUS_SWEEP publications without a change (%u differ)",
	   bad);
	return tap_done();
}
