// SPDX-License-Identifier: MIT
/*
 * test_wait.c - what pto_graph_wait() answers when libpto had no memory
 * to keep a graph's outcome: that graph's wait says -ENOMEM once, and
 * every other wait answers as it would have (its outcome, or -ENOENT
 * for a graph never sent or already waited for). A client is built by
 * hand on one end of a socket pair; the test plays ptod on the other
 * end and sends the DONE messages. realloc() is wrapped to fail on
 * demand (-Wl,--wrap=realloc).
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

/* ptod's DONE of graph @tag, ending with @status. */
static int send_done(int s, uint64_t tag, int status)
{
	struct pto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DONE;
	m.tag = tag;
	m.status = status;
	snprintf(m.text, sizeof(m.text), "graph %llu: done",
		 (unsigned long long)tag);
	return send(s, &m, sizeof(m), 0) == (ssize_t)sizeof(m) ? 0 : -errno;
}

/* Graph @tag was sent: it is owed a DONE. */
static void owe(pto_client *c, uint64_t tag)
{
	c->owed[c->nowed++] = (struct owed_ent){ .tag = tag };
}

int main(void)
{
	pto_client *c = calloc(1, sizeof(*c));
	char msg[PTO_MSG_TEXT];
	int sv[2], ret;

	if (!c || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		tap_diag("cannot set up: %s", strerror(errno));
		return 1;
	}
	c->sock = sv[0];
	c->bell = -1;
	c->pid = getpid();
	c->capowed = 8;
	c->owed = calloc(c->capowed, sizeof(*c->owed));
	if (!c->owed)
		return 1;
	/* graphs 1, 2, 3 sent; no room yet to keep any DONE */
	owe(c, 1);
	owe(c, 2);
	owe(c, 3);

	/*
	 * 1's DONE arrives with no memory to keep it; 2's, after it, is
	 * kept: graph 2's wait reads both.
	 */
	ok(!send_done(sv[1], 1, -EIO) && !send_done(sv[1], 2, 0),
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
	ret = pto_graph_wait(c, 1, msg, sizeof(msg));
	ok(ret == -ENOENT, "graph 1 waited again is -ENOENT (got %d)", ret);
	ret = pto_graph_wait(c, 2, msg, sizeof(msg));
	ok(ret == -ENOENT, "graph 2 waited again is -ENOENT (got %d)", ret);
	ret = pto_graph_wait(c, 9, msg, sizeof(msg));
	ok(ret == -ENOENT,
	   "graph 9, never sent, is still -ENOENT once a loss was answered (got %d)",
	   ret);

	ok(!send_done(sv[1], 3, -EFAULT), "ptod sends graph 3's DONE");
	ret = pto_graph_wait(c, 3, msg, sizeof(msg));
	ok(ret == -EFAULT, "graph 3's wait answers its own status (got %d)", ret);
	ok(c->nowed == 0 && c->ndone == 0, "nothing is owed or kept at the end");

	/* ptod gone: a graph still owed is told so */
	owe(c, 4);
	close(sv[1]);
	ret = pto_graph_wait(c, 4, msg, sizeof(msg));
	ok(ret == -ECONNRESET, "graph 4, owed when ptod goes, is -ECONNRESET (got %d)",
	   ret);

	close(sv[0]);
	free(c->owed);
	free(c->done);
	free(c);
	return tap_done();
}
