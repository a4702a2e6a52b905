// SPDX-License-Identifier: MIT
/*
 * e1000ish: a network driver module, after the shape of Linux's
 * drivers/net/ethernet (an rx handler on the receive path and
 * ndo_get_stats64). Loaded, it takes over eth0: every packet the workload
 * receives through netif_receive_skb() passes vnet_rx(), and the
 * workload's dev_get_stats() calls vnet_get_stats64().
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/netdevice.h>

struct vnet_priv {
	u64 rx_packets;
	u64 rx_bytes;
	u64 stats_calls;
};

static struct vnet_priv vnet_priv;

/* Counted, then passed on to the protocol handlers. */
static noinline rx_handler_result_t vnet_rx(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct vnet_priv *priv = skb->dev->rx_handler_data;

	priv->rx_packets++;
	priv->rx_bytes += skb->len;
	return RX_HANDLER_PASS;
}

static noinline void vnet_get_stats64(struct net_device *dev,
				      struct rtnl_link_stats64 *stats)
{
	struct vnet_priv *priv = dev->rx_handler_data;

	priv->stats_calls++;
	stats->rx_packets = priv->rx_packets;
	stats->rx_bytes = priv->rx_bytes;
	stats->rx_dropped = dev->stats.rx_dropped;
}

static const struct net_device_ops vnet_netdev_ops = {
	.ndo_get_stats64	= vnet_get_stats64,
};

static int __init vnet_init(void)
{
	struct net_device *dev = &loopback_dev;
	int err;

	err = netdev_rx_handler_register(dev, vnet_rx, &vnet_priv);
	if (err)
		return err;
	WRITE_ONCE(dev->netdev_ops, &vnet_netdev_ops);
	pr_info("e1000ish: %s: link up\n", dev->name);
	return 0;
}

static void __exit vnet_exit(void)
{
	struct net_device *dev = &loopback_dev;

	WRITE_ONCE(dev->netdev_ops, NULL);
	netdev_rx_handler_unregister(dev);
	pr_info("e1000ish: %s: removed\n", dev->name);
}

module_init(vnet_init);
module_exit(vnet_exit);
MODULE_LICENSE("MIT");
