// SPDX-License-Identifier: MIT
/*
 * libpto.c - client library of the emulated PTO2 device (see libpto.h)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/pto.h>
#include <pto/libpto.h>
#include <pto-private/check.h>
#include <pto-private/fdpass.h>
#include <pto-private/params.h>
#include <pto-private/parse.h>
#include <pto-private/usdt.h>
#include <pto-private/wire.h>

#include "client.h"
#include "pto_device.h"

PTO_USDT_DEFINE(libpto, doorbell);
PTO_USDT_DEFINE(libpto, stream_full);
PTO_USDT_DEFINE(libpto, graph_begin);
PTO_USDT_DEFINE(libpto, graph_end);
PTO_USDT_DEFINE(libpto, graph_done);
PTO_USDT_DEFINE(libpto, submit);

static _Thread_local char connect_error[512];

__attribute__((format(printf, 3, 4)))
static int seterr(pto_client *c, int err, const char *fmt, ...)
{
	va_list ap;
	char *buf = c ? c->last_error : connect_error;
	size_t len = c ? sizeof(c->last_error) : sizeof(connect_error);

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * A client used in a child of the process that connected it, after
 * fork(): the socket, the device file, the stream and the buffers are
 * the parent's, and every request, record or message read would act on
 * the parent's client. owner() tells the two apart cheaply enough for
 * every record; forked() refuses with -ECHILD, saying so.
 */
static void owner_mark(pto_client *c)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	if (madvise(p, (size_t)page, MADV_WIPEONFORK)) {
		munmap(p, (size_t)page);
		return;
	}
	*(uint8_t *)p = 1;
	c->owner_page = p;
}

static bool owner(const pto_client *c)
{
	if (c->owner_page)
		return c->owner_page[0];
	return getpid() == c->pid;
}

static int forked(pto_client *c)
{
	if (owner(c))
		return 0;
	return seterr(c, -ECHILD,
		      "this client belongs to process %d, which connected it: a forked child must pto_connect() its own",
		      (int)c->pid);
}

/* In a forked child, the current graph fails with -ECHILD: true. */
static bool graph_forked(pto_client *c)
{
	if (!forked(c))
		return false;
	graph_fail(c, -ECHILD, "%s", c->last_error);
	return true;
}

PTO_EXPORT const char *pto_last_error(const pto_client *c)
{
	return c ? c->last_error : connect_error;
}

PTO_EXPORT uint32_t pto_nr_aic(const pto_client *c)
{
	return c->nr_aic;
}

PTO_EXPORT uint32_t pto_nr_aiv(const pto_client *c)
{
	return c->nr_aiv;
}

/* ---- Messages --------------------------------------------------------------- */

