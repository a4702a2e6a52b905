/* SPDX-License-Identifier: MIT */
/* Internet checksums, as include/net/checksum.h + asm-generic/checksum.h. */
#ifndef _NET_CHECKSUM_H
#define _NET_CHECKSUM_H

#include <linux/types.h>

__wsum csum_partial(const void *buff, int len, __wsum sum);
__sum16 ip_fast_csum(const void *iph, unsigned int ihl);
__wsum csum_tcpudp_nofold(__be32 saddr, __be32 daddr, u32 len, u8 proto, __wsum sum);

static inline __sum16 csum_fold(__wsum csum)
{
	u32 sum = (u32)csum;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__sum16)~sum;
}

static inline __sum16 csum_tcpudp_magic(__be32 saddr, __be32 daddr, u32 len,
					u8 proto, __wsum sum)
{
	return csum_fold(csum_tcpudp_nofold(saddr, daddr, len, proto, sum));
}

#define htons(x)	((__be16)__builtin_bswap16((u16)(x)))
#define ntohs(x)	((u16)__builtin_bswap16((__be16)(x)))
#define htonl(x)	((__be32)__builtin_bswap32((u32)(x)))
#define ntohl(x)	((u32)__builtin_bswap32((__be32)(x)))

#endif /* _NET_CHECKSUM_H */
