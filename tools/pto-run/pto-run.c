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
 *   123, 0x7b, -1    integer scalar, decimal (a leading 0 too) or 0x hex (a
 *                    negative one as its two's complement; after "--", or
 *                    getopt takes it for an option)
 *   f:1.5            float scalar (bits in the low 32 bits)
 *   buf:SIZE         a zeroed GM buffer of SIZE bytes (its device address)
 *   buf:SIZE:FILE    a GM buffer initialized from FILE (SIZE 0: FILE's size)
 *   out:SIZE:FILE    a zeroed GM buffer written to FILE after the run
 *
 * SIZE is decimal or 0x hex and takes K/M/G suffixes. At most 64 ARGs
 * and 64 --kernel options.
 * Checked before pto-run connects to ptod: options, the syntax of kernel
 * specs, ARGs, their count against aicpu_orchestration_config's (which
 * is called then, with each buf/out ARG still 0), and that a
 * buf:SIZE:FILE's FILE opens and is no directory. A kernel .so is read
 * once connected, an out: FILE written after the run. Exit status: 0 on
 * success, 1 if the graph failed (status and message on stderr) or a
 * FILE cannot be read, 2 on usage errors (the value named): --orch or
 * --socket given twice, a kernel ID given twice (a second load would
 * replace the first), a buf:SIZE: or out:SIZE: with nothing after its
 * ':' among them.
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
#include <pto-private/parse.h>
#include <pto-private/size.h>

#define MAX_ARGS	64
#define MAX_KERNELS	64

/* A buf: or out: ARG: its buffer, made once connected. */
struct buf_arg {
	int arg;		/* its index in the args array */
	uint64_t size;
	const char *file;	/* NULL: none */
	FILE *in;		/* buf:SIZE:FILE's FILE, opened before */
	bool out;
	pto_buf *b;
};

/* A --kernel ID:aic|aiv:PATH. */
struct kernel_arg {
	int32_t id;
	PTO2WorkerType wt;
	const char *path;
};

/*
 * SIZE[K|M|G] at @s into *@v, *@end after it: 0, or -EINVAL if it is no
 * number, does not fit 64 bits, or is followed by anything but ':' or
 * the end.
 */
static int parse_size(const char *s, uint64_t *v, const char **end)
{
	if (pto_parse_size(s, 0, v, end) || (**end && **end != ':'))
		return -EINVAL;
	return 0;
}

/* Up to @max bytes of @f into @dst: 0 or -errno. */
static int load_file(FILE *f, void *dst, size_t max)
{
	errno = 0;
	if (fread(dst, 1, max, f) < max && ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pto-run [-s SOCKET] --orch ORCH.so --kernel ID:aic|aiv:KERNEL.so ...\n"
		"               [--] [ARG...]\n"
		"  ARG: INT | f:FLOAT | buf:SIZE[:FILE] | out:SIZE:FILE\n");
}

/* What one run needs: the command line and what it turned into. */
struct run {
	const char *orch, *sock;
	struct kernel_arg k[MAX_KERNELS];
	int nk;
	uint64_t args[MAX_ARGS];
	int nargs;
	struct buf_arg bufs[MAX_ARGS];
	int nbufs;
	pto2_orchestration_entry_fn entry;
	pto2_orchestration_config_fn config;
};

/*
 * ID:aic|aiv:PATH into @k: the id (decimal, 0 .. INT32_MAX), the worker
 * type and the path (all the rest, spaces and colons included). 0 or
 * -EINVAL.
 */
static int parse_kspec(const char *spec, struct kernel_arg *k)
{
	const char *end;
	uint64_t v;

	if (pto_parse_u64(spec, 10, INT32_MAX, &v, &end) || *end != ':')
		return -EINVAL;
	k->id = (int32_t)v;
	if (!strncmp(end + 1, "aic:", 4))
		k->wt = PTO2_WORKER_CUBE;
	else if (!strncmp(end + 1, "aiv:", 4))
		k->wt = PTO2_WORKER_VECTOR;
	else
		return -EINVAL;
	k->path = end + 5;
	return *k->path ? 0 : -EINVAL;
}

