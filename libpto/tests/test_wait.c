// SPDX-License-Identifier: MIT
/*
 * test_wait.c - what pto_graph_wait() answers:
 *  - when libpto had no memory to keep a graph's outcome: that graph's
 *    wait says -ENOMEM once (and leaves no statistics), and every other
 *    wait answers as it would have (its outcome, or -ENOENT for a graph
 *    never sent or already waited for);
 *  - for a graph in which this process refused a submit: that failure,
 *    unless ptod's DONE has one (also when the DONE is read before
 *    pto_graph_end());
 *  - when ptod breaks the protocol (a DONE for a graph owed none, or a
 *    second one, a status that is no errno, a message too short): -EPROTO,
 *    and the connection is shut down, so every wait after fails too,
 *    with the same reason;
 *    a message's text ends where the message does;
 *  - when ptod says why it closes the connection (CLOSING), then closes
 *    it: a graph still owed its DONE ends with that status and reason,
 *    and so do the graph being built and a request sent after (which
 *    finds the connection closed before it read the CLOSING); a CLOSING
 *    with neither status nor text is -ECONNRESET;
 *  - for a static graph built in a forked child (the parent's): its
 *    records are refused with -ECHILD at once, none held;
 *  - for a static graph that ptod ends while it is being written out
 *    at pto_graph_end(): it was sent, so pto_graph_end() succeeds and
 *    the wait answers ptod's status and text.
 * A client is built by hand on one end of a socket pair; the test plays
 * ptod on the other end and sends the DONE messages. realloc() is
 * wrapped to fail on demand (-Wl,--wrap=realloc).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "tap.h"

static int fail_reallocs;	/* the next ones fail */

void *__real_realloc(void *p, size_t len);
void *__wrap_realloc(void *p, size_t len);

void *__wrap_realloc(void *p, size_t len)
{
	if (fail_reallocs > 0) {
		fail_reallocs--;
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, len);
}

/*
 * ptod's DONE of graph @tag, ending with @status, with @text (NULL: "graph
 * TAG: done"), @len bytes of the message sent (0: all of it).
 */
static int send_done_text(int s, uint64_t tag, int status, const char *text,
			  size_t len)
{
	struct pto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DONE;
	m.tag = tag;
	m.status = status;
	if (text)
		memcpy(m.text, text, strlen(text));
	else
		snprintf(m.text, sizeof(m.text), "graph %llu: done",
			 (unsigned long long)tag);
	if (!len)
		len = sizeof(m);
	return send(s, &m, len, 0) == (ssize_t)len ? 0 : -errno;
}

static int send_done(int s, uint64_t tag, int status)
{
	return send_done_text(s, tag, status, NULL, 0);
}

/* ptod's CLOSING, @status and @why, then the connection closed (@s). */
static int send_closing(int s, int status, const char *why)
{
	struct pto_msg m;
	int ret = 0;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_CLOSING;
	m.status = status;
	snprintf(m.text, sizeof(m.text), "%s", why);
	if (send(s, &m, sizeof(m), 0) != (ssize_t)sizeof(m))
		ret = -errno;
	close(s);
	return ret;
}

/* Graph @tag was sent: it is owed a DONE. */
static void owe(pto_client *c, uint64_t tag)
{
	c->owed[c->nowed++] = (struct owed_ent){ .tag = tag };
}

/*
 * A client on one end of a socket pair, the other in *@peer; NULL if
 * none, and then a failed test point "@what: set up" unless @what is
 * NULL.
 */
static pto_client *client_new(int *peer, const char *what)
{
	pto_client *c = calloc(1, sizeof(*c));
	int sv[2];

	if (!c || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		tap_diag("cannot set up: %s", strerror(errno));
		free(c);
		c = NULL;
		goto out;
	}
	c->sock = sv[0];
	*peer = sv[1];
	c->bell = -1;
	c->pid = getpid();
	c->capowed = 8;
	c->owed = calloc(c->capowed, sizeof(*c->owed));
	if (!c->owed) {
		close(sv[0]);
		close(sv[1]);
		free(c);
		c = NULL;
	}
out:
	if (!c && what)
		ok(false, "%s: set up", what);
	return c;
}

