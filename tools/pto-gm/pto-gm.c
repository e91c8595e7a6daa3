// SPDX-License-Identifier: MIT
/*
 * pto-gm - print what /dev/ptoN is and move data through its GM.
 *
 * 1. Prints the device information (GET_INFO, ABI version).
 * 2. As a client: allocates a GM buffer and writes a pattern through the
 *    client's own mapping of it.
 * 3. As the AICPU (a second open file; the executor role if a daemon holds
 *    the AICPU): maps all of GM and reads the buffer back at its device
 *    address, then writes a second pattern there that the client reads.
 * 4. Frees the buffer and checks that GM is whole again.
 *
 * Exit status 0 if every byte arrived, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/pto.h>
#include <pto-private/size.h>

#include "pto-dev.h"

static const char *prog = "pto-gm";

struct opts {
	const char *dev;
	unsigned long long len;
};

static void fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(-err));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *profile_name(uint32_t p)
{
	switch (p) {
	case PTO_PROFILE_A2A3:
		return "a2a3 (Ascend 910B/910C)";
	case PTO_PROFILE_A5:
		return "a5 (Ascend 950 PR/DT)";
	default:
		return "unknown";
	}
}

static const char *const cap_names[] = {
	"tile_hw", "vec_native", "cube_hw", "mx_format", "fractal_hw", "fp8",
	"vec_unaligned_store", "vec_align_state", "hifloat8_fp4",
	"block_comm", "atomic_store", "pair_select", "textract_compact",
	"vlane_reduce",
};

static void print_caps(unsigned long long caps)
{
	unsigned int i;

	printf("caps      0x%04llx:", caps);
	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (caps & (1ULL << i))
			printf(" %s", cap_names[i]);
	if (caps >> (sizeof(cap_names) / sizeof(cap_names[0])))
		printf(" (unknown bits 0x%llx)",
		       caps >> (sizeof(cap_names) / sizeof(cap_names[0])));
	printf("\n");
}

static void print_size(const char *label, unsigned long long b)
{
	if (b >= (1ULL << 20) && !(b & ((1ULL << 20) - 1)))
		printf("%s%llu MiB", label, b >> 20);
	else if (b >= 1024 && !(b & 1023))
		printf("%s%llu KiB", label, b >> 10);
	else
		printf("%s%llu B", label, b);
}

static int print_info(int fd, const char *dev, struct pto_info *info)
{
	uint32_t abi = 0;
	int ret;

	ret = pto_xioctl(fd, PTO_IOC_ABI_VERSION, &abi);
	if (ret) {
		fail("PTO_IOC_ABI_VERSION", ret);
		return ret;
	}
	ret = pto_get_info(fd, info);
	if (ret) {
		fail("PTO_IOC_GET_INFO", ret);
		return ret;
	}
	printf("device    %s (index %u)\n", dev, info->dev_index);
	printf("abi       %u.%u (module), %u.%u (this tool)\n", abi >> 16,
	       abi & 0xffff, PTO_ABI_MAJOR, PTO_ABI_MINOR);
	printf("profile   %s\n", profile_name(info->profile));
	printf("cores     %u AIC + %u AIV = %u\n", info->nr_aic, info->nr_aiv,
	       info->nr_cores);
	print_size("gm        ", info->gm_size);
	printf(" at device address 0x%llx, ",
	       (unsigned long long)info->gm_dev_base);
	print_size("", info->gm_free);
	printf(" free\n");
	print_caps(info->caps);
	print_size("regs      ", info->regs_size);
	printf(" at mmap offset 0x%llx, GM at mmap offset 0x%llx"
	       "\n", (unsigned long long)info->regs_mmap_offset,
	       (unsigned long long)info->gm_mmap_offset);
	printf("sys_cnt   %llu Hz\n", (unsigned long long)info->sys_cnt_freq);
	if (abi >> 16 != PTO_ABI_MAJOR) {
		fprintf(stderr, "%s: module ABI major %u, this tool %u\n",
			prog, abi >> 16, PTO_ABI_MAJOR);
		return -EPROTO;
	}
	return 0;
}

static void fill(uint32_t *w, size_t words, uint32_t seed)
{
	size_t i;

	for (i = 0; i < words; i++)
		w[i] = seed ^ (uint32_t)(i * 2654435761U);
}

/* Returns the index of the first wrong word, or words if all are right. */
static size_t verify(const uint32_t *w, size_t words, uint32_t seed)
{
	size_t i;

	for (i = 0; i < words; i++)
		if (w[i] != (seed ^ (uint32_t)(i * 2654435761U)))
			break;
	return i;
}

