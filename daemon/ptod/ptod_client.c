// SPDX-License-Identifier: MIT
/*
 * ptod_client.c - what keeps one client from stalling ptod or taking the
 * device: non-blocking replies with a bounded output queue per client,
 * the socket's access control (file mode and group, SO_PEERCRED), the
 * connection limits, and the per-user GM quota ptod sets in pto.ko.
 *
 * See Documentation/runtime.rst ("Clients that misbehave").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pto-private/devinfo.h>
#include <pto-private/fdpass.h>
#include <pto-private/parse.h>

#include "ptod.h"

/* ---- Output queue --------------------------------------------------------------- */

/*
 * One message the socket did not take yet (client->out_head), with the
 * descriptors it carries (copies, closed once it is sent or dropped).
 */
struct ptod_out {
	struct ptod_out *next;
	size_t len;
	unsigned int nfds;
	int fds[PTO_FDPASS_MAX];
	unsigned char data[];
};

/* What a queued message costs against PTOD_OUT_MAX: itself and its node. */
static size_t out_cost(size_t len)
{
	return sizeof(struct ptod_out) + len;
}

static struct timeval ms_tv(int64_t ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	return tv;
}

/*
 * Called with send_lock held: the client is being dropped (its queue went
 * over its bound, it did not drain it in time, or a send failed). Its
 * socket is shut down, so that the main loop reads EOF and lets it go as
 * on a disconnect; nothing waits for it. Its line is rate-limited as a
 * client's (ptod_clog()): a client can connect, send before its hello and
 * hang up at once, thousands of times a second, and each time a reply's
 * send fails here.
 */
static void out_drop(struct client *c, const char *why)
{
	if (atomic_exchange(&c->out_dead, true))
		return;
	ptod_clog(c, PTOD_LOG_WARN, "client %u (pid %d uid %d): %s: disconnected",
		 c->id, (int)c->pid, (int)c->uid, why);
	shutdown(c->sock, SHUT_RDWR);
}

static void out_free(struct ptod_out *o)
{
	while (o->nfds)
		close(o->fds[--o->nfds]);
	free(o);
}

/*
 * Called with send_lock held: append @len bytes of @m and copies of its
 * @nfds descriptors @fds; false if the queue would go over @max bytes or
 * PTOD_OUT_FDS descriptors (or out of memory or descriptors).
 */
static bool out_push(struct client *c, const void *m, size_t len,
		     const int *fds, unsigned int nfds, size_t max)
{
	struct ptod_out *o;

	if (c->out_bytes + out_cost(len) > max ||
	    nfds > PTO_FDPASS_MAX || c->out_nfds + nfds > PTOD_OUT_FDS)
		return false;
	o = malloc(out_cost(len));
	if (!o)
		return false;
	o->next = NULL;
	o->len = len;
	for (o->nfds = 0; o->nfds < nfds; o->nfds++) {
		o->fds[o->nfds] = fcntl(fds[o->nfds], F_DUPFD_CLOEXEC, 0);
		if (o->fds[o->nfds] < 0) {
			out_free(o);
			return false;
		}
	}
	memcpy(o->data, m, len);
	*c->out_tail = o;
	c->out_tail = &o->next;
	c->out_bytes += out_cost(len);
	c->out_nfds += o->nfds;
	return true;
}

