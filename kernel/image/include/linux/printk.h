/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_PRINTK_H
#define _LINUX_PRINTK_H

#include <linux/compiler.h>
#include <linux/types.h>

/* Log levels are accepted and ignored; the console shows every message. */
#define KERN_SOH	"\001"
#define KERN_EMERG	KERN_SOH "0"
#define KERN_ALERT	KERN_SOH "1"
#define KERN_CRIT	KERN_SOH "2"
#define KERN_ERR	KERN_SOH "3"
#define KERN_WARNING	KERN_SOH "4"
#define KERN_NOTICE	KERN_SOH "5"
#define KERN_INFO	KERN_SOH "6"
#define KERN_DEBUG	KERN_SOH "7"
#define KERN_DEFAULT	""
#define KERN_CONT	KERN_SOH "c"

#define LOG_BUF_LEN	(1 << 14)

extern char __log_buf[LOG_BUF_LEN];
extern u64 log_next_idx;

__printf(1, 2) int printk(const char *fmt, ...);
int vprintk(const char *fmt, va_list args);
__printf(3, 4) int snprintf(char *buf, size_t size, const char *fmt, ...);
int vsnprintf(char *buf, size_t size, const char *fmt, va_list args);
__printf(2, 3) int sprintf(char *buf, const char *fmt, ...);
__printf(3, 4) int scnprintf(char *buf, size_t size, const char *fmt, ...);
int vscnprintf(char *buf, size_t size, const char *fmt, va_list args);
__printf(2, 3) char *kasprintf(gfp_t gfp, const char *fmt, ...);
char *kvasprintf(gfp_t gfp, const char *fmt, va_list args);

#define pr_emerg(fmt, ...)	printk(KERN_EMERG fmt, ##__VA_ARGS__)
#define pr_alert(fmt, ...)	printk(KERN_ALERT fmt, ##__VA_ARGS__)
#define pr_crit(fmt, ...)	printk(KERN_CRIT fmt, ##__VA_ARGS__)
#define pr_err(fmt, ...)	printk(KERN_ERR fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)	printk(KERN_WARNING fmt, ##__VA_ARGS__)
#define pr_notice(fmt, ...)	printk(KERN_NOTICE fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)	printk(KERN_INFO fmt, ##__VA_ARGS__)
#define pr_cont(fmt, ...)	printk(KERN_CONT fmt, ##__VA_ARGS__)

#endif /* _LINUX_PRINTK_H */
