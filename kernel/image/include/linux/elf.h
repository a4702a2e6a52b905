/* SPDX-License-Identifier: MIT */
/* ELF64, as include/uapi/linux/elf.h (what binfmt_elf needs for static executables). */
#ifndef _LINUX_ELF_H
#define _LINUX_ELF_H

#include <linux/types.h>

#define EI_NIDENT	16
#define ELFMAG		"\177ELF"
#define SELFMAG		4
#define ELFCLASS64	2
#define ET_EXEC		2
#define EM_AARCH64	183
#define PT_LOAD		1
#define PF_X		0x1
#define PF_W		0x2
#define PF_R		0x4

#define AT_NULL		0
#define AT_PAGESZ	6
#define AT_ENTRY	9

typedef struct elf64_hdr {
	unsigned char	e_ident[EI_NIDENT];
	u16		e_type;
	u16		e_machine;
	u32		e_version;
	u64		e_entry;
	u64		e_phoff;
	u64		e_shoff;
	u32		e_flags;
	u16		e_ehsize;
	u16		e_phentsize;
	u16		e_phnum;
	u16		e_shentsize;
	u16		e_shnum;
	u16		e_shstrndx;
} Elf64_Ehdr;

typedef struct elf64_phdr {
	u32		p_type;
	u32		p_flags;
	u64		p_offset;
	u64		p_vaddr;
	u64		p_paddr;
	u64		p_filesz;
	u64		p_memsz;
	u64		p_align;
} Elf64_Phdr;

#endif /* _LINUX_ELF_H */
