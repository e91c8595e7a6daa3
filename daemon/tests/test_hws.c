// SPDX-License-Identifier: MIT
/*
 * test_hws.c - the hardware scheduler's policy (daemon/hws), mechanism by
 * mechanism. Every decision goes through dec(), which runs the invariant
 * checker afterwards; the last test line says whether it ever complained.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <pto/pto_orchestration_api.h>

#include <pto-private/compiler.h>

#include "hws.h"
#include "tap.h"
#include "test_rng.h"

static struct hws H;
static struct hws_layout L;
static struct hws_config C;
static unsigned long decisions, check_failures;

/* ---- helpers ------------------------------------------------------------- */

static void init_layout(void)
{
	char msg[160];
	int ret;

	hws_config_default(&C, &L);
	ret = hws_init(&H, &L, &C, msg, sizeof(msg));
	if (ret)
		tap_diag("hws_init: %d %s", ret, msg);
}

static void init_uniform(uint32_t n, uint32_t cs)
{
	if (hws_layout_uniform(&L, n, cs))
		tap_diag("hws_layout_uniform(%u, %u) failed", n, cs);
	init_layout();
}

static void init_device(uint32_t nr_aic)
{
	if (hws_layout_device(&L, nr_aic, 2 * nr_aic))
		tap_diag("hws_layout_device(%u) failed", nr_aic);
	init_layout();
}

static int reconf(void)
{
	char msg[160];
	int ret = hws_configure(&H, &C, msg, sizeof(msg));

	if (ret)
		tap_diag("hws_configure: %d %s", ret, msg);
	return ret;
}

static void check_now(const char *where)
{
	char msg[256];

	if (hws_check(&H, msg, sizeof(msg))) {
		if (check_failures++ < 5)
			tap_diag("hws_check after %s: %s", where, msg);
	}
}

static int dec(uint64_t now, struct hws_launch *o)
{
	struct hws_launch tmp;
	int ret = hws_decide(&H, now, o ? o : &tmp);

	decisions++;
	check_now("a decision");
	return ret;
}

/* Decide until nothing launches; returns the launches. */
static int dec_all(uint64_t now)
{
	int n = 0;

	while (dec(now, NULL) == 1)
		n++;
	return n;
}

static void done_mask(const hws_mask *mp, uint64_t now)
{
	hws_mask m = *mp;

	if (hws_sip_complete(&H, &m, now))
		tap_diag("hws_sip_complete failed");
	check_now("a completion");
}

static void done(uint32_t sip, uint64_t now)
{
	hws_mask m = { { 0 } };

	hws_mask_set(&m, sip);
	done_mask(&m, now);
}

static hws_mask mk(int first, ...)
{
	hws_mask m = { { 0 } };
	va_list ap;
	int s;

	va_start(ap, first);
	for (s = first; s >= 0; s = va_arg(ap, int))
		hws_mask_set(&m, (uint32_t)s);
	va_end(ap);
	return m;
}

static int pre(uint32_t sip)
{
	hws_mask m = { { 0 } };

	hws_mask_set(&m, sip);
	return hws_sip_pre_complete(&H, &m);
}

static hws_mask range(uint32_t from, uint32_t to)
{
	hws_mask m = { { 0 } };

	for (; from <= to; from++)
		hws_mask_set(&m, from);
	return m;
}

static bool meq(const hws_mask *a, hws_mask b)
{
	return !memcmp(a, &b, sizeof(*a));
}

static int lowest(const hws_mask *m)
{
	int i;

	for (i = 0; i < HWS_MAX_SIPS; i++)
		if (hws_mask_test(m, (uint32_t)i))
			return i;
	return -1;
}

static const char *mstr(const hws_mask *m)
{
	static char buf[4][512];
	static int which;
	char *b = buf[which++ & 3];
	size_t len = 0;
	int i;

	b[0] = '\0';
	for (i = 0; i < HWS_MAX_SIPS && len < 500; i++)
		if (hws_mask_test(m, (uint32_t)i))
			len += (size_t)snprintf(b + len, 512 - len, "%s%d",
						len ? "," : "", i);
	return len ? b : "-";
}

static struct hws_kernel kern(uint64_t cookie, uint32_t dag, uint16_t tn,
			      uint16_t bn, uint32_t prio, uint64_t est)
{
	struct hws_kernel k;

	memset(&k, 0, sizeof(k));
	k.cookie = cookie;
	k.dag = dag;
	k.thread_num = tn;
	k.block_num = bn;
	k.offline_priority = prio;
	k.est_time = est;
	k.affinity = L.present;
	return k;
}

static int add(uint64_t cookie, uint32_t dag, uint16_t tn, uint16_t bn,
	       uint32_t prio, uint64_t est)
{
	struct hws_kernel k = kern(cookie, dag, tn, bn, prio, est);

	return hws_add(&H, &k, 0);
}

/* add() of a kernel on the critical path */
static int add_cp(uint64_t cookie, uint32_t dag, uint16_t tn, uint16_t bn,
		  uint32_t prio, uint64_t est)
{
	struct hws_kernel k = kern(cookie, dag, tn, bn, prio, est);

	k.on_cp = true;
	return hws_add(&H, &k, 0);
}

/*
 * @n one-SIP kernels of DAG @dag (cookies from @cookie0, priority @prio),
 * one after the other: each launched at 0 and completed at @end.
 */
static void run_kernels(uint32_t dag, uint64_t cookie0, int n, uint32_t prio,
			uint64_t end)
{
	struct hws_launch o;
	int i;

	for (i = 0; i < n; i++) {
		add(cookie0 + (uint64_t)i, dag, 1, 1, prio, 10);
		dec(0, &o);
		done_mask(&o.sips, end);
	}
}

static struct hws_kernel_state kstate(uint64_t cookie)
{
	struct hws_kernel_state st;

	memset(&st, 0, sizeof(st));
	if (hws_kernel_state(&H, cookie, &st))
		st.pool = 0xee;
	return st;
}

static bool m_any_busy(void)
{
	return !hws_mask_empty(&H.busy);
}

static bool gone(uint64_t cookie)
{
	struct hws_kernel_state st;

	return hws_kernel_state(&H, cookie, &st) == -ENOENT;
}

/* Fill every present SIP with one-SIP kernels of DAG @dag, SIP s ending
 * at @end0 + s * @step (the HWS places 1-SIP kernels from the high end,
 * so the kernels are added in that order). */
static void fill(uint32_t dag, uint64_t cookie0, uint64_t end0, uint64_t step)
{
	int s;

	for (s = (int)L.nr_sips - 1; s >= 0; s--) {
		if (!hws_mask_test(&L.present, (uint32_t)s))
			continue;
		add(cookie0 + (uint64_t)s, dag, 1, 1, 1,
		    end0 + (uint64_t)s * step);
		if (dec(0, NULL) != 1)
			tap_diag("fill: SIP %d not filled", s);
	}
}

/* DAGs 0..@n - 1 open: dynamic, no kernel count. */
static void open_dags(uint32_t n)
{
	uint32_t d;

	for (d = 0; d < n; d++)
		hws_dag_open(&H, d, 0, true);
}

/* DAG 9 opened and every SIP busy with its kernels until 1000 + s * @step. */
static void fill_busy(uint64_t step)
{
	hws_dag_open(&H, 9, 0, true);
	fill(9, 900, 1000, step);
}

/* ---- layouts and configuration ------------------------------------------- */

