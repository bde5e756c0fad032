/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: the kernel's fixed-width type names (on top of
 * the system's <linux/types.h>, which C library headers may include).
 */
#ifndef KPC_SHIM_LINUX_TYPES_H
#define KPC_SHIM_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include_next <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef long long s64;

#endif
