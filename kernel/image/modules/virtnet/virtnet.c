// SPDX-License-Identifier: MIT
/*
 * virtnet: the driver of kpemu's virtual NIC (machine/virtnet.go has the
 * register map), shaped like a Linux ethernet driver such as e1000.
 *
 * Probe: the device is found in the device tree (compatible
 * "kpemu,virtnet": registers and interrupt) and its ID register checked;
 * under QEMU there is no such node and init fails with -ENODEV without
 * touching the address, which QEMU leaves unassigned.
 *
 * Rings: 64 RX descriptors, each with a 2 KiB buffer, and 32 TX
 * descriptors with 512-byte buffers, allocated at init from process
 * context (pid 1). The interrupt handler (virtnet_interrupt) acknowledges
 * ISR, copies each filled RX buffer into an skb and calls
 * netif_receive_skb() (e1000's rx_copybreak path), reposts the descriptor,
 * and reaps completed TX descriptors. ndo_start_xmit copies a frame into
 * the next TX buffer and rings the TAIL doorbell.
 *
 * eth0 carries bare IPv4 packets (no link header), as the device does.
 */
#include <linux/kernel.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/of_fdt.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/checksum.h>

#define VN_ID		0x000
#define VN_CTRL		0x008
#define VN_ISR		0x00c
#define VN_IMR		0x010
#define VN_RX_BASE_LO	0x020
#define VN_RX_BASE_HI	0x024
#define VN_RX_SIZE	0x028
#define VN_RX_TAIL	0x030
#define VN_TX_BASE_LO	0x040
#define VN_TX_BASE_HI	0x044
#define VN_TX_SIZE	0x048
#define VN_TX_TAIL	0x050

#define VN_ID_VALUE	0x74656e76	/* "vnet" */
#define VN_CTRL_RX_EN	(1U << 0)
#define VN_CTRL_TX_EN	(1U << 1)
#define VN_CTRL_RESET	(1U << 31)
#define VN_INT_RX	(1U << 0)
#define VN_INT_TX	(1U << 1)
#define VN_INT_NOBUF	(1U << 2)
#define VN_DESC_DD	(1U << 0)
#define VN_DESC_ERR	(1U << 1)

#define RX_RING_SIZE	64
#define TX_RING_SIZE	32
#define RX_BUF_SIZE	2048
#define TX_BUF_SIZE	SKB_MAX_ALLOC

struct vn_desc {
	u64	addr;
	u32	len;
	u32	status;
};

struct virtnet_priv {
	unsigned long	base;		/* MMIO registers, ioremap()ed */
	unsigned int	irq;
	struct net_device *dev;
	struct vn_desc	*rx_ring;
	struct vn_desc	*tx_ring;
	void		*rx_buf[RX_RING_SIZE];
	void		*tx_buf[TX_RING_SIZE];
	u32		rx_next;	/* next RX descriptor to clean */
	u32		tx_next;	/* next TX descriptor to fill (TAIL) */
	u32		tx_clean;	/* next TX descriptor to reap */
	spinlock_t	tx_lock;
	/* statistics (ndo_get_stats64; the host reads them by symbol) */
	u64		irqs;
	u64		rx_packets;
	u64		rx_bytes;
	u64		rx_errors;
	u64		rx_dropped;
	u64		tx_packets;
	u64		tx_bytes;
	u64		tx_errors;
	u64		tx_busy;
};

static struct virtnet_priv virtnet_priv;

static inline u32 vn_read(struct virtnet_priv *p, unsigned int off)
{
	u32 v = *(volatile u32 *)(p->base + off);

	asm volatile("dmb oshld" : : : "memory");	/* readl's __iormb */
	return v;
}

static inline void vn_write(struct virtnet_priv *p, unsigned int off, u32 v)
{
	asm volatile("dmb oshst" : : : "memory");	/* writel's __iowmb */
	*(volatile u32 *)(p->base + off) = v;
}

/* The address the device uses for a kernel buffer: its physical one. */
static inline u64 vn_dma_addr(const void *p)
{
	return virt_to_phys(p);
}