static int msg_send(pto_client *c, struct pto_msg *m, int pass_fd)
{
	union pto_fd_cmsg cm;
	struct iovec iov = { m, offsetof(struct pto_msg, text) + strlen(m->text) + 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (pass_fd >= 0)
		pto_msg_attach_fd(&mh, &cm, pass_fd);
	do
		n = sendmsg(c->sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)iov.iov_len ? 0 : -EIO;
}

/* Graph @tag's entry in c->owed, or NULL: none was sent, or it was answered. */
static struct owed_ent *owed_find(pto_client *c, uint64_t tag)
{
	size_t i;

	for (i = 0; i < c->nowed; i++)
		if (c->owed[i].tag == tag)
			return &c->owed[i];
	return NULL;
}

/* Graph @tag's outcome was kept or answered: it is owed none any more. */
static void owed_drop(pto_client *c, struct owed_ent *o)
{
	free(o->local_msg);
	*o = c->owed[--c->nowed];
}

/*
 * Keep the DONE @m of graph @o (owed it) for pto_graph_wait(): ptod's
 * status, else the first failure this process found in the graph (a
 * submit refused here never reached ptod). With no memory to keep it,
 * the owed entry (room taken when the graph was sent) says it was lost,
 * for the wait of that graph alone.
 */
static void done_push(pto_client *c, struct owed_ent *o,
		      const struct pto_msg *m)
{
	struct done_ent *d;

	if (c->ndone == c->capdone) {
		size_t cap = c->capdone ? 2 * c->capdone : 8;
		struct done_ent *n = realloc(c->done, cap * sizeof(*n));

		if (!n) {
			o->lost = -ENOMEM;
			return;
		}
		c->done = n;
		c->capdone = cap;
	}
	d = &c->done[c->ndone++];
	d->tag = m->tag;
	d->status = m->status;
	d->stats = m->u.done.stats;
	if (!m->status && o->local) {
		d->status = o->local;
		d->msg = o->local_msg;
		o->local_msg = NULL;
	} else {
		d->msg = strdup(m->text);
	}
	owed_drop(c, o);
}

/*
 * Kernel @func_id now runs another blob: the one it ran before goes to
 * c->kblobs_old, freed by kblobs_gc() once no graph of ours is in flight.
 * A task of a graph in flight may have been dispatched with the old blob
 * and not yet started: ptod keeps the memory pinned for that run, but a
 * sandbox maps only buffers the client still has.
 */
static void kblob_replaced(pto_client *c, int32_t func_id)
{
	pto_buf **pp, *b;

	for (pp = &c->kblobs; (b = *pp); pp = &b->next)
		if (b->kfunc == func_id) {
			*pp = b->next;
			b->next = c->kblobs_old;
			c->kblobs_old = b;
			return;
		}
}

/* Free the replaced blobs if no graph is in flight. */
static void kblobs_gc(pto_client *c)
{
	pto_buf *b;

	while (!c->graphs_out && (b = c->kblobs_old)) {
		c->kblobs_old = b->next;
		pto_buf_free(b);
	}
}

/*
 * The graph being built was sent (it is owed a DONE): a failure found
 * here goes with it, for its pto_graph_wait() (done_push()). At its
 * pto_graph_end(), or when its DONE comes first.
 */
static void graph_local_err(pto_client *c)
{
	struct owed_ent *o = owed_find(c, c->cur_tag);

	if (!o || !c->err || o->local)
		return;
	o->local = c->err;
	o->local_msg = strdup(c->errmsg[0] ? c->errmsg : strerror(-c->err));
}

/*
 * Keep why the connection ended, @err and the reason built from @fmt,
 * for every call after (conn_lost()); the first reason stays.
 */
__attribute__((format(printf, 3, 4)))
static void conn_ended(pto_client *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (c->lost)
		return;
	c->lost = err;
	va_start(ap, fmt);
	vsnprintf(c->lost_msg, sizeof(c->lost_msg), fmt, ap);
	va_end(ap);
}

/*
 * A message ptod should never send came (@what: a short one, a status
 * that is no errno, a DONE for a graph not owed one): nothing it says can
 * be trusted, nor what follows it. The connection is shut down, so that
 * every call from now on fails alike, with this reason, instead of going
 * on out of step (a graph's records sent into another's). -EPROTO.
 */
static int msg_bad(pto_client *c, const char *what)
{
	conn_ended(c, -EPROTO,
		   "ptod broke the protocol (%s): the connection is shut down",
		   what);
	shutdown(c->sock, SHUT_RDWR);
	return -EPROTO;
}

/*
 * Receive and handle one message. Returns its type (> 0), 0 if none was
 * waiting (non-blocking), or -errno (-ECONNRESET: ptod went away). A
 * descriptor that came with a REPLY goes to *@fd if @fd is given and
 * holds none yet (else, and with any other message, it is closed).
 */
static int msg_recv_fd(pto_client *c, struct pto_msg *m, bool block, int *fd)
{
	struct owed_ent *o;
	char what[48];
	ssize_t n;
	int got, why;

	/* the parent's messages are the parent's: every caller checks first */
	if (!owner(c))
		return -ECHILD;
	memset(m, 0, offsetof(struct pto_msg, text) + 1);
	do
		n = pto_recv_with_fd(c->sock, m, sizeof(*m),
				     block ? 0 : MSG_DONTWAIT, &got);
	while (n == -EINTR);
	if (got >= 0) {
		if (fd && *fd < 0 && n > 0 && m->type == PTO_MSG_REPLY)
			*fd = got;
		else
			close(got);
	}
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return 0;
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ECONNRESET;
	if (pto_msg_from_ptod(m, (size_t)n, what, sizeof(what)))
		return msg_bad(c, what);
	switch (m->type) {
	case PTO_MSG_SPACE:
		c->space = true;
		break;
	case PTO_MSG_ERROR:
		if (c->in_graph && m->tag == c->cur_tag && !c->err) {
			c->err = m->status;
			snprintf(c->errmsg, sizeof(c->errmsg), "%s", m->text);
		}
		break;
	case PTO_MSG_CLOSING:
		/* the connection ends next: what a wait owed a DONE says */
		why = m->status ? m->status : -ECONNRESET;
		conn_ended(c, why, "ptod closed the connection: %s",
			   m->text[0] ? m->text : strerror(-why));
		break;
	case PTO_MSG_DONE:
		/* each graph sent is owed one DONE, and no other graph any */
		o = owed_find(c, m->tag);
		if (!o || o->lost)
			return msg_bad(c, "a DONE for a graph owed none");
		/* a graph still being built that ended: its error stops it */
		if (c->in_graph && m->tag == c->cur_tag) {
			graph_local_err(c);
			c->cur_done = true;
			if (m->status && !c->err) {
				c->err = m->status;
				snprintf(c->errmsg, sizeof(c->errmsg), "%s",
					 m->text);
			}
		}
		done_push(c, o, m);
		if (c->graphs_out && !--c->graphs_out)
			kblobs_gc(c);
		break;
	default:
		break;
	}
	return (int)m->type;
}

static int msg_recv(pto_client *c, struct pto_msg *m, bool block)
{
	return msg_recv_fd(c, m, block, NULL);
}

/*
 * The connection failed with @ret (from msg_recv_fd() or msg_send()):
 * why, as the client's last error, and the status to answer. Once libpto
 * knows why it ended (ptod's CLOSING, or a message that broke the
 * protocol), that is the reason and the status of every failure after.
 */
static int conn_lost(pto_client *c, int ret)
{
	if (c->lost)
		return seterr(c, c->lost, "%s", c->lost_msg);
	return seterr(c, ret, "lost the connection to ptod: %s",
		      strerror(-ret));
}

/*
 * Send a request and wait for its REPLY (handling others meanwhile); a
 * descriptor the REPLY carries goes to *@got_fd if given.
 */
static int request_fd(pto_client *c, struct pto_msg *m, int pass_fd,
		      int *got_fd)
{
	int ret = msg_send(c, m, pass_fd);

	if (ret) {
		struct pto_msg in;

		/* ptod may have said why it closed it: a CLOSING queued */
		while (msg_recv(c, &in, false) > 0)
			;
		if (!c->lost)
			return seterr(c, ret, "cannot talk to ptod: %s",
				      strerror(-ret));
		return conn_lost(c, ret);
	}
	for (;;) {
		ret = msg_recv_fd(c, m, true, got_fd);
		if (ret < 0)
			return conn_lost(c, ret);
		if (ret == PTO_MSG_REPLY)
			break;
	}
	if (m->status)
		seterr(c, m->status, "%s", m->text[0] ? m->text :
		       strerror(-m->status));
	return m->status;
}

static int request(pto_client *c, struct pto_msg *m, int pass_fd)
{
	return request_fd(c, m, pass_fd, NULL);
}

/* ---- Buffers ---------------------------------------------------------------------- */

PTO_EXPORT int pto_buf_alloc(pto_client *c, size_t len, pto_buf **out)
{
	pto_buf *b;
	int ret;

	*out = NULL;
	if (forked(c))
		return -ECHILD;
	if (!len)
		return seterr(c, -EINVAL, "zero-length buffer");
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ret = c->dev_ops->gm_alloc(c->dev, len, &b->db);
	if (ret) {
		free(b);
		return seterr(c, ret, "GM allocation of %zu bytes (%s): %s%s",
			      len, c->dev_ops->name, strerror(-ret),
			      ret == -EDQUOT ?
			      " (over this user's GM quota, ptod -q)" : "");
	}
	b->c = c;
	b->all_next = c->bufs;
	if (c->bufs)
		c->bufs->all_prev = b;
	c->bufs = b;
	*out = b;
	return 0;
}

/*
 * Give @b back to the device and take it off its client's list. In a
 * forked child (the parent's buffer, mapped here too) only unmapped.
 */
static void buf_release(pto_buf *b)
{
	pto_client *c = b->c;

	if (owner(c))
		c->dev_ops->gm_free(c->dev, &b->db);
	else
		munmap(b->db.ptr, b->db.len);
	if (b->all_prev)
		b->all_prev->all_next = b->all_next;
	else
		c->bufs = b->all_next;
	if (b->all_next)
		b->all_next->all_prev = b->all_prev;
	b->all_prev = b->all_next = NULL;
	b->db.ptr = NULL;
	b->c = NULL;
}

PTO_EXPORT void pto_buf_free(pto_buf *b)
{
	if (!b)
		return;
	if (b->c)	/* else its client went, and the buffer with it */
		buf_release(b);
	free(b);
}

PTO_EXPORT void *pto_buf_ptr(const pto_buf *b)
{
	return b->db.ptr;
}

PTO_EXPORT uint64_t pto_buf_dev_addr(const pto_buf *b)
{
	return b->db.dev_addr;
}

PTO_EXPORT size_t pto_buf_size(const pto_buf *b)
{
	return b->db.len;
}

/* ---- Connect ------------------------------------------------------------------------ */

/* The submission stream: a GM buffer of ours with its header set. */
static int stream_init(pto_client *c)
{
	int ret;

	ret = pto_buf_alloc(c, PTO_STREAM_HDR_SIZE + PTO_STREAM_DEFAULT_SIZE,
			    &c->stream);
	if (ret)
		return seterr(NULL, ret, "%s", c->last_error);
	c->sh = pto_buf_ptr(c->stream);
	c->sdata = (uint8_t *)c->sh + PTO_STREAM_HDR_SIZE;
	c->ssize = PTO_STREAM_DEFAULT_SIZE;
	memset(c->sh, 0, PTO_STREAM_HDR_SIZE);
	c->sh->magic = PTO_STREAM_MAGIC;
	c->sh->data_size = c->ssize;
	return 0;
}

int pto_sock_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	strcpy(sa.sun_path, path);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(s);
		return ret;
	}
	return s;
}

