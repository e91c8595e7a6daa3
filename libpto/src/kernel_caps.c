// SPDX-License-Identifier: MIT
/*
 * kernel_caps.c - the capabilities a kernel .so declares it needs
 *
 * PTO_KERNEL_REQUIRES(caps) defines the exported constant
 * pto_kernel_required_caps. libpto reads it from the ELF image itself
 * (dynamic symbol table, then the bytes of the section holding it), so
 * that no code of the kernel runs in the client to find out.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include <pto/pto_kernel.h>

#include "client.h"

static const void *at(const void *so, size_t len, uint64_t off, uint64_t n)
{
	if (off > len || n > len - off)
		return NULL;
	return (const uint8_t *)so + off;
}

/* The value of the 8-byte object @sym, or -ENOENT/-ENOEXEC. */
static int read_sym(const void *so, size_t len, const Elf64_Ehdr *eh,
		    const Elf64_Sym *sym, uint64_t *out)
{
	const Elf64_Shdr *sh;
	const void *p;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= eh->e_shnum ||
	    sym->st_size != sizeof(uint64_t))
		return -ENOEXEC;
	sh = at(so, len, eh->e_shoff + (uint64_t)sym->st_shndx * eh->e_shentsize,
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

/*
 * *@caps = the kernel's pto_kernel_required_caps, 0 if it declares none.
 * -ENOEXEC if the image is not a 64-bit ELF shared object we can read.
 */
int kernel_required_caps(const void *so, size_t len, uint64_t *caps)
{
	const Elf64_Ehdr *eh = at(so, len, 0, sizeof(Elf64_Ehdr));
	uint32_t i;

	*caps = 0;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr))
		return -ENOEXEC;
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = at(so, len, eh->e_shoff +
					  (uint64_t)i * sizeof(Elf64_Shdr),
					  sizeof(Elf64_Shdr));
		const Elf64_Shdr *str;
		const char *names;
		uint64_t k, nsym;

		if (!sh)
			return -ENOEXEC;
		if (sh->sh_type != SHT_DYNSYM || sh->sh_link >= eh->e_shnum)
			continue;
		str = at(so, len, eh->e_shoff +
			 (uint64_t)sh->sh_link * sizeof(Elf64_Shdr),
			 sizeof(Elf64_Shdr));
		names = str ? at(so, len, str->sh_offset, str->sh_size) : NULL;
		if (!names || !str->sh_size)
			return -ENOEXEC;
		nsym = sh->sh_size / sizeof(Elf64_Sym);
		for (k = 0; k < nsym; k++) {
			const Elf64_Sym *sym = at(so, len, sh->sh_offset +
						  k * sizeof(Elf64_Sym),
						  sizeof(Elf64_Sym));

			if (!sym || sym->st_name >= str->sh_size)
				return -ENOEXEC;
			if (!memchr(names + sym->st_name, 0,
				    str->sh_size - sym->st_name))
				return -ENOEXEC;
			if (!strcmp(names + sym->st_name,
				    PTO_KERNEL_REQUIRES_SYMBOL))
				return read_sym(so, len, eh, sym, caps);
		}
	}
	return 0;
}
