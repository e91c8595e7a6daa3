// SPDX-License-Identifier: MIT
/*
 * ptoctl - the pto generic netlink family from the command line, and
 * what lives in ptod from its socket (ptoctl_ptod.c).
 *
 *   ptoctl [-j] [-d N] info          device information (dev-get)
 *   ptoctl [-j] [-d N] stats         device counters (counters-get)
 *   ptoctl [-j] [-d N] hws get       HWS configuration registers
 *   ptoctl [-j] [-d N] hws set KEY=VALUE...
 *   ptoctl [-j] [-n COUNT] events    follow the multicast events
 *   ptoctl [-j] [-s SOCKET] clients  ptod's clients
 *   ptoctl [-j] [-s SOCKET] graphs   graphs in flight and the last ones
 *   ptoctl [-j] [-s SOCKET] trace [-n BLOCKS] [-d SECONDS] [-o FILE]
 *                                    follow every block that runs
 *
 * -j prints JSON (an array for info, stats, clients and graphs, an object
 * for hws, one object per line for events and trace); the device's names
 * are the attribute names of Documentation/netlink/specs/pto.yaml. See
 * Documentation/ptoctl.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/netlink.h>
#include <linux/pto.h>

#include <pto-private/compiler.h>
#include <pto-private/parse.h>
#include <pto-private/wire.h>

#include "ptoctl.h"

#define MASK_BYTES	(PTO_CORE_MASK_WORDS * sizeof(uint64_t))

struct opts {
	bool json;
	const char *sock;	/* -s: ptod's socket */
	int dev;		/* -1: every device */
	long count;		/* events: stop after this many, 0: never */
	char given[4];		/* -d, -n, -s as given: their letters */
};

/* One request and what came back. */
struct req {
	const struct opts *o;
	int err;		/* -errno from the kernel */
	char msg[256];		/* its extended ack message, if any */
	bool done;
	int nr;			/* replies printed */
};

enum kind { K_U32, K_U64, K_STR, K_HEX };

struct field {
	int attr;
	const char *name;
	enum kind kind;
};

static const struct field dev_fields[] = {
	{ PTO_A_DEV_INDEX, "index", K_U32 },
	{ PTO_A_DEV_NAME, "name", K_STR },
	{ PTO_A_DEV_ABI_VERSION, "abi-version", K_HEX },
	{ PTO_A_DEV_PROFILE, "profile", K_U32 },
	{ PTO_A_DEV_NR_AIC, "nr-aic", K_U32 },
	{ PTO_A_DEV_NR_AIV, "nr-aiv", K_U32 },
	{ PTO_A_DEV_NR_CORES, "nr-cores", K_U32 },
	{ PTO_A_DEV_GM_SIZE, "gm-size", K_U64 },
	{ PTO_A_DEV_GM_DEV_BASE, "gm-dev-base", K_HEX },
	{ PTO_A_DEV_GM_FREE, "gm-free", K_U64 },
	{ PTO_A_DEV_CAPS, "caps", K_HEX },
	{ PTO_A_DEV_SYS_CNT_FREQ, "sys-cnt-freq", K_U64 },
	{ PTO_A_DEV_AICPU_PID, "aicpu-pid", K_U32 },
	{ 0, NULL, K_U32 },
};

static const struct field counter_fields[] = {
	{ PTO_A_COUNTERS_GM_BYTES_USED, "gm-bytes-used", K_U64 },
	{ PTO_A_COUNTERS_GM_BUFFERS, "gm-buffers", K_U64 },
	{ PTO_A_COUNTERS_ALLOCS, "allocs", K_U64 },
	{ PTO_A_COUNTERS_FREES, "frees", K_U64 },
	{ PTO_A_COUNTERS_MAPS, "maps", K_U64 },
	{ PTO_A_COUNTERS_PARKS, "parks", K_U64 },
	{ PTO_A_COUNTERS_KICKS, "kicks", K_U64 },
	{ PTO_A_COUNTERS_WAKES, "wakes", K_U64 },
	{ PTO_A_COUNTERS_IRQS, "irqs", K_U64 },
	{ PTO_A_COUNTERS_FAULTS, "faults", K_U64 },
	{ PTO_A_COUNTERS_PINS, "pins", K_U64 },
	{ PTO_A_COUNTERS_CORES_ONLINE, "cores-online", K_U64 },
	{ PTO_A_COUNTERS_CORES_DEAD, "cores-dead", K_U64 },
	{ PTO_A_COUNTERS_AICPU, "aicpu", K_U64 },
	{ 0, NULL, K_U32 },
};

