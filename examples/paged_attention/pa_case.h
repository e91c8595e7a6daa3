// SPDX-License-Identifier: MIT
/*
 * paged_attention: online-softmax paged attention (decode, one query token
 * per sequence), built as PTO2's batch paged attention is.
 *
 * Tensors (all row-major):
 *   query        fp16  [batch][num_heads][head_dim]
 *   key_cache    fp16  [num_blocks][block_size][kv_head_num][head_dim]
 *   value_cache  fp16  [num_blocks][block_size][kv_head_num][head_dim]
 *   block_table  int32 [batch][max_blocks]   physical block of each
 *                                            logical block, -1 = unused
 *   context_lens int32 [batch]
 *   out          fp32  [batch][num_heads][head_dim]
 *   config       int64 [PA_CFG_COUNT]        geometry and scale, below
 *
 * Orchestration (per KV head group q, per chunk of IN_CORE_BATCH = 16
 * sequences, inside one PTO2_SCOPE):
 *   AIV_HUB                          oi = 0, li = 0, mi = -inf
 *   for bn in 0 .. max_bn-1:
 *     QK  (AIC) sij    = scale * qi . kj^T     (masked: -inf)
 *     SF  (AIV) mij    = rowmax(sij), pij = exp(sij - mij) (fp16),
 *               lij    = rowsum(pij)
 *     PV  (AIC) oi_new = pij . vj
 *     UP  (AIV) online update of (mi, li, oi); on the chunk's last block
 *               it also writes out = oi / li  (the final normalisation
 *               lives in UP, there is no separate task for it)
 *
 * A task covers one chunk: nb <= 16 sequences x the G = num_heads /
 * kv_head_num query heads that share KV head q, i.e. rows = nb * G;
 * row r = bi * G + g is sequence batch_start + bi, head q * G + g.
 * Tasks = kv_head_num * ceil(batch / 16) * (1 + 4 * max_bn).
 */
#ifndef PTO_EXAMPLES_PA_CASE_H
#define PTO_EXAMPLES_PA_CASE_H

#include <stddef.h>
#include <stdint.h>

#define PA_FUNC_QK		0	/* AIC */
#define PA_FUNC_SF		1	/* AIV */
#define PA_FUNC_PV		2	/* AIC */
#define PA_FUNC_UP		3	/* AIV */
#define PA_FUNC_AIV_HUB		5	/* AIV */

#define PA_IN_CORE_BATCH	16
#define PA_TOL			1e-2

/* config tensor (int64 each) */
enum {
	PA_CFG_BATCH = 0,
	PA_CFG_NUM_HEADS,
	PA_CFG_KV_HEAD_NUM,
	PA_CFG_HEAD_DIM,
	PA_CFG_BLOCK_SIZE,
	PA_CFG_MAX_BLOCKS,	/* block_table row length */
	PA_CFG_NUM_BLOCKS,	/* physical blocks in the caches */
	PA_CFG_SCALE_BITS,	/* float bits of scale in the low 32 bits */
	PA_CFG_COUNT
};

/*
 * Orchestration arguments.  The orchestration never dereferences device
 * memory (args are device addresses, GM is not the orchestrator's to
 * read), so the geometry it needs comes as scalars, and it uses one
 * max_bn for every chunk (PTO2's "for (bn = 0; bn < max_bn; bn++)"):
 * max_bn = max over sequences of ceil(context_len / block_size).  Blocks a
 * shorter sequence does not have are masked by the kernels.
 */
enum {
	PA_ARG_QUERY = 0,	/* device addresses */
	PA_ARG_KEY_CACHE,
	PA_ARG_VALUE_CACHE,
	PA_ARG_BLOCK_TABLE,
	PA_ARG_CONTEXT_LENS,
	PA_ARG_OUT,
	PA_ARG_CONFIG,
	PA_ARG_BATCH,		/* scalars, equal to the config tensor's */
	PA_ARG_NUM_HEADS,
	PA_ARG_KV_HEAD_NUM,
	PA_ARG_HEAD_DIM,
	PA_ARG_BLOCK_SIZE,
	PA_ARG_MAX_BLOCKS,
	PA_ARG_NUM_BLOCKS,
	PA_ARG_MAX_BN,
	PA_NARGS
};

