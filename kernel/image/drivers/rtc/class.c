// SPDX-License-Identifier: MIT
/*
 * The RTC class, as drivers/rtc/class.c: rtc_init() registers the class
 * "rtc" (/sys/class/rtc); a driver allocates an rtc_device with its device
 * as the parent, sets its ops and range, and registers it: it is named
 * rtcN (N from 0, in registration order) and gets the attributes of
 * drivers/rtc/sysfs.c. Devices are never unregistered.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/rtc.h>
#include "rtc-core.h"

static struct class rtc_class_storage = {
	.name = "rtc",
};
static struct class *rtc_class;
static int rtc_ida;	/* the next id (Linux: an IDA) */

static struct rtc_device *rtc_allocate_device(void)
{
	struct rtc_device *rtc = kzalloc(sizeof(*rtc), GFP_KERNEL);

	if (!rtc)
		return NULL;
	device_initialize(&rtc->dev);
	mutex_init(&rtc->ops_lock);
	rtc->max_user_freq = 64;
	rtc->dev.class = rtc_class;
	rtc->dev.groups = rtc_get_dev_attribute_groups();
	return rtc;
}

/*
 * devm_rtc_allocate_device(): an rtc_device for the driver of @dev, named
 * rtcN. (Not managed: kpemu's drivers are built in and never unbind.)
 */
struct rtc_device *devm_rtc_allocate_device(struct device *dev)
{
	struct rtc_device *rtc;
	int id, err;

	if (!rtc_class)
		return ERR_PTR(-ENODEV);
	id = __atomic_fetch_add(&rtc_ida, 1, __ATOMIC_RELAXED);
	rtc = rtc_allocate_device();
	if (!rtc)
		return ERR_PTR(-ENOMEM);
	rtc->id = id;
	rtc->dev.parent = dev;
	err = dev_set_name(&rtc->dev, "rtc%d", id);
	if (err) {
		kfree(rtc);
		return ERR_PTR(err);
	}
	return rtc;
}

int devm_rtc_register_device(struct rtc_device *rtc)
{
	int err;

	if (!rtc->ops)
		return -EINVAL;
	err = device_add(&rtc->dev);
	if (err)
		return err;
	dev_info(rtc->dev.parent, "registered as %s\n", dev_name(&rtc->dev));
	return 0;
}

/* rtc_init(): subsys_initcall in Linux; before any RTC driver. */
void rtc_init(void)
{
	if (class_register(&rtc_class_storage)) {
		pr_err("couldn't create class\n");
		return;
	}
	rtc_class = &rtc_class_storage;
}