static void test_device_layout(void)
{
	struct hws_launch o;
	uint32_t c;
	bool good = true;

	ok(hws_layout_device(&L, 24, 48) == 0 && L.nr_sips == 96 &&
	   L.cluster_slot == 4 && L.cluster_sips == 3,
	   "device layout: 24 blocks in 96 SIP positions, clusters of 3 in slots of 4");
	for (c = 0; c < 24; c++) {
		good &= L.core[4 * c] == 24 + 2 * c &&
			L.core[4 * c + 1] == 24 + 2 * c + 1 &&
			L.core[4 * c + 2] == c &&
			!hws_mask_test(&L.present, 4 * c + 3) &&
			hws_mask_test(&L.type[PTO2_WORKER_VECTOR], 4 * c) &&
			hws_mask_test(&L.type[PTO2_WORKER_VECTOR], 4 * c + 1) &&
			!hws_mask_test(&L.type[PTO2_WORKER_VECTOR], 4 * c + 2) &&
			hws_mask_test(&L.type[PTO2_WORKER_CUBE], 4 * c + 2) &&
			!hws_mask_test(&L.type[PTO2_WORKER_CUBE], 4 * c);
	}
	ok(good && hws_mask_weight(&L.present) == 72 &&
	   hws_mask_weight(&L.type[PTO2_WORKER_CUBE]) == 24 &&
	   hws_mask_weight(&L.type[PTO2_WORKER_VECTOR]) == 48,
	   "device layout: AIV 24+2c, 25+2c at SIPs 4c, 4c+1, AIC c at 4c+2, 4c+3 absent; type masks");
	ok(hws_layout_device(&L, 0, 0) == -EINVAL &&
	   hws_layout_device(&L, HWS_MAX_SIPS / 4 + 1, 0) == -EINVAL &&
	   hws_layout_device(&L, 0, PTO_MAX_CORES + 1) == -EINVAL &&
	   hws_layout_device(&L, PTO_MAX_AIC, 2 * PTO_MAX_AIC) == 0 &&
	   L.nr_sips == 4 * PTO_MAX_AIC &&
	   hws_mask_weight(&L.present) == 3 * PTO_MAX_AIC,
	   "device layout: no cores, more blocks than HWS_MAX_SIPS / 4 or more than PTO_MAX_CORES cores refused; the largest device fits");
	ok(hws_layout_device(&L, 2, 8) == 0 && L.nr_sips == 16 &&
	   hws_mask_weight(&L.type[PTO2_WORKER_CUBE]) == 2 &&
	   hws_mask_weight(&L.type[PTO2_WORKER_VECTOR]) == 8 &&
	   hws_mask_test(&L.present, 12) && !hws_mask_test(&L.present, 14) &&
	   L.core[13] == 2 + 7 &&
	   hws_layout_device(&L, 3, 1) == 0 && L.nr_sips == 12 &&
	   hws_mask_weight(&L.type[PTO2_WORKER_VECTOR]) == 1 &&
	   hws_mask_test(&L.present, 10) && !hws_mask_test(&L.present, 9),
	   "device layout of other AIC/AIV counts (sim device): a block per AIC or AIV pair, absent cores absent");

	init_device(24);
	{
		struct hws_kernel k = kern(1, 0, 1, 1, 10, 100);

		hws_dag_open(&H, 0, 0, true);
		k.affinity = L.type[PTO2_WORKER_CUBE];
		hws_add(&H, &k, 0);
		k = kern(2, 0, 2, 1, 9, 100);
		k.affinity = L.type[PTO2_WORKER_VECTOR];
		hws_add(&H, &k, 0);
		k = kern(3, 0, 3, 1, 8, 100);
		hws_add(&H, &k, 0);
	}
	ok(dec(0, &o) == 1 && o.cookie == 1 && lowest(&o.sips) == 94 &&
	   hws_mask_weight(&o.sips) == 1,
	   "device: an AIC kernel goes to the highest AIC (SIP 94 = AIC 23)");
	ok(dec(0, &o) == 1 && o.cookie == 2 && meq(&o.sips, range(92, 93)) &&
	   L.core[92] == 24 + 46 && L.core[93] == 24 + 47,
	   "device: a 2-AIV kernel takes both AIVs of the highest block (SIPs 92, 93 = AIV 70, 71)");
	ok(dec(0, &o) == 1 && o.cookie == 3 && meq(&o.sips, range(88, 90)) &&
	   L.core[90] == 22,
	   "device: a 3-SIP kernel takes the highest whole free block (SIPs 88..90 = AIV 68, 69, AIC 22)");
}

static void test_uniform_layouts(void)
{
	ok(hws_layout_uniform(&L, 2, 4) == 0 && L.nr_sips == 4 &&
	   hws_mask_weight(&L.present) == 2 && hws_mask_test(&L.present, 0) &&
	   hws_mask_test(&L.present, 1) && L.core[1] == 1,
	   "uniform 2 SIPs: one 4-slot cluster with 2 present");
	ok(hws_layout_uniform(&L, 24, 6) == 0 && L.nr_sips == 32 &&
	   L.cluster_slot == 8 && hws_mask_test(&L.present, 13) &&
	   !hws_mask_test(&L.present, 14) && L.core[8] == 6,
	   "uniform 24 SIPs in clusters of 6: four 8-slots, SIPs 8c..8c+5");
	ok(hws_layout_uniform(&L, 12, 5) == -EINVAL &&
	   hws_layout_uniform(&L, 0, 4) == -EINVAL &&
	   hws_layout_uniform(&L, HWS_MAX_SIPS + 1, 16) == -EINVAL,
	   "uniform: cluster sizes other than 3/4/6/8/12/16, 0 or more than HWS_MAX_SIPS SIPs refused");
}

static void test_config_check(void)
{
	struct hws_config c;
	char msg[160];

	init_uniform(16, 4);
	c = C;
	c.cluster_sip_num = 8;
	ok(hws_config_check(&c, &L, msg, sizeof(msg)) == -EINVAL &&
	   strstr(msg, "CLUSTER_SIP_NUM"), "config: CLUSTER_SIP_NUM must match the layout (%s)", msg);
	c = C;
	c.promote_rule = 0x10;
	ok(hws_config_check(&c, &L, msg, sizeof(msg)) == -EINVAL,
	   "config: unknown PROMOTE_RULE bits refused (%s)", msg);
	c = C;
	c.scale_ratio[7] = 0;
	ok(hws_config_check(&c, &L, msg, sizeof(msg)) == -EINVAL &&
	   strstr(msg, "RANK_7"), "config: scale ratio 0 refused (%s)", msg);
	ok(hws_configure(&H, &c, msg, sizeof(msg)) == -EINVAL &&
	   H.cfg.scale_ratio[7] == 800, "config: a refused configuration changes nothing");
	c = C;
	c.pre_idle_offset = HWS_MAX_SPAN + 1;
	ok(hws_config_check(&c, &L, msg, sizeof(msg)) == -EINVAL &&
	   strstr(msg, "PRE_IDLE_OFFSET"), "config: an offset above 2^40 refused (%s)", msg);
	c = C;
	c.launch_delay = HWS_MAX_SPAN + 1;
	ok(hws_config_check(&c, &L, msg, sizeof(msg)) == -EINVAL &&
	   strstr(msg, "LAUNCH_SIP_DELAY"), "config: a launch delay above 2^40 refused (%s)", msg);
	c = C;
	c.backfill_margin = -(int64_t)HWS_MAX_SPAN - 1;
	ok(hws_config_check(&c, &L, msg, sizeof(msg)) == -EINVAL &&
	   strstr(msg, "MARGIN"), "config: a margin below -2^40 refused (%s)", msg);
	c = C;
	c.pre_idle_offset = HWS_MAX_SPAN;
	c.launch_delay = HWS_MAX_SPAN;
	c.backfill_margin = -(int64_t)HWS_MAX_SPAN;
	ok(hws_config_check(&c, &L, msg, sizeof(msg)) == 0,
	   "config: offset, delay and margin of 2^40 (the margin either sign) accepted");
}

/* ---- shapes: alignment, clusters, capability ----------------------------- */

/* Uniform layouts: SIPs, cluster size. */
static const uint32_t layouts[][2] = {
	{ 12, 3 }, { 12, 6 }, { 12, 12 }, { 16, 4 }, { 16, 8 },
	{ 16, 16 }, { 24, 3 }, { 24, 6 }, { 24, 12 }, { 32, 4 },
	{ 32, 8 }, { 32, 16 },
};

/* Every shape (thread_num) the HWS accepts. */
static const uint16_t shapes[] = { 1, 2, 3, 4, 6, 8, 9, 12, 16 };

static uint32_t group_of(uint32_t tn)
{
	uint32_t g = 1;

	while (g < tn)
		g <<= 1;
	return g;
}

/* Blocks of @tn SIPs that fit at once in one cluster of @cs SIPs laid out
 * from its slot's start, each at a multiple of its group size. */
static uint32_t per_cluster(uint32_t cs, uint32_t tn)
{
	return tn > cs ? 0 : (cs - tn) / group_of(tn) + 1;
}

static void test_shapes(void)
{
	char caps[160];
	size_t r, s;

	for (r = 0; r < PTO_ARRAY_SIZE(layouts); r++) {
		uint32_t n = layouts[r][0], cs = layouts[r][1], bad = 0;
		size_t len = 0;

		caps[0] = '\0';
		for (s = 0; s < PTO_ARRAY_SIZE(shapes); s++) {
			uint16_t tn = shapes[s];
			uint32_t expect = (n / cs) * per_cluster(cs, tn), got = 0;
			struct hws_launch o;
			int first = -1, ret;

			init_uniform(n, cs);
			hws_dag_open(&H, 0, 0, true);
			ret = add(1, 0, tn, 256, 1, 10);
			if (tn > cs) {
				if (ret != -EINVAL) {
					bad++;
					tap_diag("%u/%u: <N,%u> accepted", n, cs, tn);
				}
				continue;
			}
			len += (size_t)snprintf(caps + len, sizeof(caps) - len,
						"%s%u", len ? "/" : "", tn);
			while (dec(0, &o) == 1) {
				int start = lowest(&o.sips);
				uint32_t g = group_of(tn), slot = L.cluster_slot;

				if (first < 0)
					first = start;
				got++;
				if (hws_mask_weight(&o.sips) != tn ||
				    !meq(&o.sips, range((uint32_t)start,
							(uint32_t)start + tn - 1)) ||
				    start % (int)g ||
				    start / (int)slot !=
				    (start + tn - 1) / (int)slot ||
				    !hws_mask_test(&L.present,
						   (uint32_t)start + tn - 1)) {
					bad++;
					tap_diag("%u/%u: <N,%u> placed at %s", n, cs,
						 tn, mstr(&o.sips));
				}
			}
			if (got != expect) {
				bad++;
				tap_diag("%u/%u: <N,%u>: %u blocks at once, expected %u",
					 n, cs, tn, got, expect);
			}
			/* 1..4 from the high end of the last cluster, 6.. at 0 */
			if (tn >= 6 ? first != 0 :
			    first != (int)(L.nr_sips - L.cluster_slot +
					   (per_cluster(cs, tn) - 1) * group_of(tn))) {
				bad++;
				tap_diag("%u/%u: <N,%u> first block at %d", n, cs,
					 tn, first);
			}
		}
		ok(!bad, "%2u SIPs, clusters of %2u: shapes <N,%s> only, aligned, contiguous, within a cluster, "
		   "1..4 from the high end, 6..16 from the low end", n, cs, caps);
	}
}