/* The u32 registers of the hws nest. */
static const struct field hws_fields[] = {
	{ PTO_A_HWS_POLICY, "policy", K_U32 },
	{ PTO_A_HWS_WORK_MODE, "work-mode", K_U32 },
	{ PTO_A_HWS_CLUSTER_SIP_NUM, "cluster-sip-num", K_U32 },
	{ PTO_A_HWS_SECOND_RSC_SCH, "second-rsc-sch", K_U32 },
	{ PTO_A_HWS_EARLY_LAUNCH_EN, "early-launch-en", K_U32 },
	{ PTO_A_HWS_EARLY_LAUNCH_MODE, "early-launch-mode", K_U32 },
	{ PTO_A_HWS_BACKFILL_MARGIN, "backfill-margin", K_U32 },
	{ PTO_A_HWS_FILLUP_FIRST, "fillup-first", K_U32 },
	{ PTO_A_HWS_RSVD_FIRST, "rsvd-first", K_U32 },
	{ PTO_A_HWS_PROMOTE_RULE, "promote-rule", K_U32 },
	{ PTO_A_HWS_PROMOTE_THRESHOLD, "promote-threshold", K_U32 },
	{ PTO_A_HWS_REPORT_EN, "report-en", K_U32 },
	{ PTO_A_HWS_LAUNCH_DELAY, "launch-delay", K_U32 },
	{ PTO_A_HWS_PRE_IDLE_OFFSET, "pre-idle-offset", K_U32 },
	{ 0, NULL, K_U32 },
};

/* Event names, indexed by command. */
static const char *const event_names[PTO_CMD_MAX + 1] = {
	[PTO_CMD_CORE_FAULT] = "core-fault",
	[PTO_CMD_EXEC_ATTACH] = "exec-attach",
	[PTO_CMD_EXEC_GONE] = "exec-gone",
	[PTO_CMD_AICPU_GONE] = "aicpu-gone",
	[PTO_CMD_HWS_CHANGED] = "hws-changed",
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptoctl [-j] [-d N] info|stats\n"
		"       ptoctl [-j] [-d N] hws get\n"
		"       ptoctl [-j] [-d N] hws set KEY=VALUE...\n"
		"       ptoctl [-j] [-n COUNT] events\n"
		"       ptoctl [-j] [-s SOCKET] clients|graphs\n"
		"       ptoctl [-j] [-s SOCKET] trace [-n BLOCKS] [-d SECONDS] [-o FILE]\n"
		"  -j        JSON output\n"
		"  -s SOCKET ptod's socket (default $PTO_SOCKET, else " PTO_DEFAULT_SOCKET ")\n"
		"  -d N      device N (/dev/ptoN); info and stats: every device by default,\n"
		"            hws: device 0 by default\n"
		"  -n COUNT  events: exit after COUNT events\n"
		"trace: -n stops after BLOCKS blocks, -d after SECONDS, -o writes\n"
		"the blocks as a recording pto-trace draws\n"
		"hws set keys: the u32 registers (policy, work-mode, ... as hws get\n"
		"prints them), scale-ratio=R0,...,R19, usage=CTX:CLASS:CORES\n"
		"(CORES a list such as 0-3,8 or \"none\")\n");
}

/* ------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------
 */

static uint64_t attr_uint(const struct nlattr *a)
{
	if (nla_len(a) == 8)
		return nla_get_u64((struct nlattr *)a);
	if (nla_len(a) == 4)
		return nla_get_u32((struct nlattr *)a);
	return 0;
}

/* The fields of @fields present in @tb, "name value" lines or JSON members. */
static void print_fields(const struct field *fields, struct nlattr **tb,
			 bool json, const char *indent)
{
	const char *sep = "";

	for (const struct field *f = fields; f->name; f++) {
		struct nlattr *a = tb[f->attr];

		if (!a)
			continue;
		if (f->kind == K_STR && json)
			printf("%s\"%s\": \"%s\"", sep, f->name, nla_get_string(a));
		else if (f->kind == K_STR)
			printf("%s%-18s %s\n", indent, f->name, nla_get_string(a));
		else if (json)
			printf("%s\"%s\": %" PRIu64, sep, f->name, attr_uint(a));
		else if (f->kind == K_HEX)
			printf("%s%-18s %#" PRIx64 "\n", indent, f->name,
			       attr_uint(a));
		else
			printf("%s%-18s %" PRIu64 "\n", indent, f->name,
			       attr_uint(a));
		sep = ", ";
	}
}

