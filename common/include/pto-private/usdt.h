// SPDX-License-Identifier: MIT
/*
 * usdt.h - USDT probes of libpto, ptod and the executors
 *
 * Static tracepoints in user space (systemtap-sdt-dev's <sys/sdt.h>): a
 * nop and an ELF note each, nothing when not traced. List them with
 * `bpftrace -l 'usdt:build/daemon/ptod:*'`; e.g.
 *
 *   bpftrace -e 'usdt:build/daemon/pto-aicore:pto_aicore:task_end
 *                { @[arg2 ? "fail" : "ok"] = count(); }'
 *
 * Documentation/tracing.rst lists every probe with its arguments.
 */
#ifndef PTO_PRIVATE_USDT_H
#define PTO_PRIVATE_USDT_H

/*
 * Probes are part of the product (the tracing tools need them): a build
 * without <sys/sdt.h> (systemtap-sdt-dev, installed by scripts/deps.sh)
 * fails here instead of silently dropping them. -DPTO_NO_USDT builds
 * without probes on purpose.
 */
#ifndef PTO_NO_USDT
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#define PTO_HAVE_USDT 1
#endif

/*
 * Every probe has a semaphore: a counter in the .probes section that a
 * tracer (bpftrace, libbpf) increments while it is attached. A probe
 * tests it and skips its arguments' evaluation and the nop when it is 0,
 * so a probe nobody traces costs one load and a predicted branch.
 *
 * A probe name's semaphore is defined once per binary: PTO_USDT_DEFINE
 * in the file that fires it, or PTO_USDT_DECLARE in a shared header and
 * PTO_USDT_DEFINE in one file when several files fire it. It is hidden,
 * so that libpto.so's probes keep their own semaphore whatever the
 * program that loads it defines.
 */
#ifdef PTO_HAVE_USDT
#define PTO_USDT_SEMA(prov, name)	prov##_##name##_semaphore
#define PTO_USDT_DECLARE(prov, name)					\
	extern volatile unsigned short PTO_USDT_SEMA(prov, name)	\
	__attribute__((visibility("hidden")))
#define PTO_USDT_DEFINE(prov, name)					\
	volatile unsigned short PTO_USDT_SEMA(prov, name)		\
	__attribute__((section(".probes"), used, visibility("hidden")))
#define PTO_USDT_ENABLED(prov, name)					\
	__builtin_expect(PTO_USDT_SEMA(prov, name) != 0, 0)
#define PTO_USDT_IF(prov, name, probe)					\
	do {								\
		if (PTO_USDT_ENABLED(prov, name))			\
			probe;						\
	} while (0)
#define PTO_PROBE0(prov, name)						\
	PTO_USDT_IF(prov, name, DTRACE_PROBE(prov, name))
#define PTO_PROBE1(prov, name, a)					\
	PTO_USDT_IF(prov, name, DTRACE_PROBE1(prov, name, a))
#define PTO_PROBE2(prov, name, a, b)					\
	PTO_USDT_IF(prov, name, DTRACE_PROBE2(prov, name, a, b))
#define PTO_PROBE3(prov, name, a, b, c)				\
	PTO_USDT_IF(prov, name, DTRACE_PROBE3(prov, name, a, b, c))
#define PTO_PROBE4(prov, name, a, b, c, d)				\
	PTO_USDT_IF(prov, name, DTRACE_PROBE4(prov, name, a, b, c, d))
#define PTO_PROBE5(prov, name, a, b, c, d, e)			\
	PTO_USDT_IF(prov, name, DTRACE_PROBE5(prov, name, a, b, c, d, e))
#define PTO_PROBE6(prov, name, a, b, c, d, e, f)			\
	PTO_USDT_IF(prov, name, DTRACE_PROBE6(prov, name, a, b, c, d, e, f))
#define PTO_PROBE8(prov, name, a, b, c, d, e, f, g, h)		\
	PTO_USDT_IF(prov, name,						\
		    DTRACE_PROBE8(prov, name, a, b, c, d, e, f, g, h))
#else
/* an incomplete struct declaration: valid at file scope, emits nothing */
#define PTO_USDT_DECLARE(prov, name)	struct pto_usdt_off_##prov##_##name
#define PTO_USDT_DEFINE(prov, name)	struct pto_usdt_off_##prov##_##name
#define PTO_USDT_ENABLED(prov, name)	0
#define PTO_PROBE0(prov, name)			do { } while (0)
#define PTO_PROBE1(prov, name, a)		do { (void)(a); } while (0)
#define PTO_PROBE2(prov, name, a, b)		do { (void)(a); (void)(b); } while (0)
#define PTO_PROBE3(prov, name, a, b, c)	\
	do { (void)(a); (void)(b); (void)(c); } while (0)
#define PTO_PROBE4(prov, name, a, b, c, d)	\
	do { (void)(a); (void)(b); (void)(c); (void)(d); } while (0)
#define PTO_PROBE5(prov, name, a, b, c, d, e)			\
	do {								\
		PTO_PROBE3(prov, name, a, b, c);			\
		PTO_PROBE2(prov, name, d, e);				\
	} while (0)
#define PTO_PROBE6(prov, name, a, b, c, d, e, f)			\
	do {								\
		PTO_PROBE3(prov, name, a, b, c);			\
		PTO_PROBE3(prov, name, d, e, f);			\
	} while (0)
#define PTO_PROBE8(prov, name, a, b, c, d, e, f, g, h)		\
	do {								\
		PTO_PROBE6(prov, name, a, b, c, d, e, f);		\
		PTO_PROBE2(prov, name, g, h);				\
	} while (0)
#endif

#endif /* PTO_PRIVATE_USDT_H */