/* The largest cooperative kernel per shape: all blocks at once or none. */
static void test_coop_capability(void)
{
	size_t r, s;
	uint32_t bad = 0;

	for (r = 0; r < PTO_ARRAY_SIZE(layouts); r++) {
		uint32_t n = layouts[r][0], cs = layouts[r][1];
		char line[200];
		size_t len = 0;

		for (s = 0; s < PTO_ARRAY_SIZE(shapes); s++) {
			uint16_t tn = shapes[s];
			uint16_t max = (uint16_t)((n / cs) * per_cluster(cs, tn));
			struct hws_kernel k;
			struct hws_launch o;

			if (tn > cs)
				continue;
			init_uniform(n, cs);
			hws_dag_open(&H, 0, 0, true);
			k = kern(1, 0, tn, (uint16_t)(max + 1), 1, 10);
			k.coop = true;
			if (hws_add(&H, &k, 0) != -EINVAL)
				bad++;
			k.block_num = max;
			if (hws_add(&H, &k, 0) || dec(0, &o) != 1 ||
			    o.nr_blocks != max || o.block_idx != 0 ||
			    hws_mask_weight(&o.sips) != (uint32_t)max * tn ||
			    !(o.flags & HWS_LAUNCH_DONE))
				bad++;
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" <%u,%u>", max, tn);
		}
		tap_diag("cooperative maxima, %u SIPs in clusters of %u:%s", n,
			 cs, line);
	}
	ok(!bad, "cooperative kernels: the largest that fits launches whole in one decision, one block more is refused");
}

static void test_high_end(void)
{
	struct hws_launch o;

	init_uniform(16, 16);
	hws_dag_open(&H, 0, 0, true);
	add(1, 0, 1, 1, 30, 10);
	add(2, 0, 2, 1, 20, 10);
	add(3, 0, 12, 1, 10, 10);
	ok(dec(0, &o) == 1 && o.cookie == 1 && lowest(&o.sips) == 15,
	   "small shapes from the high end: 1 SIP at 15");
	ok(dec(0, &o) == 1 && o.cookie == 2 && lowest(&o.sips) == 12,
	   "small shapes from the high end: 2 SIPs at 12..13");
	ok(dec(0, &o) == 1 && o.cookie == 3 &&
	   meq(&o.sips, range(0, 11)),
	   "a 12-SIP block still finds the low end of the cluster free");

	/* 12 SIPs in clusters of 6: a 3-SIP block starts at 0 or 4, and 4..6
	 * is not all present, so one per cluster */
	init_uniform(12, 6);
	hws_dag_open(&H, 0, 0, true);
	add(1, 0, 3, 8, 1, 10);
	ok(dec(0, &o) == 1 && meq(&o.sips, range(8, 10)) &&
	   dec(0, &o) == 1 && meq(&o.sips, range(0, 2)) &&
	   dec(0, &o) == 0,
	   "clusters of 6: 3-SIP blocks at 8..10 then 0..2, never 4..6 (crosses the cluster's end)");
}

static void test_refused(void)
{
	static const uint16_t bad_tn[] = { 0, 5, 7, 10, 11, 13, 17 };
	struct hws_kernel k;
	size_t i;
	int all = 1;

	init_uniform(16, 8);
	hws_dag_open(&H, 0, 0, true);
	for (i = 0; i < PTO_ARRAY_SIZE(bad_tn); i++)
		all &= add(1, 0, bad_tn[i], 1, 1, 1) == -EINVAL;
	ok(all, "thread_num 0, 5, 7, 10, 11, 13, 17 refused");
	ok(add(1, 0, 9, 1, 1, 1) == -EINVAL,
	   "thread_num above CLUSTER_SIP_NUM refused");
	k = kern(1, 0, 1, 1, 1, 1);
	memset(&k.affinity, 0, sizeof(k.affinity));
	ok(hws_add(&H, &k, 0) == -EINVAL, "empty affinity refused");
	k = kern(1, 0, 2, 1, 1, 1);
	k.affinity = mk(1, 2, -1);
	ok(hws_add(&H, &k, 0) == -EINVAL,
	   "an affinity with no aligned group for the shape refused (SIPs 1, 2 for 2 SIPs)");
	k = kern(1, 0, 4, 5, 1, 1);
	k.coop = true;
	ok(hws_add(&H, &k, 0) == -EINVAL,
	   "a cooperative kernel larger than its usable SIPs refused (5 x 4 on 16)");
	k = kern(1, 3, 1, 1, 1, 1);
	ok(hws_add(&H, &k, 0) == -EINVAL, "a kernel of a DAG not open refused");
	k = kern(1, 0, 1, 1, 1, 1);
	k.ctx = HWS_NR_CTX;
	ok(hws_add(&H, &k, 0) == -EINVAL, "a context out of range refused");
	k = kern(1, 0, 1, 0, 1, 1);
	ok(hws_add(&H, &k, 0) == -EINVAL, "block_num 0 refused");
	k = kern(1, 0, 1, 1, 1, HWS_MAX_SPAN + 1);
	ok(hws_add(&H, &k, 0) == -EINVAL,
	   "an est_time above HWS_MAX_SPAN (2^40) refused");
	ok(hws_rs_free(&H) == HWS_RS_SIZE, "nothing refused entered the RS");
	k = kern(1, 0, 1, 1, 1, HWS_MAX_SPAN);
	ok(hws_add(&H, &k, 0) == 0, "an est_time of HWS_MAX_SPAN enters");
}

/* ---- RS, DAGs ------------------------------------------------------------ */

static void test_rs_full_and_dags(void)
{
	int i, all = 1;

	init_uniform(16, 4);
	ok(add(1, 0, 1, 1, 1, 1) == -EINVAL, "a kernel of an unopened DAG is refused");
	ok(hws_dag_open(&H, 0, 10, false) == 0 &&
	   hws_dag_open(&H, 0, 10, false) == -EBUSY &&
	   hws_dag_open(&H, HWS_MAX_DAGS, 1, false) == -EINVAL,
	   "DAG open: twice is -EBUSY, out of range -EINVAL");
	for (i = 0; i < HWS_RS_SIZE; i++)
		all &= add((uint64_t)i + 1, 0, 1, 1, (uint32_t)i, 10) == 0;
	ok(all && hws_rs_free(&H) == 0, "32 kernels fill the RS");
	ok(add(100, 0, 1, 1, 1, 10) == -ENOSPC, "the 33rd kernel: -ENOSPC");
	ok(add(5, 0, 1, 1, 1, 10) == -EEXIST,
	   "a cookie already in the RS is not added twice");
	ok(hws_dag_close(&H, 0) == -EBUSY, "closing a DAG with kernels in the RS: -EBUSY");
	check_now("a full RS");
	ok(dec_all(0) == 16 && hws_rs_free(&H) == 16, "16 SIPs: 16 launched, 16 left");
	ok(hws_remove(&H, 3) == 0 && hws_remove(&H, 3) == -ENOENT &&
	   hws_rs_free(&H) == 17, "hws_remove takes an unlaunched kernel out");
	check_now("a removal");
	for (i = 1; i <= HWS_RS_SIZE; i++)
		hws_remove(&H, (uint64_t)i);
	ok(hws_dag_close(&H, 0) == 0 && hws_dag_open(&H, 0, 0, true) == 0,
	   "DAG close once its kernels left, then reopen");
	ok(H.dag[0].finished == 0 && H.dag[0].dynamic,
	   "a reopened DAG starts again (finish count 0, dynamic)");
	ok(hws_dag_close(&H, 5) == -EINVAL, "closing a DAG that is not open: -EINVAL");
}

/*
 * hws_evict() takes back a kernel none of whose blocks was placed, and
 * only such a kernel: one with blocks running stays until they are all
 * placed.
 */
static void test_evict(void)
{
	init_uniform(4, 4);
	hws_dag_open(&H, 0, 0, true);
	ok(add(1, 0, 1, 8, 9, 10) == 0 && add(2, 0, 1, 1, 1, 10) == 0,
	   "evict: an 8-block kernel and a one-block kernel in the RS");
	ok(dec_all(0) == 4 && hws_rs_free(&H) == HWS_RS_SIZE - 2,
	   "evict: 4 of the 8 blocks placed on the 4 SIPs, both kernels stay");
	ok(hws_evict(&H, 1) == -EBUSY && hws_rs_free(&H) == HWS_RS_SIZE - 2,
	   "evict: a kernel with blocks placed stays (-EBUSY)");
	ok(hws_evict(&H, 2) == 0 && hws_evict(&H, 2) == -ENOENT &&
	   hws_rs_free(&H) == HWS_RS_SIZE - 1,
	   "evict: an unplaced kernel leaves; twice: -ENOENT");
	check_now("an eviction");
	ok(add(2, 0, 1, 1, 1, 10) == 0,
	   "evict: the kernel taken back can be added again");
}

/* ---- online priority ----------------------------------------------------- */