/* A core mask attribute as a list: "0-3,8" (or "none"), JSON [0, 1, ...]. */
static void print_cores(const struct nlattr *a, bool json)
{
	uint64_t mask[PTO_CORE_MASK_WORDS] = { 0 };
	const char *sep = "";
	int i, first = -1;

	if (a && nla_len(a) == (int)MASK_BYTES)
		memcpy(mask, nla_data(a), MASK_BYTES);
	printf(json ? "[" : "");
	for (i = 0; i <= PTO_MAX_CORES; i++) {
		bool set = i < PTO_MAX_CORES && (mask[i / 64] >> (i % 64) & 1);

		if (json && set) {
			printf("%s%d", sep, i);
			sep = ", ";
		} else if (!json && set && first < 0) {
			first = i;
		} else if (!json && !set && first >= 0) {
			printf(first == i - 1 ? "%s%d" : "%s%d-%d", sep, first,
			       i - 1);
			sep = ",";
			first = -1;
		}
	}
	printf(json ? "]" : (*sep ? "" : "none"));
}

/* ------------------------------------------------------------------------
 * Requests
 * ------------------------------------------------------------------------
 */

/* The kernel's error, and the message of its extended ack. */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct req *r = arg;
	size_t off = sizeof(*e);

	(void)nla;
	r->err = e->error;
	r->done = true;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (NLMSG_HDRLEN + off > nlh->nlmsg_len)
		return NL_STOP;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)e + off),
		      nlh->nlmsg_len - NLMSG_HDRLEN - off, NULL) == 0 &&
	    tb[NLMSGERR_ATTR_MSG])
		snprintf(r->msg, sizeof(r->msg), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

struct conn {
	struct nl_sock *sk;
	int family;
};

static int conn_open(struct conn *c)
{
	int one = 1;

	c->sk = nl_socket_alloc();
	if (!c->sk)
		return -ENOMEM;
	if (genl_connect(c->sk) < 0) {
		fprintf(stderr, "ptoctl: cannot open a generic netlink socket\n");
		nl_socket_free(c->sk);
		return -EIO;
	}
	c->family = genl_ctrl_resolve(c->sk, PTO_FAMILY_NAME);
	if (c->family < 0) {
		fprintf(stderr,
			"ptoctl: no generic netlink family \"%s\": is pto.ko loaded?\n",
			PTO_FAMILY_NAME);
		nl_socket_free(c->sk);
		return -ENOENT;
	}
	nl_socket_disable_auto_ack(c->sk);
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
		   sizeof(one));
	return 0;
}

/*
 * Send @msg (a request of @c's family) and hand every reply to @valid
 * until the ack, the end of the dump or an error. Returns 0 or -errno, with
 * the kernel's message in r->msg.
 */
static int transact(struct conn *c, struct nl_msg *msg, nl_recvmsg_msg_cb_t valid,
		    struct req *r)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	ret = nl_send_auto(c->sk, msg);
	while (ret >= 0 && !r->done)
		ret = nl_recvmsgs(c->sk, cb);
	nl_cb_put(cb);
	if (ret < 0 && !r->err)
		return -EIO;
	return r->err;
}

/* A request of @cmd on device @dev (-1: a dump of every device). */
static struct nl_msg *request(const struct conn *c, uint8_t cmd, int dev)
{
	struct nl_msg *msg = nlmsg_alloc();
	int flags = dev < 0 ? NLM_F_DUMP : NLM_F_ACK;

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0, flags,
			 cmd, PTO_FAMILY_VERSION) ||
	    (dev >= 0 && nla_put_u32(msg, PTO_A_DEV_INDEX, dev) < 0)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* What a failed request prints: @what, the error and the kernel's words. */
static int report(const char *what, const struct req *r, int err)
{
	if (err == -EPERM)
		fprintf(stderr,
			"ptoctl: %s: permission denied: changing the device needs CAP_NET_ADMIN and CAP_SYS_ADMIN (run it as root)%s%s\n",
			what, *r->msg ? ": " : "", r->msg);
	else
		fprintf(stderr, "ptoctl: %s: %s%s%s\n", what, strerror(-err),
			*r->msg ? ": " : "", r->msg);
	return 1;
}

