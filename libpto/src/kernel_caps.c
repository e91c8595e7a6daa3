// SPDX-License-Identifier: MIT
/*
 * kernel_caps.c - what libpto checks of a kernel .so before it sends it
 *
 * A 64-bit ELF shared object (not an executable, which dlopen() refuses)
 * that exports the function pto_kernel_entry, so that a kernel pto-aicore
 * could never run is refused at pto_kernel_load() with the reason rather
 * than at its first task. PTO_KERNEL_REQUIRES(caps) defines the exported
 * constant pto_kernel_required_caps, read from the image too (dynamic
 * symbol table, then the bytes of the section holding it). No code of
 * the kernel runs in the client to find any of this out.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pto/pto_kernel.h>

#include "client.h"

/* @n bytes at @off of the image, or NULL if they are not all in it. */
static const void *at(const void *so, size_t len, uint64_t off, uint64_t n)
{
	if (off > len || n > len - off)
		return NULL;
	return (const uint8_t *)so + off;
}

/*
 * A header or table entry of @n bytes at @off: in the image and 8-byte
 * aligned, as every ELF64 header and entry is (@so is aligned), or NULL.
 */
static const void *entry_at(const void *so, size_t len, uint64_t off,
			    uint64_t n)
{
	return off % 8 ? NULL : at(so, len, off, n);
}

/* The value of the 8-byte object @sym into *@out: 0 or -ENOEXEC. */
static int read_sym(const void *so, size_t len, const Elf64_Ehdr *eh,
		    const Elf64_Sym *sym, uint64_t *out)
{
	const Elf64_Shdr *sh;
	const void *p;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= eh->e_shnum ||
	    sym->st_size != sizeof(uint64_t))
		return -ENOEXEC;
	sh = entry_at(so, len, eh->e_shoff + (uint64_t)sym->st_shndx * eh->e_shentsize,
		sizeof(*sh));
	if (!sh || sh->sh_type == SHT_NOBITS || sym->st_value < sh->sh_addr)
		return -ENOEXEC;
	p = at(so, len, sh->sh_offset + (sym->st_value - sh->sh_addr),
	       sizeof(uint64_t));
	if (!p)
		return -ENOEXEC;
	memcpy(out, p, sizeof(*out));
	return 0;
}

/* Is the image's DT_FLAGS_1 marked DF_1_PIE (an executable)? */
static bool is_pie(const void *so, size_t len, const Elf64_Shdr *sh)
{
	uint64_t k, n = sh->sh_size / sizeof(Elf64_Dyn);

	for (k = 0; k < n; k++) {
		const Elf64_Dyn *d = entry_at(so, len, sh->sh_offset +
					k * sizeof(Elf64_Dyn),
					sizeof(Elf64_Dyn));

		if (!d || d->d_tag == DT_NULL)
			break;
		if (d->d_tag == DT_FLAGS_1 && (d->d_un.d_val & DF_1_PIE))
			return true;
	}
	return false;
}

/*
 * Walk the dynamic symbols of section @sh: whether the kernel's entry
 * function is defined (*@entry), and its pto_kernel_required_caps into
 * *@caps. -ENOEXEC, and *@why, if the table cannot be read.
 */
static int scan_dynsym(const void *so, size_t len, const Elf64_Ehdr *eh,
		       const Elf64_Shdr *sh, bool *entry, uint64_t *caps,
		       const char **why)
{
	const Elf64_Shdr *str;
	const char *names;
	uint64_t k, nsym;
	int ret;

	*why = "its dynamic symbol table lies outside the file or is damaged (truncated?)";
	if (sh->sh_link >= eh->e_shnum ||
	    !at(so, len, sh->sh_offset, sh->sh_size))
		return -ENOEXEC;
	str = entry_at(so, len, eh->e_shoff + (uint64_t)sh->sh_link * sizeof(Elf64_Shdr),
		 sizeof(Elf64_Shdr));
	names = str ? at(so, len, str->sh_offset, str->sh_size) : NULL;
	/* a string table ends with a NUL: every name in it is terminated */
	if (!names || !str->sh_size || names[str->sh_size - 1])
		return -ENOEXEC;
	nsym = sh->sh_size / sizeof(Elf64_Sym);
	for (k = 0; k < nsym; k++) {
		const Elf64_Sym *sym = entry_at(so, len, sh->sh_offset +
					  k * sizeof(Elf64_Sym),
					  sizeof(Elf64_Sym));
		const char *name;

		if (!sym || sym->st_name >= str->sh_size)
			return -ENOEXEC;
		name = names + sym->st_name;
		if (!strcmp(name, PTO_KERNEL_REQUIRES_SYMBOL)) {
			ret = read_sym(so, len, eh, sym, caps);
			if (ret) {
				*why = PTO_KERNEL_REQUIRES_SYMBOL " cannot be read: not an 8-byte constant in the file (use PTO_KERNEL_REQUIRES)";
				return ret;
			}
		} else if (!strcmp(name, PTO_KERNEL_ENTRY_SYMBOL) &&
			   sym->st_shndx != SHN_UNDEF &&
			   ELF64_ST_BIND(sym->st_info) != STB_LOCAL &&
			   ELF64_ST_TYPE(sym->st_info) != STT_OBJECT) {
			/* a function, an IFUNC, or untyped (assembly) */
			*entry = true;
		}
	}
	return 0;
}