static void test_online_priority(void)
{
	struct hws_kernel_state st;
	struct hws_launch o;

	init_uniform(4, 4);
	hws_dag_open(&H, 5, 100, false);
	run_kernels(5, 1000, 89, 500, 5);
	add_cp(2000, 5, 1, 1, 100, 10);
	dec(0, &o);
	done_mask(&o.sips, 5);
	/* 90 of 100 finished: 10% remaining is rank 18 of the 20-rank table,
	 * scale 19.00; the cp kernel's priority was 100 */
	add(2001, 5, 1, 1, 85, 10);
	st = kstate(2001);
	ok(H.dag[5].finished == 90 && H.dag[5].rank == 18 &&
	   st.pool == HWS_POOL_P && st.top && st.priority == 1615,
	   "online priority: critical ratio 0.85, 10%% remaining (rank 18, 1900) -> ceil(0.85 * 1900) = 1615 (got %llu)",
	   (unsigned long long)st.priority);
	add(2002, 5, 1, 1, 86, 10);
	ok(kstate(2002).priority == 1634 && kstate(2001).pool == HWS_POOL_O &&
	   kstate(2001).priority == 85,
	   "a higher offline priority arrives: it is the DAG's P-task (1634), the old top is O by offline priority");

	hws_dag_open(&H, 6, 20, false);
	add_cp(3000, 6, 1, 1, 30, 10);
	while (!gone(3000)) {
		dec(0, &o);
		done_mask(&o.sips, 6);
	}
	add(3001, 6, 1, 1, 7, 10);
	ok(H.dag[6].rank == 1 && kstate(3001).priority == 47,
	   "online priority rounds up: 1 of 20 finished (rank 1, 2.00), 7 / 30 * 200 = 46.7 -> 47 (got %llu)",
	   (unsigned long long)kstate(3001).priority);

	hws_dag_open(&H, 7, 0, true);
	add(4000, 7, 1, 1, 1234, 10);
	st = kstate(4000);
	ok(st.pool == HWS_POOL_P && st.priority == 1234,
	   "dynamic DAG: online priority = offline priority");

	/* a DAG near its end goes before a DAG that just started */
	init_uniform(4, 4);
	hws_dag_open(&H, 0, 10, false);
	hws_dag_open(&H, 1, 10, false);
	run_kernels(0, 100, 9, 1, 1);
	add_cp(1, 1, 1, 1, 1000, 10);
	add_cp(2, 0, 1, 1, 10, 10);
	ok(kstate(2).priority == 1900 && kstate(1).priority == 100 &&
	   dec(0, &o) == 1 && o.cookie == 2 && o.pool == HWS_POOL_P,
	   "P pool by online priority: the DAG with 10%% left (1900) before the new one (100)");
}

/* ---- fail counts and promotion ------------------------------------------- */

/*
 * 4 SIPs in one cluster, no promotion, DAGs 0..@ndags - 1 open; SIPs 0
 * and 2 busy, 1 and 3 free: a 2-SIP kernel cannot fit, a 1-SIP kernel can.
 */
static void split_setup(uint32_t ndags)
{
	init_uniform(4, 4);
	C.promote_rule = 0;
	reconf();
	open_dags(ndags);
	fill_busy(0);
	done(1, 10);
	done(3, 10);
}

static void test_fail_counts(void)
{
	struct hws_launch o;

	split_setup(4);
	add(1, 0, 2, 1, 100, 10);	/* A: P, oldest, cannot fit */
	add(2, 1, 1, 1, 90, 10);	/* L: P, fits */
	add(3, 2, 2, 1, 80, 10);	/* B: P, younger than L */
	ok(dec(20, &o) == 1 && o.cookie == 2 && o.pool == HWS_POOL_P &&
	   kstate(1).fail_times == 1 && kstate(3).fail_times == 0,
	   "a P-task launched: older P-tasks fail once (A 1), younger ones not (B 0)");
	add(4, 2, 1, 1, 10, 10);	/* O: DAG 2's second kernel */
	ok(dec(20, &o) == 1 && o.cookie == 4 && o.pool == HWS_POOL_O &&
	   kstate(1).fail_times == 2 && kstate(3).fail_times == 1,
	   "an O-task launched: every P-task fails once (A 2, B 1)");
}

/* Scenario of the threshold rule on 8 SIPs in 2 clusters of 4: every SIP
 * busy (SIP s until 100 + 10 * (7 - s) ... see below), K needs 4 SIPs,
 * small kernels take each SIP as it frees. */
static void threshold_setup(uint32_t rule, uint32_t thr)
{
	int s;

	init_uniform(8, 4);
	C.promote_rule = rule;
	C.promote_threshold = thr;
	reconf();
	open_dags(3);
	/* SIP s ends at 100 + 10 * (7 - s): SIP 7 first, SIP 0 last */
	for (s = 7; s >= 0; s--) {
		add(100 + (uint64_t)s, 1, 1, 1, 1, 100 + 10 * (7 - (uint64_t)s));
		dec(0, NULL);
	}
	add(1, 0, 4, 1, 1000, 50);	/* K */
	for (s = 0; s < 8; s++)
		add(200 + (uint64_t)s, 2, 1, 1, 10 - (uint32_t)s, 1000);
}

static void test_promote_threshold(void)
{
	struct hws_launch o;
	struct hws_kernel_state st;
	bool promoted_early = false;
	int i;

	threshold_setup(PTO_HWS_PROMOTE_THRESHOLD, 4);
	for (i = 0; i < 4; i++) {
		uint32_t sip = 7 - (uint32_t)i;

		done(sip, 100 + 10 * (uint64_t)i);
		if (dec(100 + 10 * (uint64_t)i, &o) != 1 ||
		    lowest(&o.sips) != (int)sip)
			tap_diag("step %d: no small kernel on SIP %u", i, sip);
		if (i < 3 && (o.flags & HWS_LAUNCH_PROMOTED))
			promoted_early = true;
	}
	st = kstate(1);
	ok(!promoted_early && (o.flags & HWS_LAUNCH_PROMOTED) &&
	   st.pool == HWS_POOL_R && st.fail_times == 4,
	   "threshold 4: K promoted at its 4th failure");
	ok(meq(&st.reserved, range(0, 3)) && meq(&H.reserved, st.reserved),
	   "K reserves the group that frees soonest: SIPs 0..3 (free by 170), not 4..7 (busy to 1100+)");
	{
		uint64_t rc = 0;
		hws_mask rm;

		ok(!hws_reservation(&H, &rc, &rm) && rc == 1 &&
		   meq(&rm, range(0, 3)) && H.st.reservations == 1,
		   "hws_reservation: K (1) holds SIPs 0..3, one reservation counted (%llu)",
		   (unsigned long long)H.st.reservations);
	}

	/* backfill onto the reserved group (free at 170) at time 140 */
	done(3, 140);
	ok(dec(140, &o) == 0,
	   "backfill refused: a 1000-long kernel on reserved SIP 3 (group free in 30)");
	add(300, 2, 1, 1, 1, 20);
	ok(dec(140, &o) == 1 && o.cookie == 300 && lowest(&o.sips) == 3 &&
	   (o.flags & HWS_LAUNCH_BACKFILL),
	   "backfill: a 20-long kernel fits before the reserved group frees (30 left)");
	done(3, 150);
	done(2, 150);
	/* at 150 the group frees in 20 (SIP 0 at 170) */
	C.backfill_margin = -15;
	reconf();
	add(302, 2, 1, 1, 1, 10);
	ok(dec(150, &o) == 0 && !gone(302),
	   "backfill, margin -15: 10 long with 20 left is refused (20 < 10 + 15)");
	C.backfill_margin = -5;
	reconf();
	ok(dec(150, &o) == 1 && o.cookie == 302 && lowest(&o.sips) == 3 &&
	   (o.flags & HWS_LAUNCH_BACKFILL),
	   "backfill, margin -5: 10 long with 20 left passes (20 >= 10 + 5)");
	C.backfill_margin = 15;
	reconf();
	add(301, 2, 1, 1, 1, 34);
	ok(dec(150, &o) == 1 && o.cookie == 301 && lowest(&o.sips) == 2 &&
	   (o.flags & HWS_LAUNCH_BACKFILL),
	   "backfill, margin +15: 34 long with 20 left passes (20 >= 34 - 15)");
	/* everything of the reserved group completes by 184 */
	done(3, 160);
	done(1, 160);
	done(0, 170);
	done(2, 184);
	st = kstate(1);
	ok(dec(184, &o) == 1 && o.cookie == 1 && o.pool == HWS_POOL_R &&
	   meq(&o.sips, range(0, 3)) && !hws_mask_weight(&H.reserved),
	   "the R-task launches on its reserved SIPs once they are all free; the reservation goes");
	{
		uint64_t rc;
		hws_mask rm;

		ok(hws_reservation(&H, &rc, &rm) == -ENOENT,
		   "hws_reservation: none once the R-task launched");
	}
}

/* test_promote_threshold without the threshold bit: never promoted */
static void test_promote_threshold_off(void)
{
	struct hws_launch o;
	struct hws_kernel_state st;
	int i;

	threshold_setup(0, 4);
	for (i = 0; i < 8; i++) {
		done(7 - (uint32_t)(i % 4), 100 + 10 * (uint64_t)i);
		dec(100 + 10 * (uint64_t)i, &o);
		if (i < 4)
			continue;
	}
	st = kstate(1);
	ok(st.pool == HWS_POOL_P && st.fail_times >= 4 &&
	   !hws_mask_weight(&H.reserved) && H.st.promotions == 0,
	   "threshold bit off: K fails %u times and is never promoted",
	   st.fail_times);
}

