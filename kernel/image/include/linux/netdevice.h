/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_NETDEVICE_H
#define _LINUX_NETDEVICE_H

#include <linux/types.h>
#include <linux/skbuff.h>

#define IFNAMSIZ	16
#define ETH_P_IP	0x0800

#define NET_RX_SUCCESS	0
#define NET_RX_DROP	1

struct net_device_stats {
	unsigned long rx_packets;
	unsigned long rx_bytes;
	unsigned long rx_errors;
	unsigned long rx_dropped;
};

struct net_device {
	char			name[IFNAMSIZ];
	int			ifindex;
	__be32			ip_addr;	/* stands in for in_device's ifa_list */
	struct net_device_stats	stats;
};

struct packet_type {
	__be16			type;
	struct net_device	*dev;
	int			(*func)(struct sk_buff *, struct net_device *,
					struct packet_type *, struct net_device *);
};

int netif_receive_skb(struct sk_buff *skb);
void dev_add_pack(struct packet_type *pt);
void net_dev_init(void);

extern struct net_device loopback_dev;

#endif /* _LINUX_NETDEVICE_H */