/*
 * The program headers, what dlopen() maps: every segment's bytes in the
 * file and no more of them than of its memory, at least one loadable
 * segment. dlopen() trusts them; a segment past the file's end faults
 * inside it, in the process that loads the kernel (pto-aicore, or the
 * client's sandbox), not here. 0, or -ENOEXEC and *@why.
 */
static int phdrs_check(const void *so, size_t len, const Elf64_Ehdr *eh,
		       const char **why)
{
	bool load = false;
	uint32_t i;

	*why = "its program headers lie outside the file or are damaged (truncated?)";
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = entry_at(so, len, eh->e_phoff +
					  (uint64_t)i * sizeof(Elf64_Phdr),
					  sizeof(Elf64_Phdr));

		if (!ph)
			return -ENOEXEC;
		if (ph->p_type != PT_LOAD && ph->p_type != PT_DYNAMIC)
			continue;
		if (ph->p_filesz && !at(so, len, ph->p_offset, ph->p_filesz)) {
			*why = "a segment lies past the end of the file (truncated?)";
			return -ENOEXEC;
		}
		if (ph->p_type == PT_LOAD) {
			if (ph->p_filesz > ph->p_memsz ||
			    (ph->p_align & (ph->p_align - 1)) ||
			    ((ph->p_offset - ph->p_vaddr) &
			     (ph->p_align ? ph->p_align - 1 : 0)))
				return -ENOEXEC;
			load = true;
		}
	}
	if (!load) {
		*why = "no loadable segment";
		return -ENOEXEC;
	}
	return 0;
}

/* kernel_image_check() of an image at an 8-byte aligned address. */
static int image_check(const void *so, size_t len, uint64_t *caps,
		       const char **why)
{
	const Elf64_Ehdr *eh = at(so, len, 0, sizeof(Elf64_Ehdr));
	bool entry = false, pie = false, dynsym = false, dynamic = false;
	uint32_t i;
	int ret;

	*caps = 0;
	*why = "not a 64-bit ELF shared object";
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_DYN)
		return -ENOEXEC;
	ret = phdrs_check(so, len, eh, why);
	if (ret)
		return ret;
	*why = "its section headers lie outside the file or are damaged (truncated?)";
	if (eh->e_shnum && eh->e_shentsize != sizeof(Elf64_Shdr))
		return -ENOEXEC;
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = entry_at(so, len, eh->e_shoff +
					  (uint64_t)i * sizeof(Elf64_Shdr),
					  sizeof(Elf64_Shdr));

		if (!sh)
			return -ENOEXEC;
		if (sh->sh_type != SHT_DYNAMIC && sh->sh_type != SHT_DYNSYM)
			continue;
		/*
		 * A linker writes one of each; more, all over the same
		 * table, would make this check quadratic in the file's size.
		 */
		if (sh->sh_type == SHT_DYNAMIC ? dynamic : dynsym) {
			*why = "more than one dynamic section or dynamic symbol table (damaged?)";
			return -ENOEXEC;
		}
		if (sh->sh_type == SHT_DYNAMIC) {
			dynamic = true;
			pie = is_pie(so, len, sh);
		} else {
			dynsym = true;
			ret = scan_dynsym(so, len, eh, sh, &entry, caps, why);
			if (ret)
				return ret;
		}
	}
	if (pie) {
		*why = "a position-independent executable, not a shared object (link it with -shared)";
		return -ENOEXEC;
	}
	/* without section headers (stripped) there is no table to look in */
	if (!entry && dynsym) {
		*why = "exports no function " PTO_KERNEL_ENTRY_SYMBOL
		       " (built with -fvisibility=hidden? then mark it visible)";
		return -ENOEXEC;
	}
	*why = NULL;
	return 0;
}

int kernel_image_check(const void *so, size_t len, uint64_t *caps,
		       const char **why)
{
	void *copy;
	int ret;

	if (!((uintptr_t)so % 8))
		return image_check(so, len, caps, why);
	/* the caller's buffer, wherever it is: its headers read aligned */
	*caps = 0;
	*why = "out of memory";
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, so, len);
	ret = image_check(copy, len, caps, why);
	free(copy);
	return ret;
}
