// SPDX-License-Identifier: MIT
/* What the check and e2e programs share around an example (ex_example.h). */
#include "ex_example.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ex_common.h"

/* Directory of the running executable (where the .so files are built). */
static int ex_exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

int ex_start(const struct ex_example *ex, int argc, char **argv, char *dir,
	     size_t len)
{
	int opt;

	if (ex_exe_dir(dir, len))
		snprintf(dir, len, ".");
	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: %s [-d BUILD_DIR] [CASE...]\n",
				argv[0]);
			return -1;
		}
		snprintf(dir, len, "%s", optarg);
	}
	if (ex->init && ex->init())
		return -1;
	return optind;
}

/* Cases named on the command line, else $case_env, else all. */
static int ex_selected(const struct ex_example *ex, int argc, char **argv,
		int first, size_t ci)
{
	const char *name = ex->case_name(ci);
	const char *env = ex->case_env ? getenv(ex->case_env) : NULL;
	int i;

	if (first >= argc)
		return env && *env ? strcmp(env, name) == 0 : 1;
	for (i = first; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

int ex_run_cases(const struct ex_example *ex, int argc, char **argv,
		 int first, int (*run_case)(void *ctx, size_t ci), void *ctx)
{
	int ret, failed = 0;
	size_t ci;

	for (ci = 0; ex->case_name(ci); ci++) {
		if (!ex_selected(ex, argc, argv, first, ci))
			continue;
		ret = run_case(ctx, ci);
		if (ret < 0)
			return -1;
		failed += ret;
	}
	return failed;
}

void *ex_mem_host(struct ex_mem *m, size_t bytes)
{
	void *p;

	if (m->nr_host == EX_MEM_MAX)
		return NULL;
	p = malloc(bytes ? bytes : 1);
	if (p)
		m->host[m->nr_host++] = p;
	return p;
}

void *ex_mem_dev(struct ex_mem *m, size_t bytes, uint64_t *addr)
{
	void *p;

	if (m->gm_alloc)
		return m->gm_alloc(m->gm_ctx, bytes, addr);
	p = ex_mem_host(m, bytes);
	*addr = EX_ADDR(p);
	return p;
}

void *ex_mem_put(struct ex_mem *m, void *src, size_t bytes, uint64_t *addr)
{
	void *p;

	if (!m->gm_alloc) {
		*addr = EX_ADDR(src);
		return src;
	}
	p = m->gm_alloc(m->gm_ctx, bytes, addr);
	if (p)
		memcpy(p, src, bytes);
	return p;
}

void ex_mem_release(struct ex_mem *m)
{
	while (m->nr_host)
		free(m->host[--m->nr_host]);
}

void ex_case_reset_out(const struct ex_case *c)
{
	memset(c->out, c->out_init, c->out_elems * sizeof(float));
}

int ex_case_check(const struct ex_case *c, const char *suffix,
		  unsigned long tasks, int ret)
{
	return ex_check_f32(c->name, suffix, c->tol, c->ref, c->out,
			    c->out_elems, tasks, c->tasks, ret);
}

void ex_case_end(const struct ex_example *ex, struct ex_mem *m,
		 struct ex_case *c)
{
	if (ex->teardown)
		ex->teardown(c);
	ex_mem_release(m);
}
