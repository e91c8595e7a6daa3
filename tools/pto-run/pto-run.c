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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "orch", required_argument, NULL, 'o' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *orch = NULL, *sock = NULL, *kspec[MAX_KERNELS];
	struct out_file outs[MAX_ARGS];
	pto_buf *bufs[MAX_ARGS];
	uint64_t args[MAX_ARGS];
	int nk = 0, nargs = 0, nouts = 0, nbufs = 0, opt, i, ret;
	pto2_orchestration_entry_fn entry;
	pto2_orchestration_config_fn config;
	char msg[4096];
	struct timespec t0, t1;
	pto_client *c;
	void *dl;

	while ((opt = getopt_long(argc, argv, "o:k:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': orch = optarg; break;
		case 's': sock = optarg; break;
		case 'k':
			if (nk == MAX_KERNELS)
				return 2;
			kspec[nk++] = optarg;
			break;
		default: usage(); return 2;
		}
	}
	if (!orch) {
		usage();
		return 2;
	}
	dl = dlopen(orch, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "pto-run: %s\n", dlerror());
		return 2;
	}
	entry = (pto2_orchestration_entry_fn)(uintptr_t)dlsym(dl, "aicpu_orchestration_entry");
	config = (pto2_orchestration_config_fn)(uintptr_t)dlsym(dl, "aicpu_orchestration_config");
	if (!entry) {
		fprintf(stderr, "pto-run: %s has no aicpu_orchestration_entry\n", orch);
		return 2;
	}
	ret = pto_connect(sock, &c);
	if (ret) {
		fprintf(stderr, "pto-run: %s\n", pto_last_error(NULL));
		return 1;
	}
	for (i = 0; i < nk; i++) {
		char type[8], path[4096];
		int id;

		if (sscanf(kspec[i], "%d:%7[^:]:%4095s", &id, type, path) != 3 ||
		    (strcmp(type, "aic") && strcmp(type, "aiv"))) {
			fprintf(stderr, "pto-run: bad --kernel '%s'\n", kspec[i]);
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
	for (i = optind; i < argc && nargs < MAX_ARGS; i++) {
		const char *a = argv[i];
		char *end;

		if (!strncmp(a, "f:", 2)) {
			float f = strtof(a + 2, NULL);
			uint32_t u;

			memcpy(&u, &f, sizeof(u));
			args[nargs++] = u;
		} else if (!strncmp(a, "buf:", 4) || !strncmp(a, "out:", 4)) {
			bool out = a[0] == 'o';
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
			ret = pto_buf_alloc(c, size, &b);
			if (ret) {
				fprintf(stderr, "pto-run: %s\n", pto_last_error(c));
				return 1;
			}
			memset(pto_buf_ptr(b), 0, size);
			if (file && !out &&
			    load_file(file, pto_buf_ptr(b), size, &got)) {
				fprintf(stderr, "pto-run: %s: %m\n", file);
				return 1;
			}
			if (out) {
				outs[nouts].b = b;
				outs[nouts++].path = file;
			}
			bufs[nbufs++] = b;
			args[nargs++] = pto_buf_dev_addr(b);
		} else {
			args[nargs++] = strtoull(a, &end, 0);
			if (*end) {
				fprintf(stderr, "pto-run: bad argument '%s'\n", a);
				return 2;
			}
		}
	}
	if (config) {
		PTO2OrchestrationConfig cfg = config(args, nargs);

		if (cfg.expected_arg_count && cfg.expected_arg_count != nargs) {
			fprintf(stderr, "pto-run: %s expects %d args, %d given\n",
				orch, cfg.expected_arg_count, nargs);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = pto_run(c, entry, args, nargs, msg, sizeof(msg));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret) {
		fprintf(stderr, "pto-run: graph failed: %d (%s)\n%s\n", ret,
			strerror(-ret), msg);
	} else {
		printf("pto-run: done in %.3f ms\n",
		       (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		for (i = 0; i < nouts; i++) {
			FILE *f = fopen(outs[i].path, "wb");

			if (!f || fwrite(pto_buf_ptr(outs[i].b), 1,
					 pto_buf_size(outs[i].b), f) !=
				  pto_buf_size(outs[i].b)) {
				fprintf(stderr, "pto-run: %s: %m\n", outs[i].path);
				ret = -EIO;
			}
			if (f)
				fclose(f);
		}
	}
	for (i = 0; i < nbufs; i++)
		pto_buf_free(bufs[i]);
	pto_disconnect(c);
	return ret ? 1 : 0;
}