static int report(const char *what, const uint32_t *w, size_t words,
		  uint32_t seed)
{
	size_t bad = verify(w, words, seed);

	if (bad == words)
		return 0;
	fprintf(stderr, "%s: %s: word %zu is 0x%08x, expected 0x%08x\n",
		prog, what, bad, w[bad], seed ^ (uint32_t)(bad * 2654435761U));
	return -EIO;
}

/* The second file: AICPU if free, else executor (also maps all of GM). */
static int open_gm_viewer(const char *dev, const char **role)
{
	int fd = pto_open_dev(dev), ret;

	if (fd < 0)
		return fd;
	ret = pto_set_role(fd, PTO_ROLE_AICPU);
	*role = "aicpu";
	if (ret == -EBUSY) {
		ret = pto_set_role(fd, PTO_ROLE_EXECUTOR);
		*role = "executor (the AICPU role is taken)";
	}
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* One round trip: a client buffer, seen through a second file's GM map. */
struct trip {
	const struct opts *o;
	const struct pto_info *info;
	int client, viewer;
	struct pto_gm_alloc a;
	uint32_t *cmap;		/* the client's mapping of its buffer */
	uint8_t *gm;		/* the viewer's mapping of all of GM */
	uint32_t *gview;	/* the buffer in @gm */
	const char *role;	/* the viewer's */
	double t_cw, t_vr, t_vw, t_cr;
};

/* As a client: allocate the buffer, look it up, map it. */
static int client_buffer(struct trip *t)
{
	struct pto_gm_lookup l = { .size = sizeof(l) };
	int ret;

	t->client = pto_open_dev(t->o->dev);
	if (t->client < 0) {
		fail(t->o->dev, t->client);
		return t->client;
	}
	ret = pto_set_role(t->client, PTO_ROLE_CLIENT);
	if (ret) {
		fail("PTO_IOC_SET_ROLE client", ret);
		return ret;
	}
	ret = pto_xioctl(t->client, PTO_IOC_GM_ALLOC, &t->a);
	if (ret) {
		fail("PTO_IOC_GM_ALLOC", ret);
		return ret;
	}
	printf("client    buffer %u: ", t->a.handle);
	print_size("", t->o->len);
	printf(" at device address 0x%llx, mmap offset 0x%llx"
	       "\n", (unsigned long long)t->a.dev_addr,
	       (unsigned long long)t->a.mmap_offset);

	/* What the daemon checks on every address a client names. */
	l.dev_addr = t->a.dev_addr;
	l.len = t->o->len;
	ret = pto_xioctl(t->client, PTO_IOC_GM_LOOKUP, &l);
	if (ret || l.handle != t->a.handle) {
		fail("PTO_IOC_GM_LOOKUP", ret ? ret : -EIO);
		return ret ? ret : -EIO;
	}

	t->cmap = mmap(NULL, t->o->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       t->client, (off_t)t->a.mmap_offset);
	if (t->cmap == MAP_FAILED) {
		ret = -errno;
		fail("mmap of the client buffer", ret);
		return ret;
	}
	return 0;
}

/* The second file (AICPU or executor) maps all of GM. */
static int map_view(struct trip *t)
{
	int ret;

	t->viewer = open_gm_viewer(t->o->dev, &t->role);
	if (t->viewer < 0) {
		ret = t->viewer;
		fail("second file (AICPU or executor role)", ret);
		return ret;
	}
	t->gm = mmap(NULL, t->info->gm_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     t->viewer, (off_t)t->info->gm_mmap_offset);
	if (t->gm == MAP_FAILED) {
		ret = -errno;
		fail("mmap of the whole GM", ret);
		return ret;
	}
	t->gview = (uint32_t *)(t->gm + (t->a.dev_addr - t->info->gm_dev_base));
	printf("%-9.9s whole GM mapped as %s, buffer at offset 0x%llx"
	       "\n", "view", t->role,
	       (unsigned long long)(t->a.dev_addr - t->info->gm_dev_base));
	return 0;
}

/* The client's pattern read through the view, the view's through the client. */
static int exchange(struct trip *t)
{
	size_t words = t->o->len / 4;
	double t0;
	int ret;

	t0 = now_s();
	ret = report("client -> GM view", t->gview, words, 0xc0ffee00);
	t->t_vr = now_s() - t0;
	if (ret)
		return ret;
	t0 = now_s();
	fill(t->gview, words, 0x5eed0000);
	t->t_vw = now_s() - t0;
	t0 = now_s();
	ret = report("GM view -> client", t->cmap, words, 0x5eed0000);
	t->t_cr = now_s() - t0;
	if (ret)
		return ret;

	printf("moved     ");
	print_size("", 4 * t->o->len);
	printf(": client write %.1f ms, view read %.1f ms, view write %.1f ms, "
	       "client read %.1f ms\n", t->t_cw * 1e3, t->t_vr * 1e3,
	       t->t_vw * 1e3, t->t_cr * 1e3);
	printf("verified  client -> GM view and GM view -> client: OK\n");
	return 0;
}

/* Free while mapped: the memory comes back after munmap. */
static int free_buffer(struct trip *t)
{
	struct pto_gm_free f = { .size = sizeof(f), .handle = t->a.handle };
	struct pto_info after;
	int ret;

	ret = pto_xioctl(t->client, PTO_IOC_GM_FREE, &f);
	if (ret) {
		fail("PTO_IOC_GM_FREE", ret);
		return ret;
	}
	munmap(t->cmap, t->o->len);
	t->cmap = MAP_FAILED;
	ret = pto_get_info(t->client, &after);
	if (ret) {
		fail("PTO_IOC_GET_INFO", ret);
		return ret;
	}
	if (after.gm_free != t->info->gm_free) {
		fprintf(stderr, "%s: gm_free %llu after free, %llu"
			" before\n", prog, (unsigned long long)after.gm_free,
			(unsigned long long)t->info->gm_free);
		return -EIO;
	}
	printf("freed     buffer %u, GM free again: ", t->a.handle);
	print_size("", after.gm_free);
	printf("\n");
	return 0;
}

static int round_trip(const struct opts *o, const struct pto_info *info)
{
	struct trip t = {
		.o = o, .info = info, .client = -1, .viewer = -1,
		.a = { .size = sizeof(t.a), .len = o->len },
		.cmap = MAP_FAILED, .gm = MAP_FAILED, .role = "",
	};
	double t0;
	int ret;

	ret = client_buffer(&t);
	if (!ret) {
		t0 = now_s();
		fill(t.cmap, o->len / 4, 0xc0ffee00);
		t.t_cw = now_s() - t0;
		ret = map_view(&t);
	}
	if (!ret)
		ret = exchange(&t);
	if (!ret)
		ret = free_buffer(&t);

	if (t.gm != MAP_FAILED)
		munmap(t.gm, info->gm_size);
	if (t.cmap != MAP_FAILED)
		munmap(t.cmap, o->len);
	if (t.viewer >= 0)
		close(t.viewer);
	if (t.client >= 0)
		close(t.client);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEV] [-s SIZE[k|m|g]] [-i]\n"
		"  -d DEV   device (default /dev/pto0)\n"
		"  -s SIZE  buffer size (default 1m)\n"
		"  -i       print the device information only\n", prog);
}

