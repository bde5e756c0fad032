// SPDX-License-Identifier: LGPL-2.1-or-later
/* The version of the library actually linked, for header/library checks. */
#include <pcstock/common.h>

const char *pcstock_version(void)
{
	return PCSTOCK_VERSION_STRING;
}

unsigned int pcstock_version_number(void)
{
	return PCSTOCK_VERSION_NUMBER;
}
