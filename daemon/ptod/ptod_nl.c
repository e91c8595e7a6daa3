// SPDX-License-Identifier: MIT
/*
 * ptod_nl.c - ptod on pto.ko: the device's netlink events
 *
 * A libnl generic netlink socket, non-blocking, joined to the "events"
 * group of the "pto" family and read from the libevent loop. Only events
 * of ptod's own device (PTO_A_DEV_INDEX = info.dev_index) and from the
 * kernel count:
 *
 *  - CORE_FAULT, EXEC_GONE of ptod's executor: its death, handled at once
 *    (ptod_exec_gone_event(); SIGCHLD stays the backstop);
 *  - EXEC_ATTACH by ptod's executor: its cores are ptod's again; by anyone
 *    else: those cores are withheld from dispatch and the dispatches
 *    running there fail (ptod_foreign_attach());
 *  - HWS_CHANGED: logged (the engine loads the registers before its next
 *    decision when CFG_SEQ moved);
 *  - AICPU_GONE: ignored (it is ptod's own role going at exit).
 *
 * A module without the family: a warning, and ptod works as before. See
 * Documentation/runtime.rst, "Device events".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "ptod.h"

#define NL_MASK_BYTES	(PTO_CORE_MASK_WORDS * sizeof(uint64_t))

struct ptod_nl {
	struct nl_sock *sk;
	int family;
	struct event *ev;
};

/* One event of the family, as ptod reads it. */
struct nl_event {
	uint8_t cmd;
	uint32_t dev;
	pid_t pid;
	bool has_cores;
	uint64_t cores[PTO_CORE_MASK_WORDS];
	uint32_t cfg_seq;
};

static const char *const nl_cmd_names[] = {
	[PTO_CMD_CORE_FAULT] = "core-fault",
	[PTO_CMD_EXEC_ATTACH] = "exec-attach",
	[PTO_CMD_EXEC_GONE] = "exec-gone",
	[PTO_CMD_AICPU_GONE] = "aicpu-gone",
	[PTO_CMD_HWS_CHANGED] = "hws-changed",
};

/* The attributes of @nlh into @ev: 0, or -EINVAL (malformed, ignored). */
static int nl_parse(struct nlmsghdr *nlh, struct nl_event *ev)
{
	static struct nla_policy pol[PTO_A_DEV_MAX + 1] = {
		[PTO_A_DEV_INDEX] = { .type = NLA_U32 },
		[PTO_A_DEV_PID] = { .type = NLA_U32 },
		[PTO_A_DEV_CFG_SEQ] = { .type = NLA_U32 },
		[PTO_A_DEV_CORES] = { .minlen = NL_MASK_BYTES },
	};
	struct nlattr *tb[PTO_A_DEV_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlh);

	if (genlmsg_parse(nlh, 0, tb, PTO_A_DEV_MAX, pol) < 0 ||
	    !tb[PTO_A_DEV_INDEX] || !tb[PTO_A_DEV_PID])
		return -EINVAL;
	memset(ev, 0, sizeof(*ev));
	ev->cmd = gh->cmd;
	ev->dev = nla_get_u32(tb[PTO_A_DEV_INDEX]);
	ev->pid = (pid_t)nla_get_u32(tb[PTO_A_DEV_PID]);
	if (tb[PTO_A_DEV_CORES]) {
		if (nla_len(tb[PTO_A_DEV_CORES]) != (int)NL_MASK_BYTES)
			return -EINVAL;
		memcpy(ev->cores, nla_data(tb[PTO_A_DEV_CORES]),
		       NL_MASK_BYTES);
		ev->has_cores = true;
	}
	if (tb[PTO_A_DEV_CFG_SEQ])
		ev->cfg_seq = nla_get_u32(tb[PTO_A_DEV_CFG_SEQ]);
	return 0;
}

/* The command name of process @pid, "?" if it is gone. */
static const char *nl_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	while (n && buf[n - 1] == '\n')
		n--;
	buf[n] = 0;
	return n ? buf : "?";
}