static noinline void virtnet_clean_rx(struct virtnet_priv *p)
{
	unsigned int budget = RX_RING_SIZE;
	u32 cleaned = 0;

	while (budget--) {
		struct vn_desc *d = &p->rx_ring[p->rx_next];
		u32 status = READ_ONCE(d->status);
		u32 len;
		struct sk_buff *skb;

		if (!(status & VN_DESC_DD))
			break;
		asm volatile("dmb oshld" : : : "memory");	/* dma_rmb */
		len = d->len;
		if ((status & VN_DESC_ERR) || len < 20) {
			p->rx_errors++;
		} else if (len > SKB_MAX_ALLOC || !(skb = alloc_skb(len, GFP_ATOMIC))) {
			p->rx_dropped++;
		} else {
			memcpy(skb_put(skb, len), p->rx_buf[p->rx_next], len);
			skb->dev = p->dev;
			skb->protocol = htons(ETH_P_IP);
			p->rx_packets++;
			p->rx_bytes += len;
			netif_receive_skb(skb);
		}
		d->len = RX_BUF_SIZE;
		WRITE_ONCE(d->status, 0);
		p->rx_next = (p->rx_next + 1) & (RX_RING_SIZE - 1);
		cleaned++;
	}
	/* hand the cleaned descriptors back: TAIL stays one behind rx_next */
	if (cleaned)
		vn_write(p, VN_RX_TAIL, (p->rx_next - 1) & (RX_RING_SIZE - 1));
}

static noinline void virtnet_clean_tx(struct virtnet_priv *p)
{
	unsigned long flags;

	spin_lock_irqsave(&p->tx_lock, flags);
	while (p->tx_clean != p->tx_next) {
		struct vn_desc *d = &p->tx_ring[p->tx_clean];
		u32 status = READ_ONCE(d->status);

		if (!(status & VN_DESC_DD))
			break;
		if (status & VN_DESC_ERR)
			p->tx_errors++;
		p->tx_clean = (p->tx_clean + 1) & (TX_RING_SIZE - 1);
	}
	spin_unlock_irqrestore(&p->tx_lock, flags);
}

/* The interrupt: level-sensitive, so ISR is acknowledged before the GIC's EOI. */
static noinline irqreturn_t virtnet_interrupt(int irq, void *dev_id)
{
	struct virtnet_priv *p = dev_id;
	u32 isr = vn_read(p, VN_ISR);

	if (!isr)
		return IRQ_NONE;
	vn_write(p, VN_ISR, isr);
	p->irqs++;
	if (isr & (VN_INT_RX | VN_INT_NOBUF))
		virtnet_clean_rx(p);
	if (isr & VN_INT_TX)
		virtnet_clean_tx(p);
	return IRQ_HANDLED;
}

static noinline netdev_tx_t virtnet_start_xmit(struct sk_buff *skb,
					       struct net_device *dev)
{
	struct virtnet_priv *p = &virtnet_priv;
	unsigned long flags;
	struct vn_desc *d;
	u32 next;

	if (skb->len > TX_BUF_SIZE) {
		p->tx_errors++;
		kfree_skb(skb);
		return NETDEV_TX_OK;	/* dropped, as drivers do for oversize frames */
	}
	spin_lock_irqsave(&p->tx_lock, flags);
	next = (p->tx_next + 1) & (TX_RING_SIZE - 1);
	if (next == p->tx_clean) {
		p->tx_busy++;
		spin_unlock_irqrestore(&p->tx_lock, flags);
		return NETDEV_TX_BUSY;
	}
	d = &p->tx_ring[p->tx_next];
	memcpy(p->tx_buf[p->tx_next], skb->data, skb->len);
	d->len = skb->len;
	d->status = 0;
	p->tx_packets++;
	p->tx_bytes += skb->len;
	p->tx_next = next;
	vn_write(p, VN_TX_TAIL, next);	/* the doorbell */
	spin_unlock_irqrestore(&p->tx_lock, flags);
	kfree_skb(skb);
	return NETDEV_TX_OK;
}

static void virtnet_get_stats64(struct net_device *dev,
				struct rtnl_link_stats64 *stats)
{
	struct virtnet_priv *p = &virtnet_priv;

	stats->rx_packets = p->rx_packets;
	stats->rx_bytes = p->rx_bytes;
	stats->rx_errors = p->rx_errors;
	stats->rx_dropped = p->rx_dropped + dev->stats.rx_dropped;
	stats->tx_packets = p->tx_packets;
	stats->tx_bytes = p->tx_bytes;
	stats->tx_errors = p->tx_errors;
	stats->tx_dropped = dev->tx_dropped;
}

static const struct net_device_ops virtnet_netdev_ops = {
	.ndo_get_stats64	= virtnet_get_stats64,
	.ndo_start_xmit		= virtnet_start_xmit,
};

static void virtnet_free_rings(struct virtnet_priv *p)
{
	int i;

	for (i = 0; i < RX_RING_SIZE; i++)
		kfree(p->rx_buf[i]);
	for (i = 0; i < TX_RING_SIZE; i++)
		kfree(p->tx_buf[i]);
	kfree(p->rx_ring);
	kfree(p->tx_ring);
	memset(p, 0, sizeof(*p));
}

