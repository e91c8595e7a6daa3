// SPDX-License-Identifier: GPL-2.0
/*
 * pto_fusehello - a hello whose file lives on a FUSE mount that never
 * answers GETATTR must not stall ptod
 *
 * ptod identifies the file a client passes in HELLO on its main thread.
 * Asking the file system for its attributes there (fstat()) would wait
 * for a FUSE server as long as that server pleases, uninterruptibly once
 * the server has read the request: one client could freeze ptod for all.
 * This program mounts a FUSE file system of its own (the raw protocol of
 * linux/fuse.h on /dev/fuse; its server, a child process, answers INIT,
 * LOOKUP, OPEN and RELEASE, reads every GETATTR and FLUSH of the file and
 * answers none), opens the file, sends it to ptod in a hello and then
 * checks that ptod answers PINGS pings on another connection within
 * PING_MS. ptod refuses the file (not one of its device's) and closes
 * it, which sends a FLUSH: that must wait on ptod's closer thread, not
 * on its main thread.
 *
 *   pto_fusehello [SOCKET]     (default: $PTO_SOCKET, else ptod's)
 *
 * Exit status: 0 ptod refused the file and answered the pings; 1 it did
 * not; 2 it could not run;
 * KSFT_SKIP no FUSE here (no /dev/fuse, or no right to mount).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/fuse.h>

#include <pto-private/fdpass.h>
#include <pto-private/wire.h>

#include "kselftest.h"
#include "ptod_dial.h"

#define PINGS		5
#define PING_MS		3000
#define HELLO_MS	3000
#define FILE_NAME	"f"
#define FILE_NODE	2	/* FUSE_ROOT_ID is 1 */

/* One request or more: the kernel wants at least FUSE_MIN_READ_BUFFER. */
static uint64_t req_buf[(FUSE_MIN_READ_BUFFER + 4096) / 8];

static void reply(int fd, uint64_t unique, int error, const void *arg,
		  size_t len)
{
	struct fuse_out_header h = {
		.len = (uint32_t)(sizeof(h) + (error ? 0 : len)),
		.error = error,
		.unique = unique,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)arg, len } };

	/* an interrupted or aborted request's reply may be refused: fine */
	(void)writev(fd, iov, error || !len ? 1 : 2);
}

static void file_attr(struct fuse_attr *a, uint64_t ino, uint32_t mode)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = mode;
	a->nlink = 1;
	a->blksize = 4096;
}

