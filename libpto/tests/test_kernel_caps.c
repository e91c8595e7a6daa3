// SPDX-License-Identifier: MIT
/*
 * test_kernel_caps.c - what libpto checks of a kernel image before it
 * sends it (kernel_caps.c): a kernel passes with the capabilities it
 * declares; a shared object without pto_kernel_entry, one whose entry is
 * hidden, an executable, and bytes that are not a 64-bit ELF are refused
 * with -ENOEXEC and their own reason. The image is the client's own
 * input, read in the client's process: every truncation of a good kernel
 * and thousands of corrupted copies must get 0 or -ENOEXEC with a reason,
 * never a read outside the image (built with ASan and UBSan).
 * KCAPS_SEED changes the corruptions.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "tap.h"
#include "test_rng.h"

#if !defined(KCAPS_DIR) || !defined(K_CAPS)
#error "KCAPS_DIR, K_CAPS: where the Makefile built the test images, k_ok.so's caps"
#endif
#define CORRUPTIONS	4000

/* The file @name of KCAPS_DIR into a malloc()ed buffer of *@len bytes. */
static void *load(const char *name, size_t *len)
{
	char path[512];
	struct stat st;
	void *buf = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", KCAPS_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0)
		goto out;
	buf = malloc((size_t)st.st_size);
	if (buf && read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	*len = (size_t)st.st_size;
out:
	if (fd >= 0)
		close(fd);
	if (!buf)
		tap_diag("cannot read %s", path);
	return buf;
}

/* @img checked in a buffer of exactly @len bytes (ASan sees any overrun). */
static int check(const void *img, size_t len, uint64_t *caps, const char **why)
{
	void *copy = malloc(len ? len : 1);
	int ret;

	if (!copy)
		abort();
	memcpy(copy, img, len);
	ret = kernel_image_check(copy, len, caps, why);
	free(copy);
	return ret;
}

static void refused(const char *name, const char *reason)
{
	const char *why = NULL;
	uint64_t caps;
	size_t len;
	void *img = load(name, &len);
	int ret;

	if (!img) {
		ok(0, "%s", name);
		return;
	}
	ret = check(img, len, &caps, &why);
	ok(ret == -ENOEXEC && why && strstr(why, reason),
	   "%s refused: %d, \"%s\"", name, ret, why ? why : "(no reason)");
	free(img);
}

/* Outcome of a damaged image: 0, or -ENOEXEC with a reason. */
static bool sane(int ret, const char *why)
{
	return ret == 0 ? why == NULL : ret == -ENOEXEC && why && *why;
}

/*
 * The kernel with SECTION_COPIES more section headers, each the header
 * of its section of @type (its dynamic symbol table or dynamic section,
 * @what): checked once, each would cost a scan of the whole section.
 * Refused at the second.
 */
#define SECTION_COPIES	4096

static void section_repeated(const unsigned char *img, size_t len,
			     uint32_t type, const char *what)
{
	const Elf64_Ehdr *eh = (const void *)img;
	size_t hdrs = (size_t)eh->e_shnum * sizeof(Elf64_Shdr);
	size_t off = (len + 7) & ~(size_t)7, n = 0;
	const Elf64_Shdr *dup = NULL;
	const char *why = NULL;
	Elf64_Shdr *sh;
	unsigned char *c;
	uint64_t caps;
	uint32_t i;
	int ret;

	c = calloc(1, off + hdrs + SECTION_COPIES * sizeof(Elf64_Shdr));
	if (!c) {
		ok(0, "no memory for a kernel of repeated %s", what);
		return;
	}
	memcpy(c, img, len);
	memcpy(c + off, img + eh->e_shoff, hdrs);
	sh = (Elf64_Shdr *)(void *)(c + off);
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == type)
			dup = &sh[i];
	for (n = 0; dup && n < SECTION_COPIES; n++)
		sh[eh->e_shnum + n] = *dup;
	((Elf64_Ehdr *)(void *)c)->e_shoff = off;
	((Elf64_Ehdr *)(void *)c)->e_shnum = (uint16_t)(eh->e_shnum + n);
	ret = check(c, off + hdrs + n * sizeof(Elf64_Shdr), &caps, &why);
	ok(dup && ret == -ENOEXEC && why && strstr(why, "more than one"),
	   "%zu more headers of its %s: \"%s\"", n, what, why ? why : "");
	free(c);
}

