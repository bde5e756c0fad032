/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: string functions.  The C library's for the plain
 * ones; strim() and skip_spaces() are the kernel's own (extracted into the
 * unit by kernel/extract.sh), because their idea of whitespace is the
 * kernel's ctype table, not the C library's locale.
 */
#ifndef KPC_SHIM_LINUX_STRING_H
#define KPC_SHIM_LINUX_STRING_H

#include <string.h>

char *strim(char *s);
char *skip_spaces(const char *str);

static inline char *strstrip(char *str)
{
	return strim(str);
}

#endif
