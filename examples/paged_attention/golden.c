// SPDX-License-Identifier: MIT
/* paged_attention: cases, input generator and double-precision golden. */
#include "pa_case.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/parse.h>

#include "../common/ex_common.h"

/*
 * Case1 / Case2: one chunk with 3 and 8 KV blocks, sized for
 *   1 + 4 * 3 = 13 and 1 + 4 * 8 = 33 tasks.
 * CaseBatch256: the entry of PTO2's case table for this test as written
 *   (batch 256, 1 head, head_dim 256, context 16): one KV block per
 *   sequence, 16 chunks x 5 = 80 tasks.
 * CaseBatch256Ctx33: the same with context 33: 16 chunks x 13 = 208
 *   tasks, the graph PTO2's flow-control figures count for batch 256.
 * CaseVarLen: random context lengths, GQA with two KV heads and a short
 *   last chunk, to exercise masking and q_loop > 1.
 */
const struct pa_case pa_cases[] = {
	/* name               batch heads kv  dim  bs  ctx  min  max */
	{ "Case1",               1,  16,  1,  16, 16,  33,  0,   0, NULL, 0 },
	{ "Case2",               1,  16,  1,  16, 16, 128,  0,   0, NULL, 0 },
	{ "CaseBatch256",      256,   1,  1, 256, 16,  16,  0,   0, NULL, 0 },
	{ "CaseBatch256Ctx33", 256,   1,  1, 256, 16,  33,  0,   0, NULL, 0 },
	{ "CaseVarLen",         40,   8,  2,  32, 16,   0,  1, 100, NULL, 0 },
};
const size_t pa_num_cases = sizeof(pa_cases) / sizeof(pa_cases[0]);

const struct pa_case *pa_find_case(const char *name)
{
	size_t i;

	for (i = 0; i < pa_num_cases; i++)
		if (strcmp(pa_cases[i].name, name) == 0)
			return &pa_cases[i];
	return NULL;
}