/* Free @c, closing its socket and @peer (-1: closed already). */
static void client_free(pto_client *c, int peer)
{
	size_t i;

	close(c->sock);
	if (peer >= 0)
		close(peer);
	for (i = 0; i < c->ndone; i++)
		free(c->done[i].msg);
	for (i = 0; i < c->nowed; i++)
		free(c->owed[i].local_msg);
	free(c->owed);
	free(c->done);
	free(c);
}

/*
 * Graphs 1, 2 and 3 are owed, ptod sends @bad (@what) then graph 1's
 * DONE: the wait for graph 1 is -EPROTO, and graph 3's fails too, with
 * the same reason, which names what was broken (@reason; the connection
 * is shut down, the DONE behind it is not read).
 */
static void protocol_broken(const char *what, const char *reason,
			    int (*bad)(int peer))
{
	char msg[PTO_MSG_TEXT];
	pto_client *c;
	int peer, ret;

	c = client_new(&peer, what);
	if (!c)
		return;
	owe(c, 1);
	owe(c, 2);
	owe(c, 3);
	ret = bad(peer);
	ok(!ret && !send_done(peer, 1, 0), "%s: ptod sends it, then graph 1's DONE",
	   what);
	ret = pto_graph_wait(c, 1, msg, sizeof(msg));
	ok(ret == -EPROTO && strstr(msg, "connection") && strstr(msg, reason),
	   "%s: graph 1's wait is -EPROTO (got %d \"%s\")", what, ret, msg);
	ret = pto_graph_wait(c, 3, msg, sizeof(msg));
	ok(ret == -EPROTO && strstr(msg, "broke the protocol") &&
	   strstr(msg, reason),
	   "%s: graph 3's wait fails too, for the same reason (got %d \"%s\")",
	   what, ret, msg);
	client_free(c, peer);
}

static int done_unowed(int peer)
{
	return send_done(peer, 7, 0);
}

static int status_positive(int peer)
{
	return send_done(peer, 2, 5);
}

static int status_too_low(int peer)
{
	return send_done(peer, 2, -100000);
}

static int msg_short(int peer)
{
	return send_done_text(peer, 2, 0, NULL, offsetof(struct pto_msg, text));
}

/* a second DONE for graph 2 is not owed, once the first was kept */
static int done_twice(int peer)
{
	int ret = send_done(peer, 2, 0);

	return ret ? ret : send_done(peer, 2, 0);
}

/*
 * ptod says why it closes the connection (CLOSING), then closes it: a
 * graph still owed its DONE ends with that status and text.
 */
static void closing_said(void)
{
	static const char why[] = "corrupt submission stream: the record at 0";
	char msg[256];
	pto_client *c;
	int peer, ret;

	c = client_new(&peer, "CLOSING");
	if (!c)
		return;
	owe(c, 5);
	ok(!send_closing(peer, -EPROTO, why), "ptod sends CLOSING");
	/* graph 6 being built meets the closed connection first */
	c->rt.c = c;
	c->in_graph = true;
	c->cur_tag = 6;
	ret = pto2_rt_get_error(&c->rt);
	ok(ret == -EPROTO && strstr(pto2_rt_get_error_msg(&c->rt), why),
	   "graph 6, being built when ptod closes, fails with its reason (%d \"%s\")",
	   ret, pto2_rt_get_error_msg(&c->rt));
	c->in_graph = false;
	ret = pto_graph_wait(c, 5, msg, sizeof(msg));
	ok(ret == -EPROTO && strstr(msg, why),
	   "graph 5, owed when ptod closes, ends with its reason (%d \"%s\")",
	   ret, msg);
	client_free(c, -1);
}

/*
 * A CLOSING that says nothing (status 0, no text): a graph owed its DONE
 * ends as with the connection reset, and says so.
 */
static void closing_without_reason(void)
{
	char msg[256];
	pto_client *c;
	int peer, ret;

	c = client_new(&peer, "a CLOSING without a reason");
	if (!c)
		return;
	owe(c, 5);
	ok(!send_closing(peer, 0, ""), "ptod sends CLOSING, status 0, no text");
	ret = pto_graph_wait(c, 5, msg, sizeof(msg));
	ok(ret == -ECONNRESET &&
	   strstr(msg, "ptod closed the connection: ") &&
	   strstr(msg, strerror(ECONNRESET)),
	   "graph 5 ends with -ECONNRESET, ptod closed it (%d \"%s\")", ret,
	   msg);
	client_free(c, -1);
}