static void nl_act(struct ptod *d, const struct nl_event *ev)
{
	const char *name = nl_cmd_names[ev->cmd];
	char comm[32];

	switch (ev->cmd) {
	case PTO_CMD_CORE_FAULT:
	case PTO_CMD_EXEC_GONE:
		ptod_exec_gone_event(d, ev->pid, name);
		break;
	case PTO_CMD_EXEC_ATTACH:
		if (!ev->has_cores)
			break;
		if (ev->pid > 0 && ev->pid == d->exec_pid)
			ptod_own_attach(d, ev->cores);
		else
			ptod_foreign_attach(d, ev->pid, ev->cores);
		break;
	case PTO_CMD_HWS_CHANGED:
		ptod_log(PTOD_LOG_INFO,
			 "%s: pid %d (%s) wrote the HWS registers (CFG_SEQ %u)",
			 name, (int)ev->pid, nl_comm(ev->pid, comm, sizeof(comm)),
			 ev->cfg_seq);
		ptod_hws_changed(d);
		break;
	default:	/* AICPU_GONE: our own role, at exit */
		ptod_log(PTOD_LOG_DEBUG, "%s: pid %d", name, (int)ev->pid);
		break;
	}
}

int ptod_nl_msg(struct ptod *d, int family, struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nl_event ev;

	/* the family's events only, sent by the kernel */
	if (nlh->nlmsg_type != family || nlmsg_get_src(msg)->nl_pid != 0 ||
	    nl_parse(nlh, &ev))
		return NL_SKIP;
	if (ev.dev != d->info.dev_index || ev.cmd < PTO_CMD_CORE_FAULT ||
	    ev.cmd > PTO_CMD_HWS_CHANGED)
		return NL_SKIP;
	nl_act(d, &ev);
	return NL_OK;
}

static int nl_on_msg(struct nl_msg *msg, void *arg)
{
	struct ptod *d = arg;

	return ptod_nl_msg(d, d->nl->family, msg);
}

static void nl_on_read(evutil_socket_t fd, short what, void *arg)
{
	struct ptod *d = arg;
	int ret;

	(void)fd;
	(void)what;
	while ((ret = nl_recvmsgs_default(d->nl->sk)) >= 0)
		;
	if (ret == -NLE_AGAIN)
		return;
	if (ret == -NLE_NOMEM) {
		/* ENOBUFS: the socket overran, events were lost */
		ptod_log(PTOD_LOG_WARN,
			 "netlink events were lost (socket overrun): looking at the cores' registers instead");
		ptod_events_resync(d);
		return;
	}
	ptod_log(PTOD_LOG_WARN, "netlink events: %s", nl_geterror(ret));
}

/* The socket, subscribed and non-blocking; 0 or a libnl error. */
static int nl_subscribe(struct ptod *d, struct ptod_nl *nl)
{
	int grp, ret;

	ret = genl_connect(nl->sk);
	if (ret < 0)
		return ret;
	nl->family = genl_ctrl_resolve(nl->sk, PTO_FAMILY_NAME);
	if (nl->family < 0)
		return nl->family;
	grp = genl_ctrl_resolve_grp(nl->sk, PTO_FAMILY_NAME, PTO_MCGRP_EVENTS);
	if (grp < 0)
		return grp;
	ret = nl_socket_add_membership(nl->sk, grp);
	if (ret < 0)
		return ret;
	nl_socket_disable_seq_check(nl->sk);
	ret = nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM,
				  nl_on_msg, d);
	if (ret < 0)
		return ret;
	return nl_socket_set_nonblocking(nl->sk);
}

int ptod_nl_start(struct ptod *d)
{
	struct ptod_nl *nl = calloc(1, sizeof(*nl));
	int ret;

	if (!nl)
		return -ENOMEM;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		free(nl);
		return -ENOMEM;
	}
	ret = nl_subscribe(d, nl);
	if (ret < 0) {
		ptod_log(PTOD_LOG_WARN,
			 "no events of pto.ko's netlink family \"%s\" (%s; an older module?): ptod learns of its executor's death from SIGCHLD only",
			 PTO_FAMILY_NAME, nl_geterror(ret));
		nl_socket_free(nl->sk);
		free(nl);
		return 0;
	}
	d->nl = nl;
	nl->ev = event_new(d->base, nl_socket_get_fd(nl->sk),
			   EV_READ | EV_PERSIST, nl_on_read, d);
	if (!nl->ev || event_add(nl->ev, NULL)) {
		ptod_log(PTOD_LOG_ERR, "libevent: cannot watch the netlink socket");
		ptod_nl_stop(d);
		return -ENOMEM;
	}
	ptod_log(PTOD_LOG_DEBUG, "following the events of pto%u",
		 d->info.dev_index);
	return 0;
}

void ptod_nl_stop(struct ptod *d)
{
	struct ptod_nl *nl = d->nl;

	if (!nl)
		return;
	if (nl->ev)
		event_free(nl->ev);
	nl_socket_free(nl->sk);	/* closes the socket */
	free(nl);
	d->nl = NULL;
}