/* ------------------------------------------------------------------------
 * info, stats
 * ------------------------------------------------------------------------
 */

static int on_dev(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[PTO_A_DEV_MAX + 1], *ctr[PTO_A_COUNTERS_MAX + 1];
	struct req *r = arg;
	bool json = r->o->json;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PTO_A_DEV_MAX, NULL) < 0)
		return NL_SKIP;
	if (json)
		printf("%s{", r->nr ? ",\n  " : "  ");
	else if (tb[PTO_A_DEV_INDEX])
		printf("pto%u:\n", nla_get_u32(tb[PTO_A_DEV_INDEX]));
	if (tb[PTO_A_DEV_COUNTERS]) {
		if (nla_parse_nested(ctr, PTO_A_COUNTERS_MAX,
				     tb[PTO_A_DEV_COUNTERS], NULL) < 0)
			return NL_SKIP;
		if (json)
			printf("\"index\": %u, ",
			       nla_get_u32(tb[PTO_A_DEV_INDEX]));
		print_fields(counter_fields, ctr, json, "  ");
	} else {
		print_fields(dev_fields, tb, json, "  ");
	}
	if (json)
		printf("}");
	r->nr++;
	return NL_OK;
}

static int cmd_get(struct conn *c, const struct opts *o, uint8_t cmd,
		   const char *what)
{
	struct req r = { .o = o };
	struct nl_msg *msg = request(c, cmd, o->dev);
	int ret;

	if (!msg)
		return report(what, &r, -ENOMEM);
	if (o->json)
		printf("[\n");
	ret = transact(c, msg, on_dev, &r);
	nlmsg_free(msg);
	if (o->json)
		printf("\n]\n");
	if (ret)
		return report(what, &r, ret);
	return 0;
}

/* ------------------------------------------------------------------------
 * hws get, hws set
 * ------------------------------------------------------------------------
 */

static void print_usage_masks(struct nlattr *hws, bool json)
{
	struct nlattr *a, *tb[PTO_A_USAGE_MAX + 1];
	const char *sep = "";
	int rem;

	printf(json ? ", \"usage\": [" : "");
	nla_for_each_nested(a, hws, rem) {
		if (nla_type(a) != PTO_A_HWS_USAGE ||
		    nla_parse_nested(tb, PTO_A_USAGE_MAX, a, NULL) < 0 ||
		    !tb[PTO_A_USAGE_CTX] || !tb[PTO_A_USAGE_CLASS])
			continue;
		printf(json ? "%s{\"ctx\": %u, \"class\": %u, \"cores\": " :
			      "%susage ctx %u class %u: ",
		       json ? sep : "  ", nla_get_u32(tb[PTO_A_USAGE_CTX]),
		       nla_get_u32(tb[PTO_A_USAGE_CLASS]));
		print_cores(tb[PTO_A_USAGE_MASK], json);
		printf(json ? "}" : "\n");
		sep = ", ";
	}
	printf(json ? "]" : "");
}

static void print_scale(const struct nlattr *a, bool json)
{
	uint32_t v[PTO_HWS_SCALE_RANKS];

	if (!a || nla_len(a) != (int)sizeof(v))
		return;
	memcpy(v, nla_data(a), sizeof(v));
	printf(json ? ", \"scale-ratio\": [" : "  %-18s ", "scale-ratio");
	for (int i = 0; i < PTO_HWS_SCALE_RANKS; i++)
		printf(json ? "%s%u" : "%s%u", i ? (json ? ", " : ",") : "",
		       v[i]);
	printf(json ? "]" : "\n");
}

static int on_hws(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[PTO_A_DEV_MAX + 1], *hws[PTO_A_HWS_MAX + 1];
	struct req *r = arg;
	bool json = r->o->json;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PTO_A_DEV_MAX, NULL) < 0 ||
	    !tb[PTO_A_DEV_HWS] || !tb[PTO_A_DEV_INDEX] ||
	    !tb[PTO_A_DEV_CFG_SEQ] ||
	    nla_parse_nested(hws, PTO_A_HWS_MAX, tb[PTO_A_DEV_HWS], NULL) < 0)
		return NL_SKIP;
	if (json)
		printf("{\"index\": %u, \"cfg-seq\": %u, ",
		       nla_get_u32(tb[PTO_A_DEV_INDEX]),
		       nla_get_u32(tb[PTO_A_DEV_CFG_SEQ]));
	else
		printf("pto%u:\n  %-18s %u\n", nla_get_u32(tb[PTO_A_DEV_INDEX]),
		       "cfg-seq", nla_get_u32(tb[PTO_A_DEV_CFG_SEQ]));
	print_fields(hws_fields, hws, json, "  ");
	print_scale(hws[PTO_A_HWS_SCALE_RATIO], json);
	print_usage_masks(tb[PTO_A_DEV_HWS], json);
	printf(json ? "}\n" : "");
	r->nr++;
	return NL_OK;
}