/* A device whose GM is the heap: enough for a kernel's buffer. */
static int heap_gm_alloc(struct pto_device *d, size_t len,
			 struct pto_dev_buf *out)
{
	(void)d;
	out->ptr = calloc(1, len);
	if (!out->ptr)
		return -ENOMEM;
	out->len = len;
	out->dev_addr = (uintptr_t)out->ptr;
	return 0;
}

static void heap_gm_free(struct pto_device *d, struct pto_dev_buf *b)
{
	(void)d;
	free(b->ptr);
}

static const struct pto_dev_ops heap_dev_ops = {
	.name = "heap",
	.gm_alloc = heap_gm_alloc,
	.gm_free = heap_gm_free,
};

/*
 * ptod sends CLOSING and closes the connection before the client reads
 * anything: a request (a kernel's registration) fails to send, and says
 * ptod's status and reason, not the broken pipe.
 */
static void closing_before_request(void)
{
	static const char why[] = "too many descriptors closing for this user";
	pto_client *c;
	int peer, ret;

	c = client_new(&peer, "CLOSING before a request");
	if (!c)
		return;
	c->dev_ops = &heap_dev_ops;
	ok(!send_closing(peer, -EMFILE, why),
	   "ptod sends CLOSING, unread, and closes the connection");
	ret = pto_kernel_load(c, 2, PTO2_WORKER_VECTOR, KCAPS_DIR "/k_ok.so");
	ok(ret == -EMFILE && strstr(pto_last_error(c), why) && !c->bufs,
	   "a kernel registered after it fails with ptod's reason, its buffer freed (%d \"%s\")",
	   ret, pto_last_error(c));
	client_free(c, -1);
}

/*
 * A static graph being built, its client used in a forked child (the
 * owner page reads 0 there): a scope's record is refused with -ECHILD at
 * once, and nothing goes into the graph's held buffer.
 */
static void static_in_child(void)
{
	static uint8_t not_owner;	/* what a child sees: the page wiped */
	pto_client *c;
	int peer;

	c = client_new(&peer, "a static graph in a child");
	if (!c)
		return;
	c->rt.c = c;
	c->in_graph = true;
	c->stat = true;
	c->cur_tag = 8;
	c->owner_page = &not_owner;
	pto2_rt_scope_begin(&c->rt);
	ok(c->err == -ECHILD && c->slen == 0,
	   "a static graph's record in a forked child is refused at once, nothing held (%d, %zu bytes)",
	   c->err, c->slen);
	c->owner_page = NULL;
	static_free(c);
	client_free(c, peer);
}

/*
 * Graph 9 is being built, a submit of it refused here, and its GRAPH_END
 * written (pto2_rt_orchestration_done()); its DONE, status 0, is read by
 * a request before pto_graph_end(): the wait still answers the refused
 * submit.
 */
static void local_done_before_end(void)
{
	char msg[PTO_MSG_TEXT];
	struct pto_msg m;
	pto_client *c;
	int peer, ret;

	c = client_new(&peer, "a DONE before pto_graph_end()");
	if (!c)
		return;
	c->dev_ops = &heap_dev_ops;
	owe(c, 9);
	c->in_graph = true;
	c->orch_done = true;
	c->cur_tag = 9;
	c->err = -EINVAL;
	snprintf(c->errmsg, sizeof(c->errmsg), "task 1: num_params -1");
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_REPLY;
	m.status = -EBUSY;
	ok(!send_done(peer, 9, 0) &&
	   send(peer, &m, sizeof(m), 0) == (ssize_t)sizeof(m),
	   "ptod sends graph 9's DONE, 0, then a reply");
	ret = pto_kernel_load(c, 2, PTO2_WORKER_VECTOR, KCAPS_DIR "/k_ok.so");
	ok(ret == -EBUSY && pto_graph_end(c) == 0,
	   "a kernel's registration reads the DONE, then graph 9 ends (%d)", ret);
	ret = pto_graph_wait(c, 9, msg, sizeof(msg));
	ok(ret == -EINVAL && strstr(msg, "num_params -1"),
	   "graph 9's wait answers the refused submit (got %d \"%s\")", ret,
	   msg);
	client_free(c, peer);
}

/*
 * Graph 3 is built, a submit of it refused here (c->err), and ended:
 * its DONE with status 0 is -EINVAL with the local message; graph 4,
 * with a refused submit too, keeps its DONE's own failure, ptod's. A
 * message's text ends where it does: graph 6's short text is not run on
 * into graph 5's longer one.
 */