/*
 * The kernel with its dynamic string table's last byte not a NUL: a name
 * could run to its end, and looking for each name's end would cost the
 * table's size a symbol. Refused.
 */
static void dynstr_unterminated(const unsigned char *img, size_t len)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);
	const char *why = NULL;
	unsigned char *c;
	uint64_t caps;
	uint32_t i;
	int ret;

	for (i = 0; i < eh->e_shnum && sh[i].sh_type != SHT_DYNSYM; i++)
		;
	c = malloc(len);
	if (!c || i == eh->e_shnum) {
		ok(0, "a kernel with a dynamic symbol table to damage");
		free(c);
		return;
	}
	memcpy(c, img, len);
	c[sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size - 1] = 'x';
	ret = check(c, len, &caps, &why);
	ok(ret == -ENOEXEC && why && strstr(why, "dynamic symbol table"),
	   "its string table without its last NUL: \"%s\"", why ? why : "");
	free(c);
}

/*
 * The kernel with its program header @idx'th of type @type changed by
 * @edit: refused with @reason, as dlopen() would fault on it in the
 * process that loads it.
 */
struct phdr_case {
	uint32_t type;
	void (*edit)(Elf64_Phdr *ph, size_t len);	/* NULL: made PT_NULL */
	const char *what, *reason;
};

static void phdr_damaged(const unsigned char *img, size_t len,
			 const struct phdr_case *pc)
{
	void (*edit)(Elf64_Phdr *ph, size_t len) = pc->edit;
	const Elf64_Ehdr *eh = (const void *)img;
	uint32_t type = pc->type;
	const char *why = NULL;
	unsigned char *c = malloc(len);
	Elf64_Phdr *ph, *last = NULL;
	uint64_t caps;
	uint32_t i;
	int ret;

	if (!c)
		abort();
	memcpy(c, img, len);
	ph = (Elf64_Phdr *)(void *)(c + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == type) {
			last = &ph[i];
			if (edit)
				edit(last, len);
		}
	if (!edit && last) {
		/* every segment of @type made PT_NULL */
		for (i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == type)
				ph[i].p_type = PT_NULL;
	}
	ret = check(c, len, &caps, &why);
	ok(last && ret == -ENOEXEC && why && strstr(why, pc->reason),
	   "%s: \"%s\"", pc->what, why ? why : "");
	free(c);
}

static void past_end(Elf64_Phdr *ph, size_t len)
{
	(void)len;
	ph->p_offset += 0x100000;
}

static void one_past_end(Elf64_Phdr *ph, size_t len)
{
	ph->p_filesz = len - ph->p_offset + 1;
	if (ph->p_memsz < ph->p_filesz)
		ph->p_memsz = ph->p_filesz;
}

static void more_file_than_memory(Elf64_Phdr *ph, size_t len)
{
	(void)len;
	if (ph->p_filesz)
		ph->p_memsz = ph->p_filesz - 1;
}

static void misaligned(Elf64_Phdr *ph, size_t len)
{
	(void)len;
	if (ph->p_align > 1)
		ph->p_vaddr += 8;
}

static const struct phdr_case phdr_cases[] = {
	{ PT_LOAD, past_end,
	  "its loadable segments moved 1 MiB past the file's end",
	  "past the end of the file" },
	{ PT_DYNAMIC, past_end, "its dynamic segment moved past the file's end",
	  "past the end of the file" },
	{ PT_LOAD, one_past_end,
	  "a loadable segment one byte longer than the file",
	  "past the end of the file" },
	{ PT_LOAD, more_file_than_memory,
	  "more of a segment in the file than in memory", "program headers" },
	{ PT_LOAD, misaligned,
	  "a segment whose address and offset disagree modulo its alignment",
	  "program headers" },
	{ PT_LOAD, NULL, "no loadable segment", "no loadable segment" },
};