static void test_promote_most_failures(void)
{
	struct hws_launch o;
	int i;

	/* A (older) and B (higher priority) cannot fit; A accumulates more
	 * failures; then the threshold rule is switched on */
	split_setup(3);
	add(1, 0, 2, 1, 50, 10);	/* A */
	for (i = 0; i < 3; i++) {
		add(10 + (uint64_t)i, 2, 1, 1, 1, 10);
		dec(20, &o);
		done_mask(&o.sips, 30);
	}
	add(2, 1, 2, 1, 60, 10);	/* B */
	add(20, 2, 1, 1, 1, 10);
	dec(40, &o);
	ok(kstate(1).fail_times == 4 && kstate(2).fail_times == 1,
	   "A failed 4 times, B once");
	C.promote_rule = PTO_HWS_PROMOTE_THRESHOLD;
	C.promote_threshold = 1;
	reconf();
	done_mask(&o.sips, 50);
	add(21, 2, 1, 1, 1, 10);
	dec(50, &o);
	ok(kstate(1).pool == HWS_POOL_R && kstate(2).pool == HWS_POOL_P,
	   "several over the threshold: the one with most failures (A) is promoted, not the higher priority (B)");
}

/* 16 SIPs in 4 clusters of 4, all busy; group g frees at ends[g]. */
static void test_reserve_soonest(void)
{
	static const uint64_t ends[4] = { 500, 300, 200, 400 };
	struct hws_kernel_state st;
	struct hws_launch o;
	int s;

	init_uniform(16, 4);
	C.promote_rule = PTO_HWS_PROMOTE_SKIPPED_TOP;
	reconf();
	open_dags(2);
	for (s = 15; s >= 0; s--) {
		/* the group's last SIP ends at ends[g], the others earlier */
		uint64_t est = (s % 4 == 1) ? ends[s / 4] : ends[s / 4] - 50;

		add(100 + (uint64_t)s, 1, 1, 1, 1, est);
		dec(0, NULL);
	}
	done(0, 10);		/* group 0 has a free SIP, but frees last */
	add(1, 0, 4, 1, 100, 10);
	add(2, 1, 1, 1, 1, 10);
	ok(dec(10, &o) == 1 && o.cookie == 2, "a small kernel passes over the 4-SIP top");
	st = kstate(1);
	ok((o.flags & HWS_LAUNCH_PROMOTED) && st.pool == HWS_POOL_R &&
	   meq(&st.reserved, range(8, 11)),
	   "skipped top promoted; reserves the group freeing soonest (8..11 at 200; others 300, 400, 500): %s",
	   mstr(&st.reserved));
}

/* 8 SIPs, 2 clusters of 4: SIPs 1, 3, 5, 7 free (no 2-SIP group). */
static void sparse_setup(uint32_t rule)
{
	init_uniform(8, 4);
	C.promote_rule = rule;
	reconf();
	open_dags(3);
	fill_busy(0);
	done(1, 10);
	done(3, 10);
	done(5, 10);
	done(7, 10);
}

static void test_promote_top1_skipped(void)
{
	struct hws_launch o;
	struct hws_kernel k;

	/* TOP_1: the top P-task needs a whole cluster (4 SIPs) */
	sparse_setup(PTO_HWS_PROMOTE_TOP_1);
	add(1, 0, 4, 1, 100, 10);
	ok(dec(20, &o) == 0 && kstate(1).pool == HWS_POOL_R,
	   "TOP_1: the top P-task needing a whole cluster is promoted, even with no launch");
	sparse_setup(PTO_HWS_PROMOTE_TOP_1);
	add(1, 0, 2, 1, 100, 10);
	add(2, 1, 1, 1, 10, 10);
	ok(dec(20, &o) == 1 && o.cookie == 2 && kstate(1).pool == HWS_POOL_P,
	   "TOP_1: a top P-task of 2 SIPs (not the whole cluster) is not promoted");
	sparse_setup(PTO_HWS_PROMOTE_ALL & ~PTO_HWS_PROMOTE_TOP_1 &
		     ~PTO_HWS_PROMOTE_SKIPPED_TOP);
	add(1, 0, 4, 1, 100, 10);
	ok(dec(20, &o) == 0 && kstate(1).pool == HWS_POOL_P,
	   "TOP_1 bit off: not promoted");

	/* SKIPPED_TOP: a lower kernel launched past the top P-task */
	sparse_setup(PTO_HWS_PROMOTE_SKIPPED_TOP);
	add(1, 0, 2, 1, 100, 10);
	add(2, 1, 1, 1, 10, 10);
	ok(dec(20, &o) == 1 && o.cookie == 2 &&
	   (o.flags & HWS_LAUNCH_PROMOTED) && kstate(1).pool == HWS_POOL_R,
	   "SKIPPED_TOP: the top P-task passed over is promoted");
	sparse_setup(PTO_HWS_PROMOTE_ALL & ~PTO_HWS_PROMOTE_SKIPPED_TOP);
	add(1, 0, 2, 1, 100, 10);
	add(2, 1, 1, 1, 10, 10);
	ok(dec(20, &o) == 1 && o.cookie == 2 && kstate(1).pool == HWS_POOL_P,
	   "SKIPPED_TOP bit off: not promoted");
	sparse_setup(PTO_HWS_PROMOTE_SKIPPED_TOP);
	add(1, 0, 1, 1, 100, 10);
	add(2, 1, 1, 1, 10, 10);
	ok(dec(20, &o) == 1 && o.cookie == 1 && kstate(2).pool == HWS_POOL_P &&
	   !hws_mask_weight(&H.reserved),
	   "SKIPPED_TOP: the top itself launched, nothing promoted");

	/* ON_CP: an off-cp kernel launched while an on-cp P-task waits */
	sparse_setup(PTO_HWS_PROMOTE_ON_CP);
	add(1, 0, 2, 1, 100, 10);			/* top, off cp */
	k = kern(2, 1, 2, 1, 90, 10);
	k.on_cp = true;
	hws_add(&H, &k, 0);				/* on cp, second */
	add(3, 2, 1, 1, 10, 10);			/* off cp, fits */
	ok(dec(20, &o) == 1 && o.cookie == 3 && kstate(2).pool == HWS_POOL_R &&
	   kstate(1).pool == HWS_POOL_P,
	   "ON_CP: an off-cp kernel launched; the best on-cp P-task (not the top) is promoted");
	sparse_setup(PTO_HWS_PROMOTE_ALL & ~PTO_HWS_PROMOTE_ON_CP &
		     ~PTO_HWS_PROMOTE_SKIPPED_TOP);
	add(1, 0, 2, 1, 100, 10);
	hws_add(&H, &k, 0);
	add(3, 2, 1, 1, 10, 10);
	ok(dec(20, &o) == 1 && o.cookie == 3 && kstate(2).pool == HWS_POOL_P,
	   "ON_CP bit off: not promoted");
	sparse_setup(PTO_HWS_PROMOTE_ON_CP);
	add(1, 0, 2, 1, 100, 10);
	hws_add(&H, &k, 0);
	add_cp(3, 2, 1, 1, 10, 10);
	ok(dec(20, &o) == 1 && o.cookie == 3 && kstate(2).pool == HWS_POOL_P,
	   "ON_CP: the kernel launched was on cp itself, nothing promoted");
}

static void test_rsvd_first(void)
{
	struct hws_launch o;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		/* 8 SIPs: reserve 0..3 (SIP 0 busy until 1000), SIP 1..7 free */
		init_uniform(8, 4);
		C.promote_rule = PTO_HWS_PROMOTE_TOP_1;
		C.rsvd_first = pass;
		reconf();
		open_dags(2);
		fill_busy(10);	/* SIP s ends at 1000 + 10 s */
		done(1, 10);
		done(2, 10);
		done(3, 10);
		done(5, 10);
		done(6, 10);
		add(1, 0, 4, 1, 100, 10);
		dec(20, &o);	/* K reserves 0..3 (free at 1000; 4..7 at 1070) */
		if (!meq(&H.reserved, range(0, 3)))
			tap_diag("reserved %s", mstr(&H.reserved));
		add(2, 1, 1, 1, 10, 10);
		dec(20, &o);
		if (pass == 0)
			ok(o.cookie == 2 && lowest(&o.sips) == 6 &&
			   !(o.flags & HWS_LAUNCH_BACKFILL),
			   "USE_RSVD_SIP_FIRST 0: the free unreserved SIP (6) first");
		else
			ok(o.cookie == 2 && lowest(&o.sips) == 3 &&
			   (o.flags & HWS_LAUNCH_BACKFILL),
			   "USE_RSVD_SIP_FIRST 1: the reserved-but-free SIP (3) first, as a backfill");
	}
}

/* ---- usage masks, contexts, affinity ------------------------------------- */

