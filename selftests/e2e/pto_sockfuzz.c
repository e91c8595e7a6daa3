// SPDX-License-Identifier: GPL-2.0
/*
 * pto_sockfuzz - random and mutated messages on ptod's socket
 *
 * Several worker processes (the engine of selftests/pto/pto_fuzz.h: seeded,
 * SIGKILLed at random and replaced) each hold a few connections to ptod
 * and send, mostly structure-aware: random bytes; messages of the wire
 * protocol (common/include/pto-private/wire.h) with valid headers and bad
 * types, lengths, truncated or oversized; hellos with the client's own
 * device file, with none, with /dev/null, a pipe, a socket, a file of
 * another role or several files at once (now and then as many as a
 * message can carry, 253), with good and bad stream
 * buffers, wire versions and runtime variables, cut short; KERNEL_REG of
 * good and bad kernel blobs; DOORBELL and PING; records in the
 * submission stream of a connection whose hello succeeded (graphs,
 * submits of unregistered kernels, scopes, clusters, records of bad
 * types and lengths); floods of requests whose replies it never reads;
 * disconnects at random points. Each connection either reads its
 * replies (and checks that each is a well-formed message of ptod's) or
 * never does.
 *
 * A probe operation connects and pings ptod: it must answer within
 * SF_PROBE_MS, and ptod must still accept connections; otherwise that is
 * a finding, as is a malformed reply or a worker dead of a signal. The
 * workers share one uid, whose connections can reach ptod's limit per
 * user (-c, 16; SF_PROCS x SF_CONNS is more): a probe refused at a limit
 * (-EUSERS, -EMFILE) was answered, and dials again SF_PROBE_RETRY_MS
 * later, as long as its SF_PROBE_MS last.
 *
 *   PTO_SOCKET=/path/ptod.sock pto_sockfuzz
 *
 * With PTO_DEVICE=user (ptod -d user), the workers' device is ptod's
 * user-mode one: a worker opens it on a connection of its own
 * (PTO_MSG_DEV_OPEN) and gets its buffers with GM_ALLOC; a worker that
 * became nobody is refused by that device (-EACCES, then hung up on),
 * which is what it checks its probes for.
 *
 * The e2e test sockfuzz (e2e_test.c) runs it against the ptod it
 * started, then checks that ptod still serves a client and that the
 * device and ptod are back at rest. Environment: PTO_SOCKET, and the
 * engine's PTO_SOCKFUZZ_SEED, _OPS (20000), _PROCS (4), _KILL_MS (250).
 * Exit status: 0, 1 with findings, 2 if it could not run.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/sock_diag.h>

#include <pto-private/fdpass.h>
#include <pto-private/wire.h>

#include "pto_test.h"
#include "pto_fuzz.h"
#include "ptod_dial.h"

#define SF_OPS_DEFAULT		20000
#define SF_PROCS_DEFAULT	4
#define SF_KILL_MS_DEFAULT	250

#define SF_CONNS	6
#define SF_STREAMS	4
#define SF_SKIP		1
/*
 * ptod answers SF_PROBE_PINGS pings in a row on a new connection within
 * SF_PROBE_MS, or it is stalled (a ping takes milliseconds in the VM; a
 * hello that builds a runtime, on ptod's main thread, well under a
 * second).
 */
#define SF_PROBE_MS	5000
#define SF_PROBE_PINGS	5
#define SF_PROBE_RETRY_MS	20
/* ptod lets go of a client that reads nothing within this (its socket full) */
#define SF_HANGUP_MS	10000
#define SF_BLOB_LEN	(64 * 1024)

enum {
	SF_CONNECT, SF_CLOSE, SF_SHUTDOWN, SF_RANDOM, SF_MSG, SF_HELLO,
	SF_KREG, SF_PING, SF_DOORBELL, SF_STREAM, SF_RECV, SF_FLOOD,
	SF_PROBE, SF_NR
};

static const char *const sf_names[SF_NR] = {
	"connect", "close", "shutdown", "random bytes", "message", "hello",
	"KERNEL_REG", "PING", "DOORBELL", "stream", "recv", "flood", "probe",
};

/*
 * A flood that fills ptod's socket gets the connection dropped (ptod's
 * output queue full, or no progress for 2 s): rare, so that most
 * connections live long enough to do something.
 */
static const unsigned int sf_weights[SF_NR] = {
	[SF_CONNECT] = 48, [SF_CLOSE] = 32, [SF_SHUTDOWN] = 8,
	[SF_RANDOM] = 40, [SF_MSG] = 60, [SF_HELLO] = 40, [SF_KREG] = 32,
	[SF_PING] = 24, [SF_DOORBELL] = 20, [SF_STREAM] = 40, [SF_RECV] = 48,
	[SF_FLOOD] = 2, [SF_PROBE] = 12,
};

/* What the workers share beyond the engine. */
struct sf_stats {
	uint64_t hellos_ok;		/* hellos ptod accepted */
	uint64_t replies;		/* messages read and checked */
	uint64_t probes;
	uint64_t probe_retries;		/* probes refused at a limit, dialed again */
	int64_t probe_max_ns;		/* slowest probe */
	uint64_t records;		/* stream records written */
};

struct sf_conn {
	int s;				/* -1: free */
	bool reads;			/* reads its replies */
	bool hello;			/* ptod accepted its hello */
	int stream;			/* its stream buffer, -1 if none */
};

struct sf_stream {
	uint64_t dev, len;
	uint8_t *p;
	uint32_t data_size;
	bool good;			/* a valid header */
};

