/* SPDX-License-Identifier: MIT */
/* Assembler symbol annotations, as Linux's include/linux/linkage.h. */
#ifndef _LINUX_LINKAGE_H
#define _LINUX_LINKAGE_H

#ifdef __ASSEMBLY__

#define SYM_FUNC_START(name)		\
	.globl name;			\
	.type name, %function;		\
	.balign 4;			\
name:

#define SYM_FUNC_START_LOCAL(name)	\
	.type name, %function;		\
	.balign 4;			\
name:

#define SYM_FUNC_END(name)		\
	.size name, . - name

#define SYM_CODE_START(name)		SYM_FUNC_START(name)
#define SYM_CODE_START_LOCAL(name)	SYM_FUNC_START_LOCAL(name)
#define SYM_CODE_END(name)		SYM_FUNC_END(name)

#define SYM_DATA_START(name)		\
	.globl name;			\
	.type name, %object;		\
name:
#define SYM_DATA_END(name)		\
	.size name, . - name

#endif /* __ASSEMBLY__ */
#endif /* _LINUX_LINKAGE_H */