int main(void)
{
	static const char not_elf[] = "#!/bin/sh\necho not a kernel\n";
	unsigned char elf32[64] = { 0x7f, 'E', 'L', 'F', ELFCLASS32 };
	const char *why = NULL;
	uint64_t caps = 0, seed, seed0;
	size_t len, n, bad = 0, passed = 0;
	unsigned char *img;
	int ret;

	img = load("k_ok.so", &len);
	if (!ok(img != NULL, "a kernel image"))
		return tap_done();
	ret = check(img, len, &caps, &why);
	ok(ret == 0 && caps == K_CAPS && !why,
	   "a kernel passes with the capabilities it declares (%d, caps %#llx)",
	   ret, (unsigned long long)caps);
	{
		unsigned char *odd = malloc(len + 1);

		memcpy(odd + 1, img, len);
		caps = 0;
		ret = kernel_image_check(odd + 1, len, &caps, &why);
		ok(ret == 0 && caps == K_CAPS,
		   "the same kernel at an odd address (%d, caps %#llx)", ret,
		   (unsigned long long)caps);
		free(odd);
	}
	for (n = 0; n < sizeof(phdr_cases) / sizeof(phdr_cases[0]); n++)
		phdr_damaged(img, len, &phdr_cases[n]);
	refused("k_noentry.so", "exports no function pto_kernel_entry");
	refused("k_hidden.so", "exports no function pto_kernel_entry");
	refused("k_pie", "a position-independent executable");
	ret = check(not_elf, sizeof(not_elf) - 1, &caps, &why);
	ok(ret == -ENOEXEC && why && strstr(why, "not a 64-bit ELF"),
	   "a shell script: \"%s\"", why ? why : "");
	ret = check(elf32, sizeof(elf32), &caps, &why);
	ok(ret == -ENOEXEC && why && strstr(why, "not a 64-bit ELF"),
	   "a 32-bit ELF header: \"%s\"", why ? why : "");
	ret = check(img, len / 2, &caps, &why);
	ok(ret == -ENOEXEC && why && strstr(why, "truncated"),
	   "half of the kernel: \"%s\"", why ? why : "");
	section_repeated(img, len, SHT_DYNSYM, "dynamic symbol table");
	section_repeated(img, len, SHT_DYNAMIC, "dynamic section");
	dynstr_unterminated(img, len);

	/* every length up to 4 KiB, then one in 61 */
	for (n = 0; n < len; n += n < 4096 ? 1 : 61) {
		why = NULL;
		ret = check(img, n, &caps, &why);
		if (!sane(ret, why)) {
			if (!bad++)
				tap_diag("%zu of %zu bytes: %d", n, len, ret);
		} else if (!ret) {
			passed++;
		}
	}
	ok(!bad, "every truncation: 0 or -ENOEXEC with a reason (%zu wrong)",
	   bad);
	ok(!passed, "no truncated kernel passes (%zu did)", passed);

	tap_env_u64("KCAPS_SEED", 0x6b63617073ULL, 1, UINT64_MAX, &seed0);
	seed = seed0;
	bad = 0;
	for (n = 0; n < CORRUPTIONS; n++) {
		unsigned char *c = malloc(len);
		uint64_t r = test_rng_next(&seed);
		uint32_t k, flips = 1 + (uint32_t)(r % 8);
		/* most corruptions in the ELF and section headers */
		size_t span = r >> 32 & 1 ? len : 64;

		memcpy(c, img, len);
		for (k = 0; k < flips; k++) {
			r = test_rng_next(&seed);
			c[(r >> 8) % (r & 1 ? span : len)] = (unsigned char)r;
		}
		why = NULL;
		ret = check(c, len, &caps, &why);
		if (!sane(ret, why) && !bad++)
			tap_diag("corruption %zu of KCAPS_SEED=%#llx: %d", n,
				 (unsigned long long)seed0, ret);
		free(c);
	}
	ok(!bad, "%d corrupted kernels: 0 or -ENOEXEC with a reason (%zu wrong)",
	   CORRUPTIONS, bad);
	free(img);
	return tap_done();
}
