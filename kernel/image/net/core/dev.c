// SPDX-License-Identifier: MIT
/*
 * The receive path's entry, after net/core/dev.c: netif_receive_skb()
 * hands a packet to the packet_type registered for its protocol
 * (ip_rcv() for ETH_P_IP).
 */
#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <net/checksum.h>

#define PTYPE_HASH_SIZE	4

static struct packet_type *ptype_base[PTYPE_HASH_SIZE];

struct net_device loopback_dev = {
	.name		= "eth0",
	.ifindex	= 2,
	.state		= 1UL << __LINK_STATE_NOCARRIER,	/* until a NIC driver binds */
};

/* A driver has the link: the workload stops its packet generator. */
void netif_carrier_on(struct net_device *dev)
{
	__atomic_fetch_and(&dev->state, ~(1UL << __LINK_STATE_NOCARRIER), __ATOMIC_RELEASE);
}

void netif_carrier_off(struct net_device *dev)
{
	__atomic_fetch_or(&dev->state, 1UL << __LINK_STATE_NOCARRIER, __ATOMIC_SEQ_CST);
}

/*
 * netif_tx_disable - stop transmits and wait for those in flight
 *
 * Carrier off, then wait until no CPU is inside dev_queue_xmit(): after
 * this the driver's ndo_start_xmit is not running and will not be called,
 * so a module may free it (Linux: dev_deactivate + synchronize_net).
 */
void netif_tx_disable(struct net_device *dev)
{
	netif_carrier_off(dev);
	while (__atomic_load_n(&dev->tx_active, __ATOMIC_SEQ_CST))
		asm volatile("yield" : : : "memory");
}

/**
 *	dev_queue_xmit - transmit a buffer
 *	@skb: buffer to transmit (an IPv4 packet: eth0 carries no link header)
 *
 *	Hands it to the driver's ndo_start_xmit; without a driver (or while it
 *	is busy) the packet is dropped, as a qdisc-less device drops it.
 */
int dev_queue_xmit(struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;
	const struct net_device_ops *ops;
	unsigned int len = skb->len;
	int sent = 0;

	/* counted in flight before the carrier check: netif_tx_disable() */
	__atomic_fetch_add(&dev->tx_active, 1, __ATOMIC_SEQ_CST);
	ops = READ_ONCE(dev->netdev_ops);
	if (netif_carrier_ok(dev) && ops && ops->ndo_start_xmit)
		sent = ops->ndo_start_xmit(skb, dev) == NETDEV_TX_OK;
	__atomic_fetch_sub(&dev->tx_active, 1, __ATOMIC_RELEASE);
	if (sent) {
		__atomic_fetch_add(&dev->tx_packets, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&dev->tx_bytes, len, __ATOMIC_RELAXED);
		return NET_XMIT_SUCCESS;
	}
	__atomic_fetch_add(&dev->tx_dropped, 1, __ATOMIC_RELAXED);
	kfree_skb(skb);
	return NET_XMIT_DROP;
}

void dev_add_pack(struct packet_type *pt)
{
	ptype_base[ntohs(pt->type) & (PTYPE_HASH_SIZE - 1)] = pt;
}

/**
 *	netdev_rx_handler_register - register receive handler
 *	@dev: device to register a handler for
 *	@rx_handler: receive handler to register
 *	@rx_handler_data: data pointer that is used by rx handler
 *
 *	Returns -EBUSY when a handler is already registered.
 */
int netdev_rx_handler_register(struct net_device *dev,
			       rx_handler_func_t *rx_handler,
			       void *rx_handler_data)
{
	if (dev->rx_handler)
		return -EBUSY;
	dev->rx_handler_data = rx_handler_data;
	WRITE_ONCE(dev->rx_handler, rx_handler);
	return 0;
}

void netdev_rx_handler_unregister(struct net_device *dev)
{
	WRITE_ONCE(dev->rx_handler, NULL);
	dev->rx_handler_data = NULL;
}

/**
 *	dev_get_stats	- get network device statistics
 *	@dev: device to get statistics from
 *	@storage: place to store stats
 *
 *	The driver's ndo_get_stats64 when it has one, else the core counters.
 */
struct rtnl_link_stats64 *dev_get_stats(struct net_device *dev,
					struct rtnl_link_stats64 *storage)
{
	const struct net_device_ops *ops = READ_ONCE(dev->netdev_ops);

	memset(storage, 0, sizeof(*storage));
	if (ops && ops->ndo_get_stats64) {
		ops->ndo_get_stats64(dev, storage);
	} else {
		storage->rx_packets = dev->stats.rx_packets;
		storage->rx_bytes = dev->stats.rx_bytes;
		storage->rx_errors = dev->stats.rx_errors;
		storage->rx_dropped = dev->stats.rx_dropped;
		storage->tx_packets = dev->tx_packets;
		storage->tx_bytes = dev->tx_bytes;
		storage->tx_dropped = dev->tx_dropped;
	}
	return storage;
}

static noinline int __netif_receive_skb(struct sk_buff *skb)
{
	struct net_device *orig_dev = skb->dev;
	struct packet_type *pt;
	rx_handler_func_t *rx_handler;

	rx_handler = READ_ONCE(skb->dev->rx_handler);
	if (rx_handler && rx_handler(&skb) == RX_HANDLER_CONSUMED)
		return NET_RX_SUCCESS;

	skb_reset_network_header(skb);
	pt = ptype_base[ntohs(skb->protocol) & (PTYPE_HASH_SIZE - 1)];
	if (pt && pt->type == skb->protocol)
		return pt->func(skb, skb->dev, pt, orig_dev);

	skb->dev->stats.rx_dropped++;
	kfree_skb(skb);
	return NET_RX_DROP;
}

/**
 *	netif_receive_skb - process receive buffer from network
 *	@skb: buffer to process
 *
 *	Return values (usually ignored):
 *	NET_RX_SUCCESS: no congestion
 *	NET_RX_DROP: packet was dropped
 */
int netif_receive_skb(struct sk_buff *skb)
{
	skb->dev->stats.rx_packets++;
	skb->dev->stats.rx_bytes += skb->len;
	return __netif_receive_skb(skb);
}

void net_dev_init(void)
{
	loopback_dev.ip_addr = htonl(0x0a00020f);	/* 10.0.2.15 */
}