static void local_and_text(void)
{
	char msg[PTO_MSG_TEXT];
	pto_client *c;
	int peer, ret;

	c = client_new(&peer, "local failures");
	if (!c)
		return;
	owe(c, 3);
	c->in_graph = true;
	c->orch_done = true;	/* GRAPH_END written: no stream here */
	c->cur_tag = 3;
	c->err = -EINVAL;
	snprintf(c->errmsg, sizeof(c->errmsg), "task 2: num_params -1");
	ret = pto_graph_end(c);
	ok(ret == 0, "graph 3 with a refused submit ends (got %d)", ret);
	owe(c, 4);
	c->in_graph = true;
	c->cur_tag = 4;
	c->err = -EINVAL;
	snprintf(c->errmsg, sizeof(c->errmsg), "task 0: num_params -1");
	ret = pto_graph_end(c);
	ok(ret == 0, "graph 4 with a refused submit ends (got %d)", ret);
	ok(!send_done(peer, 3, 0) && !send_done(peer, 4, -EFAULT),
	   "ptod sends graph 3's DONE, 0, and graph 4's, -EFAULT");
	ret = pto_graph_wait(c, 3, msg, sizeof(msg));
	ok(ret == -EINVAL && !strcmp(msg, "task 2: num_params -1"),
	   "graph 3's wait is the refused submit's -EINVAL (got %d \"%s\")",
	   ret, msg);
	ret = pto_graph_wait(c, 4, msg, sizeof(msg));
	ok(ret == -EFAULT && !strcmp(msg, "graph 4: done"),
	   "graph 4's wait is ptod's -EFAULT (got %d \"%s\")", ret, msg);

	owe(c, 5);
	owe(c, 6);
	ok(!send_done_text(peer, 5, 0, "a long text, the earlier one", 0) &&
	   !send_done_text(peer, 6, 0, "xyz",
			   offsetof(struct pto_msg, text) + 4),
	   "ptod sends graph 5's DONE with a long text, 6's with a short one");
	ret = pto_graph_wait(c, 6, msg, sizeof(msg));
	ok(ret == 0 && !strcmp(msg, "xyz"),
	   "graph 6's text is its own (got %d \"%s\")", ret, msg);
	ret = pto_graph_wait(c, 5, msg, sizeof(msg));
	ok(ret == 0 && !strcmp(msg, "a long text, the earlier one"),
	   "graph 5's text is its own (got %d \"%s\")", ret, msg);
	client_free(c, peer);
}

/*
 * Static graph 7, larger than the stream, is released; ptod ends it
 * (DONE, -ESHUTDOWN) before the rest fits. The graph was sent: its end
 * succeeds and its wait, not the release, answers ptod's outcome.
 */
static void static_ended_while_written(void)
{
	const char *why = "ptod is shutting down";
	const uint32_t ssize = 1024;
	char msg[PTO_MSG_TEXT];
	pto_client *c;
	int peer, ret, i;

	c = client_new(&peer, "a static graph ended while written");
	if (!c)
		return;
	c->sh = aligned_alloc(64, sizeof(*c->sh) + ssize);
	if (!c->sh) {
		ok(false, "a static graph ended while written: set up");
		client_free(c, peer);
		return;
	}
	memset(c->sh, 0, sizeof(*c->sh) + ssize);
	c->sdata = (uint8_t *)(c->sh + 1);
	c->ssize = ssize;
	c->in_graph = true;
	c->stat = true;
	c->cur_tag = 7;
	for (i = 0; i < 4 * (int)ssize / (int)sizeof(struct pto_rec); i++) {
		struct pto_rec *r = static_reserve(c, sizeof(*r));

		if (!r)
			break;
		*r = (struct pto_rec){ .len = sizeof(*r),
				       .type = i & 1 ? PTO_REC_SCOPE_END :
						       PTO_REC_SCOPE_BEGIN };
		static_commit(c, sizeof(*r));
	}
	ok(c->slen == 4 * ssize && !send_done_text(peer, 7, -ESHUTDOWN, why, 0),
	   "graph 7 holds %zu bytes for a stream of %u; ptod ends it", c->slen,
	   ssize);
	ret = pto_graph_end(c);
	ok(ret == 0, "its end succeeds: it was sent (got %d \"%s\")", ret,
	   ret ? pto_last_error(c) : "");
	ret = pto_graph_wait(c, 7, msg, sizeof(msg));
	ok(ret == -ESHUTDOWN && !strcmp(msg, why),
	   "its wait answers ptod's -ESHUTDOWN and text (got %d \"%s\")", ret,
	   msg);
	ok(c->nowed == 0 && c->ndone == 0,
	   "nothing is owed or kept for it (%zu kept, %zu owed)", c->ndone,
	   c->nowed);
	static_free(c);
	free(c->sh);
	client_free(c, peer);
}

