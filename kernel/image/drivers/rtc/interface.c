// SPDX-License-Identifier: MIT
/*
 * Reading an RTC, as drivers/rtc/interface.c: the driver's read_time, whose
 * result must be a valid time, the ops serialised by the device's
 * ops_lock mutex.
 */
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/rtc.h>

static int __rtc_read_time(struct rtc_device *rtc, struct rtc_time *tm)
{
	int err;

	if (!rtc->ops)
		return -ENODEV;
	if (!rtc->ops->read_time)
		return -EINVAL;
	memset(tm, 0, sizeof(struct rtc_time));
	err = rtc->ops->read_time(rtc->dev.parent, tm);
	if (err < 0)
		return err;
	return rtc_valid_tm(tm);
}

int rtc_read_time(struct rtc_device *rtc, struct rtc_time *tm)
{
	int err;

	mutex_lock(&rtc->ops_lock);
	err = __rtc_read_time(rtc, tm);
	mutex_unlock(&rtc->ops_lock);
	return err;
}