static int virtnet_alloc_rings(struct virtnet_priv *p)
{
	int i;

	p->rx_ring = kzalloc(RX_RING_SIZE * sizeof(struct vn_desc), GFP_KERNEL);
	p->tx_ring = kzalloc(TX_RING_SIZE * sizeof(struct vn_desc), GFP_KERNEL);
	if (!p->rx_ring || !p->tx_ring)
		return -ENOMEM;
	for (i = 0; i < RX_RING_SIZE; i++) {
		p->rx_buf[i] = kmalloc(RX_BUF_SIZE, GFP_KERNEL);
		if (!p->rx_buf[i])
			return -ENOMEM;
		p->rx_ring[i].addr = vn_dma_addr(p->rx_buf[i]);
		p->rx_ring[i].len = RX_BUF_SIZE;
	}
	for (i = 0; i < TX_RING_SIZE; i++) {
		p->tx_buf[i] = kmalloc(TX_BUF_SIZE, GFP_KERNEL);
		if (!p->tx_buf[i])
			return -ENOMEM;
		p->tx_ring[i].addr = vn_dma_addr(p->tx_buf[i]);
	}
	return 0;
}

static int __init virtnet_init(void)
{
	struct virtnet_priv *p = &virtnet_priv;
	struct net_device *dev = &loopback_dev;
	struct of_device_res res;
	u64 ring;
	int err;

	err = of_find_compatible_device("kpemu,virtnet", &res);
	if (err || !res.irq) {
		pr_info("virtnet: no kpemu,virtnet device\n");
		return -ENODEV;
	}
	p->base = (unsigned long)ioremap(res.base, res.size);
	if (!p->base) {
		pr_info("virtnet: mmio 0x%08llx outside the device window\n", res.base);
		return -ENODEV;
	}
	if (vn_read(p, VN_ID) != VN_ID_VALUE) {
		pr_info("virtnet: bad ID at 0x%08llx\n", res.base);
		p->base = 0;
		return -ENODEV;
	}
	if (READ_ONCE(dev->netdev_ops)) {
		p->base = 0;
		return -EBUSY;	/* another driver (e1000ish) has eth0 */
	}
	p->irq = res.irq;
	p->dev = dev;
	spin_lock_init(&p->tx_lock);
	vn_write(p, VN_CTRL, VN_CTRL_RESET);

	err = virtnet_alloc_rings(p);
	if (err)
		goto fail;
	ring = vn_dma_addr(p->rx_ring);
	vn_write(p, VN_RX_BASE_LO, (u32)ring);
	vn_write(p, VN_RX_BASE_HI, ring >> 32);
	vn_write(p, VN_RX_SIZE, RX_RING_SIZE);
	vn_write(p, VN_RX_TAIL, RX_RING_SIZE - 1);	/* all but one posted */
	ring = vn_dma_addr(p->tx_ring);
	vn_write(p, VN_TX_BASE_LO, (u32)ring);
	vn_write(p, VN_TX_BASE_HI, ring >> 32);
	vn_write(p, VN_TX_SIZE, TX_RING_SIZE);

	err = request_irq(p->irq, virtnet_interrupt, IRQF_TRIGGER_HIGH, "virtnet", p);
	if (err)
		goto fail;
	WRITE_ONCE(dev->netdev_ops, &virtnet_netdev_ops);
	vn_write(p, VN_IMR, VN_INT_RX | VN_INT_TX | VN_INT_NOBUF);
	vn_write(p, VN_CTRL, VN_CTRL_RX_EN | VN_CTRL_TX_EN);
	netif_carrier_on(dev);
	pr_info("virtnet: %s: link up, mmio 0x%08llx irq %u\n", dev->name, res.base, p->irq);
	return 0;

fail:
	vn_write(p, VN_CTRL, VN_CTRL_RESET);
	virtnet_free_rings(p);
	return err;
}

static void __exit virtnet_exit(void)
{
	struct virtnet_priv *p = &virtnet_priv;
	struct net_device *dev = p->dev;

	/* no new transmits, and none left inside virtnet_start_xmit */
	netif_tx_disable(dev);
	vn_write(p, VN_IMR, 0);
	vn_write(p, VN_CTRL, VN_CTRL_RESET);	/* no more DMA into the buffers */
	free_irq(p->irq, p);			/* and no handler left running */
	WRITE_ONCE(dev->netdev_ops, NULL);
	pr_info("virtnet: %s: removed\n", dev->name);
	virtnet_free_rings(p);
}

module_init(virtnet_init);
module_exit(virtnet_exit);
MODULE_LICENSE("MIT");