static int socket_connect(pto_client *c, const char *path)
{
	c->sock = pto_sock_connect(path);
	if (c->sock < 0)
		return seterr(NULL, c->sock, "connect %s: %s (is ptod running?)",
			      path, strerror(-c->sock));
	return 0;
}

/* Hello: our stream, our runtime variables and our device file. */
static int hello(pto_client *c)
{
	struct pto_msg m;
	int i, fd, ret;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_HELLO;
	m.u.hello.wire_version = PTO_WIRE_VERSION;
	m.u.hello.stream_addr = pto_buf_dev_addr(c->stream);
	m.u.hello.stream_len = pto_buf_size(c->stream);
	for (i = 0; i < PTO_HELLO_ENV_N; i++) {
		const char *v = getenv(pto_env_names[i]);

		if (!v)
			continue;
		if (strlen(v) >= PTO_HELLO_ENV_LEN)
			return seterr(NULL, -EINVAL, "%s is too long",
				      pto_env_names[i]);
		strcpy(m.u.hello.env[i], v);
		m.u.hello.env_set |= 1u << i;
	}
	fd = c->dev_ops->handover_fd(c->dev);
	if (fd < 0)
		return seterr(NULL, fd, "%s cannot hand its device to ptod",
			      c->dev_ops->name);
	ret = request_fd(c, &m, fd, &c->bell);
	if (ret)
		return seterr(NULL, ret, "%s", c->last_error);
	c->nr_aic = m.u.hello_reply.nr_aic;
	c->nr_aiv = m.u.hello_reply.nr_aiv;
	c->client_id = m.u.hello_reply.ctx_id;
	return 0;
}