static void test_usage_masks(void)
{
	struct hws_kernel k;
	struct hws_launch o;
	hws_mask lo = range(0, 7), hi = range(8, 15), seen = { { 0 } };
	bool inside = true;
	int n = 0;

	init_uniform(16, 4);
	C.usage[1][PTO_HWS_USAGE_1SIP] = lo;
	C.usage[1][PTO_HWS_USAGE_2SIP] = hi;
	reconf();
	hws_dag_open(&H, 0, 0, true);
	k = kern(1, 0, 1, 16, 10, 100);
	k.ctx = 1;
	hws_add(&H, &k, 0);
	while (dec(0, &o) == 1) {
		n++;
		inside &= hws_mask_weight(&o.sips) == 1 &&
			  lowest(&o.sips) < 8;
	}
	ok(n == 8 && inside,
	   "context 1, 1-SIP mask 0..7: 8 blocks, all on SIPs 0..7");
	k = kern(2, 0, 2, 8, 10, 100);
	k.ctx = 1;
	hws_add(&H, &k, 0);
	k = kern(3, 0, 1, 8, 5, 100);
	hws_add(&H, &k, 0);
	n = 0;
	inside = true;
	while (dec(0, &o) == 1) {
		if (o.cookie == 2)
			inside &= lowest(&o.sips) >= 8;
		if (o.cookie == 2)
			n++;
	}
	ok(n == 4 && inside,
	   "context 1, 2-SIP mask 8..15: its 2-SIP blocks only there (4 fit)");
	hws_remove(&H, 1);
	hws_remove(&H, 2);
	hws_remove(&H, 3);

	/* a changed mask applies from the next decision */
	done_mask(&L.present, 200);
	C.usage[1][PTO_HWS_USAGE_1SIP] = range(4, 5);
	reconf();
	k = kern(4, 0, 1, 8, 10, 100);
	k.ctx = 1;
	hws_add(&H, &k, 0);
	k = kern(5, 0, 1, 8, 5, 100);
	hws_add(&H, &k, 0);	/* context 0: every SIP */
	inside = true;
	while (dec(300, &o) == 1) {
		if (o.cookie == 4) {
			inside &= lowest(&o.sips) == 4 || lowest(&o.sips) == 5;
			seen.w[0] |= o.sips.w[0];
		}
	}
	ok(inside && seen.w[0] == 0x30,
	   "after reconfiguration: context 1 uses only SIPs 4, 5; context 0 the rest");
	(void)hi;
}

/* The cookies hws_stranded() gives, as a bit mask (cookies 1..63). */
static uint64_t stranded(void)
{
	uint64_t c[HWS_RS_SIZE], m = 0;
	uint32_t n = hws_stranded(&H, c), i;

	for (i = 0; i < n; i++)
		m |= 1ULL << c[i];
	return m;
}

/*
 * Kernels in the RS that a changed usage mask leaves no place: a
 * one-SIP kernel whose mask is emptied, then a cooperative one whose mask
 * keeps fewer aligned groups than its blocks; not a kernel that still
 * has enough, nor one of another context.
 */
static void test_stranded(void)
{
	hws_mask none = { { 0 } };
	struct hws_kernel k;
	uint64_t before, one, both;
	int ret;

	init_uniform(16, 4);
	hws_dag_open(&H, 0, 0, true);
	k = kern(1, 0, 1, 4, 10, 100);
	k.ctx = 1;
	ret = hws_add(&H, &k, 0);
	k = kern(2, 0, 2, 2, 10, 100);
	k.ctx = 1;
	k.coop = true;
	ret |= hws_add(&H, &k, 0);
	ret |= add(3, 0, 1, 1, 10, 100);
	before = stranded();
	C.usage[1][PTO_HWS_USAGE_1SIP] = none;
	C.usage[1][PTO_HWS_USAGE_2SIP] = range(0, 3);
	reconf();
	one = stranded();
	C.usage[1][PTO_HWS_USAGE_2SIP] = range(0, 2);
	reconf();
	both = stranded();
	ok(!ret && !before && one == 0x2 && both == 0x6,
	   "stranded by a mask change: none before (0x%" PRIx64 "), the emptied 1-SIP one (0x%" PRIx64 "), then the cooperative one left one group for two blocks (0x%" PRIx64 ")",
	   before, one, both);
	hws_remove(&H, 1);
	hws_remove(&H, 2);
	ok(dec_all(0) == 1 && !stranded(),
	   "the other context's kernel still launches; nothing stranded is left");
}

static void test_affinity(void)
{
	struct hws_kernel k;
	struct hws_launch o;
	bool inside = true;
	int n = 0;

	init_uniform(16, 4);
	hws_dag_open(&H, 0, 0, true);
	k = kern(1, 0, 1, 6, 10, 100);
	k.affinity = mk(5, 6, 9, -1);
	hws_add(&H, &k, 0);
	while (dec(0, &o) == 1) {
		n++;
		inside &= lowest(&o.sips) == 5 || lowest(&o.sips) == 6 ||
			  lowest(&o.sips) == 9;
	}
	ok(n == 3 && inside, "affinity {5, 6, 9}: three blocks, only there");
}

/* ---- early launch -------------------------------------------------------- */

static void test_early_report(void)
{
	struct hws_launch o;
	hws_mask pre_m, m3 = mk(3, -1);

	init_uniform(4, 4);
	hws_dag_open(&H, 0, 0, true);
	fill(0, 100, 200, 0);			/* all busy until 200 */
	add(1, 0, 1, 1, 10, 500);
	ok(pre(2) == 0 && dec(150, &o) == 0,
	   "early launch off: a pre-complete SIP is not used");
	hws_status(&H, 150, NULL, &pre_m, NULL);
	ok(meq(&pre_m, mk(2, -1)), "SIP 2 reported pre-complete shows as pre-idle");
	C.early_launch = true;
	C.early_mode = HWS_EARLY_SIP_REPORT;
	reconf();
	ok(dec(150, &o) == 1 && o.cookie == 1 && meq(&o.sips, mk(2, -1)) &&
	   meq(&o.early, o.sips) && (o.flags & HWS_LAUNCH_EARLY),
	   "the early launch goes to pre-idle SIP 2");
	ok(hws_sip_remaining(&H, 2, 150) == 50 + 500 &&
	   hws_sip_remaining(&H, 2, 180) == 20 + 500,
	   "while it waits, SIP 2's remaining time is its current work + 500");
	add(2, 0, 1, 1, 10, 500);
	ok(dec(150, &o) == 0, "SIP report mode: no other report, no other early launch");
	pre(2);
	ok(dec(150, &o) == 0, "a SIP with a waiting launch is not pre-idle again");
	done(2, 200);
	ok(hws_sip_remaining(&H, 2, 200) == 500 &&
	   hws_sip_remaining(&H, 2, 300) == 400 &&
	   hws_mask_test(&H.busy, 2) && !hws_mask_test(&H.shadow, 2),
	   "at real-complete the waiting launch runs and its countdown starts (500 at 200, 400 at 300)");
	ok(hws_sip_complete(&H, &m3, 200) == 0 &&
	   hws_sip_complete(&H, &m3, 200) == -EINVAL &&
	   hws_mask_test(&H.idle, 3),
	   "completing an idle SIP is -EINVAL and changes nothing");
}

static void test_early_predict(void)
{
	struct hws_launch o;

	init_uniform(4, 4);
	C.early_launch = true;
	C.early_mode = HWS_EARLY_PREDICT;
	C.pre_idle_offset = 100;
	reconf();
	hws_dag_open(&H, 0, 0, true);
	fill(0, 100, 1000, 10);	/* SIP s ends at 1000 + 10 s */
	add(1, 0, 1, 1, 10, 500);
	ok(dec(899, &o) == 0, "predict mode: at 899 no SIP within 100 of its end");
	ok(dec(900, &o) == 1 && meq(&o.sips, mk(0, -1)) &&
	   (o.flags & HWS_LAUNCH_EARLY),
	   "predict mode: at 900 SIP 0 (ends 1000) is pre-idle and takes the early launch");
	add(2, 0, 1, 1, 10, 500);
	ok(dec(905, &o) == 0 && dec(910, &o) == 1 && lowest(&o.sips) == 1,
	   "predict mode: SIP 1 (ends 1010) becomes pre-idle at 910");
	done(0, 1000);
	ok(hws_sip_remaining(&H, 0, 1100) == 400,
	   "the early launch's countdown started at real-complete");
}

/* ---- cooperative kernels, trigger count, fill-up, FIFO ------------------- */

static void test_coop(void)
{
	struct hws_kernel k;
	struct hws_launch o;

	init_uniform(16, 4);
	hws_dag_open(&H, 0, 0, true);
	fill(0, 100, 1000, 10);
	done_mask(&H.busy, 0);
	fill(0, 200, 100, 0);
	{
		hws_mask m = range(8, 15);

		done_mask(&m, 10);
	}	/* groups 2, 3 free */
	k = kern(1, 0, 4, 3, 100, 50);
	k.coop = true;
	hws_add(&H, &k, 0);
	add(2, 0, 1, 1, 1, 50);
	ok(dec(20, &o) == 1 && o.cookie == 2,
	   "cooperative 3 x 4 with 2 groups free: none of it launches (a smaller kernel does)");
	ok(kstate(1).launched == 0, "... and no block of it was launched");
	done_mask(&H.busy, 100);
	ok(dec(100, &o) == 1 && o.cookie == 1 && o.nr_blocks == 3 &&
	   o.block_idx == 0 && hws_mask_weight(&o.sips) == 12 &&
	   (o.flags & HWS_LAUNCH_DONE) &&
	   H.sip[lowest(&o.sips)].run.block_idx == 0 &&
	   H.sip[lowest(&o.sips) + 4].run.block_idx == 1,
	   "cooperative: all 3 blocks in one decision once 3 groups are free, blocks in ascending SIP order");
}

static void test_trigger(void)
{
	struct hws_kernel k;
	struct hws_launch o;
	int n = 0;

	init_uniform(16, 4);
	hws_dag_open(&H, 0, 0, true);
	k = kern(1, 0, 1, 8, 100, 50);
	k.block_trigger_cnt = 2;
	hws_add(&H, &k, 0);
	add(2, 0, 1, 1, 1, 50);
	while (dec(0, &o) == 1 && o.cookie == 1)
		n++;
	ok(n == 2 && o.cookie == 2 && kstate(1).pool == HWS_POOL_NONE &&
	   kstate(1).launched == 2,
	   "block_trigger_cnt 2: two blocks, then the kernel waits (a lower one launches)");
	ok(hws_set_trigger(&H, 1, 1) == -EINVAL && dec(0, &o) == 0 &&
	   kstate(1).launched == 2,
	   "trigger lowered below the blocks launched (1 < 2): -EINVAL, the kernel still waits");
	ok(hws_set_trigger(&H, 1, 5) == 0 && dec_all(0) == 3 &&
	   kstate(1).launched == 5,
	   "trigger raised to 5: three more blocks");
	ok(hws_set_trigger(&H, 1, 0) == 0 && dec_all(0) == 3 && gone(1),
	   "trigger 0: the rest (3) and the kernel leaves");
	ok(hws_set_trigger(&H, 1, 1) == -ENOENT, "set_trigger on a kernel not in the RS: -ENOENT");
}

