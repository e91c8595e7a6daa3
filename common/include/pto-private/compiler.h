// SPDX-License-Identifier: MIT
/*
 * compiler.h - branch hints, a spin-wait pause and small integer helpers
 *
 * Private to the programs built from this tree (libpto, ptod, pto-aicore,
 * the sim device, tests, benchmarks); never installed.
 */
#ifndef PTO_PRIVATE_COMPILER_H
#define PTO_PRIVATE_COMPILER_H

#include <stdatomic.h>
#include <stdint.h>

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

#define PTO_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The decimal text of a macro's value: PTO_STR(PTO_SBX_MAX) is "1024". */
#define PTO_STR_(x)		#x
#define PTO_STR(x)		PTO_STR_(x)

/* Round @x up to a multiple of @a, a power of two. */
#define PTO_ALIGN_UP(x, a)	(((x) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))

/* A pause for the body of a spin-wait loop. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Smallest power of two >= @v (at most 2^31). */
static inline uint32_t pto_next_pow2_u32(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1U << 31))
		p <<= 1;
	return p;
}

#endif /* PTO_PRIVATE_COMPILER_H */
