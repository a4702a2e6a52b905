/* SPDX-License-Identifier: MIT */
/*
 * The initramfs (usr/initramfs_data.S in Linux): the cpio archive that
 * usr/gen_init_cpio builds from usr/initramfs_list, in .init.rodata.
 */
	.section .init.rodata,"a"
	.balign	4
	.globl	__initramfs_start
__initramfs_start:
	.incbin	".obj/usr/initramfs_data.cpio"
	.globl	__initramfs_end
__initramfs_end:
