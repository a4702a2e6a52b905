// SPDX-License-Identifier: MIT
/*
 * Calendar arithmetic for the RTC core, as drivers/rtc/lib.c (and
 * mktime64() of kernel/time/time.c): seconds since 1970-01-01 00:00:00 UTC
 * to a proleptic Gregorian struct rtc_time and back. The day <-> date
 * conversions count in 400-year eras of 146097 days, whose years start
 * on March 1st so that the leap day is the last day of a year
 * (H. Hinnant's days_from_civil/civil_from_days).
 */
#include <linux/kernel.h>
#include <linux/rtc.h>

static const unsigned char rtc_days_in_month[] = {
	31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
};

static const unsigned short rtc_ydays[2][13] = {
	/* Normal years */
	{ 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365 },
	/* Leap years */
	{ 0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366 }
};

static inline bool is_leap_year(unsigned int year)
{
	return (!(year % 4) && (year % 100)) || !(year % 400);
}

/* The number of days in the month (0-11) of the year. */
int rtc_month_days(unsigned int month, unsigned int year)
{
	return rtc_days_in_month[month] + (is_leap_year(year) && month == 1);
}

/* The day (1-31) of the month (0-11) of the year as a day of the year, 0-365. */
int rtc_year_days(unsigned int day, unsigned int month, unsigned int year)
{
	return rtc_ydays[is_leap_year(year)][month] + day - 1;
}

/* floor(a / b) and its remainder, for b > 0 */
static s64 div_floor(s64 a, s64 b, s64 *rem)
{
	s64 q = a / b, r = a % b;

	if (r < 0) {
		q--;
		r += b;
	}
	*rem = r;
	return q;
}

/* rtc_time64_to_tm(): seconds since the Unix epoch to a broken-down UTC time. */
void rtc_time64_to_tm(time64_t time, struct rtc_time *tm)
{
	s64 secs, days = div_floor(time, 86400, &secs);
	s64 z = days + 719468;		/* days since 0000-03-01 */
	s64 era, doe, yoe, doy, mp, year, wday;
	int mon, mday;

	div_floor(days + 4, 7, &wday);	/* 1970-01-01 was a Thursday */
	era = div_floor(z, 146097, &doe);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;	/* 0-399 */
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);		/* 0-365, from March 1st */
	mp = (5 * doy + 2) / 153;				/* 0 = March */
	mday = doy - (153 * mp + 2) / 5 + 1;
	mon = mp < 10 ? mp + 2 : mp - 10;			/* 0 = January */
	year = era * 400 + yoe + (mon < 2);

	tm->tm_wday = wday;
	tm->tm_year = year - 1900;
	tm->tm_mon = mon;
	tm->tm_mday = mday;
	tm->tm_yday = rtc_year_days(mday, mon, year);
	tm->tm_hour = secs / 3600;
	secs -= tm->tm_hour * 3600;
	tm->tm_min = secs / 60;
	tm->tm_sec = secs - tm->tm_min * 60;
	tm->tm_isdst = 0;
}

/* Does the rtc_time represent a valid date/time? 0 or -EINVAL, as Linux's. */
int rtc_valid_tm(struct rtc_time *tm)
{
	if (tm->tm_year < 70 ||
	    tm->tm_year > (INT_MAX - 1900) ||
	    ((unsigned int)tm->tm_mon) >= 12 ||
	    tm->tm_mday < 1 ||
	    tm->tm_mday > rtc_month_days(tm->tm_mon, ((unsigned int)tm->tm_year + 1900)) ||
	    ((unsigned int)tm->tm_hour) >= 24 ||
	    ((unsigned int)tm->tm_min) >= 60 ||
	    ((unsigned int)tm->tm_sec) >= 60)
		return -EINVAL;
	return 0;
}

/*
 * mktime64(): a Gregorian date and time (month 1-12) to seconds since the
 * Unix epoch. sec may be 60 (a leap second counts as the next minute's 0).
 */
time64_t mktime64(const unsigned int year0, const unsigned int mon0,
		  const unsigned int day, const unsigned int hour,
		  const unsigned int min, const unsigned int sec)
{
	s64 y = (s64)year0 - (mon0 <= 2), era, yoe, doy, doe, days;
	unsigned int mon = mon0 > 2 ? mon0 - 3 : mon0 + 9;	/* 0 = March */

	era = div_floor(y, 400, &yoe);
	doy = (153 * mon + 2) / 5 + day - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	days = era * 146097 + doe - 719468;
	return ((days * 24 + hour) * 60 + min) * 60 + sec;
}

/* rtc_tm_to_time64(): a broken-down time back to seconds since the epoch. */
time64_t rtc_tm_to_time64(struct rtc_time *tm)
{
	return mktime64(((unsigned int)tm->tm_year + 1900), tm->tm_mon + 1,
			tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec);
}
