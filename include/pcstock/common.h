/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/common.h - export macro, page size and layout constants shared by
 * every public header.  Included by the other headers; no need to include it
 * directly.
 */
#ifndef PCSTOCK_COMMON_H
#define PCSTOCK_COMMON_H

#include <limits.h>

#include <pcstock/version.h>

#ifdef __cplusplus
#define PCSTOCK_EXTERN_C_BEGIN extern "C" {
#define PCSTOCK_EXTERN_C_END }
#else
#define PCSTOCK_EXTERN_C_BEGIN
#define PCSTOCK_EXTERN_C_END
#endif

/*
 * The library is built with -fvisibility=hidden; only functions marked
 * PCSTOCK_API are exported, and every one of them starts with pcstock_.
 */
#if defined(PCSTOCK_BUILDING_LIBRARY) && defined(__GNUC__)
#define PCSTOCK_API __attribute__((visibility("default")))
#else
#define PCSTOCK_API
#endif

/* Size of the unit every counter value is expressed in, in bytes. */
#define PCSTOCK_PAGE_SIZE (1UL << PCSTOCK_PAGE_SHIFT)

/*
 * The largest page count a counter holds, as the kernel's PAGE_COUNTER_MAX
 * on 64-bit: a value up to this can be converted to bytes without
 * overflowing a signed long.  2^51 - 1 with 4 KiB pages.
 */
#define PCSTOCK_COUNTER_MAX ((unsigned long)(LONG_MAX / (long)PCSTOCK_PAGE_SIZE))

/* The cache-line size every layout decision in pcstock is made for. */
#define PCSTOCK_CACHELINE 64

PCSTOCK_EXTERN_C_BEGIN

/**
 * pcstock_version() - the version of the library actually linked
 *
 * Return: a static string such as "0.6.0"; compare with
 * PCSTOCK_VERSION_STRING to detect a header/library mismatch.
 */
PCSTOCK_API const char *pcstock_version(void);

/**
 * pcstock_version_number() - the linked version as 0xMMmmpp
 *
 * Return: (major << 16) | (minor << 8) | patch.
 */
PCSTOCK_API unsigned int pcstock_version_number(void);

PCSTOCK_EXTERN_C_END

#endif /* PCSTOCK_COMMON_H */
