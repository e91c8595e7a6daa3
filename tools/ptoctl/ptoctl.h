// SPDX-License-Identifier: MIT
/*
 * ptoctl.h - what ptoctl.c (the device, over generic netlink) and
 * ptoctl_ptod.c (ptod, over its socket) share
 */
#ifndef PTOCTL_H
#define PTOCTL_H

#include <stdbool.h>

/* The options of the commands that ask ptod. */
struct ptoctl_sock {
	bool json;		/* -j */
	const char *sock;	/* -s, or NULL: $PTO_SOCKET or libpto's default */
};

/* A decimal number 0 .. @max, or -1. */
long ptoctl_num(const char *s, long max);

/* The commands; each returns the exit status. */
int ptoctl_clients(const struct ptoctl_sock *o);
int ptoctl_graphs(const struct ptoctl_sock *o);
/* @argc, @argv: the command's own arguments, "trace" first. */
int ptoctl_trace(const struct ptoctl_sock *o, int argc, char **argv);

#endif /* PTOCTL_H */