int main(void)
{
	struct pto_graph_stats st;
	char msg[PTO_MSG_TEXT], reason[48];
	pto_client *c;
	int peer, ret;

	/* a wait that blocks for good (a DONE not read as it should be) */
	alarm(60);
	c = client_new(&peer, NULL);
	if (!c)
		return 1;
	/* graphs 1, 2, 3 sent; no room yet to keep any DONE */
	owe(c, 1);
	owe(c, 2);
	owe(c, 3);

	/*
	 * 1's DONE arrives with no memory to keep it; 2's, after it, is
	 * kept: graph 2's wait reads both.
	 */
	ok(!send_done(peer, 1, -EIO) && !send_done(peer, 2, 0),
	   "ptod sends the DONE of graphs 1 and 2");
	fail_reallocs = 1;
	ret = pto_graph_wait(c, 2, msg, sizeof(msg));
	ok(ret == 0 && !strcmp(msg, "graph 2: done"),
	   "graph 2's wait answers its outcome (got %d \"%s\")", ret, msg);
	ok(!fail_reallocs && c->ndone == 0 && c->nowed == 2,
	   "graph 1's DONE was not kept; 1 and 3 are owed an answer (%zu kept, %zu owed)",
	   c->ndone, c->nowed);
	ret = pto_graph_wait(c, 9, msg, sizeof(msg));
	ok(ret == -ENOENT, "graph 9, never sent, is -ENOENT (got %d)", ret);

	ret = pto_graph_wait(c, 1, msg, sizeof(msg));
	ok(ret == -ENOMEM, "graph 1's wait says its outcome was lost: -ENOMEM (got %d)",
	   ret);
	ok(strstr(pto_last_error(c), "no memory") && msg[0],
	   "and says why: \"%s\", msg \"%s\"", pto_last_error(c), msg);
	ok(pto_graph_stats(c, &st) == -ENOENT,
	   "no statistics after the lost outcome (graph 2's are not its)");
	ret = pto_graph_wait(c, 1, msg, sizeof(msg));
	ok(ret == -ENOENT, "graph 1 waited again is -ENOENT (got %d)", ret);
	ret = pto_graph_wait(c, 2, msg, sizeof(msg));
	ok(ret == -ENOENT, "graph 2 waited again is -ENOENT (got %d)", ret);
	ret = pto_graph_wait(c, 9, msg, sizeof(msg));
	ok(ret == -ENOENT,
	   "graph 9, never sent, is still -ENOENT once a loss was answered (got %d)",
	   ret);

	ok(!send_done(peer, 3, -EFAULT), "ptod sends graph 3's DONE");
	ret = pto_graph_wait(c, 3, msg, sizeof(msg));
	ok(ret == -EFAULT, "graph 3's wait answers its own status (got %d)", ret);
	ok(c->nowed == 0 && c->ndone == 0, "nothing is owed or kept at the end");

	/* ptod gone: a graph still owed is told so */
	owe(c, 4);
	close(peer);
	ret = pto_graph_wait(c, 4, msg, sizeof(msg));
	ok(ret == -ECONNRESET, "graph 4, owed when ptod goes, is -ECONNRESET (got %d)",
	   ret);
	client_free(c, -1);

	closing_said();
	closing_without_reason();
	closing_before_request();
	static_in_child();
	local_done_before_end();
	local_and_text();
	static_ended_while_written();
	protocol_broken("a DONE for a graph owed none",
			"(a DONE for a graph owed none)", done_unowed);
	protocol_broken("a second DONE for a graph",
			"(a DONE for a graph owed none)", done_twice);
	protocol_broken("a status of 5", "(a status of 5)", status_positive);
	protocol_broken("a status of -100000", "(a status of -100000)",
			status_too_low);
	snprintf(reason, sizeof(reason), "(a message of %zu bytes)",
		 offsetof(struct pto_msg, text));
	protocol_broken("a message without its last byte", reason, msg_short);
	return tap_done();
}