/* -s: SIZE[k|m|g], not 0, a multiple of 4 (the round trip's words) */
static int parse_size(const char *s, unsigned long long *out)
{
	const char *end;
	uint64_t v;

	if (pto_parse_size(s, 0, &v, &end) || *end || !v || v % 4)
		return -EINVAL;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .dev = "/dev/pto0", .len = 1 << 20 };
	struct pto_info info;
	bool info_only = false, sized = false;
	int fd, opt, ret;

	while ((opt = getopt(argc, argv, "d:s:ih")) != -1) {
		switch (opt) {
		case 'd':
			o.dev = optarg;
			break;
		case 's':
			if (parse_size(optarg, &o.len)) {
				fprintf(stderr, "%s: bad size '%s' (bytes, "
					"k, m or g suffix; a non-zero multiple "
					"of 4)\n", prog, optarg);
				return 2;
			}
			sized = true;
			break;
		case 'i':
			info_only = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (a device is "
			"named with -d)\n", prog, argv[optind]);
		return 2;
	}
	if (info_only && sized) {
		fprintf(stderr, "%s: -i prints the device's info only: it "
			"takes no -s\n", prog);
		return 2;
	}

	fd = pto_open_dev(o.dev);
	if (fd < 0) {
		fail(o.dev, fd);
		if (fd == -ENOENT)
			fprintf(stderr, "%s: is pto.ko loaded?\n", prog);
		return 1;
	}
	ret = print_info(fd, o.dev, &info);
	close(fd);
	if (ret)
		return 1;
	if (info_only)
		return 0;
	if (o.len > info.gm_free) {
		fprintf(stderr, "%s: %llu bytes asked, %llu"
			" free in GM\n", prog, o.len,
			(unsigned long long)info.gm_free);
		return 1;
	}
	ret = round_trip(&o, &info);
	printf("result    %s\n", ret ? "FAIL" : "PASS");
	return ret ? 1 : 0;
}