int pa_env_seq_lens(int32_t *lens, int max)
{
	const char *s = getenv("PA_SEQ_LEN");
	int n = 0;

	if (!s || !*s)
		return 0;
	while (*s) {
		const char *end;
		uint64_t v;

		if (pto_parse_u64(s, 10, 1 << 20, &v, &end) || !v || n >= max)
			return -1;
		lens[n++] = (int32_t)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

void pa_free_inputs(struct pa_inputs *in)
{
	free(in->query);
	free(in->key_cache);
	free(in->value_cache);
	free(in->block_table);
	free(in->context_lens);
	free(in->out);
	memset(in, 0, sizeof(*in));
}

/* The geometry and sizes of case @c. */
static void pa_geometry(const struct pa_case *c, struct pa_inputs *in)
{
	int max_ctx, i;

	in->batch = c->batch;
	in->num_heads = c->num_heads;
	in->kv_head_num = c->kv_head_num;
	in->head_dim = c->head_dim;
	in->block_size = c->block_size;
	max_ctx = c->context_len > 0 ? c->context_len : c->ctx_max;
	for (i = 0; c->seq_lens && i < c->n_seq_lens; i++)
		max_ctx = i == 0 || c->seq_lens[i] > max_ctx ? c->seq_lens[i] : max_ctx;
	in->max_blocks = pa_seq_blocks(max_ctx, c->block_size);
	/* a few spare physical blocks nobody uses */
	in->num_blocks = c->batch * in->max_blocks + 4;
	in->scale = (float)(1.0 / sqrt((double)c->head_dim));

	in->q_elems = (size_t)c->batch * c->num_heads * c->head_dim;
	in->kv_elems = (size_t)in->num_blocks * c->block_size *
		       c->kv_head_num * c->head_dim;
	in->out_elems = in->q_elems;
}

static int pa_alloc_inputs(struct pa_inputs *in)
{
	in->query = malloc(in->q_elems * sizeof(uint16_t));
	in->key_cache = malloc(in->kv_elems * sizeof(uint16_t));
	in->value_cache = malloc(in->kv_elems * sizeof(uint16_t));
	in->block_table = malloc((size_t)in->batch * in->max_blocks * sizeof(int32_t));
	in->context_lens = malloc((size_t)in->batch * sizeof(int32_t));
	in->out = calloc(in->out_elems, sizeof(float));
	if (in->query && in->key_cache && in->value_cache && in->block_table &&
	    in->context_lens && in->out)
		return 0;
	pa_free_inputs(in);
	return -1;
}

static void pa_gen_context_lens(const struct pa_case *c, struct pa_inputs *in,
				struct ex_rng *r)
{
	int b;

	for (b = 0; b < c->batch; b++) {
		if (c->seq_lens && c->n_seq_lens > 0)
			in->context_lens[b] = c->seq_lens[b % c->n_seq_lens];
		else if (c->context_len > 0)
			in->context_lens[b] = c->context_len;
		else
			in->context_lens[b] = c->ctx_min + (int32_t)ex_rng_below(r,
				(uint32_t)(c->ctx_max - c->ctx_min + 1));
	}
}

/* Block table: a random permutation of the physical blocks. 0 or -1. */
static int pa_gen_block_table(struct pa_inputs *in, struct ex_rng *r)
{
	uint32_t *perm = malloc((size_t)in->num_blocks * sizeof(uint32_t));
	int b, i;

	if (!perm)
		return -1;
	for (i = 0; i < in->num_blocks; i++)
		perm[i] = (uint32_t)i;
	for (i = in->num_blocks - 1; i > 0; i--) {
		uint32_t j = ex_rng_below(r, (uint32_t)i + 1);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (b = 0; b < in->batch; b++) {
		int used = pa_seq_blocks(in->context_lens[b], in->block_size);
		size_t row = (size_t)b * in->max_blocks;

		for (i = 0; i < in->max_blocks; i++)
			in->block_table[row + i] =
				i < used ? (int32_t)perm[row + i] : -1;
	}
	free(perm);
	return 0;
}

/* @n fp16 values uniform in [-1, 1). */
static void pa_gen_f16(uint16_t *h, size_t n, struct ex_rng *r)
{
	size_t k;

	for (k = 0; k < n; k++)
		h[k] = ex_f32_to_f16(ex_rng_uniform(r, -1.0f, 1.0f));
}

static void pa_fill_config(struct pa_inputs *in)
{
	in->config[PA_CFG_BATCH] = in->batch;
	in->config[PA_CFG_NUM_HEADS] = in->num_heads;
	in->config[PA_CFG_KV_HEAD_NUM] = in->kv_head_num;
	in->config[PA_CFG_HEAD_DIM] = in->head_dim;
	in->config[PA_CFG_BLOCK_SIZE] = in->block_size;
	in->config[PA_CFG_MAX_BLOCKS] = in->max_blocks;
	in->config[PA_CFG_NUM_BLOCKS] = in->num_blocks;
	in->config[PA_CFG_SCALE_BITS] = (int64_t)ex_u64_from_f32(in->scale);
}

int pa_gen_inputs(const struct pa_case *c, struct pa_inputs *in)
{
	struct ex_rng r;

	memset(in, 0, sizeof(*in));
	ex_rng_seed(&r, c->name);
	pa_geometry(c, in);
	if (pa_alloc_inputs(in))
		return -1;
	/* the random stream's order: lengths, block table, Q, K, V */
	pa_gen_context_lens(c, in, &r);
	if (pa_gen_block_table(in, &r)) {
		pa_free_inputs(in);
		return -1;
	}
	pa_gen_f16(in->query, in->q_elems, &r);
	pa_gen_f16(in->key_cache, in->kv_elems, &r);
	pa_gen_f16(in->value_cache, in->kv_elems, &r);
	pa_fill_config(in);
	return 0;
}

void pa_golden(const struct pa_inputs *in, double *ref)
{
	const int D = in->head_dim, BS = in->block_size;
	const int G = in->num_heads / in->kv_head_num;
	int max_ctx = in->max_blocks * BS;
	double *s = malloc((size_t)(max_ctx > 0 ? max_ctx : 1) * sizeof(double));
	double *q = malloc((size_t)D * sizeof(double));
	int b, h, j, d;

	if (!s || !q) {
		free(s);
		free(q);
		for (size_t k = 0; k < in->out_elems; k++)
			ref[k] = NAN;
		return;
	}
	for (b = 0; b < in->batch; b++) {
		int ctx = in->context_lens[b];

		for (h = 0; h < in->num_heads; h++) {
			int kvh = h / G;
			double *o = ref + ((size_t)b * in->num_heads + h) * D;
			double mx = -INFINITY, sum = 0.0;

			for (d = 0; d < D; d++) {
				q[d] = ex_f16_to_f32(in->query[((size_t)b * in->num_heads + h) * D + d]);
				o[d] = 0.0;
			}
			for (j = 0; j < ctx; j++) {
				int32_t phys = in->block_table[(size_t)b * in->max_blocks + j / BS];
				const uint16_t *k = in->key_cache +
					(((size_t)phys * BS + j % BS) * in->kv_head_num + kvh) * D;
				double acc = 0.0;

				for (d = 0; d < D; d++)
					acc += q[d] * ex_f16_to_f32(k[d]);
				s[j] = acc * (double)in->scale;
				if (s[j] > mx)
					mx = s[j];
			}
			for (j = 0; j < ctx; j++) {
				int32_t phys = in->block_table[(size_t)b * in->max_blocks + j / BS];
				const uint16_t *v = in->value_cache +
					(((size_t)phys * BS + j % BS) * in->kv_head_num + kvh) * D;
				double p = exp(s[j] - mx);

				sum += p;
				for (d = 0; d < D; d++)
					o[d] += p * ex_f16_to_f32(v[d]);
			}
			for (d = 0; d < D; d++)
				o[d] = sum > 0.0 ? o[d] / sum : 0.0;
		}
	}
	free(s);
	free(q);
}

int pa_max_bn(const struct pa_inputs *in)
{
	int b, mx = 0;

	for (b = 0; b < in->batch; b++) {
		int n = pa_seq_blocks(in->context_lens[b], in->block_size);

		if (n > mx)
			mx = n;
	}
	return mx;
}

unsigned long pa_task_count(const struct pa_inputs *in)
{
	unsigned long chunks = (unsigned long)(in->batch + PA_IN_CORE_BATCH - 1) /
			       PA_IN_CORE_BATCH;

	return (unsigned long)in->kv_head_num * chunks *
	       (1ul + 4ul * (unsigned long)pa_max_bn(in));
}

void pa_orch_args(const struct pa_inputs *in, uint64_t args[PA_NARGS])
{
	args[PA_ARG_QUERY] = (uint64_t)(uintptr_t)in->query;
	args[PA_ARG_KEY_CACHE] = (uint64_t)(uintptr_t)in->key_cache;
	args[PA_ARG_VALUE_CACHE] = (uint64_t)(uintptr_t)in->value_cache;
	args[PA_ARG_BLOCK_TABLE] = (uint64_t)(uintptr_t)in->block_table;
	args[PA_ARG_CONTEXT_LENS] = (uint64_t)(uintptr_t)in->context_lens;
	args[PA_ARG_OUT] = (uint64_t)(uintptr_t)in->out;
	args[PA_ARG_CONFIG] = (uint64_t)(uintptr_t)in->config;
	args[PA_ARG_BATCH] = (uint64_t)in->batch;
	args[PA_ARG_NUM_HEADS] = (uint64_t)in->num_heads;
	args[PA_ARG_KV_HEAD_NUM] = (uint64_t)in->kv_head_num;
	args[PA_ARG_HEAD_DIM] = (uint64_t)in->head_dim;
	args[PA_ARG_BLOCK_SIZE] = (uint64_t)in->block_size;
	args[PA_ARG_MAX_BLOCKS] = (uint64_t)in->max_blocks;
	args[PA_ARG_NUM_BLOCKS] = (uint64_t)in->num_blocks;
	args[PA_ARG_MAX_BN] = (uint64_t)pa_max_bn(in);
}