static int given_twice(const char *opt)
{
	fprintf(stderr, "pto-run: %s given twice\n", opt);
	return 2;
}

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
	int opt, i;

	while ((opt = getopt_long(argc, argv, "o:k:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (r->orch)
				return given_twice("--orch");
			r->orch = optarg;
			break;
		case 's':
			if (r->sock)
				return given_twice("--socket");
			r->sock = optarg;
			break;
		case 'k':
			if (r->nk == MAX_KERNELS) {
				fprintf(stderr, "pto-run: more than %d --kernel\n",
					MAX_KERNELS);
				return 2;
			}
			if (parse_kspec(optarg, &r->k[r->nk])) {
				fprintf(stderr, "pto-run: bad --kernel '%s' (ID:aic|aiv:PATH)\n",
					optarg);
				return 2;
			}
			/* a second load of an id would replace the first */
			for (i = 0; i < r->nk; i++) {
				if (r->k[i].id == r->k[r->nk].id) {
					fprintf(stderr, "pto-run: --kernel '%s': kernel %d given twice\n",
						optarg, r->k[i].id);
					return 2;
				}
			}
			r->nk++;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (!r->orch) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/*
 * --orch ORCH.so, a path: one without a '/' is taken in the current
 * directory ("./" before it), where dlopen() would search the library
 * path instead and load, or miss, another file of that name.
 */
static int load_orch(struct run *r)
{
	char path[PATH_MAX];
	bool bare = !strchr(r->orch, '/');
	struct stat st;
	void *dl;

	if (snprintf(path, sizeof(path), "%s%s", bare ? "./" : "", r->orch) >=
	    (int)sizeof(path)) {
		fprintf(stderr, "pto-run: --orch '%s': %s\n", r->orch,
			strerror(ENAMETOOLONG));
		return 2;
	}
	/* only a regular file: dlopen() of a FIFO would wait for a writer */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "pto-run: --orch '%s': not a regular file\n",
			r->orch);
		return 2;
	}
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
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

/* --kernel ID:aic|aiv:KERNEL.so, each. */
static int load_kernels(pto_client *c, const struct run *r)
{
	int i;

	for (i = 0; i < r->nk; i++)
		if (pto_kernel_load(c, r->k[i].id, r->k[i].wt, r->k[i].path)) {
			fprintf(stderr, "pto-run: kernel %d: %s\n", r->k[i].id,
				pto_last_error(c));
			return 1;
		}
	return 0;
}

/*
 * buf:SIZE[:FILE] or out:SIZE:FILE: its size and file, the input FILE
 * opened (a directory refused as a read of it would be). Its argument
 * stays 0 until its buffer is made.
 */
static int buf_arg(struct run *r, const char *a)
{
	struct buf_arg *ba = &r->bufs[r->nbufs++];
	const char *end;
	struct stat st;
	int err;

	ba->out = a[0] == 'o';
	if (parse_size(a + 4, &ba->size, &end)) {
		fprintf(stderr, "pto-run: bad size in '%s'\n", a);
		return 2;
	}
	ba->file = *end == ':' ? end + 1 : NULL;
	if (ba->file && !*ba->file) {
		fprintf(stderr, "pto-run: bad argument '%s' (no FILE after ':')\n",
			a);
		return 2;
	}
	/*
	 * buf:0:FILE takes FILE's size: an empty file, a FIFO or a device
	 * has none (refused before an open() that would wait for a writer);
	 * a directory or a missing FILE is for the open to say.
	 */
	if (ba->file && !ba->out && !ba->size && !stat(ba->file, &st) &&
	    !S_ISDIR(st.st_mode)) {
		if (!S_ISREG(st.st_mode) || !st.st_size) {
			fprintf(stderr, "pto-run: bad argument '%s' (SIZE 0 and %s has no size)\n",
				a, ba->file);
			return 2;
		}
		ba->size = (uint64_t)st.st_size;
	}
	if (ba->file && !ba->out) {
		ba->in = fopen(ba->file, "rb");
		err = !ba->in || fstat(fileno(ba->in), &st) ? errno :
		      S_ISDIR(st.st_mode) ? EISDIR : 0;
		if (err) {
			fprintf(stderr, "pto-run: %s: %s\n", ba->file,
				strerror(err));
			return 1;
		}
	}
	if (!ba->size || (ba->out && !ba->file)) {
		fprintf(stderr, "pto-run: bad argument '%s'\n", a);
		return 2;
	}
	ba->arg = r->nargs;
	r->args[r->nargs++] = 0;
	return 0;
}

/* The buffers of the buf: and out: ARGs, in the args array. */
static int make_bufs(pto_client *c, struct run *r)
{
	struct buf_arg *ba;
	int i, ret;

	for (i = 0; i < r->nbufs; i++) {
		ba = &r->bufs[i];
		if (pto_buf_alloc(c, ba->size, &ba->b)) {
			fprintf(stderr, "pto-run: %s\n", pto_last_error(c));
			return 1;
		}
		memset(pto_buf_ptr(ba->b), 0, ba->size);
		ret = ba->in ? load_file(ba->in, pto_buf_ptr(ba->b), ba->size) :
		      0;
		if (ba->in)
			fclose(ba->in);
		ba->in = NULL;
		if (ret) {
			fprintf(stderr, "pto-run: %s: %s\n", ba->file,
				strerror(-ret));
			return 1;
		}
		r->args[ba->arg] = pto_buf_dev_addr(ba->b);
	}
	return 0;
}

/*
 * INT: a 64-bit number (decimal, or hex after 0x), a negative one down to
 * INT64_MIN as its two's complement.
 */
static int int_arg(const char *a, uint64_t *v)
{
	uint64_t m;

	if (a[0] != '-')
		return pto_parse_u64_all(a, 0, UINT64_MAX, v) ? -EINVAL : 0;
	if (pto_parse_u64_all(a + 1, 0, (uint64_t)INT64_MAX + 1, &m))
		return -EINVAL;
	*v = -m;
	return 0;
}

/* f:FLOAT: its bits in the low 32 bits. */
static int float_arg(const char *a, uint64_t *v)
{
	char *end;
	uint32_t u;
	float f;

	/* all of it: strtof() would skip leading white space */
	if (isspace((unsigned char)*a))
		return -EINVAL;
	errno = 0;
	f = strtof(a, &end);
	/* ERANGE for an underflow too: a tiny value is still a value */
	if (end == a || *end || (errno && isinf(f)))
		return -EINVAL;
	memcpy(&u, &f, sizeof(u));
	*v = u;
	return 0;
}

/*
 * Each ARG into one uint64_t of the args array (a buffer's 0 for now), and
 * their count checked.
 */
static int parse_args(struct run *r, int argc, char **argv)
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
			ret = buf_arg(r, a);
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
	int i, err, ret = 0;

	for (i = 0; i < r->nbufs; i++) {
		const struct buf_arg *ba = &r->bufs[i];
		FILE *f;

		if (!ba->out)
			continue;
		/* what stdio still held is written at fclose(): checked too */
		errno = 0;
		f = fopen(ba->file, "wb");
		err = f && fwrite(pto_buf_ptr(ba->b), 1, pto_buf_size(ba->b),
				  f) == pto_buf_size(ba->b) ? 0 :
		      errno ? errno : EIO;
		if (f && fclose(f) && !err)
			err = errno ? errno : EIO;
		if (err) {
			fprintf(stderr, "pto-run: %s: %s\n", ba->file,
				strerror(err));
			ret = -EIO;
		}
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

/* On ptod: the kernels, the buffers, the graph. */
static int run_on_ptod(struct run *r)
{
	pto_client *c;
	int i, ret;

	if (pto_connect(r->sock, &c)) {
		fprintf(stderr, "pto-run: %s\n", pto_last_error(NULL));
		return 1;
	}
	ret = load_kernels(c, r);
	if (!ret)
		ret = make_bufs(c, r);
	if (!ret)
		ret = run_graph(c, r) ? 1 : 0;
	for (i = 0; i < r->nbufs; i++)
		if (r->bufs[i].b)
			pto_buf_free(r->bufs[i].b);
	pto_disconnect(c);
	return ret;
}

/* All that was given checked first: then ptod. */
int main(int argc, char **argv)
{
	static struct run r;
	int i, ret;

	ret = parse_opts(argc, argv, &r);
	if (!ret)
		ret = load_orch(&r);
	if (!ret)
		ret = parse_args(&r, argc, argv);
	if (!ret)
		ret = run_on_ptod(&r);
	for (i = 0; i < r.nbufs; i++)
		if (r.bufs[i].in)
			fclose(r.bufs[i].in);
	return ret;
}
