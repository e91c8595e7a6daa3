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
 *   123, 0x7b        integer scalar
 *   f:1.5            float scalar (bits in the low 32 bits)
 *   buf:SIZE         a zeroed GM buffer of SIZE bytes (its device address)
 *   buf:SIZE:FILE    a GM buffer initialized from FILE (SIZE 0: FILE's size)
 *   out:SIZE:FILE    a zeroed GM buffer written to FILE after the run
 *
 * SIZE takes K/M/G suffixes. Exit status: 0 on success, 1 if the graph
 * failed (status and message on stderr), 2 on usage errors.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <pto/libpto.h>

#define MAX_ARGS	64
#define MAX_KERNELS	64

struct out_file {
	pto_buf *b;
	const char *path;
};

static uint64_t parse_size(const char *s, char **end)
{
	uint64_t v = strtoull(s, end, 0);

	switch (**end) {
	case 'k': case 'K': v <<= 10; (*end)++; break;
	case 'm': case 'M': v <<= 20; (*end)++; break;
	case 'g': case 'G': v <<= 30; (*end)++; break;
	default: break;
	}
	return v;
}

static int load_file(const char *path, void *dst, size_t max, size_t *got)
{
	FILE *f = fopen(path, "rb");

	if (!f)
		return -errno;
	*got = fread(dst, 1, max, f);
	fclose(f);
	return 0;
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
			if (r->nk == MAX_KERNELS)
				return 2;
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

/* --kernel ID:aic|aiv:KERNEL.so, each. */
static int load_kernels(pto_client *c, const struct run *r)
{
	int i, ret;

	for (i = 0; i < r->nk; i++) {
		char type[8], path[4096];
		int id;

		if (sscanf(r->kspec[i], "%d:%7[^:]:%4095s", &id, type, path) != 3 ||
		    (strcmp(type, "aic") && strcmp(type, "aiv"))) {
			fprintf(stderr, "pto-run: bad --kernel '%s'\n", r->kspec[i]);
			return 2;
		}
		ret = pto_kernel_load(c, id, strcmp(type, "aic") ?
				      PTO2_WORKER_VECTOR : PTO2_WORKER_CUBE, path);
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
	char *end;
	uint64_t size = parse_size(a + 4, &end);
	const char *file = *end == ':' ? end + 1 : NULL;
	struct stat st;
	size_t got;
	pto_buf *b;

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
	memset(pto_buf_ptr(b), 0, size);
	if (file && !out && load_file(file, pto_buf_ptr(b), size, &got)) {
		fprintf(stderr, "pto-run: %s: %m\n", file);
		return 1;
	}
	if (out) {
		r->outs[r->nouts].b = b;
		r->outs[r->nouts++].path = file;
	}
	r->bufs[r->nbufs++] = b;
	r->args[r->nargs++] = pto_buf_dev_addr(b);
	return 0;
}

/* Each ARG into one uint64_t of the args array. */
static int parse_args(pto_client *c, struct run *r, int argc, char **argv)
{
	int i, ret;

	for (i = optind; i < argc && r->nargs < MAX_ARGS; i++) {
		const char *a = argv[i];
		char *end;

		if (!strncmp(a, "f:", 2)) {
			float f = strtof(a + 2, NULL);
			uint32_t u;

			memcpy(&u, &f, sizeof(u));
			r->args[r->nargs++] = u;
		} else if (!strncmp(a, "buf:", 4) || !strncmp(a, "out:", 4)) {
			ret = buf_arg(c, r, a);
			if (ret)
				return ret;
		} else {
			r->args[r->nargs++] = strtoull(a, &end, 0);
			if (*end) {
				fprintf(stderr, "pto-run: bad argument '%s'\n", a);
				return 2;
			}
		}
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
	if (ret)
		return ret;
	ret = run_graph(c, &r);
	for (i = 0; i < r.nbufs; i++)
		pto_buf_free(r.bufs[i]);
	pto_disconnect(c);
	return ret ? 1 : 0;
}
