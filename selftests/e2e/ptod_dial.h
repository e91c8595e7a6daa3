/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptod_dial.h - a connection to ptod's socket, for the suite's programs
 * (e2e_test, pto_e2e, pto_sockfuzz, pto_fusehello)
 */
#ifndef PTOD_DIAL_H
#define PTOD_DIAL_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/*
 * A socket of @type (SOCK_SEQPACKET for ptod, other types to be refused;
 * SOCK_* flags ORed in) connected to @path: the socket, or -errno.
 */
static inline int ptod_dial_path(const char *path, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	s = socket(AF_UNIX, type, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(s);
		return ret;
	}
	return s;
}

#endif /* PTOD_DIAL_H */