/* "none" or a list of cores (pto_parse_cores()) into @mask. */
static int parse_cores(const char *s, uint64_t *mask)
{
	if (strcmp(s, "none"))
		return pto_parse_cores(s, PTO_MAX_CORES, mask,
				       PTO_CORE_MASK_WORDS);
	memset(mask, 0, MASK_BYTES);
	return 0;
}

static int put_usage(struct nl_msg *msg, const char *val)
{
	uint64_t mask[PTO_CORE_MASK_WORDS], ctx, class;
	struct nlattr *nest;
	const char *end;

	if (pto_parse_u64(val, 10, UINT32_MAX, &ctx, &end) || *end != ':' ||
	    pto_parse_u64(end + 1, 10, UINT32_MAX, &class, &end) ||
	    *end != ':' || parse_cores(end + 1, mask))
		return -EINVAL;
	nest = nla_nest_start(msg, PTO_A_HWS_USAGE);
	if (!nest || nla_put_u32(msg, PTO_A_USAGE_CTX, ctx) < 0 ||
	    nla_put_u32(msg, PTO_A_USAGE_CLASS, class) < 0 ||
	    nla_put(msg, PTO_A_USAGE_MASK, sizeof(mask), mask) < 0)
		return -ENOMEM;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_scale(struct nl_msg *msg, const char *val)
{
	uint32_t v[PTO_HWS_SCALE_RANKS];
	const char *end;

	for (int i = 0; i < PTO_HWS_SCALE_RANKS; i++) {
		uint64_t x;

		if (pto_parse_u64(val, 0, UINT32_MAX, &x, &end) ||
		    *end != (i == PTO_HWS_SCALE_RANKS - 1 ? '\0' : ','))
			return -EINVAL;
		v[i] = x;
		val = end + 1;
	}
	return nla_put(msg, PTO_A_HWS_SCALE_RATIO, sizeof(v), v) < 0 ?
		       -ENOMEM : 0;
}

/* One KEY=VALUE of hws set into the hws nest of @msg. */
static int put_setting(struct nl_msg *msg, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0;
	uint64_t x;

	if (!eq)
		return -EINVAL;
	if (klen == 5 && !strncmp(arg, "usage", 5))
		return put_usage(msg, eq + 1);
	if (klen == 11 && !strncmp(arg, "scale-ratio", 11))
		return put_scale(msg, eq + 1);
	for (const struct field *f = hws_fields; f->name; f++) {
		if (strlen(f->name) != klen || strncmp(arg, f->name, klen))
			continue;
		if (pto_parse_u64_all(eq + 1, 0, UINT32_MAX, &x))
			return -EINVAL;
		return nla_put_u32(msg, f->attr, x) < 0 ? -ENOMEM : 0;
	}
	return -EINVAL;
}

/*
 * hws's arguments ("get", or "set" and KEY=VALUE...), checked before
 * anything is opened: 0, or 2 with the usage or the bad setting said.
 * Each setting is put into a scratch message by the code that puts it
 * into the request, so that the two cannot disagree.
 */
static int hws_args(int argc, char **argv)
{
	bool set = argc > 0 && !strcmp(argv[0], "set");
	struct nl_msg *scratch;
	int ret = 0;

	if (argc < 1 || (!set && (strcmp(argv[0], "get") || argc != 1)) ||
	    (set && argc < 2)) {
		usage(stderr);
		return 2;
	}
	if (!set)
		return 0;
	scratch = nlmsg_alloc();
	if (!scratch) {
		fprintf(stderr, "ptoctl: hws set: %s\n", strerror(ENOMEM));
		return 1;
	}
	for (int i = 1; i < argc && !ret; i++)
		if (put_setting(scratch, argv[i]) == -EINVAL) {
			fprintf(stderr, "ptoctl: hws set: bad setting \"%s\"\n",
				argv[i]);
			ret = 2;
		}
	nlmsg_free(scratch);
	return ret;
}

/* hws, its arguments checked by hws_args() */
static int cmd_hws(struct conn *c, const struct opts *o, int argc,
		   char **argv)
{
	bool set = !strcmp(argv[0], "set");
	struct req r = { .o = o };
	const char *what = set ? "hws set" : "hws get";
	struct nl_msg *msg;
	struct nlattr *nest;
	int ret = 0;

	msg = request(c, set ? PTO_CMD_HWS_SET : PTO_CMD_HWS_GET,
		      o->dev < 0 ? 0 : o->dev);
	if (!msg)
		return report(what, &r, -ENOMEM);
	if (set) {
		nest = nla_nest_start(msg, PTO_A_DEV_HWS);
		for (int i = 1; i < argc && !ret; i++)
			ret = nest ? put_setting(msg, argv[i]) : -ENOMEM;
		if (ret) {
			/* checked before: only room can be lacking */
			nlmsg_free(msg);
			return report(what, &r, ret);
		}
		nla_nest_end(msg, nest);
	}
	ret = transact(c, msg, on_hws, &r);
	nlmsg_free(msg);
	return ret ? report(what, &r, ret) : 0;
}

/* ------------------------------------------------------------------------
 * events
 * ------------------------------------------------------------------------
 */

static int on_event(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[PTO_A_DEV_MAX + 1];
	struct req *r = arg;
	bool json = r->o->json;
	const char *name;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PTO_A_DEV_MAX, NULL) < 0)
		return NL_SKIP;
	name = gh->cmd <= PTO_CMD_MAX ? event_names[gh->cmd] : NULL;
	printf(json ? "{\"event\": \"%s\"" : "%s", name ? name : "unknown");
	if (tb[PTO_A_DEV_INDEX])
		printf(json ? ", \"index\": %u" : " pto%u",
		       nla_get_u32(tb[PTO_A_DEV_INDEX]));
	if (tb[PTO_A_DEV_PID])
		printf(json ? ", \"pid\": %u" : " pid %u",
		       nla_get_u32(tb[PTO_A_DEV_PID]));
	if (tb[PTO_A_DEV_CFG_SEQ])
		printf(json ? ", \"cfg-seq\": %u" : " cfg-seq %u",
		       nla_get_u32(tb[PTO_A_DEV_CFG_SEQ]));
	if (tb[PTO_A_DEV_CORES]) {
		printf(json ? ", \"cores\": " : " cores ");
		print_cores(tb[PTO_A_DEV_CORES], json);
	}
	printf(json ? "}\n" : "\n");
	fflush(stdout);
	if (r->o->count && ++r->nr >= r->o->count)
		r->done = true;
	return NL_OK;
}

