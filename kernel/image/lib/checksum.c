// SPDX-License-Identifier: MIT
/*
 * Internet checksums (RFC 1071), after lib/checksum.c: csum_partial() sums
 * 16-bit big-endian words into a 32-bit accumulator in network byte order
 * (the one's complement sum is byte-order independent).
 */
#include <linux/kernel.h>
#include <net/checksum.h>

static inline unsigned short from32to16(unsigned int x)
{
	/* add up 16-bit and 16-bit for 16+c bit */
	x = (x & 0xffff) + (x >> 16);
	/* add up carry.. */
	x = (x & 0xffff) + (x >> 16);
	return x;
}

static unsigned int do_csum(const unsigned char *buff, int len)
{
	u64 result = 0;

	/*
	 * 16-bit words, as stored (little-endian loads of network data); from
	 * an 8-byte boundary on, 64-bit loads whose 32-bit halves are added:
	 * 2^16 = 1 in one's complement arithmetic, so the folded sum is the same.
	 */
	if (((unsigned long)buff & 1) == 0) {
		while (len >= 2 && ((unsigned long)buff & 7)) {
			result += *(const u16 *)buff;
			buff += 2;
			len -= 2;
		}
		while (len >= 8) {
			u64 w = *(const u64 *)buff;

			result += (w & 0xffffffff) + (w >> 32);
			buff += 8;
			len -= 8;
		}
		while (len >= 2) {
			result += *(const u16 *)buff;
			buff += 2;
			len -= 2;
		}
	} else {
		while (len >= 2) {
			result += buff[0] | (buff[1] << 8);
			buff += 2;
			len -= 2;
		}
	}
	if (len > 0)
		result += *buff;
	result = (result & 0xffffffff) + (result >> 32);
	result = (result & 0xffffffff) + (result >> 32);
	return from32to16((unsigned int)result);
}

/*
 * computes the checksum of a memory block at buff, length len,
 * and adds in "sum" (32-bit)
 */
__wsum csum_partial(const void *buff, int len, __wsum wsum)
{
	u64 result = do_csum(buff, len);

	result += wsum;
	result = (result & 0xffffffff) + (result >> 32);
	return (__wsum)((result & 0xffffffff) + (result >> 32));
}

/*
 *	This is a version of ip_compute_csum() optimized for IP headers,
 *	which always checksum on 4 octet boundaries.
 */
__sum16 ip_fast_csum(const void *iph, unsigned int ihl)
{
	return (__sum16)~do_csum(iph, ihl * 4);
}

__wsum csum_tcpudp_nofold(__be32 saddr, __be32 daddr, u32 len, u8 proto,
			  __wsum sum)
{
	u64 s = (u32)sum;

	s += (u32)saddr;
	s += (u32)daddr;
	s += (proto + len) << 8;	/* htons(proto + len) in the LE word */
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	return (__wsum)s;
}