/* Kernel parameter layouts (index into args[]). */
enum { QK_Q, QK_KCACHE, QK_BT, QK_CL, QK_CFG, QK_SIJ,
       QK_NB, QK_KVH, QK_BN, QK_NARGS };
enum { SF_SIJ, SF_PIJ, SF_MIJ, SF_LIJ, SF_ROWS, SF_COLS, SF_NARGS };
enum { PV_PIJ, PV_VCACHE, PV_BT, PV_CL, PV_CFG, PV_OI_NEW,
       PV_NB, PV_KVH, PV_BN, PV_NARGS };
enum { UP_MIJ, UP_LIJ, UP_OI_NEW, UP_MI, UP_LI, UP_OI, UP_CFG,
       UP_NB, UP_KVH, UP_IS_LAST, UP_OUT, UP_NARGS };	/* OUT iff is_last */
enum { HUB_OI, HUB_LI, HUB_MI, HUB_ROWS, HUB_HEAD_DIM, HUB_NARGS };

/* QK and PV take their parameters in the same layout. */
#define PA_SAME_PARAM(qk, pv)	((int)(qk) == (int)(pv))
_Static_assert(PA_SAME_PARAM(QK_Q, PV_PIJ) &&
	       PA_SAME_PARAM(QK_KCACHE, PV_VCACHE) &&
	       PA_SAME_PARAM(QK_BT, PV_BT) && PA_SAME_PARAM(QK_CL, PV_CL) &&
	       PA_SAME_PARAM(QK_CFG, PV_CFG) &&
	       PA_SAME_PARAM(QK_SIJ, PV_OI_NEW) &&
	       PA_SAME_PARAM(QK_NB, PV_NB) && PA_SAME_PARAM(QK_KVH, PV_KVH) &&
	       PA_SAME_PARAM(QK_BN, PV_BN) &&
	       PA_SAME_PARAM(QK_NARGS, PV_NARGS),
	       "QK and PV parameter layouts differ");

struct pa_case {
	const char *name;
	int batch, num_heads, kv_head_num, head_dim, block_size;
	int context_len;	/* > 0: every sequence; 0: random lengths */
	int ctx_min, ctx_max;	/* random lengths in [ctx_min, ctx_max] */
	const int32_t *seq_lens;	/* if set: context_lens[b] = */
	int n_seq_lens;			/*   seq_lens[b % n_seq_lens] */
};

extern const struct pa_case pa_cases[];
extern const size_t pa_num_cases;
const struct pa_case *pa_find_case(const char *name);

/*
 * The paged attention test's environment variables: PA_CASE selects a
 * case by name (when no case is named on the command line), PA_SEQ_LEN
 * ("33,17,128") overrides the per-sequence context lengths, cycled over
 * the batch.  Parses PA_SEQ_LEN into @lens (at most @max); returns the
 * count, 0 if unset, -1 if malformed.
 */
int pa_env_seq_lens(int32_t *lens, int max);

struct pa_inputs {
	int batch, num_heads, kv_head_num, head_dim, block_size;
	int max_blocks, num_blocks;
	float scale;
	uint16_t *query, *key_cache, *value_cache;
	int32_t *block_table, *context_lens;
	float *out;
	int64_t config[PA_CFG_COUNT];
	size_t q_elems, kv_elems, out_elems;
};

/* Allocate and fill every input (out zeroed). 0 or -1 (ENOMEM). */
int pa_gen_inputs(const struct pa_case *c, struct pa_inputs *in);
void pa_free_inputs(struct pa_inputs *in);

/* Plain (not online) softmax attention in double; ref has out_elems. */
void pa_golden(const struct pa_inputs *in, double *ref);

/* Number of KV blocks of sequence b and the chunk's maximum. */
static inline int pa_seq_blocks(int32_t ctx_len, int block_size)
{
	return ctx_len <= 0 ? 0 : (ctx_len + block_size - 1) / block_size;
}

/* max over sequences of their KV block count */
int pa_max_bn(const struct pa_inputs *in);

/* Fill the orchestration's argument vector (device address = pointer). */
void pa_orch_args(const struct pa_inputs *in, uint64_t args[PA_NARGS]);

/* Tasks the orchestration submits for these inputs. */
unsigned long pa_task_count(const struct pa_inputs *in);

#endif
