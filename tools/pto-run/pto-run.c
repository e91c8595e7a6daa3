// SPDX-License-Identifier: MIT
/*
 * pto-run - run an orchestration shared object through libpto and ptod
 *
 * usage: pto-run [-s SOCKET] --orch ORCH.so --kernel ID:aic|aiv:KERNEL.so ...
 *                [--] [ARG...]
 *
 * The orchestration .so exports aicpu_orchestration_entry (and optionally
 * aicpu_orchestration_config, whose expected_arg_count is checked); it
 * runs unchanged in this process, its pto2_rt_* calls resolved by libpto.
 * Each ARG becomes one uint64_t of the args array:
 *
 *   123, 0x7b, -1    integer scalar (a negative one as its two's complement;
 *                    after "--", or getopt takes it for an option)
 *   f:1.5            float scalar (bits in the low 32 bits)
 *   buf:SIZE         a zeroed GM buffer of SIZE bytes (its device address)
 *   buf:SIZE:FILE    a GM buffer initialized from FILE (SIZE 0: FILE's size)
 *   out:SIZE:FILE    a zeroed GM buffer written to FILE after the run
 *
 * SIZE takes K/M/G suffixes. At most 64 ARGs and 64 --kernel options.
 * Exit status: 0 on success, 1 if the graph failed (status and message
 * on stderr), 2 on usage errors (the value named).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <pto/libpto.h>
#include <pto-private/size.h>

#define MAX_ARGS	64
#define MAX_KERNELS	64

struct out_file {
	pto_buf *b;
	const char *path;
};

/*
 * SIZE[K|M|G] at @s into *@v, *@end after it: 0, or -EINVAL if it is no
 * number, does not fit 64 bits, or is followed by anything but ':' or
 * the end.
 */
static int parse_size(const char *s, uint64_t *v, const char **end)
{
	if (pto_parse_size(s, v, end) || (**end && **end != ':'))
		return -EINVAL;
	return 0;
}

/* Up to @max bytes of @path into @dst: 0 or -errno (a directory too). */
static int load_file(const char *path, void *dst, size_t max)
{
	FILE *f = fopen(path, "rb");
	int ret = 0;

	if (!f)
		return -errno;
	if (fread(dst, 1, max, f) < max && ferror(f))
		ret = errno ? -errno : -EIO;
	fclose(f);
	return ret;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pto-run [-s SOCKET] --orch ORCH.so --kernel ID:aic|aiv:KERNEL.so ...\n"
		"               [--] [ARG...]\n"
		"  ARG: INT | f:FLOAT | buf:SIZE[:FILE] | out:SIZE:FILE\n");
}

/* What one run needs: the command line and what it turned into. */
struct run {
	const char *orch, *sock;
	const char *kspec[MAX_KERNELS];
	int nk;
	uint64_t args[MAX_ARGS];
	int nargs;
	struct out_file outs[MAX_ARGS];
	int nouts;
	pto_buf *bufs[MAX_ARGS];
	int nbufs;
	pto2_orchestration_entry_fn entry;
	pto2_orchestration_config_fn config;
};

/*
 * Helpers below return 0 to go on, or the exit status: 2 for what the
 * user got wrong, 1 for what failed.
 */
static int parse_opts(int argc, char **argv, struct run *r)
{
	static const struct option opts[] = {
		{ "orch", required_argument, NULL, 'o' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "o:k:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': r->orch = optarg; break;
		case 's': r->sock = optarg; break;
		case 'k':
			if (r->nk == MAX_KERNELS) {
				fprintf(stderr, "pto-run: more than %d --kernel\n",
					MAX_KERNELS);
				return 2;
			}
			r->kspec[r->nk++] = optarg;
			break;
		default: usage(); return 2;
		}
	}
	if (!r->orch) {
		usage();
		return 2;
	}
	return 0;
}

static int load_orch(struct run *r)
{
	void *dl = dlopen(r->orch, RTLD_NOW | RTLD_LOCAL);

	if (!dl) {
		fprintf(stderr, "pto-run: %s\n", dlerror());
		return 2;
	}
	r->entry = (pto2_orchestration_entry_fn)(uintptr_t)dlsym(dl, "aicpu_orchestration_entry");
	r->config = (pto2_orchestration_config_fn)(uintptr_t)dlsym(dl, "aicpu_orchestration_config");
	if (!r->entry) {
		fprintf(stderr, "pto-run: %s has no aicpu_orchestration_entry\n", r->orch);
		return 2;
	}
	return 0;
}

/*
 * ID:aic|aiv:PATH: the id (decimal, 0 .. INT32_MAX), the worker type and
 * the path (all the rest, spaces and colons included). 0 or -EINVAL.
 */
static int parse_kspec(const char *spec, int32_t *id, PTO2WorkerType *wt,
		       const char **path)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*spec))
		return -EINVAL;
	errno = 0;
	v = strtol(spec, &end, 10);
	if (errno || v > INT32_MAX || *end != ':')
		return -EINVAL;
	*id = (int32_t)v;
	if (!strncmp(end + 1, "aic:", 4))
		*wt = PTO2_WORKER_CUBE;
	else if (!strncmp(end + 1, "aiv:", 4))
		*wt = PTO2_WORKER_VECTOR;
	else
		return -EINVAL;
	*path = end + 5;
	return **path ? 0 : -EINVAL;
}

