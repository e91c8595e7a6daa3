/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pto_user.h - the tests' local users: who may open the device.
 *
 * pto.ko's node is root:pto 0660 (kmod/60-pto.rules). A test that wants
 * an ordinary user of the device becomes one in group pto; one that
 * wants a user with no rights on it becomes one outside it.
 */
#ifndef PTO_USER_H
#define PTO_USER_H

#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <unistd.h>

/*
 * Become @uid (group @uid too) with no capabilities, keeping the group
 * of the device node (kmod/60-pto.rules) as a supplementary group if
 * @device: a local user the administrator allowed onto the device.
 * Without @device, a local user with no rights on it. 0 or -errno.
 * The harness runs each test in a child of its own, so this lasts for
 * the test only.
 */
static inline int pto_become_user(uid_t uid, bool device)
{
	struct group *g = device ? getgrnam("pto") : NULL;
	gid_t pto = g ? g->gr_gid : 0;

	if (setgroups(g ? 1 : 0, &pto) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

#endif /* PTO_USER_H */