struct sf_w {
	struct pto_fz *fz;
	struct sf_stats *st;
	struct pto_fz_slot *slot;
	struct pto_rng *r;
	const char *path;
	int dev;			/* CLIENT file of the device, or -1 */
	bool user;			/* PTO_DEVICE=user: ptod's device */
	bool refused;			/* that device refuses this worker */
	int udev;			/* user: the device connection */
	int gm_fd;			/* user: GM's memfd */
	int none;			/* a file without a role */
	int exec;			/* an EXECUTOR file (no cores) or -1 */
	int null, pipe[2], sp[2];
	struct sf_conn c[SF_CONNS];
	struct sf_stream s[SF_STREAMS];
	uint64_t blob_dev;
	uint8_t *blob;
};

#define SF_FAIL(w, fmt, ...) \
	pto_fz_finding((w)->fz, "gen %u: " fmt, (w)->slot->gen, ##__VA_ARGS__)

static inline uint64_t sf_rand(struct sf_w *w, uint64_t n)
{
	return pto_rng_below(w->r, n);
}

static inline bool sf_pct(struct sf_w *w, unsigned int pct)
{
	return pto_rng_pct(w->r, pct);
}

static void sf_fill(struct sf_w *w, void *p, size_t len)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = pto_rng_next(w->r);

		memcpy(b + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* ---- connections ---------------------------------------------------------- */

static int sf_dial(struct sf_w *w, int type)
{
	int s = ptod_dial_path(w->path, type | SOCK_CLOEXEC | SOCK_NONBLOCK);

	/* ptod listens on a SEQPACKET socket: it must be there */
	if (type == SOCK_SEQPACKET && (s == -ECONNREFUSED || s == -ENOENT))
		SF_FAIL(w, "connect %s: %s: ptod is gone", w->path,
			strerror(-s));
	return s;
}

static struct sf_conn *sf_pick(struct sf_w *w, int want_hello)
{
	struct sf_conn *cand[SF_CONNS], *pref[SF_CONNS];
	unsigned int i, n = 0, np = 0;

	for (i = 0; i < SF_CONNS; i++) {
		if (w->c[i].s < 0)
			continue;
		cand[n++] = &w->c[i];
		if (want_hello >= 0 && w->c[i].hello == (want_hello != 0))
			pref[np++] = &w->c[i];
	}
	if (np && sf_pct(w, 80))
		return pref[sf_rand(w, np)];
	return n ? cand[sf_rand(w, n)] : NULL;
}

static void sf_drop(struct sf_conn *c)
{
	close(c->s);
	c->s = -1;
	c->hello = false;
	c->stream = -1;
}

/*
 * Send @len bytes of @buf with @nfds descriptors of @fds; never blocks
 * (a full socket is -EAGAIN). 0 or -errno.
 */
static int sf_send(int s, const void *buf, size_t len, const int *fds,
		   unsigned int nfds)
{
	union pto_fd_cmsg_any cm;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds)
		pto_msg_attach_any(&mh, &cm, fds, nfds);
	return sendmsg(s, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/*
 * Descriptors to pass with a message (room for PTO_FDPASS_ANY_MAX in
 * @fds): none mostly, or junk ones, a few, now and then up to as many as
 * a message can carry (ptod takes them all, and closes them off its main
 * thread).
 */
static unsigned int sf_fds(struct sf_w *w, int *fds, unsigned int pct)
{
	int pool[] = { w->null, w->pipe[0], w->pipe[1], w->sp[0], w->none,
		       w->exec, w->dev };
	unsigned int i, n;

	if (!sf_pct(w, pct))
		return 0;
	if (sf_pct(w, 5))
		n = 5 + (unsigned int)sf_rand(w, PTO_FDPASS_ANY_MAX - 4);
	else
		n = 1 + (unsigned int)sf_rand(w, sf_pct(w, 80) ? 1 : 4);
	for (i = 0; i < n; i++) {
		fds[i] = pool[sf_rand(w, 7)];
		if (fds[i] < 0)
			fds[i] = w->null;
	}
	return n;
}

/*
 * One message of ptod is well formed: what libpto accepts
 * (pto_msg_from_ptod()), and more strictly, a type ptod sends and its
 * last byte a NUL as ptod writes it (libpto cuts the text itself).
 */
static void sf_check_reply(struct sf_w *w, struct pto_msg *m, ssize_t n)
{
	if (n < 1 || (size_t)n > sizeof(*m) || ((const char *)m)[n - 1] != 0 ||
	    pto_msg_from_ptod(m, (size_t)n, NULL, 0) ||
	    m->type < PTO_MSG_REPLY || m->type > PTO_MSG_PTOD_LAST)
		SF_FAIL(w, "malformed message from ptod: %zd bytes, type %u status %d",
			n, n >= 8 ? m->type : 0, n >= 8 ? m->status : 0);
	__atomic_fetch_add(&w->st->replies, 1, __ATOMIC_RELAXED);
}

/*
 * Read what ptod sent on @c: up to @max messages, waiting up to @ms for
 * the first. Returns the last message's status in *@status (if any was
 * read), the count, or -errno; 0 with the connection dropped on EOF.
 */
static int sf_read(struct sf_w *w, struct sf_conn *c, int max, int ms,
		   int *status)
{
	static struct pto_msg m;
	int got = 0;

	while (got < max) {
		struct pollfd pfd = { .fd = c->s, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, got ? 0 : ms) <= 0)
			break;
		n = recv(c->s, &m, sizeof(m), MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? got : -errno;
		if (n == 0) {
			sf_drop(c);	/* ptod hung up (a refused hello) */
			break;
		}
		sf_check_reply(w, &m, n);
		if (status)
			*status = m.status;
		got++;
	}
	return got;
}

/* ---- the client's device file and buffers -------------------------------------- */

/*
 * The user-mode device: request @m on the device connection, the reply in
 * @m and its descriptors (up to 2) in @fds: the reply's status or -errno.
 */
static int sf_udev_request(struct sf_w *w, struct pto_msg *m, int *fds,
			   unsigned int *nfds)
{
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union pto_fd_cmsg cm;
	ssize_t n;

	*nfds = 0;
	if (send(w->udev, m, offsetof(struct pto_msg, text) + 1,
		 MSG_NOSIGNAL) < 0)
		return -errno;
	pto_msg_want_fds(&mh, &cm);
	n = recvmsg(w->udev, &mh, MSG_CMSG_CLOEXEC);
	if (n > 0)
		*nfds = pto_msg_take_fds(&mh, fds, 2);
	if (n < 0)
		return -errno;
	if (pto_msg_from_ptod(m, (size_t)n, NULL, 0))
		return -EPROTO;
	return m->status;
}

/* Open the user-mode device: our CLIENT file and GM's memfd. */
static void sf_udev_open(struct sf_w *w)
{
	static struct pto_msg m;
	unsigned int nfds;
	int fds[2], s;

	w->dev = w->gm_fd = -1;
	w->udev = sf_dial(w, SOCK_SEQPACKET);
	if (w->udev < 0)
		return;
	/* the device connection waits for its replies */
	s = fcntl(w->udev, F_GETFL);
	fcntl(w->udev, F_SETFL, s & ~O_NONBLOCK);
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DEV_OPEN;
	s = sf_udev_request(w, &m, fds, &nfds);
	if (w->refused != (s == -EACCES))
		SF_FAIL(w, "DEV_OPEN as uid %u: status %d", (unsigned)getuid(), s);
	if (!s && nfds == 2) {
		w->dev = fds[0];
		w->gm_fd = fds[1];
	} else {
		while (nfds)
			close(fds[--nfds]);
	}
}

static int sf_udev_buf(struct sf_w *w, uint64_t len, uint64_t *dev,
		       uint8_t **p)
{
	static struct pto_msg m;
	unsigned int nfds;
	int fds[2], ret;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_GM_ALLOC;
	m.u.gm.len = len;
	ret = sf_udev_request(w, &m, fds, &nfds);
	while (nfds)
		close(fds[--nfds]);
	if (ret)
		return ret;
	*dev = m.u.gm.dev_addr;
	*p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, w->gm_fd,
		  (off_t)m.u.gm.mmap_offset);
	return *p == MAP_FAILED ? -errno : 0;
}

static int sf_buf(struct sf_w *w, uint64_t len, uint64_t *dev, uint8_t **p)
{
	struct pto_gm_alloc a;
	int err, ret;

	if (w->user)
		return sf_udev_buf(w, len, dev, p);
	ret = pto_gm_alloc(w->dev, len, 0, &a);
	if (ret)
		return ret;
	*dev = a.dev_addr;
	*p = pto_mmap(w->dev, len, a.mmap_offset, PROT_READ | PROT_WRITE,
		      MAP_SHARED, &err);
	return *p ? 0 : err;
}

/* Stream buffers (two good, two with bad headers) and a kernel blob. */
static void sf_setup_dev(struct sf_w *w)
{
	static const uint32_t data[SF_STREAMS] = { 4096, 65536, 8192, 4096 };
	unsigned int i;

	if (w->user) {
		sf_udev_open(w);
		w->none = w->exec = -1;
	} else {
		w->dev = pto_open_role(PTO_ROLE_CLIENT);
		w->none = pto_open();
		w->exec = pto_open_role(PTO_ROLE_EXECUTOR);
	}
	if (w->dev < 0)
		return;
	for (i = 0; i < SF_STREAMS; i++) {
		struct sf_stream *s = &w->s[i];
		struct pto_stream_hdr *h;

		s->len = PTO_STREAM_HDR_SIZE + data[i];
		if (sf_buf(w, s->len, &s->dev, &s->p)) {
			s->dev = 0;	/* never named in a hello */
			continue;
		}
		h = (struct pto_stream_hdr *)s->p;
		s->good = i < 2;
		s->data_size = i == 3 ? 3000 : data[i];
		h->magic = i == 2 ? 0x12345678 : PTO_STREAM_MAGIC;
		h->data_size = s->data_size;
	}
	if (sf_buf(w, SF_BLOB_LEN, &w->blob_dev, &w->blob))
		w->blob = NULL;
}

/* ---- operations ------------------------------------------------------------ */

static int sf_connect(struct sf_w *w)
{
	struct sf_conn *c = NULL;
	unsigned int i;
	int type = SOCK_SEQPACKET, s;

	for (i = 0; i < SF_CONNS && !c; i++)
		if (w->c[i].s < 0)
			c = &w->c[i];
	if (!c)
		return SF_SKIP;
	if (sf_pct(w, 5))
		type = sf_pct(w, 50) ? SOCK_STREAM : SOCK_DGRAM;
	s = sf_dial(w, type);
	if (s < 0)
		return s;
	if (type != SOCK_SEQPACKET) {
		close(s);
		return 0;
	}
	c->s = s;
	c->reads = sf_pct(w, 70);
	c->hello = false;
	c->stream = -1;
	return 0;
}

static int sf_close(struct sf_w *w)
{
	struct sf_conn *c = sf_pick(w, -1);

	if (!c)
		return SF_SKIP;
	if (sf_pct(w, 20))
		shutdown(c->s, SHUT_WR);
	sf_drop(c);
	return 0;
}

static int sf_shutdown(struct sf_w *w)
{
	static const int how[] = { SHUT_RD, SHUT_WR, SHUT_RDWR };
	struct sf_conn *c = sf_pick(w, -1);

	if (!c)
		return SF_SKIP;
	return shutdown(c->s, how[sf_rand(w, 3)]) ? -errno : 0;
}

static int sf_random(struct sf_w *w)
{
	static uint8_t buf[65536];
	struct sf_conn *c = sf_pick(w, -1);
	int fds[PTO_FDPASS_ANY_MAX];
	unsigned int nfds;
	size_t len;

	if (!c)
		return SF_SKIP;
	len = sf_pct(w, 5) ? 0 : sf_pct(w, 5) ? sizeof(buf) :
	      sf_rand(w, sizeof(struct pto_msg) + 1024);
	sf_fill(w, buf, len);
	nfds = sf_fds(w, fds, 15);
	pto_fz_begin(w->slot, SF_RANDOM, len, nfds, 0, 0);
	return sf_send(c->s, buf, len, fds, nfds);
}

/* The length to send of a message: whole mostly, else cut or padded. */
static size_t sf_len(struct sf_w *w)
{
	size_t hdr = offsetof(struct pto_msg, text);

	switch (sf_rand(w, 10)) {
	case 0:
		return sf_rand(w, hdr);			/* short */
	case 1:
		return hdr + sf_rand(w, 64);
	case 2:
		return hdr;
	case 3:
		return sizeof(struct pto_msg) + 1 + sf_rand(w, 4096);
	default:
		return sizeof(struct pto_msg);
	}
}

static int sf_msg(struct sf_w *w)
{
	static const uint32_t types[] = {
		0, PTO_MSG_HELLO, PTO_MSG_KERNEL_REG, PTO_MSG_DOORBELL,
		PTO_MSG_PING, 5, 99, PTO_MSG_REPLY, PTO_MSG_SPACE,
		PTO_MSG_ERROR, PTO_MSG_DONE, 0xffffffff, PTO_MSG_DEV_OPEN,
		PTO_MSG_GM_ALLOC, PTO_MSG_GM_FREE, PTO_MSG_DEV_STATUS,
		PTO_MSG_HWS_CONFIG, PTO_MSG_CLIENTS, PTO_MSG_GRAPHS,
		PTO_MSG_TRACE, PTO_MSG_TRACE_STOP,
	};
	static uint8_t buf[sizeof(struct pto_msg) + 4200];
	struct pto_msg *m = (struct pto_msg *)buf;
	struct sf_conn *c = sf_pick(w, -1);
	size_t len = sf_len(w);
	int fds[PTO_FDPASS_ANY_MAX], ret;
	unsigned int nfds;

	if (!c)
		return SF_SKIP;
	sf_fill(w, buf, sizeof(buf));
	m->type = sf_pct(w, 90) ? types[sf_rand(w, sizeof(types) / sizeof(types[0]))] :
				 (uint32_t)pto_rng_next(w->r);
	if (sf_pct(w, 70))
		m->text[sf_rand(w, PTO_MSG_TEXT)] = 0;
	nfds = sf_fds(w, fds, 15);
	pto_fz_begin(w->slot, SF_MSG, m->type, len, nfds, 0);
	ret = sf_send(c->s, buf, len, fds, nfds);
	if (!ret && c->reads)
		sf_read(w, c, 4, 0, NULL);
	return ret;
}

/* Values of the runtime variables a hello forwards: small, or junk. */
static void sf_hello_env(struct sf_w *w, struct pto_msg_hello *h)
{
	static const char *const vals[PTO_HELLO_ENV_N][3] = {
		{ "64", "256", "1024" },		/* task window */
		{ "1048576", "262144", "4194304" },	/* heap */
		{ "256", "1024", "64" },		/* dep pool */
		{ "1", "2", "4" },			/* ready queue shards */
	};
	unsigned int i;

	memset(h->env, 0, sizeof(h->env));
	h->env_set = 0;
	for (i = 0; i < PTO_HELLO_ENV_N; i++) {
		if (sf_pct(w, 30))
			continue;
		h->env_set |= 1u << i;
		if (sf_pct(w, 90)) {
			strcpy(h->env[i], vals[i][sf_rand(w, 3)]);
		} else if (sf_pct(w, 50)) {
			sf_fill(w, h->env[i], PTO_HELLO_ENV_LEN);	/* unterminated */
		} else {
			snprintf(h->env[i], PTO_HELLO_ENV_LEN, "%lld",
				 (long long)pto_rng_next(w->r));
		}
	}
	if (sf_pct(w, 5))
		h->env_set = (uint32_t)pto_rng_next(w->r);
}

static int sf_hello(struct sf_w *w)
{
	static struct pto_msg m;
	struct sf_conn *c = sf_pick(w, 0);
	struct pto_msg_hello *h = &m.u.hello;
	int fds[PTO_FDPASS_ANY_MAX] = { w->dev }, st = 1, ret, k = -1;
	unsigned int nfds = 1;
	size_t len = sizeof(m);

	if (!c)
		return SF_SKIP;
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_HELLO;
	h->wire_version = sf_pct(w, 90) ? PTO_WIRE_VERSION :
			  (uint32_t)sf_rand(w, 4);
	switch (sf_rand(w, 10)) {
	case 0:		/* any address */
		h->stream_addr = pto_rng_next(w->r) >> sf_rand(w, 64);
		h->stream_len = pto_rng_next(w->r) >> sf_rand(w, 64);
		break;
	case 1:		/* a stream with a bad header */
	case 2:
		k = 2 + (int)sf_rand(w, 2);
		break;
	case 3:		/* a good buffer, a bad length */
		k = (int)sf_rand(w, 2);
		break;
	default:
		k = (int)sf_rand(w, 2);
		break;
	}
	if (k >= 0) {
		h->stream_addr = w->s[k].dev;
		h->stream_len = w->s[k].len;
		if (sf_rand(w, 10) == 3) {
			h->stream_len = sf_pct(w, 50) ? sf_rand(w, 4096) :
					~0ULL - sf_rand(w, 2);
			if (sf_pct(w, 30))
				h->stream_addr += 8;
		}
	}
	sf_hello_env(w, h);
	if (sf_pct(w, 30)) {		/* not our device file */
		nfds = sf_fds(w, fds, 85);
		if (sf_pct(w, 20))
			fds[0] = w->dev;	/* with junk after it */
	}
	if (w->dev < 0 && nfds && fds[0] < 0)
		nfds = 0;
	if (sf_pct(w, 8))
		len = sf_rand(w, sizeof(m));	/* half a hello */
	pto_fz_begin(w->slot, SF_HELLO, (uint64_t)k, nfds, len,
		     h->wire_version);
	ret = sf_send(c->s, &m, len, fds, nfds);
	if (ret || !c->reads)
		return ret;
	/* ptod answers every hello; a runtime takes a moment to set up */
	if (sf_read(w, c, 1, SF_PROBE_MS, &st) == 1 && !st && c->s >= 0) {
		c->hello = true;
		/*
		 * Only a buffer the worker has: a reply read here may be
		 * an earlier request's, and a buffer it could not get
		 * (ptod refused the worker meanwhile) is not mapped
		 */
		c->stream = k >= 0 && w->s[k].p ? k : -1;
		__atomic_fetch_add(&w->st->hellos_ok, 1, __ATOMIC_RELAXED);
	}
	return st <= 0 ? st : 0;
}

static int sf_kreg(struct sf_w *w)
{
	static struct pto_msg m;
	struct sf_conn *c = sf_pick(w, 1);
	struct pto_msg_kreg *k = &m.u.kreg;
	int ret;

	if (!c)
		return SF_SKIP;
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_KERNEL_REG;
	k->func_id = sf_pct(w, 80) ? (int32_t)sf_rand(w, 8) :
				     (int32_t)pto_rng_next(w->r);
	k->core_type = sf_pct(w, 80) ? (int32_t)sf_rand(w, 3) :
				       (int32_t)sf_rand(w, 100) - 50;
	k->required_caps = sf_pct(w, 80) ? 0 : pto_rng_next(w->r);
	k->est_ns = sf_pct(w, 50) ? 0 : pto_rng_next(w->r) >> sf_rand(w, 64);
	if (w->blob && sf_pct(w, 80)) {
		struct pto_kblob_hdr *b = (struct pto_kblob_hdr *)w->blob;

		/* a blob of junk: ptod only checks the header and the range */
		memset(b, 0, sizeof(*b));
		b->magic = sf_pct(w, 85) ? PTO_KBLOB_MAGIC : 0x4b4f5451;
		b->version = PTO_KBLOB_VERSION;
		b->size = sf_pct(w, 80) ? 1 + sf_rand(w, SF_BLOB_LEN - 64) :
					  pto_rng_next(w->r) >> sf_rand(w, 64);
		b->uid = pto_rng_next(w->r);
		b->func_id = k->func_id;
		b->core_type = k->core_type;
		k->blob_addr = w->blob_dev +
			       (sf_pct(w, 90) ? 0 : sf_rand(w, SF_BLOB_LEN + 128));
	} else {
		k->blob_addr = pto_rng_next(w->r) >> sf_rand(w, 64);
	}
	pto_fz_begin(w->slot, SF_KREG, (uint64_t)k->func_id,
		     (uint64_t)k->core_type, k->blob_addr, 0);
	ret = sf_send(c->s, &m, sizeof(m), NULL, 0);
	if (!ret && c->reads)
		sf_read(w, c, 4, 0, NULL);
	return ret;
}

/* A request without arguments (PING, DOORBELL) on any connection. */
static int sf_request(struct sf_w *w, uint32_t type)
{
	struct pto_msg m;
	struct sf_conn *c = sf_pick(w, 1);
	int ret;

	if (!c)
		return SF_SKIP;
	memset(&m, 0, offsetof(struct pto_msg, text) + 1);
	m.type = type;
	ret = sf_send(c->s, &m, offsetof(struct pto_msg, text) + 1, NULL, 0);
	if (!ret && c->reads)
		sf_read(w, c, 4, 0, NULL);
	return ret;
}

static int sf_ping(struct sf_w *w)
{
	return sf_request(w, PTO_MSG_PING);
}

static int sf_doorbell(struct sf_w *w)
{
	return sf_request(w, PTO_MSG_DOORBELL);
}

/*
 * One stream record at @rec (room: @room bytes, a multiple of
 * PTO_REC_ALIGN); now and then one of a bad length.
 */
static uint32_t sf_record(struct sf_w *w, struct sf_stream *s, uint8_t *rec,
			  uint32_t room)
{
	static const uint32_t types[] = {
		PTO_REC_GRAPH_BEGIN, PTO_REC_GRAPH_BEGIN, PTO_REC_SCOPE_BEGIN,
		PTO_REC_SCOPE_END, PTO_REC_SUBMIT, PTO_REC_SUBMIT,
		PTO_REC_SUBMIT, PTO_REC_GRAPH_END, PTO_REC_GRAPH_END,
		PTO_REC_KCOST, PTO_REC_CLUSTER_ALLOC, PTO_REC_CLUSTER_FREE,
		PTO_REC_PAD, 0, 77,
	};
	struct pto_rec *r = (struct pto_rec *)rec;
	uint32_t len = sizeof(*r);

	r->type = types[sf_rand(w, 15)];
	r->tag = pto_rng_next(w->r);
	switch (r->type) {
	case PTO_REC_GRAPH_BEGIN: {
		struct pto_rec_graph *g = (void *)rec;

		len = sizeof(*g);
		g->flags = (uint32_t)sf_rand(w, 4);
		g->total_tasks = (uint32_t)sf_rand(w, 64);
		break;
	}
	case PTO_REC_SUBMIT: {
		struct pto_rec_submit *sm = (void *)rec;
		int32_t i, n = (int32_t)sf_rand(w, 6) - (sf_pct(w, 5) ? 3 : 0);

		if (sf_pct(w, 5))
			n = 100;
		len = PTO_REC_LEN(sizeof(*sm) +
				  (uint32_t)(n > 0 ? n : 0) * sizeof(sm->p[0]));
		if (len > room)
			return 0;
		sf_fill(w, sm, len);
		sm->h.type = PTO_REC_SUBMIT;
		sm->kernel_id = (int32_t)sf_rand(w, 10) - 1;
		sm->worker_type = (int32_t)sf_rand(w, 4) - 1;
		sm->nparams = n;
		for (i = 0; i < n; i++) {
			struct pto_rec_param *p = &sm->p[i];

			p->type = (int32_t)sf_rand(w, 5) - 1;
			if (sf_pct(w, 50)) {
				p->tensor.addr = s->dev + sf_rand(w, s->len);
				p->tensor.size = sf_rand(w, s->len);
			}
		}
		break;
	}
	case PTO_REC_KCOST: {
		struct pto_rec_kcost *k = (void *)rec;

		len = sizeof(*k);
		k->kernel_id = (int32_t)sf_rand(w, 300) - 20;
		k->est_ns = pto_rng_next(w->r);
		break;
	}
	case PTO_REC_CLUSTER_ALLOC:
	case PTO_REC_CLUSTER_FREE: {
		struct pto_rec_cluster *cl = (void *)rec;

		len = sizeof(*cl);
		cl->vid = (int32_t)sf_rand(w, 8) - 1;
		break;
	}
	case PTO_REC_PAD:
		len = PTO_REC_ALIGN * (1 + (uint32_t)sf_rand(w, 8));
		break;
	}
	if (sf_pct(w, 5)) {	/* a bad length */
		static const uint32_t bad[] = { 0, 8, 24, 17, 4112, 1u << 31 };

		len = bad[sf_rand(w, 6)];
	}
	r->len = len;
	return len < sizeof(*r) || len > room ? room + 1 : len;
}

/* The longest record sf_record() builds: 100 parameters fit. */
#define SF_REC_MAX	32768
_Static_assert(sizeof(struct pto_rec_submit) +
	       100 * sizeof(struct pto_rec_param) <= SF_REC_MAX,
	       "SF_REC_MAX holds no SUBMIT of 100 parameters");

/*
 * Append records to the stream of a connection whose hello succeeded and
 * ring the doorbell (as libpto does: when ptod parked, or at random).
 */
static int sf_stream(struct sf_w *w)
{
	struct sf_conn *c = sf_pick(w, 1);
	struct pto_stream_hdr *h;
	struct sf_stream *s;
	uint32_t size, off, n, i, len;
	uint64_t head, tail;
	int ret = 0;

	if (!c || !c->hello || c->stream < 0)
		return SF_SKIP;
	s = &w->s[c->stream];
	h = (struct pto_stream_hdr *)s->p;
	size = s->data_size;
	head = atomic_load(&h->head);
	tail = atomic_load(&h->tail);
	n = 1 + (uint32_t)sf_rand(w, 8);
	pto_fz_begin(w->slot, SF_STREAM, head, tail, n, 0);
	for (i = 0; i < n; i++) {
		uint8_t *data = s->p + PTO_STREAM_HDR_SIZE;
		_Alignas(PTO_REC_ALIGN) uint8_t rec[SF_REC_MAX];
		uint32_t room;

		if (head - tail > size)
			break;		/* ptod consumed garbage: the ring is ours */
		off = (uint32_t)(head & (size - 1));
		room = size - off;
		if (room > size - (uint32_t)(head - tail))
			room = size - (uint32_t)(head - tail);
		room &= ~(PTO_REC_ALIGN - 1);
		if (room < 64)
			break;
		/*
		 * built in an aligned copy of the ring's bytes (the head may
		 * be anywhere), then copied in: the structs are read as such
		 */
		if (room > SF_REC_MAX)
			room = SF_REC_MAX;
		memcpy(rec, data + off, room);
		len = sf_record(w, s, rec, room);
		if (len && len <= room)
			memcpy(data + off, rec, len);
		if (!len || len > room) {
			if (len > room && sf_pct(w, 20))
				head += room + 8;	/* a head past the ring */
			break;
		}
		head += len;
		__atomic_fetch_add(&w->st->records, 1, __ATOMIC_RELAXED);
	}
	atomic_store_explicit(&h->head, head, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_exchange(&h->reader_parked, 0) || sf_pct(w, 20))
		ret = sf_request(w, PTO_MSG_DOORBELL);
	if (c->reads && c->s >= 0)
		sf_read(w, c, 8, 0, NULL);
	return ret == SF_SKIP ? 0 : ret;
}

static int sf_recv(struct sf_w *w)
{
	struct sf_conn *c = sf_pick(w, -1);

	if (!c || !c->reads)
		return SF_SKIP;
	return sf_read(w, c, 16, (int)sf_rand(w, 3), NULL) < 0 ? -EIO : 0;
}

/*
 * Requests on a connection that never reads the replies, until its
 * socket is full (mostly); the connection stays open. Mostly messages of
 * a few bytes, each of which gets a reply of some 300 ("short
 * message"): more than ptod's socket can hold.
 */
static int sf_probe(struct sf_w *w);

/* Receive memory of socket @s: what ptod sent and we did not read. */
static int sf_queued(int s)
{
	uint32_t mi[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mi);

	if (getsockopt(s, SOL_SOCKET, SO_MEMINFO, mi, &len))
		return -errno;
	return (int)mi[SK_MEMINFO_RMEM_ALLOC];
}

static int sf_flood(struct sf_w *w)
{
	struct sf_conn *c = sf_pick(w, -1);
	struct pto_msg m;
	unsigned int i, n = sf_pct(w, 40) ? 8000 : 20 + (unsigned int)sf_rand(w, 200);
	size_t len = sf_pct(w, 80) ? 1 + sf_rand(w, 8) :
				     offsetof(struct pto_msg, text) + 1;
	struct pollfd pfd = { .events = POLLRDHUP };
	int ret = 0, queued = 0, prev;

	if (!c)
		return SF_SKIP;
	c->reads = false;
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_PING;
	pto_fz_begin(w->slot, SF_FLOOD, n, 0, 0, 0);
	for (i = 0; i < n && !ret; i++)
		ret = sf_send(c->s, &m, len, NULL, 0);
	if (ret && ret != -EAGAIN)
		return ret;
	if (!ret || sf_pct(w, 40))
		return 0;
	/*
	 * Our socket is full: ptod has more to answer than its socket can
	 * hold. Once it has answered what it could (what we have queued
	 * stops growing), others must still be served, and ptod must let this
	 * connection go (ptod_send(): a client whose output queue is full,
	 * or takes none of it for 2 s, is dropped) rather than keep it.
	 */
	pto_fz_hold(w->slot, true);
	for (i = 0, prev = -1; i < 100; i++) {
		queued = sf_queued(c->s);
		if (queued < 0 || (queued && queued == prev))
			break;
		prev = queued;
		usleep(50000);
	}
	ret = sf_probe(w);
	pto_fz_begin(w->slot, SF_FLOOD, n, (uint64_t)queued, 1, 0);
	pfd.fd = c->s;
	if (!ret && queued > 0 && (poll(&pfd, 1, SF_HANGUP_MS) <= 0 ||
		     !(pfd.revents & (POLLHUP | POLLRDHUP)))) {
		SF_FAIL(w, "ptod kept a connection that reads none of its replies (%d bytes of them queued) for %d ms",
			queued, SF_HANGUP_MS);
		ret = -ETIMEDOUT;
	}
	pto_fz_hold(w->slot, false);
	return ret;
}

/*
 * ptod still accepts a connection and answers SF_PROBE_PINGS pings in a
 * row in time.
 */
static int sf_probe(struct sf_w *w)
{
	struct sf_conn c = { .s = -1, .reads = true };
	int64_t t0 = pto_fz_now_ns(), end = t0 + SF_PROBE_MS * 1000000LL, dt, prev;
	struct pto_msg m;
	int st = 1, ret = 0, i = 0;

	c.s = sf_dial(w, SOCK_SEQPACKET);
	if (c.s < 0)
		return c.s == -EAGAIN ? 0 : c.s;
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_PING;
	if (w->refused) {
		/*
		 * The user-mode device: one clear refusal, then hung up on;
		 * or a limit's, met first (connections, or descriptors the
		 * user passed that ptod is still closing)
		 */
		ret = sf_send(c.s, &m, offsetof(struct pto_msg, text) + 1,
			      NULL, 0);
		if (!ret && (sf_read(w, &c, 1, SF_PROBE_MS, &st) != 1 ||
			     (st != -EACCES && st != -EUSERS &&
			      st != -EMFILE))) {
			SF_FAIL(w, "ptod did not refuse uid %u (status %d)",
				(unsigned)getuid(), st);
			ret = -EPROTO;
		}
		i = SF_PROBE_PINGS;
	}
	for (; i < SF_PROBE_PINGS && !ret; i++) {
		int left = (int)((end - pto_fz_now_ns()) / 1000000);

		ret = sf_send(c.s, &m, offsetof(struct pto_msg, text) + 1,
			      NULL, 0);
		if (!ret && (left <= 0 || sf_read(w, &c, 1, left, &st) != 1)) {
			SF_FAIL(w, "ptod answered %d of %d pings within %d ms",
				i, SF_PROBE_PINGS, SF_PROBE_MS);
			ret = -ETIMEDOUT;
		} else if (!ret && !i && (st == -EUSERS || st == -EMFILE) &&
			   left > SF_PROBE_RETRY_MS) {
			/* refused at a connection limit: again, a bit later */
			close(c.s);
			__atomic_fetch_add(&w->st->probe_retries, 1,
					   __ATOMIC_RELAXED);
			usleep(SF_PROBE_RETRY_MS * 1000);
			c = (struct sf_conn){ .s = -1, .reads = true };
			c.s = sf_dial(w, SOCK_SEQPACKET);
			if (c.s < 0)
				return c.s == -EAGAIN ? 0 : c.s;
			i = -1;
		} else if (!ret && st != -EPROTO) {
			SF_FAIL(w, "a ping before hello got status %d", st);
			ret = -EPROTO;
		}
	}
	dt = pto_fz_now_ns() - t0;
	prev = __atomic_load_n(&w->st->probe_max_ns, __ATOMIC_RELAXED);
	while (dt > prev &&
	       !__atomic_compare_exchange_n(&w->st->probe_max_ns, &prev, dt,
					    false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	__atomic_fetch_add(&w->st->probes, 1, __ATOMIC_RELAXED);
	if (c.s >= 0)
		close(c.s);
	return ret;
}

typedef int (*sf_op_fn)(struct sf_w *w);

static const sf_op_fn sf_ops[SF_NR] = {
	[SF_CONNECT] = sf_connect, [SF_CLOSE] = sf_close,
	[SF_SHUTDOWN] = sf_shutdown, [SF_RANDOM] = sf_random,
	[SF_MSG] = sf_msg, [SF_HELLO] = sf_hello, [SF_KREG] = sf_kreg,
	[SF_PING] = sf_ping, [SF_DOORBELL] = sf_doorbell,
	[SF_STREAM] = sf_stream, [SF_RECV] = sf_recv, [SF_FLOOD] = sf_flood,
	[SF_PROBE] = sf_probe,
};

static void sf_worker(struct pto_fz *fz, struct pto_fz_slot *slot,
		      struct pto_rng *r, void *ctx)
{
	static struct sf_w w;
	uint64_t budget = 200 + pto_rng_below(r, 2000), done = 0;
	struct stat sst;
	unsigned int i, skips = 0;

	memset(&w, 0, sizeof(w));
	w.fz = fz;
	w.st = (struct sf_stats *)fz->priv;
	w.slot = slot;
	w.r = r;
	w.path = ctx;
	w.user = getenv("PTO_DEVICE") &&
		 !strcmp(getenv("PTO_DEVICE"), PTO_DEVICE_USER);
	w.udev = -1;
	for (i = 0; i < SF_CONNS; i++)
		w.c[i].s = -1;
	if (pto_rng_pct(r, 25)) {
		if (pto_drop_privileges()) {
			SF_FAIL(&w, "cannot become nobody");
			return;
		}
		/* ptod's user-mode device serves its user (the socket's
		 * owner) and root only */
		w.refused = w.user && !stat(w.path, &sst) &&
			    sst.st_uid != getuid();
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(0);
	}
	sf_setup_dev(&w);
	w.null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (w.null < 0 || pipe2(w.pipe, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, w.sp)) {
		SF_FAIL(&w, "setup: %s", strerror(errno));
		return;
	}
	while (done < budget && skips < 1000) {
		unsigned int op = pto_rng_weighted(r, sf_weights, SF_NR);
		int ret;

		pto_fz_begin(slot, op, 0, 0, 0, 0);
		ret = sf_ops[op](&w);
		if (ret == SF_SKIP) {
			skips++;
			continue;
		}
		skips = 0;
		done++;
		if (pto_fz_end(fz, slot, op, ret))
			break;
	}
	/* leave with connections open (most of the time) or close them */
	if (pto_rng_pct(r, 30))
		for (i = 0; i < SF_CONNS; i++)
			if (w.c[i].s >= 0)
				sf_drop(&w.c[i]);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : getenv("PTO_SOCKET");
	struct sf_stats *st;
	struct pto_fz *fz;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!path || !*path)
		path = PTO_DEFAULT_SOCKET;
	fz = pto_fz_new("PTO_SOCKFUZZ", sf_names, SF_NR, SF_OPS_DEFAULT,
			SF_PROCS_DEFAULT, SF_KILL_MS_DEFAULT);
	if (!fz) {
		perror("pto_sockfuzz: mmap");
		return 2;
	}
	st = (struct sf_stats *)fz->priv;
	printf("pto_sockfuzz: %s: seed %#llx, %llu operations, %u processes, a SIGKILL every %u ms on average\n",
	       path, (unsigned long long)fz->seed,
	       (unsigned long long)fz->target, fz->nr_procs, fz->kill_ms);
	ret = pto_fz_run(fz, sf_worker, (void *)path);
	if (ret) {
		printf("pto_sockfuzz: cannot run: %s\n", strerror(-ret));
		return 2;
	}
	pto_fz_report(fz, stdout);
	printf("# %llu hellos accepted, %llu stream records, %llu messages from ptod checked, %llu probes (slowest %.1f ms; %llu refused at a connection limit and dialed again)\n",
	       (unsigned long long)st->hellos_ok,
	       (unsigned long long)st->records,
	       (unsigned long long)st->replies,
	       (unsigned long long)st->probes, st->probe_max_ns / 1e6,
	       (unsigned long long)st->probe_retries);
	for (ret = 0; ret < (int)fz->nr_findings && ret < PTO_FZ_MAX_FINDINGS; ret++)
		printf("FINDING: %s\n", fz->finding[ret]);
	printf("pto_sockfuzz: %u findings; PTO_SOCKFUZZ_SEED=%#llx repeats the run\n",
	       fz->nr_findings, (unsigned long long)fz->seed);
	return fz->nr_findings ? 1 : 0;
}
