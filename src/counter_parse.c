// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * counter_parse.c - sizes as text: the kernel's memparse() for the cgroup
 * files, and the strict parser and formatter for configuration text.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <pcstock/counter.h>

#include "internal.h"

/* ---- memparse ------------------------------------------------------------------ */

static int digit_value(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * The kernel's simple_strtoull(s, &end, 0) over [@s, @lim): radix
 * detection, then digits while they are valid in that radix, accumulating
 * modulo 2^64 (the kernel computes an overflow flag and drops it).
 */
static unsigned long long parse_number(const char *s, const char *lim,
				       const char **end)
{
	unsigned long long result = 0;
	unsigned int base = 10;
	int d;

	if (lim - s >= 1 && s[0] == '0') {
		if (lim - s >= 3 && (s[1] == 'x' || s[1] == 'X') &&
		    digit_value(s[2]) >= 0) {
			base = 16;
			s += 2;
		} else {
			base = 8;
		}
	}
	while (s < lim && (d = digit_value(*s)) >= 0 &&
	       (unsigned int)d < base) {
		result = result * base + (unsigned int)d;
		s++;
	}
	*end = s;
	return result;
}

/* memparse()'s binary suffixes, either case; 0 for anything else. */
static unsigned int suffix_shift(char ch)
{
	switch (ch) {
	case 'E': case 'e': return 60;
	case 'P': case 'p': return 50;
	case 'T': case 't': return 40;
	case 'G': case 'g': return 30;
	case 'M': case 'm': return 20;
	case 'K': case 'k': return 10;
	default: return 0;
	}
}

/* The kernel's memparse(): a number and at most one binary suffix. */
static unsigned long long memparse(const char *s, const char *lim,
				   const char **end)
{
	unsigned long long v = parse_number(s, lim, end);
	unsigned int shift = *end < lim ? suffix_shift(**end) : 0;

	if (!shift)
		return v;
	(*end)++;
	return v << shift; /* unsigned: wraps silently, as the kernel's <<= 10s */
}

int pcs_memparse_n(const char *buf, size_t len, const char *max_keyword,
		   unsigned long *nr_pages)
{
	unsigned long long bytes;
	const char *end;

	if (strlen(max_keyword) == len && !memcmp(buf, max_keyword, len)) {
		*nr_pages = PCSTOCK_COUNTER_MAX;
		return 0;
	}
	bytes = memparse(buf, buf + len, &end);
	if (end != buf + len)
		return -EINVAL;
	*nr_pages = PCS_MIN((unsigned long)(bytes / PCSTOCK_PAGE_SIZE),
			    PCSTOCK_COUNTER_MAX);
	return 0;
}

static bool kernel_isspace(char ch)
{
	unsigned char c = (unsigned char)ch;

	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

const char *pcs_strstrip(const char *buf, size_t *len)
{
	size_t n;

	while (kernel_isspace(*buf))
		buf++;
	n = strlen(buf);
	while (n && kernel_isspace(buf[n - 1]))
		n--;
	*len = n;
	return buf;
}

int pcstock_counter_memparse(const char *buf, const char *max_keyword,
			     unsigned long *nr_pages)
{
	if (!buf || !max_keyword || !nr_pages)
		return -EINVAL;
	return pcs_memparse_n(buf, strlen(buf), max_keyword, nr_pages);
}

/* ---- strict sizes (ours) --------------------------------------------------- */

int pcstock_parse_size(const char *buf, unsigned int flags,
		       unsigned long *nr_pages)
{
	unsigned long long bytes = 0;
	bool overflow = false;
	const char *s, *end;
	unsigned int shift;

	if (!buf || !nr_pages || (flags & ~PCSTOCK_PARSE_PAGE_ALIGNED))
		return -EINVAL;
	for (s = buf; isspace((unsigned char)*s); s++)
		;
	for (end = s + strlen(s); end > s && isspace((unsigned char)end[-1]);
	     end--)
		;
	if (end - s == 3 && !memcmp(s, "max", 3)) {
		*nr_pages = PCSTOCK_COUNTER_MAX;
		return 0;
	}
	if (s == end || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; s < end && isdigit((unsigned char)*s); s++) {
		unsigned int d = (unsigned int)(*s - '0');

		overflow |= bytes > (ULLONG_MAX - d) / 10;
		bytes = bytes * 10 + d;
	}
	shift = s < end ? suffix_shift(*s) : 0;
	if (shift)
		s++;
	if (s != end)
		return -EINVAL;
	if (overflow || bytes > ULLONG_MAX >> shift ||
	    (bytes << shift) / PCSTOCK_PAGE_SIZE > PCSTOCK_COUNTER_MAX)
		return -ERANGE;
	bytes <<= shift;
	if ((flags & PCSTOCK_PARSE_PAGE_ALIGNED) && bytes % PCSTOCK_PAGE_SIZE)
		return -EINVAL;
	*nr_pages = (unsigned long)(bytes / PCSTOCK_PAGE_SIZE);
	return 0;
}

int pcstock_format_size(unsigned long nr_pages, char *buf, size_t size)
{
	if (nr_pages >= PCSTOCK_COUNTER_MAX)
		return snprintf(buf, size, "max");
	/* At most PCSTOCK_COUNTER_MAX pages: the bytes fit a long. */
	return snprintf(buf, size, "%lu", nr_pages * PCSTOCK_PAGE_SIZE);
}
