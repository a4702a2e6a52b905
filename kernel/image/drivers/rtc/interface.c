// SPDX-License-Identifier: MIT
/*
 * Reading an RTC, as drivers/rtc/interface.c: the driver's read_time, whose
 * result must be a valid time. Linux serialises the ops with a mutex;
 * kpemu's one driver reads one register, so there is nothing to guard.
 */
#include <linux/kernel.h>
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
	return __rtc_read_time(rtc, tm);
}