static void test_fillup(void)
{
	struct hws_launch o;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		init_uniform(8, 4);
		C.fillup_first = pass;
		reconf();
		open_dags(2);
		fill_busy(0);
		{
			hws_mask m = range(0, 3);	/* cluster 0 free */

			done_mask(&m, 10);
		}
		add(1, 0, 2, 1, 100, 10);		/* A: higher, 2 SIPs */
		add(2, 1, 4, 1, 90, 10);		/* B: lower, 4 SIPs */
		dec(10, &o);
		if (!pass)
			ok(o.cookie == 1, "SIP_FILLUP_TASK_FIRST 0: the higher priority (2 SIPs) launches");
		else
			ok(o.cookie == 2 && meq(&o.sips, range(0, 3)) &&
			   H.st.fillups == 1,
			   "SIP_FILLUP_TASK_FIRST 1: the kernel using the whole free cluster launches first");
	}
}

static void test_fifo(void)
{
	struct hws_launch o;

	init_uniform(8, 4);
	C.policy = HWS_POLICY_FIFO;
	reconf();
	hws_dag_open(&H, 0, 0, true);
	add(1, 0, 1, 1, 1, 10);		/* oldest, lowest priority */
	add(2, 0, 1, 1, 100, 10);
	ok(dec(0, &o) == 1 && o.cookie == 1 && lowest(&o.sips) == 0 &&
	   o.pool == HWS_POOL_O,
	   "FIFO: the oldest kernel first, on the first free SIP (0)");
	ok(dec(0, &o) == 1 && o.cookie == 2 && lowest(&o.sips) == 1,
	   "FIFO: the next one on SIP 1");
	ok(add(3, 0, 8, 1, 1000, 10) == -EINVAL &&
	   add(3, 0, 4, 1, 1000, 10) == 0 && add(4, 0, 1, 1, 1, 10) == 0 &&
	   dec(0, &o) == 1 && o.cookie == 3 && lowest(&o.sips) == 4,
	   "FIFO: a 4-SIP kernel takes the first free whole cluster (4..7)");
	ok(dec(0, &o) == 1 && o.cookie == 4 && lowest(&o.sips) == 2,
	   "FIFO: then the younger 1-SIP kernel, first free SIP (2)");
	init_uniform(8, 4);
	C.policy = HWS_POLICY_FIFO;
	reconf();
	hws_dag_open(&H, 0, 0, true);
	fill(0, 100, 1000, 0);
	done(1, 0);
	done(3, 0);
	add(1, 0, 2, 1, 100, 10);
	add(2, 0, 1, 1, 1, 10);
	ok(dec(0, &o) == 1 && o.cookie == 2 && lowest(&o.sips) == 1,
	   "FIFO: the oldest does not fit, the oldest that fits launches");
	ok(H.st.promotions == 0 && !hws_mask_weight(&H.reserved),
	   "FIFO: no promotion, no reservation");
}

/* ---- layouts of more than two mask words --------------------------------- */

/*
 * hws_decide() has an instance for two mask words (the device's layouts)
 * and one for all of them. On a layout of five words a kernel bound to the
 * last cluster launches there and a cooperative kernel spans two words;
 * on the device layout the launch's words past the layout's two are zero
 * whatever the caller's struct held.
 */
static void test_wide(void)
{
	const hws_mask none = { { 0 } };
	struct hws_kernel k;
	struct hws_launch o;
	uint32_t last;

	init_uniform(300, 4);	/* 75 clusters, SIP positions 0..299 */
	hws_dag_open(&H, 0, 0, true);
	last = L.nr_sips - 4;
	k = kern(1, 0, 3, 1, 100, 50);
	k.affinity = range(last, last + 3);
	memset(&o, 0xff, sizeof(o));
	ok(H.words == 5 && hws_add(&H, &k, 0) == 0 && dec(0, &o) == 1 &&
	   o.cookie == 1 && meq(&o.sips, range(last, last + 2)) &&
	   meq(&o.early, none),
	   "five-word layout: a 3-SIP kernel bound to the last cluster launches on SIPs %u-%u",
	   last, last + 2);
	k = kern(2, 0, 4, 2, 100, 50);
	k.coop = true;
	k.affinity = range(124, 131);
	ok(hws_add(&H, &k, 0) == 0 && dec(0, &o) == 1 && o.cookie == 2 &&
	   o.nr_blocks == 2 && meq(&o.sips, range(124, 131)),
	   "five-word layout: a cooperative 2 x 4 across words 1 and 2");

	init_device(24);
	hws_dag_open(&H, 0, 0, true);
	memset(&o, 0xff, sizeof(o));
	ok(add(3, 0, 1, 1, 100, 50) == 0 && dec(0, &o) == 1 &&
	   hws_mask_weight(&o.sips) == 1 && meq(&o.early, none),
	   "device layout: a launch's mask words past the layout's two are zero");
}

/* ---- randomized: every mechanism at once, checked after every step ------- */

static uint64_t srng = 0x243f6a8885a308d3ULL;

static uint32_t srnd(uint32_t n)
{
	return (uint32_t)((test_rng_next(&srng) >> 20) % n);
}

/*
 * The randomized test's state. Its own model: which SIPs hold a launch
 * (running or waiting) of which kernel block. A launch must only use SIPs
 * the model has free of launches, or (early) running with nothing waiting.
 */
struct stress {
	uint8_t held[HWS_MAX_SIPS];	/* 0 free, 1 running, 2 + waiting */
	unsigned long bad, launches, early, backfills, promos, steps;
	uint64_t now, cookie;
	int round;
	uint32_t dags;
};

/* A round's random layout and configuration, and its DAGs opened. */
static void stress_round(struct stress *st)
{
	uint32_t i;

	if (st->round % 3 == 0)
		init_device(8 + srnd(17));
	else
		init_uniform(8 + srnd(57), (uint32_t[]){ 3, 4, 6, 8, 12,
							16 }[srnd(6)]);
	C.promote_rule = srnd(16);
	C.promote_threshold = 1 + srnd(6);
	C.early_launch = srnd(2);
	C.early_mode = srnd(2);
	C.pre_idle_offset = srnd(300);
	C.backfill_margin = (int64_t)srnd(400) - 200;
	C.fillup_first = srnd(2);
	C.rsvd_first = srnd(2);
	C.launch_delay = srnd(20);
	C.policy = srnd(5) == 0;
	reconf();
	memset(st->held, 0, sizeof(st->held));
	st->dags = 1 + srnd(8);
	for (i = 0; i < st->dags; i++)
		hws_dag_open(&H, i, srnd(2) ? 0 : 20 + srnd(100), srnd(4) == 0);
}

/* A random kernel into the RS. */
static void stress_add(struct stress *st)
{
	struct hws_kernel k;
	uint16_t tn = shapes[srnd(9)];

	if (tn > L.cluster_sips)
		tn = 1;
	k = kern(st->cookie++, srnd(st->dags), tn, (uint16_t)(1 + srnd(4)),
		 srnd(1000), 10 + srnd(500));
	k.ctx = srnd(HWS_NR_CTX);
	k.on_cp = srnd(3) == 0;
	k.coop = srnd(6) == 0;
	k.block_trigger_cnt = srnd(4) == 0 ? 1 : 0;
	if (srnd(3) == 0)
		k.affinity = L.type[srnd(2)];
	hws_add(&H, &k, st->now);
}

/* A decision, its launch checked against the model; false if none. */
static bool stress_decide(struct stress *st)
{
	struct hws_launch o;
	uint32_t s;

	if (hws_decide(&H, st->now, &o) != 1)
		return false;
	st->launches++;
	st->early += !!(o.flags & HWS_LAUNCH_EARLY);
	st->backfills += !!(o.flags & HWS_LAUNCH_BACKFILL);
	st->promos += !!(o.flags & HWS_LAUNCH_PROMOTED);
	for (s = 0; s < L.nr_sips; s++) {
		uint8_t *held = &st->held[s];

		if (!hws_mask_test(&o.sips, s))
			continue;
		if (!hws_mask_test(&L.present, s) || *held > 1 ||
		    (*held == 1 && !hws_mask_test(&o.early, s)) ||
		    (*held == 0 && hws_mask_test(&o.early, s))) {
			if (st->bad++ < 5)
				tap_diag("round %d: SIP %u held %u, launched (early %d)",
					 st->round, s, *held,
					 hws_mask_test(&o.early, s));
		}
		(*held)++;
	}
	return true;
}

