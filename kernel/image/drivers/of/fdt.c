// SPDX-License-Identifier: MIT
/*
 * Reading the flattened device tree, after drivers/of/fdt.c. head.S keeps
 * the boot x0 in __fdt_pointer, as Linux's does: the address kpemu loaded
 * the blob at; QEMU passes no tree to an ELF kernel (x0 = 0), so under
 * QEMU there is no tree and no device found in it.
 *
 * The walk trusts nothing: every offset is checked against totalsize, so
 * a corrupt blob yields "not found", never a fault.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/of_fdt.h>
#include <asm/memory.h>
#include <net/checksum.h>

#define FDT_MAGIC	0xd00dfeed
#define FDT_BEGIN_NODE	1
#define FDT_END_NODE	2
#define FDT_PROP	3
#define FDT_NOP		4
#define FDT_END		9
#define FDT_MAX_SIZE	(2UL << 20)

/* RAM as QEMU virt places it; the blob must lie inside. */
#define FDT_RAM_BASE	0x40000000UL
#define FDT_RAM_MAX	(1UL << 36)

struct fdt_header {
	__be32 magic;
	__be32 totalsize;
	__be32 off_dt_struct;
	__be32 off_dt_strings;
	__be32 off_mem_rsvmap;
	__be32 version;
	__be32 last_comp_version;
	__be32 boot_cpuid_phys;
	__be32 size_dt_strings;
	__be32 size_dt_struct;
};

static inline u32 be32(const void *p)
{
	return ntohl(*(const __be32 *)p);
}

/* arch/arm64/kernel/setup.c: written by head.S before start_kernel() */
u64 __fdt_pointer;

const void *of_get_fdt(void)
{
	unsigned long pa = __fdt_pointer;
	const struct fdt_header *h = __va(pa);

	/* head.S's linear map covers the gigabytes up to the blob */
	if (pa < FDT_RAM_BASE || pa >= FDT_RAM_BASE + FDT_RAM_MAX || (pa & 7))
		return NULL;
	if (be32(&h->magic) != FDT_MAGIC || be32(&h->totalsize) > FDT_MAX_SIZE)
		return NULL;
	return h;
}

/* Whether the string list @val (@len bytes) holds @compat. */
static bool compat_match(const char *val, u32 len, const char *compat)
{
	size_t n = strlen(compat);
	u32 i = 0;

	while (i < len) {
		size_t l = strnlen(val + i, len - i);

		if (l == n && !memcmp(val + i, compat, n))
			return true;
		i += l + 1;
	}
	return false;
}

int of_find_compatible_device(const char *compat, struct of_device_res *res)
{
	const struct fdt_header *h = of_get_fdt();
	const u8 *blob = (const u8 *)h;
	u32 total, off, end, strs;
	int depth = 0, match_depth = -1;
	struct of_device_res r = { 0 };

	if (!h)
		return -ENODEV;
	total = be32(&h->totalsize);
	off = be32(&h->off_dt_struct);
	end = off + be32(&h->size_dt_struct);
	strs = be32(&h->off_dt_strings);
	if (end > total || off > end || strs > total)
		return -ENODEV;

	while (off + 4 <= end) {
		u32 tok = be32(blob + off);

		off += 4;
		switch (tok) {
		case FDT_BEGIN_NODE: {
			const char *name = (const char *)blob + off;
			size_t n = strnlen(name, end - off);

			off += n + 1;
			off = ALIGN(off, 4);
			depth++;
			if (match_depth < 0) {
				size_t i;

				memset(&r, 0, sizeof(r));
				/* "pl031@9010000": the name is what precedes the '@' */
				for (i = 0; i < n && i < sizeof(r.name) - 1 && name[i] != '@'; i++)
					r.name[i] = name[i];
			}
			break;
		}
		case FDT_END_NODE:
			if (depth == match_depth) {
				*res = r;
				return 0;
			}
			depth--;
			break;
		case FDT_PROP: {
			u32 len, nameoff;
			const char *name, *val;

			if (off + 8 > end)
				return -ENODEV;
			len = be32(blob + off);
			nameoff = be32(blob + off + 4);
			off += 8;
			if (len > end - off || strs + nameoff >= total)
				return -ENODEV;
			name = (const char *)blob + strs + nameoff;
			val = (const char *)blob + off;
			if (!strcmp(name, "compatible") && match_depth < 0 &&
			    compat_match(val, len, compat))
				match_depth = depth;
			else if (!strcmp(name, "reg") && len >= 16) {
				r.base = (u64)be32(val) << 32 | be32(val + 4);
				r.size = (u64)be32(val + 8) << 32 | be32(val + 12);
			} else if (!strcmp(name, "interrupts") && len >= 12) {
				/* GIC specifier: type (0 SPI, 1 PPI), number, flags */
				r.irq = be32(val + 4) + (be32(val) ? 16 : 32);
			}
			off = ALIGN(off + len, 4);
			break;
		}
		case FDT_NOP:
			break;
		default:	/* FDT_END or garbage */
			return -ENODEV;
		}
	}
	return -ENODEV;
}