static int cmd_events(struct conn *c, const struct opts *o)
{
	struct req r = { .o = o };
	int grp, ret = 0;

	grp = genl_ctrl_resolve_grp(c->sk, PTO_FAMILY_NAME, PTO_MCGRP_EVENTS);
	if (grp < 0 || nl_socket_add_membership(c->sk, grp) < 0) {
		fprintf(stderr, "ptoctl: events: cannot join group \"%s\"\n",
			PTO_MCGRP_EVENTS);
		return 1;
	}
	/* events carry no sequence number */
	nl_socket_disable_seq_check(c->sk);
	nl_socket_modify_cb(c->sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, &r);
	fprintf(stderr, "ptoctl: listening\n");
	while (!r.done && ret >= 0)
		ret = nl_recvmsgs_default(c->sk);
	if (ret < 0) {
		fprintf(stderr, "ptoctl: events: %s\n", nl_geterror(ret));
		return 1;
	}
	return 0;
}

long ptoctl_num(const char *s, long max)
{
	uint64_t v;

	return pto_parse_u64_all(s, 10, (uint64_t)max, &v) ? -1 : (long)v;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int ch;

	o->dev = -1;
	while ((ch = getopt(argc, argv, "+jd:n:s:h")) != -1) {
		if (strchr("dns", ch) && !strchr(o->given, ch))
			o->given[strlen(o->given)] = (char)ch;
		switch (ch) {
		case 's':
			o->sock = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'd':
			o->dev = ptoctl_num(optarg, INT32_MAX);
			if (o->dev < 0)
				return -EINVAL;
			break;
		case 'n':
			o->count = ptoctl_num(optarg, LONG_MAX);
			if (o->count < 0)
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	return optind < argc ? 0 : -EINVAL;
}

/* the device's commands, through netlink: argv[0] is the command */
static int nl_info(struct conn *c, const struct opts *o, int argc,
		   char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_get(c, o, PTO_CMD_DEV_GET, "info");
}

static int nl_stats(struct conn *c, const struct opts *o, int argc,
		    char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_get(c, o, PTO_CMD_COUNTERS_GET, "stats");
}

static int nl_hws(struct conn *c, const struct opts *o, int argc,
		  char **argv)
{
	return cmd_hws(c, o, argc - 1, argv + 1);
}

static int check_hws(int argc, char **argv)
{
	return hws_args(argc - 1, argv + 1);
}

static int nl_events(struct conn *c, const struct opts *o, int argc,
		     char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_events(c, o);
}

/* ptod's commands, on its socket */
static int sock_clients(const struct ptoctl_sock *so, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return ptoctl_clients(so);
}

static int sock_graphs(const struct ptoctl_sock *so, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return ptoctl_graphs(so);
}

/**
 * struct ptoctl_cmd - one command of ptoctl.
 * @name: as written on the command line.
 * @takes: the letters of the options (before it) it uses.
 * @args: it takes arguments after its name.
 * @own: options of its own, after its name (named when given before it).
 * @nl: run on the device, through netlink; or
 * @sock: run on ptod, through its socket.
 */
struct ptoctl_cmd {
	const char *name;
	const char *takes;
	bool args;
	const char *own;
	int (*nl)(struct conn *c, const struct opts *o, int argc, char **argv);
	int (*sock)(const struct ptoctl_sock *so, int argc, char **argv);
	/* the arguments, before anything is opened: 0, or the exit status */
	int (*check)(int argc, char **argv);
};

static const struct ptoctl_cmd ptoctl_cmds[] = {
	{ "info", "d", false, NULL, nl_info, NULL, NULL },
	{ "stats", "d", false, NULL, nl_stats, NULL, NULL },
	{ "hws", "d", true, NULL, nl_hws, NULL, check_hws },
	{ "events", "n", false, NULL, nl_events, NULL, NULL },
	{ "clients", "s", false, NULL, NULL, sock_clients, NULL },
	{ "graphs", "s", false, NULL, NULL, sock_graphs, NULL },
	{ "trace", "s", true, "-n and -d", NULL, ptoctl_trace, NULL },
};

/*
 * The options of @o->given that @cmd takes: 0, or -EINVAL, said on
 * stderr, for the first it does not. Also for arguments after @cmd if it
 * takes none (@nargs: how many follow it).
 */
static int cmd_takes(const struct opts *o, const struct ptoctl_cmd *cmd,
		     int nargs, char **args)
{
	const char *g;

	for (g = o->given; *g; g++) {
		if (strchr(cmd->takes, *g))
			continue;
		if (cmd->own)
			fprintf(stderr, "ptoctl: %s does not take -%c before it (%s's own %s come after it)\n",
				cmd->name, *g, cmd->name, cmd->own);
		else
			fprintf(stderr, "ptoctl: %s does not take -%c\n",
				cmd->name, *g);
		return -EINVAL;
	}
	if (nargs && !cmd->args) {
		fprintf(stderr, "ptoctl: %s takes no arguments (\"%s\")%s\n",
			cmd->name, args[0], args[0][0] == '-' ?
			": options come before the command" : "");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct ptoctl_cmd *cmd = NULL;
	struct opts o = { 0 };
	struct conn c;
	size_t i;
	int ret;

	if (parse_opts(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < PTO_ARRAY_SIZE(ptoctl_cmds) && !cmd; i++)
		if (!strcmp(argv[optind], ptoctl_cmds[i].name))
			cmd = &ptoctl_cmds[i];
	if (!cmd) {
		usage(stderr);
		return 2;
	}
	argc -= optind;
	argv += optind;
	if (cmd_takes(&o, cmd, argc - 1, argv + 1))
		return 2;
	if (cmd->check) {
		ret = cmd->check(argc, argv);
		if (ret)
			return ret;
	}
	if (cmd->sock) {
		struct ptoctl_sock so = { .json = o.json, .sock = o.sock };

		return cmd->sock(&so, argc, argv);
	}
	if (conn_open(&c))
		return 1;
	ret = cmd->nl(&c, &o, argc, argv);
	nl_socket_free(c.sk);
	return ret;
}
