// SPDX-License-Identifier: MIT
/*
 * lingering.h - a socket whose last close waits, for the tests of what
 * ptod does with descriptors clients pass (its closer): the unit test
 * test_ptod_closer and the e2e tests
 */
#ifndef PTO_TESTS_LINGERING_H
#define PTO_TESTS_LINGERING_H

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * A TCP socket on the loopback whose last close waits up to @secs: it
 * lingers (SO_LINGER) on data its peer, *@peer, never reads. Closing
 * *@peer, with that data unread, resets the connection and ends the wait.
 * The socket, or -errno.
 */
static inline int lingering_socket(int *peer, int secs)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct linger lg = { .l_onoff = 1, .l_linger = secs };
	static const char buf[4096];
	socklen_t sl = sizeof(sa);
	int small = 4096, l, s = -1, ret = 0, i;

	*peer = -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -errno;
	if (setsockopt(l, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) ||
	    bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &sl))
		ret = -errno;
	if (!ret) {
		s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0 ||
		    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &small,
			       sizeof(small)) ||
		    connect(s, (struct sockaddr *)&sa, sizeof(sa)))
			ret = -errno;
	}
	if (!ret) {
		*peer = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (*peer < 0)
			ret = -errno;
	}
	/*
	 * Fill both buffers, until the peer's is full and data still waits
	 * in ours (SIOCOUTQ, unsent or unacknowledged): a send queue that
	 * drained while the sender looked away would let the close finish.
	 */
	for (i = 0; !ret; i++) {
		int outq = 0;

		while (send(s, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
		if (errno != EAGAIN) {
			ret = -errno;
			break;
		}
		usleep(2000);
		if (send(s, buf, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN &&
		    !ioctl(s, SIOCOUTQ, &outq) && outq > 0)
			break;
		if (i == 100)
			ret = -EAGAIN;
	}
	if (!ret && setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		ret = -errno;
	close(l);
	if (!ret)
		return s;
	if (s >= 0)
		close(s);
	if (*peer >= 0)
		close(*peer);
	*peer = -1;
	return ret;
}

#endif /* PTO_TESTS_LINGERING_H */
