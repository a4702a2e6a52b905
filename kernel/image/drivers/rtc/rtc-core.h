/* SPDX-License-Identifier: MIT */
/* The RTC core's internals, as drivers/rtc/rtc-core.h. */
#ifndef _RTC_CORE_H
#define _RTC_CORE_H

#include <linux/rtc.h>

const struct attribute_group **rtc_get_dev_attribute_groups(void);

#endif /* _RTC_CORE_H */