/* Complete a random busy SIP's whole block; false if no SIP is busy. */
static bool stress_complete(struct stress *st)
{
	uint32_t start = srnd(L.nr_sips), tn, t, s;
	const struct hws_sip_rec *r;
	hws_mask m = { { 0 } };

	for (s = 0; s < L.nr_sips; s++)
		if (st->held[(start + s) % L.nr_sips])
			break;
	if (s == L.nr_sips)
		return false;
	s = (start + s) % L.nr_sips;
	r = &H.sip[s].run;
	tn = r->thread_num;
	/* its threads that still run (others may have completed, or run
	 * something else now) */
	for (t = 0; t < tn; t++) {
		uint32_t x = s - r->thread_idx + t;

		if (!st->held[x])
			continue;
		hws_mask_set(&m, x);
		st->held[x]--;
	}
	if (hws_sip_complete(&H, &m, st->now) && st->bad++ < 5)
		tap_diag("round %d: completion refused", st->round);
	return true;
}

/* A context's mask for a class changes to a random one. */
static void stress_usage(void)
{
	uint32_t c = srnd(HWS_NR_CTX);
	uint32_t cl = srnd(PTO_HWS_USAGE_CLASSES), s;
	hws_mask m = { { 0 } };

	for (s = 0; s < L.nr_sips; s++)
		if (srnd(4))
			hws_mask_set(&m, s);
	C.usage[c][cl] = m;
	reconf();
}

/* One random step, then the checker (unless the step did nothing). */
static void stress_step(struct stress *st)
{
	uint32_t op = srnd(100), s;
	bool acted = true;

	st->now += srnd(40);
	if (op < 30) {
		stress_add(st);
	} else if (op < 70) {
		acted = stress_decide(st);
	} else if (op < 90) {
		acted = stress_complete(st);
	} else if (op < 94) {
		s = srnd(L.nr_sips);
		if (st->held[s] == 1) {
			hws_mask m = { { 0 } };

			hws_mask_set(&m, s);
			hws_sip_pre_complete(&H, &m);
		}
	} else if (op < 96) {
		hws_remove(&H, st->cookie - 1 - srnd(8));
	} else if (op < 98) {
		hws_set_trigger(&H, st->cookie - 1 - srnd(8),
				(uint16_t)srnd(5));
	} else {
		stress_usage();
	}
	if (acted)
		check_now("a random step");
}

/* End of a round: complete everything, launch the rest; all must drain. */
static void stress_drain(struct stress *st)
{
	uint32_t i, s;

	for (i = 0; i < 20000 && H.n_order; i++) {
		struct hws_launch o;

		st->now += 10;
		done_mask(&H.busy, st->now);
		memset(st->held, 0, sizeof(st->held));
		while (dec(st->now, &o) == 1)
			for (s = 0; s < L.nr_sips; s++)
				if (hws_mask_test(&o.sips, s))
					st->held[s]++;
		if (i > 100) {
			/* kernels masked out for good: take them out */
			while (H.n_order)
				hws_remove(&H, H.rs[H.order[0]].cookie);
		}
	}
	for (i = 0; i < 3 && m_any_busy(); i++)
		done_mask(&H.busy, st->now + 1000);
	check_now("the drain");
	if ((H.n_order || m_any_busy()) && st->bad++ < 5)
		tap_diag("round %d: %u kernels left, busy %s", st->round,
			 H.n_order, mstr(&H.busy));
}

/* Every mechanism at once, at random, checked after every step. */
static void test_stress(void)
{
	static struct stress st = { .cookie = 1 };
	uint32_t i;

	for (st.round = 0; st.round < 12; st.round++) {
		stress_round(&st);
		for (i = 0; i < 3000; i++, st.steps++)
			stress_step(&st);
		stress_drain(&st);
	}
	tap_diag("stress: %lu steps, %lu launches (%lu early, %lu backfills, %lu promoting)",
		 st.steps, st.launches, st.early, st.backfills, st.promos);
	ok(!st.bad && st.launches > 1000 && st.early && st.backfills &&
	   st.promos,
	   "randomized: no launch on a SIP that holds one (or an early launch on a busy one), everything drains");
}

/* ---- the checker itself -------------------------------------------------- */

static void test_checker(void)
{
	static struct hws saved;
	char msg[256];

	init_uniform(8, 4);
	hws_dag_open(&H, 0, 0, true);
	add(1, 0, 2, 3, 10, 100);
	dec(0, NULL);
	saved = H;
	hws_mask_set(&H.idle, lowest(&H.busy));
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a SIP idle and busy at once (%s)", msg);
	H = saved;
	H.sip[lowest(&H.busy) + 1].run.thread_idx = 0;
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: one thread of a block on two SIPs (%s)", msg);
	H = saved;
	H.rs[__builtin_ctz(H.occupied)].launched++;
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a block counted but never launched (%s)", msg);
	H = saved;
	hws_mask_set(&H.reserved, 7);
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a reservation with no R-task (leak) (%s)", msg);
	H = saved;
	H.chk.last_sips = mk(2, 3, -1);
	H.chk.last_affinity = mk(0, 1, -1);
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a launch outside the kernel's affinity (%s)", msg);
	H = saved;
	ok(hws_check(&H, msg, sizeof(msg)) == 0, "checker: the real state is clean");
}

/* The checker's one-thread and empty-DAG shortcuts still see corruption. */
static void test_checker_one_thread(void)
{
	static struct hws saved;
	char msg[256];
	int s;

	init_uniform(8, 4);
	hws_dag_open(&H, 0, 0, true);
	add(1, 0, 1, 1, 10, 100);
	add(2, 0, 1, 1, 5, 100);
	dec(0, NULL);
	s = lowest(&H.busy);
	ok(s >= 0 && H.sip[s].run.thread_num == 1 && H.occupied,
	   "checker: a one-thread block runs, another kernel waits");
	if (s < 0)
		return;
	saved = H;
	H.sip[s].run.thread_idx = 1;
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a one-thread block as thread 1 (%s)", msg);
	H = saved;
	H.sip[s].run.thread_num = 0;
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a block of no threads (%s)", msg);
	H = saved;
	hws_mask_set(&H.shadow, (uint32_t)s);
	hws_mask_clear(&H.pre_idle, (uint32_t)s);
	H.sip[s].shadow = H.sip[s].run;
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a one-thread block held twice by its SIP (%s)", msg);
	H = saved;
	H.dag[5].head = (uint8_t)__builtin_ctz(H.occupied);
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a DAG with no members but a top kernel (%s)", msg);
	H = saved;
	H.dag[5].tail = (uint8_t)__builtin_ctz(H.occupied);
	ok(hws_check(&H, msg, sizeof(msg)) == -EUCLEAN,
	   "checker: a DAG with no members but a last kernel (%s)", msg);
	H = saved;
	ok(hws_check(&H, msg, sizeof(msg)) == 0,
	   "checker: the real one-thread state is clean");
}

/* DAG 3's list as cookies into @out (at most @max); how many. */
static int dag_cookies(uint64_t *out, int max)
{
	uint32_t c;
	int n = 0;

	for (c = H.dag[3].head; c != HWS_NONE && n < max; c = H.rs[c].dag_next)
		out[n++] = H.rs[c].cookie;
	return n;
}

static bool dag_is(const uint64_t *want, int n)
{
	uint64_t got[HWS_RS_SIZE];
	char msg[256];

	return dag_cookies(got, HWS_RS_SIZE) == n &&
	       !memcmp(got, want, (size_t)n * sizeof(*got)) &&
	       H.rs[H.dag[3].tail].cookie == want[n - 1] &&
	       hws_check(&H, msg, sizeof(msg)) == 0;
}

/*
 * A DAG's list keeps offline priority order, an equal priority after
 * those already there, whether a kernel joins after the last one (a
 * streamed graph's next, of lower priority) or inside the list; removing
 * the last one moves the tail.
 */
static void test_dag_list(void)
{
	static const uint32_t prio[] = { 50, 40, 40, 30, 45, 60, 30 };
	static const uint64_t want1[] = { 6, 1, 5, 2, 3, 4, 7 };
	static const uint64_t want2[] = { 6, 1, 5, 2, 3, 4, 8 };
	static const uint64_t want3[] = { 6, 1, 5, 2, 3, 9, 4, 8 };
	size_t i;

	init_uniform(4, 4);
	hws_dag_open(&H, 3, 0, true);
	for (i = 0; i < PTO_ARRAY_SIZE(prio); i++)
		add(i + 1, 3, 1, 1, prio[i], 10);
	ok(dag_is(want1, 7),
	   "DAG list: priorities 50 40 40 30 45 60 30 in the order 60 50 45 40 40 30 30, equal ones as they came");
	hws_remove(&H, 7);
	add(8, 3, 1, 1, 30, 10);
	ok(dag_is(want2, 7),
	   "DAG list: the last one removed, a kernel of the last one's priority goes after the new last");
	add(9, 3, 1, 1, 35, 10);
	ok(dag_is(want3, 8), "DAG list: 35 goes between the 40s and the 30s");
}

int main(void)
{
	test_dag_list();
	test_device_layout();
	test_uniform_layouts();
	test_config_check();
	test_shapes();
	test_coop_capability();
	test_high_end();
	test_refused();
	test_rs_full_and_dags();
	test_evict();
	test_online_priority();
	test_fail_counts();
	test_promote_threshold();
	test_promote_threshold_off();
	test_promote_most_failures();
	test_reserve_soonest();
	test_promote_top1_skipped();
	test_rsvd_first();
	test_usage_masks();
	test_stranded();
	test_affinity();
	test_early_report();
	test_early_predict();
	test_coop();
	test_trigger();
	test_fillup();
	test_fifo();
	test_wide();
	test_stress();
	test_checker();
	test_checker_one_thread();
	ok(check_failures == 0, "hws_check passed after every one of %lu decisions",
	   decisions);
	return tap_done();
}
