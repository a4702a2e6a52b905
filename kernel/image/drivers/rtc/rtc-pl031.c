// SPDX-License-Identifier: MIT
/*
 * The Arm PrimeCell PL031 real-time clock, after drivers/rtc/rtc-pl031.c
 * (its original Arm variant): the time is RTCDR, seconds since the Unix
 * epoch. kpemu's board has one at 0x09010000, as QEMU's virt (machine/rtc.go).
 *
 * pl031_driver_init() also does the AMBA bus's part (drivers/amba/bus.c):
 * the device comes from the device tree ("arm,pl031"), named as
 * of_device_make_bus_id() names it ("9010000.pl031") and registered in
 * /sys/devices/platform; its PrimeCell peripheral ID must match
 * pl031_ids. Without a device tree (QEMU gives an ELF kernel none) there
 * is no device, and nothing is registered or printed.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/interrupt.h>
#include <linux/of_fdt.h>
#include <linux/rtc.h>
#include <asm/io.h>
#include <asm/memory.h>

#define	RTC_DR		0x00	/* data read: the time */
#define	RTC_MR		0x04	/* match */
#define	RTC_LR		0x08	/* data load: sets the time */
#define	RTC_CR		0x0c	/* control */
#define	RTC_IMSC	0x10	/* interrupt mask set and clear */
#define	RTC_RIS		0x14	/* raw interrupt status */
#define	RTC_MIS		0x18	/* masked interrupt status */
#define	RTC_ICR		0x1c	/* interrupt clear */

#define RTC_CR_EN	(1 << 0)	/* counter enable bit */
#define RTC_BIT_AI	(1 << 0)	/* alarm interrupt bit */

/* the PrimeCell ID registers: one byte in each word (amba/bus.c) */
#define AMBA_PERIPHID	0xfe0

/* An AMBA device (include/linux/amba/bus.h, the part used here). */
struct amba_device {
	struct device	dev;
	u64		res_start;
	u64		res_size;
	unsigned int	periphid;
	unsigned int	irq[1];
};

struct amba_id {
	unsigned int	id;
	unsigned int	mask;
};

struct pl031_local {
	struct rtc_device *rtc;
	void *base;
};

static int pl031_read_time(struct device *dev, struct rtc_time *tm)
{
	struct pl031_local *ldata = dev_get_drvdata(dev);

	rtc_time64_to_tm(readl(ldata->base + RTC_DR), tm);

	return 0;
}

static int pl031_set_time(struct device *dev, struct rtc_time *tm)
{
	struct pl031_local *ldata = dev_get_drvdata(dev);

	writel(rtc_tm_to_time64(tm), ldata->base + RTC_LR);

	return 0;
}

/* The match (alarm) interrupt: nothing sets an alarm, but clear one. */
static irqreturn_t pl031_interrupt(int irq, void *dev_id)
{
	struct pl031_local *ldata = dev_id;
	unsigned long rtcmis;

	rtcmis = readl(ldata->base + RTC_MIS);
	if (rtcmis & RTC_BIT_AI) {
		writel(RTC_BIT_AI, ldata->base + RTC_ICR);
		return IRQ_HANDLED;
	}

	return IRQ_NONE;
}

static const struct rtc_class_ops arm_pl031_ops = {
	.read_time = pl031_read_time,
	.set_time = pl031_set_time,
};

static int pl031_probe(struct amba_device *adev, const struct amba_id *id)
{
	struct pl031_local *ldata;
	unsigned long data;
	int ret;

	ldata = kzalloc(sizeof(struct pl031_local), GFP_KERNEL);
	if (!ldata)
		return -ENOMEM;
	ldata->base = ioremap(adev->res_start, adev->res_size);
	if (!ldata->base) {
		ret = -ENOMEM;
		goto out;
	}
	dev_set_drvdata(&adev->dev, ldata);

	data = readl(ldata->base + RTC_CR);
	data |= RTC_CR_EN;
	writel(data, ldata->base + RTC_CR);

	ldata->rtc = devm_rtc_allocate_device(&adev->dev);
	if (IS_ERR(ldata->rtc)) {
		ret = PTR_ERR(ldata->rtc);
		goto out;
	}
	ldata->rtc->ops = &arm_pl031_ops;
	ldata->rtc->range_min = 0;
	ldata->rtc->range_max = U32_MAX;

	ret = devm_rtc_register_device(ldata->rtc);
	if (ret)
		goto out;

	if (adev->irq[0]) {
		ret = request_irq(adev->irq[0], pl031_interrupt, 0, "rtc-pl031", ldata);
		if (ret)
			goto out;
	}
	return 0;

out:
	dev_set_drvdata(&adev->dev, NULL);
	kfree(ldata);
	return ret;
}

static const struct amba_id pl031_ids[] = {
	{
		.id = 0x00041031,
		.mask = 0x000fffff,
	},
	{0, 0},
};

static const struct device_driver pl031_driver = {
	.name = "rtc-pl031",
};

/* amba_device_try_add(): the peripheral ID, from the ID registers' low bytes */
static unsigned int amba_read_periphid(u64 start, u64 size)
{
	void *base = ioremap(start, size);
	unsigned int pid = 0;
	int i;

	if (!base || size < 0x1000)
		return 0;
	for (i = 0; i < 4; i++)
		pid |= (readl(base + AMBA_PERIPHID + i * 4) & 255) << (i * 8);
	return pid;
}

static const struct amba_id *amba_lookup(const struct amba_id *table, unsigned int periphid)
{
	for (; table->mask; table++)
		if ((table->id & table->mask) == (periphid & table->mask))
			return table;
	return NULL;
}

/* module_amba_driver(pl031_driver): find, register and probe the device. */
void pl031_driver_init(void)
{
	struct of_device_res res;
	struct amba_device *adev;
	const struct amba_id *id;
	int ret;

	if (of_find_compatible_device("arm,pl031", &res))
		return;
	adev = kzalloc(sizeof(*adev), GFP_KERNEL);
	if (!adev)
		return;
	adev->res_start = res.base;
	adev->res_size = res.size;
	adev->irq[0] = res.irq;
	adev->periphid = amba_read_periphid(res.base, res.size);
	adev->dev.parent = &platform_bus;
	device_initialize(&adev->dev);
	if (dev_set_name(&adev->dev, "%llx.%s", res.base, res.name) ||
	    device_add(&adev->dev)) {
		pr_err("amba: cannot add the device at 0x%llx\n", res.base);
		return;
	}
	id = amba_lookup(pl031_ids, adev->periphid);
	if (!id)
		return;
	/* really_probe(): the driver is bound while it probes */
	adev->dev.driver = &pl031_driver;
	ret = pl031_probe(adev, id);
	if (ret) {
		pr_warn("%s: probe of %s failed with error %d\n", pl031_driver.name,
			dev_name(&adev->dev), ret);
		adev->dev.driver = NULL;
	}
}
