/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * layout.h - the layout of pcstock's public structs, as one language sees
 * it.  layout.c records the C view, consumer_cxx.cpp compares its own.
 */
#ifndef PCSTOCK_CONSUMER_LAYOUT_H
#define PCSTOCK_CONSUMER_LAYOUT_H

#include <stddef.h>

#include <pcstock/pcstock.h>

#ifdef __cplusplus
#define CONSUMER_ALIGNOF(t) alignof(t)
#else
#define CONSUMER_ALIGNOF(t) _Alignof(t)
#endif

#define CONSUMER_COUNTER_FIELD(f) offsetof(struct pcstock_counter, f)

#define CONSUMER_LAYOUT {                                                \
	sizeof(struct pcstock_counter),                                  \
	CONSUMER_ALIGNOF(struct pcstock_counter),                        \
	CONSUMER_COUNTER_FIELD(usage), CONSUMER_COUNTER_FIELD(failcnt),  \
	CONSUMER_COUNTER_FIELD(emin), CONSUMER_COUNTER_FIELD(min_usage), \
	CONSUMER_COUNTER_FIELD(children_min_usage),                      \
	CONSUMER_COUNTER_FIELD(elow), CONSUMER_COUNTER_FIELD(low_usage), \
	CONSUMER_COUNTER_FIELD(children_low_usage),                      \
	CONSUMER_COUNTER_FIELD(watermark),                               \
	CONSUMER_COUNTER_FIELD(local_watermark),                         \
	CONSUMER_COUNTER_FIELD(parent), CONSUMER_COUNTER_FIELD(max),     \
	CONSUMER_COUNTER_FIELD(high), CONSUMER_COUNTER_FIELD(min),       \
	CONSUMER_COUNTER_FIELD(low),                                     \
	CONSUMER_COUNTER_FIELD(protection_support),                      \
	CONSUMER_COUNTER_FIELD(track_failcnt),                           \
	CONSUMER_COUNTER_FIELD(stock_domain),                            \
	CONSUMER_COUNTER_FIELD(stock_slots),                             \
	CONSUMER_COUNTER_FIELD(stock_stats),                             \
	CONSUMER_COUNTER_FIELD(stock_batch),                             \
	CONSUMER_COUNTER_FIELD(stock_state),                             \
	CONSUMER_COUNTER_FIELD(stock_policy),                            \
	CONSUMER_COUNTER_FIELD(stock_link),                              \
	CONSUMER_COUNTER_FIELD(hit_key),                                 \
	CONSUMER_COUNTER_FIELD(stock_refill_batch),                      \
	sizeof(struct pcstock_domain_attr),                              \
	sizeof(struct pcstock_domain_memory),                            \
	sizeof(struct pcstock_stock_stats),                              \
	sizeof(struct pcstock_tree_attr),                                \
	sizeof(struct pcstock_tree_stats),                               \
	sizeof(struct pcstock_group_stats),                              \
	sizeof(enum pcstock_tree_policy),                                \
}

#ifdef __cplusplus
extern "C" {
#endif
extern const size_t consumer_layout_c[];
extern const size_t consumer_layout_c_len;
#ifdef __cplusplus
}
#endif

#endif /* PCSTOCK_CONSUMER_LAYOUT_H */