PTO_EXPORT int pto_connect(const char *socket_path, pto_client **out)
{
	const char *dev = getenv("PTO_DEVICE");
	char why[PTO_MSG_TEXT];
	pto_client *c;
	bool check;
	int ret;

	*out = NULL;
	if (pto_env_bool("PTO_CHECK", false, &check))
		return seterr(NULL, -EINVAL, "PTO_CHECK '%s': not 0 or 1",
			      getenv("PTO_CHECK"));
	socket_path = pto_socket_path(socket_path);
	if (!dev || !*dev)
		dev = "/dev/pto0";
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->rt.c = c;
	c->pid = getpid();
	owner_mark(c);
	c->sock = -1;
	c->bell = -1;
	c->check_env = check;
	c->dev_ops = strcmp(dev, PTO_DEVICE_USER) ? &pto_dev_kernel_ops :
						     &pto_dev_user_ops;
	why[0] = 0;
	ret = c->dev_ops->open(dev, socket_path, &c->dev, &c->info, why,
			       sizeof(why));
	if (ret) {
		seterr(NULL, ret, "%s: %s", dev, why[0] ? why : strerror(-ret));
		goto fail;
	}
	ret = stream_init(c);
	if (!ret)
		ret = socket_connect(c, socket_path);
	if (!ret)
		ret = hello(c);
	if (ret)
		goto fail;
	*out = c;
	return 0;
fail:
	pto_disconnect(c);
	return ret;
}

PTO_EXPORT void pto_disconnect(pto_client *c)
{
	pto_buf *b;
	size_t i;

	if (!c)
		return;
	/*
	 * From the orchestration function: pto_run_ex() ends it after (in a
	 * child forked there too, whose pto_run_ex() still has the client
	 * to return through). Not in a child forked by another thread
	 * meanwhile: the run's thread is not in it, so nothing would.
	 */
	if (c->in_run &&
	    (owner(c) || pthread_equal(c->run_thread, pthread_self()))) {
		c->gone = true;
		return;
	}
	/*
	 * In a forked child the same as in the parent, with nothing sent to
	 * ptod: its descriptors and memory are copies, and buf_release()
	 * only unmaps the buffers.
	 */
	if (c->sock >= 0)
		close(c->sock);
	if (c->bell >= 0)
		close(c->bell);
	while ((b = c->kblobs)) {
		c->kblobs = b->next;
		pto_buf_free(b);
	}
	c->graphs_out = 0;
	kblobs_gc(c);
	pto_buf_free(c->stream);
	/*
	 * The caller's buffers not freed: unmapped and given back now (GM
	 * another client may get next), each left for pto_buf_free().
	 */
	while (c->bufs)
		buf_release(c->bufs);
	static_free(c);
	pto_check_free(c->chk);
	if (c->dev)
		c->dev_ops->close(c->dev);
	for (i = 0; i < c->ndone; i++)
		free(c->done[i].msg);
	free(c->done);
	for (i = 0; i < c->nowed; i++)
		free(c->owed[i].local_msg);
	free(c->owed);
	if (c->owner_page)
		munmap((void *)c->owner_page, (size_t)sysconf(_SC_PAGESIZE));
	free(c);
}

/* ---- Kernels ------------------------------------------------------------------------ */

PTO_EXPORT int pto_kernel_load_mem(pto_client *c, int32_t func_id,
				   PTO2WorkerType worker_type, const void *so,
				   size_t len)
{
	struct pto_kblob_hdr *h;
	struct pto_msg m;
	const char *why;
	uint64_t caps;
	pto_buf *b;
	int ret;

	if (forked(c))
		return -ECHILD;
	if (!so || !len || len > PTO_KBLOB_MAX_SIZE)
		return seterr(c, -EINVAL, "kernel %d: bad size %zu", func_id, len);
	ret = kernel_image_check(so, len, &caps, &why);
	if (ret)
		return seterr(c, ret, "kernel %d: %s", func_id, why);
	ret = pto_buf_alloc(c, PTO_KBLOB_HDR_SIZE + len, &b);
	if (ret)
		return ret;
	h = pto_buf_ptr(b);
	memset(h, 0, sizeof(*h));
	h->magic = PTO_KBLOB_MAGIC;
	h->version = PTO_KBLOB_VERSION;
	h->size = len;
	if (getrandom(&h->uid, sizeof(h->uid), 0) != sizeof(h->uid))
		h->uid = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)b ^
			 (uint64_t)time(NULL);
	h->func_id = func_id;
	h->core_type = worker_type;
	memcpy((uint8_t *)h + PTO_KBLOB_HDR_SIZE, so, len);

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_KERNEL_REG;
	m.u.kreg.func_id = func_id;
	m.u.kreg.core_type = worker_type;
	m.u.kreg.blob_addr = pto_buf_dev_addr(b);
	m.u.kreg.required_caps = caps;
	ret = request(c, &m, -1);
	if (ret) {
		pto_buf_free(b);
		return ret;
	}
	kblob_replaced(c, func_id);
	kblobs_gc(c);
	b->kfunc = func_id;
	b->next = c->kblobs;
	c->kblobs = b;
	return 0;
}