/* The server: until its device is gone (unmounted, or the test ends). */
static void serve(int fd)
{
	for (;;) {
		struct fuse_in_header *in = (struct fuse_in_header *)req_buf;
		const void *arg = in + 1;
		ssize_t n = read(fd, req_buf, sizeof(req_buf));

		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;	/* ENOENT: a request interrupted */
		if (n < (ssize_t)sizeof(*in))
			_exit(0);
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *ii = arg;
			struct fuse_init_out o = {
				.major = FUSE_KERNEL_VERSION,
				.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
					 ii->minor : FUSE_KERNEL_MINOR_VERSION,
				.max_readahead = ii->max_readahead,
				.max_write = 4096,
			};

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out e = {
				.nodeid = FILE_NODE,
				.entry_valid = 3600,	/* no LOOKUP again */
				.attr_valid = 0,	/* every stat asks */
			};

			if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, FILE_NAME)) {
				reply(fd, in->unique, -ENOENT, NULL, 0);
				break;
			}
			file_attr(&e.attr, FILE_NODE, S_IFREG | 0644);
			reply(fd, in->unique, 0, &e, sizeof(e));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out a = { .attr_valid = 0 };

			if (in->nodeid == FILE_NODE) {
				printf("pto_fusehello: server: GETATTR of the file from pid %u, left unanswered\n",
				       in->pid);
				break;
			}
			file_attr(&a.attr, FUSE_ROOT_ID, S_IFDIR | 0755);
			reply(fd, in->unique, 0, &a, sizeof(a));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o = { .fh = 1 };

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_FLUSH:
			if (in->nodeid == FILE_NODE) {
				printf("pto_fusehello: server: FLUSH of the file from pid %u, left unanswered\n",
				       in->pid);
				break;
			}
			reply(fd, in->unique, -ENOSYS, NULL, 0);
			break;
		case FUSE_RELEASE:
			reply(fd, in->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;			/* no reply */
		default:
			reply(fd, in->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
}

struct mnt {
	char dir[64];
	int dev;
	pid_t server;
	bool mounted;
};

/* Mount @m, start its server: 0 or -errno. */
static int mnt_start(struct mnt *m)
{
	pid_t parent;
	char opts[160];

	m->dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (m->dev < 0)
		return -errno;
	snprintf(m->dir, sizeof(m->dir), "/tmp/pto-fusehello.XXXXXX");
	if (!mkdtemp(m->dir))
		return -errno;
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=%u,group_id=%u,allow_other",
		 m->dev, (unsigned int)getuid(), (unsigned int)getgid());
	if (mount("pto-fusehello", m->dir, "fuse", MS_NOSUID | MS_NODEV, opts))
		return -errno;
	m->mounted = true;
	parent = getpid();
	m->server = fork();
	if (m->server < 0)
		return -errno;
	if (!m->server) {
		/*
		 * Killed with us: a server left behind would hold the
		 * connection, and whatever waits on it, after we are gone.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		serve(m->dev);
	}
	return 0;
}

/*
 * Once the file is open: the mount leaves the tree (the open file keeps
 * it, and its server, in use), so no path of ours, a SIGKILL included,
 * leaves a mount or a directory behind.
 */
static void mnt_detach(struct mnt *m)
{
	if (m->mounted && !umount2(m->dir, MNT_DETACH))
		m->mounted = false;
	if (!m->mounted && m->dir[0] && !rmdir(m->dir))
		m->dir[0] = '\0';
}

/*
 * The server goes first, then our /dev/fuse descriptor, the connection's
 * last: closing it aborts the connection, and whatever waits on it gets
 * ENOTCONN.
 */
static void mnt_stop(struct mnt *m)
{
	if (m->server > 0) {
		kill(m->server, SIGKILL);
		waitpid(m->server, NULL, 0);
	}
	if (m->dev >= 0)
		close(m->dev);
	if (m->mounted)
		umount2(m->dir, MNT_DETACH);
	if (m->dir[0])
		rmdir(m->dir);
}

/* Send @m (with @fd if >= 0); its reply's status in *@st within @ms. */
static int request(int s, struct pto_msg *m, size_t len, int fd, int ms,
		   int *st)
{
	union pto_fd_cmsg_any cm;
	struct iovec iov = { m, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd pfd = { .fd = s, .events = POLLIN };
	ssize_t n;

	if (fd >= 0)
		pto_msg_attach_any(&mh, &cm, &fd, 1);
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		return -errno;
	if (poll(&pfd, 1, ms) <= 0)
		return -ETIMEDOUT;
	n = recv(s, m, sizeof(*m), 0);
	if (n < 0)
		return -errno;
	/* 0: ptod hung up, without a reply */
	if (!n || pto_msg_from_ptod(m, (size_t)n, NULL, 0))
		return -EPROTO;
	*st = m->status;
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : getenv("PTO_SOCKET");
	struct mnt m = { .dev = -1 };
	static struct pto_msg msg;
	char file[96];
	int fd = -1, s = -1, p = -1, st = 0, ret, i, rc = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!path || !*path)
		path = PTO_DEFAULT_SOCKET;
	ret = mnt_start(&m);
	if (ret) {
		printf("pto_fusehello: no FUSE mount here: %s\n", strerror(-ret));
		rc = ret == -ENOENT || ret == -EPERM || ret == -EACCES ||
		     ret == -ENODEV ? KSFT_SKIP : 2;
		goto out;
	}
	snprintf(file, sizeof(file), "%s/" FILE_NAME, m.dir);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("pto_fusehello: open %s: %m\n", file);
		goto out;
	}
	mnt_detach(&m);
	s = ptod_dial_path(path, SOCK_SEQPACKET | SOCK_CLOEXEC);
	p = ptod_dial_path(path, SOCK_SEQPACKET | SOCK_CLOEXEC);
	if (s < 0 || p < 0) {
		printf("pto_fusehello: connect %s: %s\n", path,
		       strerror(-(s < 0 ? s : p)));
		goto out;
	}
	memset(&msg, 0, sizeof(msg));
	msg.type = PTO_MSG_HELLO;
	msg.u.hello.wire_version = PTO_WIRE_VERSION;
	ret = request(s, &msg, sizeof(msg), fd, HELLO_MS, &st);
	printf("pto_fusehello: hello with %s: %s\n", file,
	       ret ? strerror(-ret) : st ? strerror(-st) : "accepted");
	if (ret || st != -ENODEV) {
		printf("pto_fusehello: ptod did not refuse the file with ENODEV (not a file of its device)\n");
		rc = 1;
		goto out;
	}
	rc = 0;
	for (i = 0; i < PINGS; i++) {
		memset(&msg, 0, sizeof(msg));
		msg.type = PTO_MSG_PING;
		ret = request(p, &msg, offsetof(struct pto_msg, text) + 1, -1,
			      PING_MS, &st);
		if (ret) {
			printf("pto_fusehello: ping %d of %d: %s (ptod stalled?)\n",
			       i + 1, PINGS, strerror(-ret));
			rc = 1;
			break;
		}
	}
	if (!rc)
		printf("pto_fusehello: ptod answered %d pings after the hello\n",
		       PINGS);
out:
	if (s >= 0)
		close(s);
	if (p >= 0)
		close(p);
	mnt_stop(&m);	/* first: our close of the file may wait on it */
	if (fd >= 0)
		close(fd);
	return rc;
}
