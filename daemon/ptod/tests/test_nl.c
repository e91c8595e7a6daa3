// SPDX-License-Identifier: MIT
/*
 * test_nl.c - ptod's reading of pto.ko's netlink events (ptod_nl.c):
 * which messages reach which action. The actions are stubs here that
 * record their calls; messages are built with libnl as the module sends
 * them (Documentation/netlink/specs/pto.yaml).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "../ptod.h"
#include "tap.h"

#define FAMILY	42		/* the family id the tests use */
#define DEV	3		/* ptod's device */
#define EXEC	100		/* ptod's executor */

/* What the stubs saw. */
static struct {
	int gone, own, foreign, resync, hws;
	pid_t pid;
	uint64_t mask0;
} seen;

void ptod_log(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

void ptod_exec_gone_event(struct ptod *d, pid_t pid, const char *event)
{
	(void)d;
	(void)event;
	seen.gone++;
	seen.pid = pid;
}

void ptod_own_attach(struct ptod *d, const uint64_t *mask)
{
	(void)d;
	seen.own++;
	seen.mask0 = mask[0];
}

void ptod_foreign_attach(struct ptod *d, pid_t pid, const uint64_t *mask)
{
	(void)d;
	seen.foreign++;
	seen.pid = pid;
	seen.mask0 = mask[0];
}

void ptod_events_resync(struct ptod *d)
{
	(void)d;
	seen.resync++;
}

void ptod_hws_changed(struct ptod *d)
{
	(void)d;
	seen.hws++;
}

enum { NO_PID = 1, SHORT_CORES = 2 };

/* An event as the module sends it, from port @port, with @flaws. */
static struct nl_msg *event(int family, uint8_t cmd, uint32_t dev, pid_t pid,
			    uint32_t port, int flaws)
{
	uint64_t mask[PTO_CORE_MASK_WORDS] = { 0xf0 };
	struct sockaddr_nl src = { .nl_family = AF_NETLINK, .nl_pid = port };
	struct nl_msg *m = nlmsg_alloc();

	if (!m || !genlmsg_put(m, 0, 0, family, 0, 0, cmd, PTO_FAMILY_VERSION) ||
	    nla_put_u32(m, PTO_A_DEV_INDEX, dev) ||
	    (!(flaws & NO_PID) && nla_put_u32(m, PTO_A_DEV_PID, (uint32_t)pid)) ||
	    nla_put(m, PTO_A_DEV_CORES, flaws & SHORT_CORES ? 8 : sizeof(mask),
		    mask) ||
	    nla_put_u32(m, PTO_A_DEV_CFG_SEQ, 2)) {
		nlmsg_free(m);
		return NULL;
	}
	nlmsg_set_src(m, &src);
	return m;
}

/* Feed one event to ptod_nl_msg(); what it returned. */
static int feed(struct ptod *d, int family, uint8_t cmd, uint32_t dev,
		pid_t pid, uint32_t port, int flaws)
{
	struct nl_msg *m = event(family, cmd, dev, pid, port, flaws);
	int ret;

	memset(&seen, 0, sizeof(seen));
	if (!m)
		return -1;
	ret = ptod_nl_msg(d, FAMILY, m);
	nlmsg_free(m);
	return ret;
}

static int nothing(void)
{
	return !seen.gone && !seen.own && !seen.foreign && !seen.resync &&
	       !seen.hws;
}

int main(void)
{
	static struct ptod d;
	int r;

	d.info.dev_index = DEV;
	d.exec_pid = EXEC;

	r = feed(&d, FAMILY, PTO_CMD_CORE_FAULT, DEV, EXEC, 0, 0);
	tap_ok(r == NL_OK && seen.gone == 1 && seen.pid == EXEC,
	       "core-fault of the executor: its death (%d, pid %d)", r,
	       (int)seen.pid);
	r = feed(&d, FAMILY, PTO_CMD_EXEC_GONE, DEV, 555, 0, 0);
	tap_ok(r == NL_OK && seen.gone == 1 && seen.pid == 555,
	       "exec-gone: passed on with its pid (the action matches it)");
	r = feed(&d, FAMILY, PTO_CMD_EXEC_ATTACH, DEV, EXEC, 0, 0);
	tap_ok(r == NL_OK && seen.own == 1 && !seen.foreign &&
	       seen.mask0 == 0xf0, "exec-attach by the executor: ours again");
	r = feed(&d, FAMILY, PTO_CMD_EXEC_ATTACH, DEV, 200, 0, 0);
	tap_ok(r == NL_OK && seen.foreign == 1 && seen.pid == 200 &&
	       seen.mask0 == 0xf0, "exec-attach by pid 200: foreign, cores 4-7");
	r = feed(&d, FAMILY, PTO_CMD_HWS_CHANGED, DEV, 200, 0, 0);
	tap_ok(r == NL_OK && seen.hws == 1 && !seen.gone && !seen.own &&
	       !seen.foreign && !seen.resync,
	       "hws-changed: the registers are put in force, nothing else");
	r = feed(&d, FAMILY, PTO_CMD_CORE_FAULT, DEV + 1, EXEC, 0, 0);
	tap_ok(r == NL_SKIP && nothing(), "another device's event: skipped");
	r = feed(&d, FAMILY + 1, PTO_CMD_CORE_FAULT, DEV, EXEC, 0, 0);
	tap_ok(r == NL_SKIP && nothing(), "another family's message: skipped");
	r = feed(&d, FAMILY, PTO_CMD_CORE_FAULT, DEV, EXEC, 4242, 0);
	tap_ok(r == NL_SKIP && nothing(),
	       "sent by a process (port 4242), not the kernel: skipped");
	r = feed(&d, FAMILY, PTO_CMD_CORE_FAULT, DEV, EXEC, 0, NO_PID);
	tap_ok(r == NL_SKIP && nothing(), "no pid: skipped");
	r = feed(&d, FAMILY, PTO_CMD_EXEC_ATTACH, DEV, 200, 0, SHORT_CORES);
	tap_ok(r == NL_SKIP && nothing(), "a short core mask: skipped");
	r = feed(&d, FAMILY, PTO_CMD_HWS_SET, DEV, EXEC, 0, 0);
	tap_ok(r == NL_SKIP && nothing(), "a command that is no event: skipped");
	return tap_done();
}