/* Send @o on @s without waiting, its descriptors too. */
static ssize_t out_send(int s, struct ptod_out *o)
{
	struct iovec iov = { o->data, o->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union pto_fd_cmsg cm;

	if (o->nfds)
		pto_msg_attach_fds(&mh, &cm, o->fds, o->nfds);
	return sendmsg(s, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * Called with send_lock held: send what the socket takes. 0 (the queue
 * may still hold messages), or -errno if a send failed.
 */
static int out_flush(struct client *c)
{
	struct ptod_out *o;
	ssize_t n;

	while ((o = c->out_head)) {
		n = out_send(c->sock, o);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n != (ssize_t)o->len)
			return n < 0 ? -errno : -EIO;
		c->out_head = o->next;
		if (!c->out_head)
			c->out_tail = &c->out_head;
		c->out_bytes -= out_cost(o->len);
		c->out_nfds -= o->nfds;
		c->out_since = pto_mono_ns();	/* progress */
		out_free(o);
	}
	return 0;
}

/* Wait for the socket to take more, at most until the drain deadline. */
static void out_arm(struct client *c, int64_t left_ms)
{
	struct timeval tv = ms_tv(left_ms > 0 ? left_ms : 0);

	if (event_add(c->ev_write, &tv))
		ptod_log(PTOD_LOG_ERR, "libevent: cannot watch client %u", c->id);
}

/*
 * Called with send_lock held: queue @len bytes of @m with @nfds
 * descriptors @fds within @max bytes and send what the socket takes.
 * *@arm: the main loop must watch for room. 0, -ENOBUFS, or -errno of a
 * failed send.
 */
static int out_enqueue(struct client *c, struct pto_msg *m, size_t len,
		       const int *fds, unsigned int nfds, size_t max,
		       bool *arm)
{
	int ret = 0;

	if (c->out_head)
		return out_push(c, m, len, fds, nfds, max) ? 0 : -ENOBUFS;
	/* nothing queued: straight to the socket if it takes it */
	if (!out_push(c, m, len, fds, nfds, max))
		return -ENOBUFS;
	c->out_since = pto_mono_ns();
	ret = out_flush(c);
	*arm = !ret && c->out_head;
	return ret;
}

/*
 * Send @len bytes of @m and its @nfds descriptors @fds (any thread; the
 * caller keeps its own) without ever waiting: what the socket does not
 * take is queued, in order, and sent by the main loop when the socket
 * has room (on_client_write). A client whose queue goes over -Q bytes, or
 * that takes nothing of it for -T ms, is dropped (out_drop()). With
 * @best_effort, a message that would take the queue over half of -Q is
 * not sent (-ENOBUFS) and the client stays. 0, or -ECONNRESET once the
 * client is being dropped.
 */
static int send_msg(struct client *c, struct pto_msg *m, size_t len,
		    const int *fds, unsigned int nfds, bool best_effort)
{
	size_t max = best_effort ? c->d->out_max / 2 : c->d->out_max;
	bool arm = false;
	int ret;

	pthread_mutex_lock(&c->send_lock);
	if (atomic_load(&c->out_dead)) {
		pthread_mutex_unlock(&c->send_lock);
		return -ECONNRESET;
	}
	ret = out_enqueue(c, m, len, fds, nfds, max, &arm);
	if (ret == -ENOBUFS && best_effort) {
		pthread_mutex_unlock(&c->send_lock);
		return ret;
	}
	if (ret == -ENOBUFS)
		out_drop(c, "it leaves its replies unread (output queue full)");
	else if (ret)
		out_drop(c, strerror(-ret));
	if (ret)
		ret = -ECONNRESET;
	pthread_mutex_unlock(&c->send_lock);
	if (arm)
		out_arm(c, c->d->out_ms);
	return ret;
}

/* The length of @m with its text. */
static size_t text_len(const struct pto_msg *m)
{
	return offsetof(struct pto_msg, text) + strlen(m->text) + 1;
}

int ptod_send_fds(struct client *c, struct pto_msg *m, const int *fds,
		  unsigned int nfds)
{
	return send_msg(c, m, text_len(m), fds, nfds, false);
}

int ptod_send(struct client *c, struct pto_msg *m)
{
	return ptod_send_fds(c, m, NULL, 0);
}

int ptod_send_len(struct client *c, struct pto_msg *m, size_t len)
{
	return send_msg(c, m, len, NULL, 0, false);
}

int ptod_send_try(struct client *c, struct pto_msg *m, size_t len)
{
	return send_msg(c, m, len, NULL, 0, true);
}

/*
 * Main loop: the socket has room, or the drain deadline passed (a trace
 * subscriber is not dropped for that: what it does not read is bounded
 * and counted as lost).
 */
static void on_client_write(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	int64_t left = 0;
	bool arm = false;
	int ret;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&c->send_lock);
	if (!atomic_load(&c->out_dead) && c->out_head) {
		ret = out_flush(c);
		left = c->d->out_ms - (pto_mono_ns() - c->out_since) / 1000000;
		if (ret) {
			out_drop(c, strerror(-ret));
		} else if (c->out_head && left <= 0 && c->tracing) {
			/*
			 * A trace subscriber that stalls loses blocks
			 * (ptod_send_try() keeps its queue within half of
			 * -Q), not its connection: it learns what it lost.
			 */
			left = c->d->out_ms;
			arm = true;
		} else if (c->out_head && left <= 0) {
			out_drop(c, "it took none of its replies in time");
		} else {
			arm = c->out_head;
		}
	}
	pthread_mutex_unlock(&c->send_lock);
	if (arm)
		out_arm(c, left);
}

/* 0, or -ENOMEM: the output queue of a new client. */
int ptod_client_init(struct client *c)
{
	c->out_tail = &c->out_head;
	atomic_init(&c->out_dead, false);
	c->ev_write = event_new(c->d->base, c->sock, EV_WRITE, on_client_write,
				c);
	return c->ev_write ? 0 : -ENOMEM;
}

/* Once the runner is joined: the output queue goes. */
void ptod_client_fini(struct client *c)
{
	struct ptod_out *o;

	if (c->ev_write)
		event_free(c->ev_write);
	c->ev_write = NULL;
	while ((o = c->out_head)) {
		c->out_head = o->next;
		out_free(o);
	}
	c->out_tail = &c->out_head;
	c->out_bytes = 0;
	c->out_nfds = 0;
}

/* ---- Who may connect ------------------------------------------------------------ */

/* @gid is among the peer's groups (at connect) or the user's (/etc/group). */
static bool peer_in_group(int s, const struct ucred *cred, gid_t gid)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	struct passwd pw, *pwp = NULL;
	char buf[4096];
	int n = 256, i;

	if (cred->gid == gid)
		return true;
	/* the process's own supplementary groups, as the device node sees them */
	if (!getsockopt(s, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		for (i = 0; i < (int)(len / sizeof(gid_t)); i++)
			if (groups[i] == gid)
				return true;
	/* the user's groups as the administrator configured them */
	if (getpwuid_r(cred->uid, &pw, buf, sizeof(buf), &pwp) || !pwp)
		return false;
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
		return false;
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* The peer may use ptod: root, a -u uid, or a member of the socket's group. */
static bool peer_allowed(const struct ptod *d, int s, const struct ucred *cred)
{
	uint32_t i;

	if (cred->uid == 0 || cred->uid == geteuid())
		return true;
	for (i = 0; i < d->nr_allow; i++)
		if (d->allow_uid[i] == cred->uid)
			return true;
	return d->sock_gid != (gid_t)-1 && peer_in_group(s, cred, d->sock_gid);
}

/* Connections of user @uid, and of everyone in *@all. */
static uint32_t conns_of(const struct ptod *d, uid_t uid, uint32_t *all)
{
	const struct client *c;
	uint32_t n = 0;

	*all = 0;
	for (c = d->clients; c; c = c->next) {
		(*all)++;
		n += c->uid == uid;
	}
	return n;
}

/*
 * Refuse a connection: one REPLY with @err and @why (best effort), a log
 * line; the caller closes @s with ptod_sock_close(), which reads what
 * came already (a close() with unread messages would reset the
 * connection, and the peer would get ECONNRESET instead of the reply).
 */
static void refuse(struct ptod *d, int s, const struct ucred *cred, int err,
		   const char *why)
{
	struct pto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_REPLY;
	m.status = err;
	snprintf(m.text, sizeof(m.text), "ptod refused the connection: %s",
		 why);
	if (send(s, &m, offsetof(struct pto_msg, text) + strlen(m.text) + 1,
		 MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		(void)0;	/* it hung up already: the log says why */
	ptod_conn_log(d, PTOD_LOG_WARN, "connection of pid %d uid %d refused: %s",
		      (int)cred->pid, (int)cred->uid, why);
}

/*
 * A new connection from @cred on @s: 0 if it may stay, else -errno after
 * refusing it (the caller closes @s).
 */
int ptod_accept_check(struct ptod *d, int s, const struct ucred *cred)
{
	uint32_t mine, all, closing;
	char why[256];

	if (!peer_allowed(d, s, cred)) {
		snprintf(why, sizeof(why),
			 "uid %d is not allowed (not root, not in the socket's group%s%s)",
			 (int)cred->uid, d->sock_group ? " " : "",
			 d->sock_group ? d->sock_group : "");
		refuse(d, s, cred, -EACCES, why);
		return -EACCES;
	}
	closing = ptod_closing(d, cred->uid);
	if (closing >= PTOD_CLOSING_MAX) {
		snprintf(why, sizeof(why),
			 "%u descriptors uid %d passed are still closing",
			 closing, (int)cred->uid);
		refuse(d, s, cred, -EUSERS, why);
		return -EUSERS;
	}
	mine = conns_of(d, cred->uid, &all);
	if (d->max_conn && all >= d->max_conn) {
		snprintf(why, sizeof(why), "%u connections, the limit (-C)", all);
		refuse(d, s, cred, -EMFILE, why);
		return -EMFILE;
	}
	if (cred->uid && d->max_conn_uid && mine >= d->max_conn_uid) {
		snprintf(why, sizeof(why),
			 "uid %d has %u connections, the limit per user (-c)",
			 (int)cred->uid, mine);
		refuse(d, s, cred, -EUSERS, why);
		return -EUSERS;
	}
	return 0;
}

/* ---- The socket's file ---------------------------------------------------------- */

/*
 * The listening socket @s, bound with a umask that leaves it root's alone,
 * gets its group and mode before listen(): nobody can connect before it
 * has them. Neither follows a symbolic link: what is at the path now is
 * the socket unless someone who may write the directory swapped it, and
 * ptod_socket_dir_check() allows no such someone but root. 0 or -errno.
 */
int ptod_socket_perms(struct ptod *d)
{
	if (d->sock_gid != (gid_t)-1 && lchown(d->sock_path, (uid_t)-1,
					       d->sock_gid)) {
		ptod_log(PTOD_LOG_ERR, "chown %s to group %s: %m", d->sock_path,
			 d->sock_group);
		return -errno;
	}
	if (fchmodat(AT_FDCWD, d->sock_path, d->sock_mode,
		     AT_SYMLINK_NOFOLLOW)) {
		ptod_log(PTOD_LOG_ERR, "chmod %s %o: %m", d->sock_path,
			 (unsigned int)d->sock_mode);
		return -errno;
	}
	ptod_log(PTOD_LOG_INFO, "%s: mode %04o, group %s", d->sock_path,
		 (unsigned int)d->sock_mode,
		 d->sock_group ? d->sock_group : "root");
	return 0;
}

/*
 * May others than root and ptod's user change what @path names? Every
 * directory on the way must be root's or ptod's and writable by no one
 * else (sticky ones excepted: in those others may not rename what is
 * not theirs); a symbolic link on the way must be root's or ptod's (its
 * directory, checked before it, keeps others from swapping it) and its
 * target passes the same test (ptod_socket_dir_check() walks the
 * resolved path too). 0, or -errno with @why and the path in question
 * in @bad (PATH_MAX bytes).
 */
static int path_walk_check(const char *path, char *bad, const char **why)
{
	size_t i, len = strlen(path);
	struct stat st;

	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	for (i = 1; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		memcpy(bad, path, i);
		bad[i] = 0;
		if (lstat(bad, &st)) {
			*why = "cannot be looked at";
			return -errno;
		}
		if (st.st_uid && st.st_uid != geteuid()) {
			*why = "is not root's nor ptod's user's";
			return -EPERM;
		}
		if (S_ISLNK(st.st_mode))
			continue;
		if (!S_ISDIR(st.st_mode)) {
			*why = "is not a directory";
			return -ENOTDIR;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
		    !(st.st_mode & S_ISVTX)) {
			*why = "is writable by others";
			return -EPERM;
		}
	}
	return 0;
}

/*
 * The socket's directory @dir: it and every directory above it root's or
 * ptod's own user's and writable by no one else unless sticky, links on
 * the way root's or ptod's. Anyone else who could change what the path
 * names could swap the socket for a link (that the socket's mode then
 * goes to) or for a socket of theirs, to which root's clients would send
 * their device files. In a sticky directory others cannot rename or
 * remove ptod's socket, but they can take its name while ptod is not
 * running: that gets a warning (a quick test's /tmp/ptod.sock), not a
 * refusal. 0, or -errno said.
 */
int ptod_socket_dir_check(const char *dir)
{
	char real[PATH_MAX], bad[PATH_MAX];
	const char *why = "cannot be resolved";
	struct stat st;
	int ret = 0;

	snprintf(bad, sizeof(bad), "%s", dir);
	if (!realpath(dir, real))
		ret = -errno;
	if (!ret && dir[0] == '/')
		ret = path_walk_check(dir, bad, &why);
	/* the resolved path, where links or a relative path led elsewhere */
	if (!ret && strcmp(dir, real))
		ret = path_walk_check(real, bad, &why);
	if (!ret && stat(real, &st)) {
		ret = -errno;
		why = "cannot be looked at";
	}
	if (!ret && (st.st_mode & (S_IWGRP | S_IWOTH))) {
		/* walked above: sticky, or it would have been refused */
		ptod_log(PTOD_LOG_WARN,
			 "socket directory %s is writable by others (sticky): none can take ptod's socket while it runs, but any can take its name while ptod is not running, and root's clients would then send their device files to them; use a directory writable by no one else (the default's is)",
			 dir);
	}
	if (ret)
		ptod_log(PTOD_LOG_ERR,
			 "socket directory %s: %s %s (%s): the socket's directory and those above it must be root's or ptod's user's and writable by no one else",
			 dir, bad, why, strerror(-ret));
	return ret;
}

/* The default group (pto, if it exists) and mode; a -g group's gid. */
static int resolve_group(struct ptod *d)
{
	struct group gr, *grp = NULL;
	char buf[4096];
	uint64_t gid;

	if (!d->sock_group) {
		if (getgrnam_r(PTOD_DEFAULT_GROUP, &gr, buf, sizeof(buf), &grp) ||
		    !grp) {
			if (!d->sock_mode_set)
				d->sock_mode = 0600;
			return 0;
		}
		d->sock_group = PTOD_DEFAULT_GROUP;
	} else if (getgrnam_r(d->sock_group, &gr, buf, sizeof(buf), &grp) ||
		   !grp) {
		if (pto_parse_u64_all(d->sock_group, 10, (gid_t)-2, &gid)) {
			fprintf(stderr, "ptod: -g %s: no such group\n",
				d->sock_group);
			return -EINVAL;
		}
		d->sock_gid = (gid_t)gid;
		return 0;
	}
	d->sock_gid = grp->gr_gid;
	return 0;
}

/* ---- Options -------------------------------------------------------------------- */

void ptod_guard_defaults(struct ptod *d)
{
	d->sock_mode = 0660;
	d->sock_gid = (gid_t)-1;
	d->max_conn_uid = PTOD_MAX_CONN_UID;
	d->max_conn = PTOD_MAX_CONN;
	d->max_runs_uid = PTOD_MAX_RUNS_UID;
	d->max_clusters_uid = PTOD_CLUSTERS_HALF;
	d->out_max = PTOD_OUT_MAX;
	d->out_ms = PTOD_OUT_MS;
	d->drain_grace_ms = PTOD_DRAIN_GRACE_MS;
	d->sbx_data = (uint64_t)PTOD_SBX_DATA_MIB << 20;
	d->sbx_tasks = PTOD_SBX_TASKS;
}

/*
 * Add the per-user rule -@opt @arg, UID=N (both decimal, UID never
 * (uid_t)-1, N at most @max), to @t. 0; -EINVAL for a bad value; -EEXIST
 * (the user has one already) or -E2BIG (@t is full), each said on stderr
 * with @what ("a quota") users have.
 */
int ptod_rule_add(struct ptod_uid_rules *t, int opt, const char *arg,
		  uint64_t max, const char *what)
{
	const char *end;
	uint64_t u, v;
	uint32_t i;

	if (pto_parse_u64(arg, 10, UINT32_MAX - 1, &u, &end) ||
	    *end != '=' || pto_parse_u64_all(end + 1, 10, max, &v))
		return -EINVAL;
	for (i = 0; i < t->nr; i++) {
		if (t->rule[i].uid == (uid_t)u) {
			fprintf(stderr, "ptod: -%c %s: user %" PRIu64 " has %s already\n",
				opt, arg, u, what);
			return -EEXIST;
		}
	}
	if (t->nr == PTOD_MAX_UID_RULES) {
		fprintf(stderr, "ptod: -%c %s: at most %d users have %s of their own\n",
			opt, arg, PTOD_MAX_UID_RULES, what);
		return -E2BIG;
	}
	t->rule[t->nr].uid = (uid_t)u;
	t->rule[t->nr].v = v;
	t->nr++;
	return 0;
}

/*
 * One of the options of this file (-m -g -u -c -C -D -L -Q -T -q -G -M -P): 0,
 * -EINVAL for a bad value, -EEXIST or -E2BIG for a rule or user too many
 * (said here, to stderr), or -ENOENT if @opt is not one of them.
 */
int ptod_guard_option(struct ptod *d, int opt, const char *arg)
{
	uint64_t v;

	if (!strchr("mguCcDLQTqGMP", opt))
		return -ENOENT;
	if (opt == 'g') {
		d->sock_group = arg;
		return 0;
	}
	if (opt == 'q' && strchr(arg, '='))
		return ptod_rule_add(&d->quota_rules, 'q', arg, 1ULL << 40,
				     "a quota");
	/*
	 * -m in octal, every other number in decimal (a UID never
	 * (uid_t)-1); a number too big is a bad value: -EINVAL, not -ERANGE
	 */
	if (pto_parse_u64_all(arg, opt == 'm' ? 8 : 10,
			      opt == 'm' ? 0777 :
			      opt == 'u' ? UINT32_MAX - 1 :
			      opt == 'q' ? (1ULL << 40) :
			      opt == 'L' ? PTOD_CLUSTERS_MAX :
			      opt == 'M' ? PTOD_SBX_DATA_MAX_MIB :
			      opt == 'P' ? PTOD_SBX_TASKS_MAX : UINT32_MAX, &v))
		return -EINVAL;
	switch (opt) {
	case 'm': d->sock_mode = (mode_t)v; d->sock_mode_set = true; break;
	case 'u':
		if (d->nr_allow == PTOD_MAX_ALLOW) {
			fprintf(stderr, "ptod: -u %s: at most %d users may be named\n",
				arg, PTOD_MAX_ALLOW);
			return -E2BIG;
		}
		d->allow_uid[d->nr_allow++] = (uid_t)v;
		break;
	case 'c': d->max_conn_uid = (uint32_t)v; break;
	case 'C': d->max_conn = (uint32_t)v; break;
	case 'D': d->max_runs_uid = (uint32_t)v; break;
	case 'L': d->max_clusters_uid = (uint32_t)v; break;
	case 'Q':
		if (v < out_cost(sizeof(struct pto_msg)))
			return -EINVAL;
		d->out_max = v;
		break;
	case 'T':
		if (!v)
			return -EINVAL;
		d->out_ms = (uint32_t)v;
		break;
	case 'q': d->gm_quota = v << 20; break;
	case 'G': d->drain_grace_ms = (uint32_t)v; break;
	case 'M': d->sbx_data = v << 20; break;
	case 'P': d->sbx_tasks = (uint32_t)v; break;
	default: return -ENOENT;
	}
	return 0;
}

/* After the options: the socket's group. 0 or -EINVAL. */
int ptod_guard_setup(struct ptod *d)
{
	return resolve_group(d);
}

/* ---- GM quota ------------------------------------------------------------------- */

static int gm_quota_set(struct ptod *d, uint32_t flags, uid_t uid,
			uint64_t bytes)
{
	struct pto_gm_quota q = { .size = sizeof(q), .flags = flags,
				  .uid = uid, .bytes = bytes };

	return ioctl(d->dev_fd, PTO_IOC_GM_QUOTA, &q) ? -errno : 0;
}

/*
 * Why a runtime of @bytes charged to user @uid was refused with -EDQUOT
 * (ptod allocates it with its own file, charged to the user under -q),
 * into @why.
 */
void ptod_gm_quota_why(struct ptod *d, uid_t uid, uint64_t bytes, char *why,
		       size_t whylen)
{
	struct pto_gm_quota q = { .size = sizeof(q),
				  .flags = PTO_GM_QUOTA_UID, .uid = uid };

	if (ioctl(d->dev_fd, PTO_IOC_GM_QUOTA, &q)) {
		snprintf(why, whylen, "GM quota of user %u: no room for this client's runtime (%" PRIu64 " KiB)",
			 (unsigned int)uid, bytes >> 10);
		return;
	}
	snprintf(why, whylen,
		 "GM quota of user %u (%" PRIu64 " KiB): %" PRIu64 " KiB held by its buffers and its clients' runtimes leave no room for this client's runtime (%" PRIu64 " KiB)",
		 (unsigned int)uid, (uint64_t)q.bytes >> 10,
		 (uint64_t)q.used >> 10, bytes >> 10);
}

/* -q UID=MIB: the users' own quotas. 0 or -errno. */
static int gm_quota_rules(struct ptod *d)
{
	uint32_t i;
	int ret;

	for (i = 0; i < d->quota_rules.nr; i++) {
		uid_t uid = d->quota_rules.rule[i].uid;
		uint64_t mib = d->quota_rules.rule[i].v;

		ret = gm_quota_set(d, PTO_GM_QUOTA_SET | PTO_GM_QUOTA_UID,
				   uid, mib << 20);
		if (ret) {
			ptod_log(PTOD_LOG_ERR, "-q %u=...: cannot set the user's GM quota: %s",
				 (unsigned int)uid, strerror(-ret));
			return ret;
		}
		ptod_log(PTOD_LOG_INFO, "GM quota of user %u: %" PRIu64 " MiB%s",
			 (unsigned int)uid, mib, mib ? "" : " (no limit)");
	}
	return 0;
}

/*
 * -q MIB: every user may hold that much GM through its own buffers
 * (pto.ko enforces it at GM_ALLOC with -EDQUOT); root is not limited.
 * -q UID=MIB, after it: user UID's own quota instead. 0 or -errno.
 * Without -q there is none: pto.ko keeps the default quota of the AICPU
 * before (an earlier ptod's -q) until the next sets one, so it is set to
 * none (a module without GM quotas has none anyway).
 */
int ptod_gm_quota_setup(struct ptod *d)
{
	int ret;

	if (!d->gm_quota && !d->quota_rules.nr) {
		if (d->ops != &ptod_kdev_ops)
			return 0;
		ret = gm_quota_set(d, PTO_GM_QUOTA_SET, 0, 0);
		if (ret && ret != -ENOTTY) {
			ptod_log(PTOD_LOG_ERR, "cannot clear the GM quota: %s",
				 strerror(-ret));
			return ret;
		}
		return 0;
	}
	if (d->ops != &ptod_kdev_ops) {
		ptod_log(PTOD_LOG_ERR,
			 "-q: the %s device has no GM quota (it serves one user)",
			 d->ops->name);
		return -EOPNOTSUPP;
	}
	if (!pto_abi_aicpu_charges(d->info.abi_version)) {
		ptod_log(PTOD_LOG_ERR,
			 "-q: pto.ko ABI %u.%u cannot charge a client's runtime to its user (ABI 3.4 can)",
			 d->info.abi_version >> 16, d->info.abi_version & 0xffff);
		return -EOPNOTSUPP;
	}
	ret = gm_quota_set(d, PTO_GM_QUOTA_SET, 0, d->gm_quota);
	if (!ret && d->gm_quota)
		ret = gm_quota_set(d, PTO_GM_QUOTA_SET | PTO_GM_QUOTA_UID, 0, 0);
	if (ret) {
		ptod_log(PTOD_LOG_ERR, "-q: cannot set the GM quota: %s%s",
			 strerror(-ret), ret == -ENOTTY ?
			 " (pto.ko older than ABI 3.1)" : "");
		return ret;
	}
	if (d->gm_quota)
		ptod_log(PTOD_LOG_INFO, "GM quota: %" PRIu64 " MiB per user (root: none)",
			 d->gm_quota >> 20);
	return gm_quota_rules(d);
}