PTO_EXPORT int pto_kernel_load(pto_client *c, int32_t func_id,
			       PTO2WorkerType worker_type, const char *so_path)
{
	struct stat st;
	void *p;
	int fd, ret;

	/* not blocking: a FIFO or a device is refused, not waited on */
	fd = open(so_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return seterr(c, -errno, "%s: %s", so_path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return seterr(c, -EINVAL, "%s: not a regular file, empty or unreadable",
			      so_path);
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return seterr(c, -errno, "%s: %s", so_path, strerror(errno));
	ret = pto_kernel_load_mem(c, func_id, worker_type, p, (size_t)st.st_size);
	munmap(p, (size_t)st.st_size);
	return ret;
}

/* ---- Submission stream --------------------------------------------------------------- */

/*
 * Ring the stream reader's doorbell: a byte into the pipe ptod handed over
 * at hello (a full pipe wakes the reader as well). Its read end goes with
 * ptod, or when ptod lets this client go; a write then fails with EPIPE
 * and raises SIGPIPE, which would kill a program that never asked for
 * pipes. So SIGPIPE is held back in this thread for the write, and the
 * one the write raised is taken (one already pending stays). 0, or
 * -errno, and the caller sends MSG_DOORBELL instead (a write that failed
 * also closes the pipe: ptod reads it no more).
 */
static int bell_ring(pto_client *c)
{
	static const struct timespec now = { 0, 0 };
	sigset_t pipe_set, old, pending;
	bool held;
	int ret;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	ret = -pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	if (ret)
		return ret;
	held = !sigpending(&pending) && sigismember(&pending, SIGPIPE);
	if (write(c->bell, "", 1) != 1 && errno != EAGAIN) {
		ret = -errno;
		if (ret == -EPIPE && !held)
			sigtimedwait(&pipe_set, NULL, &now);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		close(c->bell);
		c->bell = -1;
	}
	return ret;
}

static void stream_publish(pto_client *c)
{
	struct pto_stream_hdr *sh = c->sh;

	atomic_store_explicit(&sh->head, c->head, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&sh->reader_parked, memory_order_relaxed) &&
	    atomic_exchange(&sh->reader_parked, 0)) {
		struct pto_msg m;

		PTO_PROBE0(libpto, doorbell);
		/* the doorbell pipe wakes the reader without ptod's main thread */
		if (c->bell >= 0 && !bell_ring(c))
			return;
		memset(&m, 0, sizeof(m));
		m.type = PTO_MSG_DOORBELL;
		msg_send(c, &m, -1);
	}
}

void graph_fail(pto_client *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (c->err)
		return;
	c->err = err;
	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
}

/*
 * Room for a record of @len bytes (PTO_REC_LEN()) at the head; a PAD
 * record fills the end of the ring first if needed. Blocks while the ring
 * is full: writer_waiting = 1, full fence, recheck, then wait for
 * MSG_SPACE on the socket. Never in a forked child: rec_reserve() checks,
 * as do pto_graph_begin_ex() and pto_graph_end() before their records.
 */
void *stream_reserve(pto_client *c, uint32_t len)
{
	struct pto_stream_hdr *sh = c->sh;
	struct pto_msg m;

	for (;;) {
		uint32_t off = (uint32_t)(c->head & (c->ssize - 1));
		uint32_t to_end = c->ssize - off;
		uint32_t need = to_end < len ? to_end + len : len;
		uint64_t tail = atomic_load_explicit(&sh->tail, memory_order_acquire);

		if (c->ssize - (c->head - tail) >= need) {
			if (to_end < len) {
				struct pto_rec *pad = (void *)(c->sdata + off);

				pad->type = PTO_REC_PAD;
				pad->len = to_end;
				pad->tag = 0;
				c->head += to_end;
				off = 0;
			}
			return c->sdata + off;
		}
		stream_publish(c);
		PTO_PROBE1(libpto, stream_full, c->head);
		c->space = false;
		atomic_store_explicit(&sh->writer_waiting, 1, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		if (c->ssize - (c->head - atomic_load(&sh->tail)) >= need)
			continue;
		while (!c->space) {
			int ret = msg_recv(c, &m, true);

			if (ret < 0) {
				ret = conn_lost(c, ret);
				graph_fail(c, ret, "%s", c->last_error);
				return NULL;
			}
			/* ptod ended this graph (it failed): nobody reads on */
			if (c->cur_done)
				return NULL;
		}
	}
}

void stream_commit(pto_client *c, uint32_t len)
{
	c->head += len;
	stream_publish(c);
}

/*
 * A record of the current graph: in the stream, or, for a static graph,
 * in the graph's held buffer (pto_graph_end ranks and releases it). In a
 * forked child neither: the graph is the parent's (-ECHILD at once).
 */
static void *rec_reserve(pto_client *c, uint32_t len)
{
	if (graph_forked(c))
		return NULL;
	return c->stat ? static_reserve(c, len) : stream_reserve(c, len);
}

static void rec_commit(pto_client *c, uint32_t len)
{
	if (c->stat)
		static_commit(c, len);
	else
		stream_commit(c, len);
}

/*
 * Start record @r (from a reserve; NULL passes through) of @type and @len
 * bytes in the current graph: zeroed, with its header.
 */
static void *rec_init(pto_client *c, void *r, uint32_t type, uint32_t len)
{
	struct pto_rec *h = r;

	if (!r)
		return NULL;
	memset(r, 0, len);
	h->type = type;
	h->len = len;
	h->tag = c->cur_tag;
	return r;
}

static int rec_simple(pto_client *c, uint32_t type)
{
	struct pto_rec *r = rec_init(c, rec_reserve(c, sizeof(*r)), type,
				     sizeof(*r));

	if (!r)
		return c->err;
	rec_commit(c, sizeof(*r));
	return 0;
}

/* GRAPH_BEGIN, straight to the stream (a static graph's at release). */
int graph_begin_rec(pto_client *c, uint32_t flags, uint32_t total)
{
	struct pto_rec_graph *g;

	/* room to remember that it is owed a DONE (pto_graph_wait()) */
	if (c->nowed == c->capowed) {
		size_t cap = c->capowed ? 2 * c->capowed : 8;
		struct owed_ent *n = realloc(c->owed, cap * sizeof(*n));

		if (!n) {
			graph_fail(c, -ENOMEM, "out of memory");
			return c->err;
		}
		c->owed = n;
		c->capowed = cap;
	}
	g = rec_init(c, stream_reserve(c, sizeof(*g)), PTO_REC_GRAPH_BEGIN,
		     sizeof(*g));
	if (!g)
		return c->err;
	g->flags = flags;
	g->total_tasks = total;
	stream_commit(c, sizeof(*g));
	c->owed[c->nowed++] = (struct owed_ent){ .tag = c->cur_tag };
	c->graphs_out++;	/* ptod answers it with a DONE */
	return 0;
}

/* ---- Graphs ---------------------------------------------------------------------------- */

PTO_EXPORT PTO2Runtime *pto_client_runtime(pto_client *c)
{
	return &c->rt;
}

/* The checking mode for the graph being begun, on or off (libpto.h). */
static int check_begin(pto_client *c, bool on)
{
	if (!on) {
		pto_check_free(c->chk);
		c->chk = NULL;
		return 0;
	}
	if (!c->chk)
		c->chk = pto_check_new();
	if (!c->chk)
		return -ENOMEM;
	pto_check_graph_begin(c->chk);
	return 0;
}

PTO_EXPORT int pto_graph_begin(pto_client *c, uint64_t *tag)
{
	return pto_graph_begin_ex(c, 0, tag);
}

PTO_EXPORT int pto_graph_begin_ex(pto_client *c, uint32_t flags, uint64_t *tag)
{
	int ret = 0;

	if (forked(c))
		return -ECHILD;
	if (c->in_graph)
		return seterr(c, -EBUSY, "a graph is already being built");
	if (flags & ~(PTO_GRAPH_STATIC | PTO_GRAPH_CHECK))
		return seterr(c, -EINVAL, "unknown graph flags 0x%x", flags);
	ret = check_begin(c, (flags & PTO_GRAPH_CHECK) || c->check_env);
	if (ret)
		return seterr(c, ret, "no memory for the checking mode");
	c->cur_tag = ++c->next_tag;
	c->in_graph = true;
	c->orch_done = false;
	c->cur_done = false;
	c->next_ph = 0;
	c->next_cluster = 0;
	c->next_seq = 0;
	c->err = 0;
	c->errmsg[0] = 0;
	c->stat = flags & PTO_GRAPH_STATIC;
	c->slen = 0;
	if (!c->stat)
		ret = graph_begin_rec(c, 0, 0);
	if (ret) {
		c->in_graph = false;
		return seterr(c, ret, "%s", c->errmsg);
	}
	if (tag)
		*tag = c->cur_tag;
	PTO_PROBE1(libpto, graph_begin, c->cur_tag);
	return 0;
}

PTO_EXPORT int pto_graph_end(pto_client *c)
{
	int ret = 0;

	if (forked(c))
		return -ECHILD;
	if (!c->in_graph)
		return seterr(c, -EINVAL, "no graph is being built");
	/*
	 * A GRAPH_END that cannot be written: ptod ended the graph, or the
	 * connection is gone; either way its wait says so.
	 */
	if (!c->orch_done) {
		c->orch_done = true;
		rec_simple(c, PTO_REC_GRAPH_END);
	}
	if (c->stat) {
		ret = static_release(c);
		c->stat = false;
	}
	c->in_graph = false;
	graph_local_err(c);
	if (ret)
		return seterr(c, ret, "%s", c->errmsg);
	PTO_PROBE1(libpto, graph_end, c->cur_tag);
	return 0;
}

PTO_EXPORT int pto_graph_wait(pto_client *c, uint64_t tag, char *msg,
			      size_t msglen)
{
	struct owed_ent *o;
	struct pto_msg m;
	size_t i;
	int ret;

	if (msg && msglen)
		msg[0] = 0;
	if (forked(c))
		return -ECHILD;
	if (c->in_graph && tag == c->cur_tag)
		return seterr(c, -EINVAL,
			      "graph %" PRIu64 " is still being built: pto_graph_end() it first",
			      tag);
	for (;;) {
		for (i = 0; i < c->ndone; i++) {
			if (c->done[i].tag != tag)
				continue;
			ret = c->done[i].status;
			PTO_PROBE2(libpto, graph_done, tag, ret);
			if (msg && msglen)
				snprintf(msg, msglen, "%s",
					 c->done[i].msg ? c->done[i].msg : "");
			if (ret)
				seterr(c, ret, "%s", c->done[i].msg ?
				       c->done[i].msg : strerror(-ret));
			free(c->done[i].msg);
			c->last_stats = c->done[i].stats;
			c->have_stats = true;
			c->done[i] = c->done[--c->ndone];
			return ret;
		}
		o = owed_find(c, tag);
		if (!o)
			return seterr(c, -ENOENT,
				      "no graph %" PRIu64 " to wait for: it was never sent to ptod (it failed before), or it was waited for already",
				      tag);
		if (o->lost) {
			ret = o->lost;
			owed_drop(c, o);
			/* its statistics went with it */
			c->have_stats = false;
			if (msg && msglen)
				snprintf(msg, msglen, "no memory was left to keep its outcome");
			return seterr(c, ret,
				      "graph %" PRIu64 " ended, but no memory was left to keep its outcome",
				      tag);
		}
		ret = msg_recv(c, &m, true);
		if (ret < 0) {
			ret = conn_lost(c, ret);
			if (msg && msglen)
				snprintf(msg, msglen, "%s", c->last_error);
			return ret;
		}
	}
}

/*
 * pto_graph_stats() is two symbols: LIBPTO_1.3's fills the whole struct;
 * LIBPTO_1.2's, which programs built before @early was added call, fills
 * what their struct has: the fields before @early.
 */
#define PTO_GRAPH_STATS_1_2_SIZE	offsetof(struct pto_graph_stats, early)

PTO_EXPORT __attribute__((symver("pto_graph_stats@@LIBPTO_1.3")))
int pto_graph_stats_1_3(pto_client *c, struct pto_graph_stats *st)
{
	if (!c->have_stats)
		return -ENOENT;
	*st = c->last_stats;
	return 0;
}

PTO_EXPORT __attribute__((symver("pto_graph_stats@LIBPTO_1.2")))
int pto_graph_stats_1_2(pto_client *c, void *st)
{
	if (!c->have_stats)
		return -ENOENT;
	memcpy(st, &c->last_stats, PTO_GRAPH_STATS_1_2_SIZE);
	return 0;
}

PTO_EXPORT int pto_run(pto_client *c, pto2_orchestration_entry_fn entry,
		       uint64_t *args, int argc, char *msg, size_t msglen)
{
	return pto_run_ex(c, entry, args, argc, 0, msg, msglen);
}

PTO_EXPORT int pto_run_ex(pto_client *c, pto2_orchestration_entry_fn entry,
			  uint64_t *args, int argc, uint32_t flags, char *msg,
			  size_t msglen)
{
	int ret, oret;
	uint64_t tag;

	if (!entry)
		ret = seterr(c, -EINVAL, "no orchestration function");
	else
		ret = pto_graph_begin_ex(c, flags, &tag);
	if (ret) {
		/* no graph: the reason is the client's last error */
		if (msg && msglen)
			snprintf(msg, msglen, "%s", c->last_error);
		return ret;
	}
	c->run_thread = pthread_self();
	c->in_run = true;
	oret = entry(&c->rt, args, argc);
	c->in_run = false;
	if (c->gone) {
		/* the orchestration function disconnected: now it is done */
		pto_disconnect(c);
		if (msg && msglen)
			snprintf(msg, msglen, "pto_disconnect() was called from the orchestration function");
		return -ESHUTDOWN;
	}
	/*
	 * The orchestration function may have ended the graph itself
	 * (pto_graph_end()): then it was released, or its release failed,
	 * and the wait below says which, as for any graph.
	 */
	ret = c->in_graph ? pto_graph_end(c) : 0;
	if (ret && (flags & PTO_GRAPH_STATIC)) {
		/* the static graph was never released: nothing to wait for */
		if (msg && msglen)
			snprintf(msg, msglen, "%s", c->last_error);
		return ret;
	}
	/* a failure found in this process (a refused submit) included */
	ret = pto_graph_wait(c, tag, msg, msglen);
	if (!ret && oret < 0) {
		ret = oret;
		if (msg && msglen)
			snprintf(msg, msglen, "orchestration function returned %d",
				 oret);
		seterr(c, ret, "orchestration function returned %d", oret);
	}
	return ret;
}

/* ---- The PTO2 orchestration API, client side ------------------------------------------- */

/* A submit is possible now; else the graph fails with the reason. */
static bool submit_ok(pto_client *c, int32_t kernel_id, PTOParam *params,
		      int32_t num_params)
{
	char msg[256];

	if (c->err)
		return false;
	if (!c->in_graph || c->orch_done) {
		graph_fail(c, -EINVAL, "submit %s",
			   c->in_graph ? "after pto2_rt_orchestration_done()" :
			   "outside of a graph");
		return false;
	}
	if (pto_params_check(kernel_id, params, num_params, msg, sizeof(msg))) {
		graph_fail(c, -EINVAL, "%s", msg);
		return false;
	}
	return true;
}

/* The checking mode's verdict on a task; the graph fails on a hazard. */
static int check_task(pto_client *c, int32_t kernel_id,
		      const PTOParam *params, int32_t num_params)
{
	char msg[256];
	int ret = pto_check_task(c->chk, kernel_id, params, num_params, msg,
				 sizeof(msg));

	if (ret == -EINVAL)
		graph_fail(c, ret, "checking mode: task %u (kernel %d): %s",
			   pto_check_ntasks(c->chk), kernel_id, msg);
	else if (ret)
		graph_fail(c, ret, "checking mode: out of memory");
	return ret;
}

/* A param into the record; an intermediate's first OUTPUT gets a
 * placeholder address. -ENOSPC (graph failed) past the last one. */
static int rec_param(pto_client *c, struct pto_rec_param *p,
		     const PTOParam *param)
{
	Tensor *t = param->tensor;

	p->type = (int32_t)param->type;
	p->pad = 0;
	p->scalar = param->scalar_value;
	if (p->type == PTO_PARAM_SCALAR) {
		memset(&p->tensor, 0, sizeof(p->tensor));
		return 0;
	}
	if (p->type == PTO_PARAM_OUTPUT && !t->addr) {
		if (c->next_ph >= PTO_PH_MAX_IDX) {
			graph_fail(c, -ENOSPC,
				   "more than %u intermediate tensors in one graph",
				   PTO_PH_MAX_IDX);
			return -ENOSPC;
		}
		t->addr = PTO_PH_MAKE(++c->next_ph);
	}
	p->tensor = *t;
	return 0;
}

PTO_EXPORT void pto2_rt_submit_task_attr(PTO2Runtime *rt, int32_t kernel_id,
					 PTO2WorkerType worker_type,
					 PTOParam *params, int32_t num_params,
					 const PTO2TaskAttr *attr)
{
	pto_client *c = rt->c;
	struct pto_rec_submit *s;
	uint32_t len;
	int32_t i;

	if (!submit_ok(c, kernel_id, params, num_params))
		return;
	len = PTO_REC_LEN(sizeof(*s) + (size_t)num_params * sizeof(s->p[0]));
	s = rec_init(c, rec_reserve(c, len), PTO_REC_SUBMIT, len);
	if (!s)
		return;
	s->kernel_id = kernel_id;
	s->worker_type = worker_type;
	s->nparams = num_params;
	if (attr)
		s->attr = *attr;
	for (i = 0; i < num_params; i++)
		if (rec_param(c, &s->p[i], &params[i]))
			return;
	if (c->chk && check_task(c, kernel_id, params, num_params))
		return;
	PTO_PROBE5(libpto, submit, c->client_id, c->cur_tag, c->next_seq,
		   kernel_id, num_params);
	c->next_seq++;
	rec_commit(c, len);
}

PTO_EXPORT void pto2_rt_submit_task(PTO2Runtime *rt, int32_t kernel_id,
				    PTO2WorkerType worker_type,
				    PTOParam *params, int32_t num_params)
{
	pto2_rt_submit_task_attr(rt, kernel_id, worker_type, params,
				 num_params, NULL);
}

PTO_EXPORT void pto2_rt_submit_task_clustered(PTO2Runtime *rt,
					      int32_t kernel_id,
					      PTO2WorkerType worker_type,
					      PTOParam *params,
					      int32_t num_params,
					      int32_t cluster_id)
{
	PTO2TaskAttr a = { .flags = PTO2_ATTR_CLUSTER,
			   .cluster_id = cluster_id };

	pto2_rt_submit_task_attr(rt, kernel_id, worker_type, params,
				 num_params, &a);
}

PTO_EXPORT void pto2_rt_set_kernel_cost(PTO2Runtime *rt, int32_t kernel_id,
					uint64_t est_ns)
{
	pto_client *c = rt->c;
	struct pto_rec_kcost *k;

	if (c->err || !c->in_graph || c->orch_done)
		return;
	if (!pto_kernel_id_ok(kernel_id)) {
		graph_fail(c, -EINVAL,
			   "pto2_rt_set_kernel_cost: kernel id %d out of range 0..%d",
			   kernel_id, PTO2_MAX_KERNELS - 1);
		return;
	}
	/* a static graph's record takes effect when the graph goes out */
	if (!c->stat)
		c->kcost[kernel_id] = est_ns;
	k = rec_init(c, rec_reserve(c, sizeof(*k)), PTO_REC_KCOST, sizeof(*k));
	if (!k)
		return;
	k->kernel_id = kernel_id;
	k->est_ns = est_ns;
	rec_commit(c, sizeof(*k));
}

static void rec_cluster(pto_client *c, uint32_t type, int32_t vid)
{
	struct pto_rec_cluster *r = rec_init(c, rec_reserve(c, sizeof(*r)),
					     type, sizeof(*r));

	if (!r)
		return;
	r->vid = vid;
	rec_commit(c, sizeof(*r));
}

/*
 * The cluster is allocated by ptod when it replays the record; the
 * orchestration gets its id in this graph at once (ptod translates it).
 */
PTO_EXPORT int32_t pto2_rt_allocate_cluster(PTO2Runtime *rt)
{
	pto_client *c = rt->c;

	if (c->err || !c->in_graph || c->orch_done)
		return -1;
	rec_cluster(c, PTO_REC_CLUSTER_ALLOC, (int32_t)++c->next_cluster);
	return c->err ? -1 : (int32_t)c->next_cluster;
}

PTO_EXPORT void pto2_rt_free_cluster(PTO2Runtime *rt, int32_t cluster_id)
{
	pto_client *c = rt->c;

	if (c->err || !c->in_graph || c->orch_done)
		return;
	/* ptod would take an id never handed out as a corrupt record */
	if (cluster_id <= 0 || (uint32_t)cluster_id > c->next_cluster) {
		graph_fail(c, -EINVAL,
			   "pto2_rt_free_cluster: cluster %d is not allocated by this orchestration",
			   cluster_id);
		return;
	}
	rec_cluster(c, PTO_REC_CLUSTER_FREE, cluster_id);
}

PTO_EXPORT void pto2_rt_scope_begin(PTO2Runtime *rt)
{
	pto_client *c = rt->c;

	if (!c->in_graph || c->orch_done)
		return;
	if (c->chk && pto_check_scope_begin(c->chk, c->next_ph))
		graph_fail(c, -ENOMEM, "checking mode: out of memory");
	rec_simple(c, PTO_REC_SCOPE_BEGIN);
}

PTO_EXPORT void pto2_rt_scope_end(PTO2Runtime *rt)
{
	pto_client *c = rt->c;

	if (!c->in_graph || c->orch_done)
		return;
	if (c->chk)
		pto_check_scope_end(c->chk, c->next_ph);
	rec_simple(c, PTO_REC_SCOPE_END);
}

PTO_EXPORT void pto2_rt_orchestration_done(PTO2Runtime *rt)
{
	pto_client *c = rt->c;

	if (!c->in_graph || c->orch_done)
		return;
	c->orch_done = true;
	rec_simple(c, PTO_REC_GRAPH_END);
}

PTO_EXPORT void pto2_rt_init_tensor_pool(PTO2Runtime *rt)
{
	(void)rt;
}

PTO_EXPORT int pto2_rt_get_error(PTO2Runtime *rt)
{
	pto_client *c = rt->c;
	struct pto_msg m;

	/* pick up an early ERROR notice without blocking */
	while (!c->err && !graph_forked(c)) {
		int ret = msg_recv(c, &m, false);

		if (ret < 0)
			graph_fail(c, conn_lost(c, ret), "%s", c->last_error);
		if (ret <= 0)
			break;
	}
	return c->err;
}

PTO_EXPORT const char *pto2_rt_get_error_msg(PTO2Runtime *rt)
{
	return rt->c->err ? rt->c->errmsg : "";
}
