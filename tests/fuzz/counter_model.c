// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * counter_model.c - see counter_model.h.  Each function restates the
 * kernel function of mm/page_counter.c it is named after, sequentially:
 * where the kernel's form only matters under concurrency a sequentially
 * equivalent shortcut is taken (propagate_protected_usage()'s compare
 * before its exchange, page_counter_charge()'s nested watermark check,
 * page_counter_set_max()'s retry).
 */
#include <errno.h>
#include <string.h>

#include "counter_model.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void model_init(struct model *m, uint64_t page_counter_max)
{
	memset(m, 0, sizeof(*m));
	m->page_counter_max = page_counter_max;
	m->warn_counter = -1;
}

int model_add(struct model *m, int parent, bool protection_support,
	      bool track_failcnt)
{
	struct model_counter *c = &m->c[m->nr];

	memset(c, 0, sizeof(*c));
	c->parent = parent;
	c->protection_support = protection_support;
	c->track_failcnt = track_failcnt;
	c->max = m->page_counter_max;
	return m->nr++;
}

/* propagate_protected_usage(): the parent's sums of min(usage, setting). */
static void propagate(struct model *m, int i, uint64_t usage)
{
	struct model_counter *c = &m->c[i];
	struct model_counter *p;
	uint64_t prot;

	if (c->parent < 0)
		return;
	p = &m->c[c->parent];
	prot = min_u64(usage, c->min);
	p->children_min_usage += prot - c->min_usage;
	c->min_usage = prot;
	prot = min_u64(usage, c->low);
	p->children_low_usage += prot - c->low_usage;
	c->low_usage = prot;
}

/* The charges' watermark update: both peaks follow the value, unsigned. */
static void peak(struct model_counter *c, uint64_t v)
{
	c->local_watermark = max_u64(c->local_watermark, v);
	c->watermark = max_u64(c->watermark, v);
}

void model_charge(struct model *m, int i, uint64_t nr)
{
	bool prot = m->c[i].protection_support;
	int j;

	for (j = i; j >= 0; j = m->c[j].parent) {
		m->c[j].usage += nr;
		if (prot)
			propagate(m, j, m->c[j].usage);
		peak(&m->c[j], m->c[j].usage);
	}
}

bool model_try_charge(struct model *m, int i, uint64_t nr, int *fail)
{
	bool prot = m->c[i].protection_support;
	bool track = m->c[i].track_failcnt;
	int j, k;

	for (j = i; j >= 0; j = m->c[j].parent) {
		uint64_t want = m->c[j].usage + nr;

		if (want > m->c[j].max) {
			/* This level's add is undone; no cancel, no warning. */
			if (track)
				m->c[j].failcnt++;
			*fail = j;
			for (k = i; k != j; k = m->c[k].parent)
				model_cancel(m, k, nr);
			return false;
		}
		m->c[j].usage = want;
		if (prot)
			propagate(m, j, want);
		peak(&m->c[j], want);
	}
	return true;
}

/* page_counter_cancel(): local; a "negative" result is clamped, counted. */
void model_cancel(struct model *m, int i, uint64_t nr)
{
	struct model_counter *c = &m->c[i];

	c->usage -= nr;
	if (c->usage > (uint64_t)INT64_MAX) {
		m->underflows++;
		if (!m->warned) {
			m->warned = true;
			m->warn_calls++;
			m->warn_counter = i;
			m->warn_value = c->usage;
			m->warn_nr = nr;
		}
		c->usage = 0;
	}
	if (c->protection_support)
		propagate(m, i, c->usage);
}

void model_uncharge(struct model *m, int i, uint64_t nr)
{
	int j;

	for (j = i; j >= 0; j = m->c[j].parent)
		model_cancel(m, j, nr);
}

/* page_counter_set_max() without concurrency: one pass, never a retry. */
int model_set_max(struct model *m, int i, uint64_t nr)
{
	if (m->c[i].usage > nr)
		return -EBUSY;
	m->c[i].max = nr;
	return 0;
}

/* page_counter_set_min/low(): every level from i up republishes, any flag. */
static void republish(struct model *m, int i)
{
	int j;

	for (j = i; j >= 0; j = m->c[j].parent)
		propagate(m, j, m->c[j].usage);
}

void model_set_min(struct model *m, int i, uint64_t nr)
{
	m->c[i].min = nr;
	republish(m, i);
}

void model_set_low(struct model *m, int i, uint64_t nr)
{
	m->c[i].low = nr;
	republish(m, i);
}

void model_set_high(struct model *m, int i, uint64_t nr)
{
	m->c[i].high = nr;
}

void model_reset_watermark(struct model *m, int i)
{
	m->c[i].local_watermark = m->c[i].usage;
	m->c[i].watermark = m->c[i].usage;
}

/*
 * effective_protection() as fixed in 6.12.118: the shares are exact ratios
 * (products in 128 bits, never wrapped), and the floating share is weighted
 * by the child's unprotected usage, at most the parent's.
 */
uint64_t model_effective_protection(uint64_t usage, uint64_t parent_usage,
				    uint64_t setting, uint64_t parent_eff,
				    uint64_t siblings, bool recursive)
{
	uint64_t prot = min_u64(usage, setting);
	uint64_t weight, pool;

	if (siblings > parent_eff)
		return (uint64_t)((unsigned __int128)prot * parent_eff /
				  siblings);
	if (!recursive)
		return prot;
	if (parent_eff <= siblings || parent_usage <= siblings ||
	    usage <= prot)
		return prot;
	pool = parent_usage - siblings;
	weight = min_u64(usage - prot, pool);
	return prot + (uint64_t)((unsigned __int128)(parent_eff - siblings) *
				 weight / pool);
}

/* page_counter_calculate_protection() */
void model_calculate_protection(struct model *m, int root, int i,
				bool recursive)
{
	struct model_counter *c = &m->c[i];
	struct model_counter *p;

	if (i == root || c->usage == 0)
		return;
	if (c->parent == root) {
		c->emin = c->min;
		c->elow = c->low;
		return;
	}
	p = &m->c[c->parent];
	c->emin = model_effective_protection(c->usage, p->usage, c->min,
					     p->emin, p->children_min_usage,
					     recursive);
	c->elow = model_effective_protection(c->usage, p->usage, c->low,
					     p->elow, p->children_low_usage,
					     recursive);
}
