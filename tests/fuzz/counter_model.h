/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counter_model.h - a sequential reference model of the page_counter, for
 * the differential fuzzer (fuzz_counter.c).
 *
 * Written from a description of the kernel's mm/page_counter.c (not its
 * text), not from src/counter.c: plain integers, no atomics, counters in
 * an array addressed by index, the parent always at a lower index.  All
 * arithmetic is modulo 2^64, as the kernel's wrapping long/unsigned long
 * arithmetic is; a value "is negative" when it exceeds INT64_MAX.
 */
#ifndef PCSTOCK_COUNTER_MODEL_H
#define PCSTOCK_COUNTER_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define MODEL_MAX_COUNTERS 6

struct model_counter {
	int parent;			/* index, or -1 for a root */
	bool protection_support;
	bool track_failcnt;
	uint64_t usage;
	uint64_t max, high, min, low;
	uint64_t watermark, local_watermark;
	uint64_t failcnt;
	uint64_t min_usage, low_usage;
	uint64_t children_min_usage, children_low_usage;
	uint64_t emin, elow;
};

struct model {
	int nr;
	struct model_counter c[MODEL_MAX_COUNTERS];
	uint64_t page_counter_max;
	/* The once-only warning and the count of every underflow. */
	uint64_t underflows;
	bool warned;
	unsigned int warn_calls;
	int warn_counter;
	uint64_t warn_value;
	uint64_t warn_nr;
};

/* Empty model, no underflow seen yet. */
void model_init(struct model *m, uint64_t page_counter_max);
/* Return: the new counter's index. */
int model_add(struct model *m, int parent, bool protection_support,
	      bool track_failcnt);

void model_charge(struct model *m, int i, uint64_t nr);
/* Return: true on success; else *fail is the refusing level's index. */
bool model_try_charge(struct model *m, int i, uint64_t nr, int *fail);
void model_cancel(struct model *m, int i, uint64_t nr);
void model_uncharge(struct model *m, int i, uint64_t nr);
/* Return: 0 or -EBUSY. */
int model_set_max(struct model *m, int i, uint64_t nr);
void model_set_min(struct model *m, int i, uint64_t nr);
void model_set_low(struct model *m, int i, uint64_t nr);
void model_set_high(struct model *m, int i, uint64_t nr);
void model_reset_watermark(struct model *m, int i);
void model_calculate_protection(struct model *m, int root, int i,
				bool recursive);
uint64_t model_effective_protection(uint64_t usage, uint64_t parent_usage,
				    uint64_t setting, uint64_t parent_eff,
				    uint64_t siblings, bool recursive);

#endif /* PCSTOCK_COUNTER_MODEL_H */
