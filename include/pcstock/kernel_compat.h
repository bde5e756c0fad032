/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/kernel_compat.h - kernel spellings of the page_counter API.
 *
 * Lets snippets written against include/linux/page_counter.h compile
 * against pcstock unchanged (tests use it).  Not included by the umbrella
 * header: the short names would pollute a daemon's namespace.
 */
#ifndef PCSTOCK_KERNEL_COMPAT_H
#define PCSTOCK_KERNEL_COMPAT_H

#include <pcstock/counter.h>
#include <pcstock/stock.h>

#define page_counter pcstock_counter
#define PAGE_COUNTER_MAX PCSTOCK_COUNTER_MAX
#define page_counter_init pcstock_counter_init
#define page_counter_read pcstock_counter_read
#define page_counter_charge pcstock_counter_charge
#define page_counter_try_charge pcstock_counter_try_charge
#define page_counter_cancel pcstock_counter_cancel
#define page_counter_uncharge pcstock_counter_uncharge
#define page_counter_set_max pcstock_counter_set_max
#define page_counter_set_min pcstock_counter_set_min
#define page_counter_set_low pcstock_counter_set_low
#define page_counter_set_high pcstock_counter_set_high
#define page_counter_reset_watermark pcstock_counter_reset_watermark
#define page_counter_memparse pcstock_counter_memparse
/* Field writes the kernel does in place, as functions (not kernel names). */
#define page_counter_xchg_max pcstock_counter_xchg_max
#define page_counter_reset_local_watermark \
	pcstock_counter_reset_local_watermark
#define page_counter_reset_failcnt pcstock_counter_reset_failcnt
#define page_counter_calculate_protection pcstock_counter_calculate_protection
/* The stock API of the 2026 series (v4 names). */
#define page_counter_alloc_stock(c, batch, d)                                 \
	pcstock_counter_alloc_stock((c), (d), (batch), PCSTOCK_STOCK_V4)
#define page_counter_free_stock pcstock_counter_free_stock
#define page_counter_drain_stock pcstock_counter_drain_stock
#define page_counter_try_charge_stock pcstock_counter_try_charge_stock

#endif /* PCSTOCK_KERNEL_COMPAT_H */