/* --kernel ID:aic|aiv:KERNEL.so, each. */
static int load_kernels(pto_client *c, const struct run *r)
{
	int i, ret;

	for (i = 0; i < r->nk; i++) {
		const char *path;
		PTO2WorkerType wt;
		int32_t id;

		if (parse_kspec(r->kspec[i], &id, &wt, &path)) {
			fprintf(stderr, "pto-run: bad --kernel '%s' (ID:aic|aiv:PATH)\n",
				r->kspec[i]);
			return 2;
		}
		ret = pto_kernel_load(c, id, wt, path);
		if (ret) {
			fprintf(stderr, "pto-run: kernel %d: %s\n", id,
				pto_last_error(c));
			return 1;
		}
	}
	return 0;
}

/* buf:SIZE[:FILE] or out:SIZE:FILE: a fresh GM buffer. */
static int buf_arg(pto_client *c, struct run *r, const char *a)
{
	bool out = a[0] == 'o';
	const char *end, *file;
	struct stat st;
	uint64_t size;
	pto_buf *b;
	int ret;

	if (parse_size(a + 4, &size, &end)) {
		fprintf(stderr, "pto-run: bad size in '%s'\n", a);
		return 2;
	}
	file = *end == ':' ? end + 1 : NULL;
	if (file && !*file)
		file = NULL;
	if (!size && file && !out && !stat(file, &st))
		size = (uint64_t)st.st_size;
	if (!size || (out && !file)) {
		fprintf(stderr, "pto-run: bad argument '%s'\n", a);
		return 2;
	}
	if (pto_buf_alloc(c, size, &b)) {
		fprintf(stderr, "pto-run: %s\n", pto_last_error(c));
		return 1;
	}
	r->bufs[r->nbufs++] = b;
	memset(pto_buf_ptr(b), 0, size);
	ret = file && !out ? load_file(file, pto_buf_ptr(b), size) : 0;
	if (ret) {
		fprintf(stderr, "pto-run: %s: %s\n", file, strerror(-ret));
		return 1;
	}
	if (out) {
		r->outs[r->nouts].b = b;
		r->outs[r->nouts++].path = file;
	}
	r->args[r->nargs++] = pto_buf_dev_addr(b);
	return 0;
}

/* INT: a 64-bit number, a negative one as its two's complement. */
static int int_arg(const char *a, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)a[a[0] == '-']))
		return -EINVAL;
	errno = 0;
	if (a[0] == '-')
		*v = (uint64_t)strtoll(a, &end, 0);
	else
		*v = strtoull(a, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

/* f:FLOAT: its bits in the low 32 bits. */
static int float_arg(const char *a, uint64_t *v)
{
	char *end;
	uint32_t u;
	float f;

	errno = 0;
	f = strtof(a, &end);
	/* ERANGE for an underflow too: a tiny value is still a value */
	if (end == a || *end || (errno && isinf(f)))
		return -EINVAL;
	memcpy(&u, &f, sizeof(u));
	*v = u;
	return 0;
}

/* Each ARG into one uint64_t of the args array. */
static int parse_args(pto_client *c, struct run *r, int argc, char **argv)
{
	int i, ret;

	if (argc - optind > MAX_ARGS) {
		fprintf(stderr, "pto-run: %d arguments, at most %d\n",
			argc - optind, MAX_ARGS);
		return 2;
	}
	for (i = optind; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "buf:", 4) || !strncmp(a, "out:", 4)) {
			ret = buf_arg(c, r, a);
			if (ret)
				return ret;
			continue;
		}
		if (!strncmp(a, "f:", 2) ? float_arg(a + 2, &r->args[r->nargs]) :
		    int_arg(a, &r->args[r->nargs])) {
			fprintf(stderr, "pto-run: bad argument '%s'\n", a);
			return 2;
		}
		r->nargs++;
	}
	if (r->config) {
		PTO2OrchestrationConfig cfg = r->config(r->args, r->nargs);

		if (cfg.expected_arg_count && cfg.expected_arg_count != r->nargs) {
			fprintf(stderr, "pto-run: %s expects %d args, %d given\n",
				r->orch, cfg.expected_arg_count, r->nargs);
			return 2;
		}
	}
	return 0;
}

/* The out: buffers into their files. 0 or -EIO. */
static int write_outs(const struct run *r)
{
	int i, ret = 0;

	for (i = 0; i < r->nouts; i++) {
		FILE *f = fopen(r->outs[i].path, "wb");

		if (!f || fwrite(pto_buf_ptr(r->outs[i].b), 1,
				 pto_buf_size(r->outs[i].b), f) !=
			  pto_buf_size(r->outs[i].b)) {
			fprintf(stderr, "pto-run: %s: %m\n", r->outs[i].path);
			ret = -EIO;
		}
		if (f)
			fclose(f);
	}
	return ret;
}

/* The graph, then its outputs. 0 or negative errno. */
static int run_graph(pto_client *c, struct run *r)
{
	struct timespec t0, t1;
	char msg[4096];
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = pto_run(c, r->entry, r->args, r->nargs, msg, sizeof(msg));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret) {
		fprintf(stderr, "pto-run: graph failed: %d (%s)\n%s\n", ret,
			strerror(-ret), msg);
		return ret;
	}
	printf("pto-run: done in %.3f ms\n",
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return write_outs(r);
}

int main(int argc, char **argv)
{
	static struct run r;
	pto_client *c;
	int i, ret;

	ret = parse_opts(argc, argv, &r);
	if (!ret)
		ret = load_orch(&r);
	if (ret)
		return ret;
	if (pto_connect(r.sock, &c)) {
		fprintf(stderr, "pto-run: %s\n", pto_last_error(NULL));
		return 1;
	}
	ret = load_kernels(c, &r);
	if (!ret)
		ret = parse_args(c, &r, argc, argv);
	if (!ret)
		ret = run_graph(c, &r) ? 1 : 0;
	for (i = 0; i < r.nbufs; i++)
		pto_buf_free(r.bufs[i]);
	pto_disconnect(c);
	return ret;
}
