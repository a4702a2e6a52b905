/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_NETDEVICE_H
#define _LINUX_NETDEVICE_H

#include <linux/types.h>
#include <linux/skbuff.h>

#define IFNAMSIZ	16
#define ETH_P_IP	0x0800

#define NET_RX_SUCCESS	0
#define NET_RX_DROP	1

/* ndo_start_xmit's answers (netdev_tx_t). */
#define NETDEV_TX_OK	0x00
#define NETDEV_TX_BUSY	0x10
typedef int netdev_tx_t;
#define NET_XMIT_SUCCESS	0x00
#define NET_XMIT_DROP		0x01

/* dev->state bits. */
#define __LINK_STATE_NOCARRIER	2

struct net_device_stats {
	unsigned long rx_packets;
	unsigned long rx_bytes;
	unsigned long rx_errors;
	unsigned long rx_dropped;
};

struct rtnl_link_stats64 {
	u64 rx_packets;
	u64 tx_packets;
	u64 rx_bytes;
	u64 tx_bytes;
	u64 rx_errors;
	u64 tx_errors;
	u64 rx_dropped;
	u64 tx_dropped;
};

struct net_device;

/* What a driver (a module: modules/e1000ish) plugs into a device. */
struct net_device_ops {
	void (*ndo_get_stats64)(struct net_device *dev,
				struct rtnl_link_stats64 *storage);
	/* Called with IRQs on; the driver owns skb from then on. */
	netdev_tx_t (*ndo_start_xmit)(struct sk_buff *skb,
				      struct net_device *dev);
};

enum rx_handler_result {
	RX_HANDLER_CONSUMED,
	RX_HANDLER_ANOTHER,
	RX_HANDLER_EXACT,
	RX_HANDLER_PASS,
};
typedef enum rx_handler_result rx_handler_result_t;
typedef rx_handler_result_t rx_handler_func_t(struct sk_buff **pskb);

struct net_device {
	char			name[IFNAMSIZ];
	int			ifindex;
	__be32			ip_addr;	/* stands in for in_device's ifa_list */
	struct net_device_stats	stats;
	const struct net_device_ops *netdev_ops;
	rx_handler_func_t	*rx_handler;
	void			*rx_handler_data;
	/* Appended, so that modules built against the older layout still
	 * find the fields above where they were. */
	unsigned long		state;		/* __LINK_STATE_* bits */
	unsigned long		tx_packets;	/* dev_queue_xmit() accounting */
	unsigned long		tx_bytes;
	unsigned long		tx_dropped;
	unsigned int		tx_active;	/* CPUs inside dev_queue_xmit() */
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
int netdev_rx_handler_register(struct net_device *dev,
			       rx_handler_func_t *rx_handler,
			       void *rx_handler_data);
void netdev_rx_handler_unregister(struct net_device *dev);
struct rtnl_link_stats64 *dev_get_stats(struct net_device *dev,
					struct rtnl_link_stats64 *storage);
int dev_queue_xmit(struct sk_buff *skb);
void netif_carrier_on(struct net_device *dev);
void netif_carrier_off(struct net_device *dev);
void netif_tx_disable(struct net_device *dev);

/* Whether a driver drives the device's link (Linux: netif_carrier_ok). */
static inline bool netif_carrier_ok(const struct net_device *dev)
{
	return !(__atomic_load_n(&dev->state, __ATOMIC_SEQ_CST) &
		 (1UL << __LINK_STATE_NOCARRIER));
}

extern struct net_device loopback_dev;

#endif /* _LINUX_NETDEVICE_H */
