/* SPDX-License-Identifier: MIT */
/*
 * Real-time clocks, as include/linux/rtc.h and include/uapi/linux/rtc.h:
 * a driver registers an rtc_device (drivers/rtc/class.c) with its
 * rtc_class_ops; it appears as /sys/class/rtc/rtcN with Linux's
 * attributes (drivers/rtc/sysfs.c). There is no /dev/rtcN, alarm or
 * hctosys: kpemu's clock of record is the generic timer.
 */
#ifndef _LINUX_RTC_H_
#define _LINUX_RTC_H_

#include <linux/types.h>
#include <linux/device.h>
#include <linux/mutex.h>

typedef s64 time64_t;		/* linux/time64.h */
typedef u64 timeu64_t;

/* The broken-down time (include/uapi/linux/rtc.h; struct tm's fields). */
struct rtc_time {
	int tm_sec;
	int tm_min;
	int tm_hour;
	int tm_mday;
	int tm_mon;
	int tm_year;
	int tm_wday;
	int tm_yday;
	int tm_isdst;
};

struct rtc_class_ops {
	int (*read_time)(struct device *dev, struct rtc_time *tm);
	int (*set_time)(struct device *dev, struct rtc_time *tm);
};

struct rtc_device {
	struct device dev;
	int id;
	const struct rtc_class_ops *ops;
	struct mutex ops_lock;		/* serialises the ops */
	int max_user_freq;
	time64_t range_min;
	timeu64_t range_max;
};
#define to_rtc_device(d) container_of(d, struct rtc_device, dev)

/* drivers/rtc/lib.c */
int rtc_month_days(unsigned int month, unsigned int year);
int rtc_year_days(unsigned int day, unsigned int month, unsigned int year);
int rtc_valid_tm(struct rtc_time *tm);
time64_t rtc_tm_to_time64(struct rtc_time *tm);
void rtc_time64_to_tm(time64_t time, struct rtc_time *tm);
time64_t mktime64(const unsigned int year, const unsigned int mon,
		  const unsigned int day, const unsigned int hour,
		  const unsigned int min, const unsigned int sec);

/* drivers/rtc/class.c, interface.c */
struct rtc_device *devm_rtc_allocate_device(struct device *dev);
int devm_rtc_register_device(struct rtc_device *rtc);
int rtc_read_time(struct rtc_device *rtc, struct rtc_time *tm);
void rtc_init(void);

#endif /* _LINUX_RTC_H_ */
