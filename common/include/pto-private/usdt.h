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
 * Probes (provider:name(args)):
 *   libpto:graph_begin(tag)  libpto:submit(tag, kernel, nparams)
 *   libpto:doorbell()        libpto:stream_full(head)
 *   libpto:graph_end(tag)    libpto:graph_done(tag, status)
 *   ptod:graph_start(client, tag)   ptod:submit(client, kernel, nparams)
 *   ptod:graph_done(client, tag, status, tasks)
 *   ptod:exec_death(pid, status)    ptod:exec_ready(pid)
 *   pto_aicore:task_start(core, task, kernel)
 *   pto_aicore:task_end(core, task, status)
 *   pto_aicore:park(core, last)     pto_aicore:wake(core, dmb)
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
#include <sys/sdt.h>
#define PTO_HAVE_USDT 1
#endif

#ifdef PTO_HAVE_USDT
#define PTO_PROBE0(prov, name)			DTRACE_PROBE(prov, name)
#define PTO_PROBE1(prov, name, a)		DTRACE_PROBE1(prov, name, a)
#define PTO_PROBE2(prov, name, a, b)		DTRACE_PROBE2(prov, name, a, b)
#define PTO_PROBE3(prov, name, a, b, c)	DTRACE_PROBE3(prov, name, a, b, c)
#define PTO_PROBE4(prov, name, a, b, c, d)	DTRACE_PROBE4(prov, name, a, b, c, d)
#else
#define PTO_PROBE0(prov, name)			do { } while (0)
#define PTO_PROBE1(prov, name, a)		do { (void)(a); } while (0)
#define PTO_PROBE2(prov, name, a, b)		do { (void)(a); (void)(b); } while (0)
#define PTO_PROBE3(prov, name, a, b, c)	\
	do { (void)(a); (void)(b); (void)(c); } while (0)
#define PTO_PROBE4(prov, name, a, b, c, d)	\
	do { (void)(a); (void)(b); (void)(c); (void)(d); } while (0)
#endif

#endif /* PTO_PRIVATE_USDT_H */
