// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_kstock.c - the kernel's own per-counter stock under the schedule
 * explorer: a tree's page_counter_try_charge_stock() (consume by
 * try_cmpxchg, refill by a batch charge and an add) against the remote
 * atomic_xchg() drain and page_counter_free_stock(), through the unit
 * (kpc.h), on the tree's series or our rendering of it.
 *
 * A leaf under a root, the leaf stocked (batch 3) on 2 simulated CPUs;
 * each explorer thread is on its own CPU (the shim's kpc_this_cpu is
 * per thread in explorer builds).  The scenario keeps books, updated by
 * the thread holding the baton: pages each thread holds (after its charge
 * returned; before its uncharge starts).  Invariants:
 *  - every step: no slot negative, and at each level usage >= held +
 *    slots (a charge, refill or drain in flight only adds to usage
 *    first, or takes from a slot first);
 *  - at the end: usage == held + slots at each level.
 * Traces name the kernel's fields ("leaf.usage") and the slots ("leaf
 * stock slot of cpu 0"), not offsets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore.h"
#include "kpc.h"

#define K (kpc_unit())
#define KS_CPUS 2
#define KS_BATCH 3
#define KS_THREADS 3
#define KS_SIZE 1024

enum { LEAF, ROOT, KS_LEVELS };

static struct {
	_Alignas(256) unsigned char mem[KS_LEVELS][KS_SIZE];
	long held[KS_THREADS];
	char msg[200];
} S;

static void *ctr(int lvl)
{
	return S.mem[lvl];
}

/* The leaf's slot of @cpu, found through the kernel's "stock" field. */
static void *slot(unsigned int cpu)
{
	const struct kpc_field *f;

	for (f = K->fields; f->name; f++) {
		if (!strcmp(f->name, "stock")) {
			char *base;

			memcpy(&base, S.mem[LEAF] + f->offset, sizeof(base));
			return base ? base + cpu * sizeof(int) : NULL;
		}
	}
	return NULL;
}

static int kstock_init(const struct explore_scenario *s)
{
	(void)s;
	if (!K->try_charge_stock || K->counter_size > KS_SIZE ||
	    K->counter_align > 256) {
		fprintf(stderr, "kstock: the unit has no stock series\n");
		return -1;
	}
	K->set_cpus(KS_CPUS);
	return 0;
}

static void kstock_thread_init(const struct explore_scenario *s,
			       unsigned int t)
{
	(void)s;
	K->set_cpu(t % KS_CPUS);
}

static void label(void)
{
	static const char *const slot_names[KS_CPUS] = {
		"leaf stock slot of cpu 0", "leaf stock slot of cpu 1",
	};
	unsigned int cpu;

	explore_label(ctr(LEAF), K->counter_size, "leaf",
		      explore_counter_fields);
	explore_label(ctr(ROOT), K->counter_size, "root",
		      explore_counter_fields);
	for (cpu = 0; cpu < KS_CPUS; cpu++)
		if (slot(cpu))
			explore_label(slot(cpu), sizeof(int), slot_names[cpu],
				      NULL);
}

static void setup_common(void)
{
	K->init(ctr(ROOT), NULL, true);
	K->init(ctr(LEAF), ctr(ROOT), true);
	K->set_max(ctr(ROOT), 100);
	if (K->alloc_stock(ctr(LEAF), KS_BATCH))
		abort();
	memset(S.held, 0, sizeof(S.held));
	label();
}

/* The pages in the leaf's slots (0 once the stock is freed). */
static long slots(void)
{
	long sum = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < KS_CPUS; cpu++)
		sum += K->stock_pages(ctr(LEAF), cpu);
	return sum;
}

static const char *check(bool end)
{
	long held = 0, stock = slots();
	unsigned int cpu;
	int lvl, t;

	for (cpu = 0; cpu < KS_CPUS; cpu++) {
		if (K->stock_pages(ctr(LEAF), cpu) < 0) {
			snprintf(S.msg, sizeof(S.msg), "leaf stock slot of"
				 " cpu %u: %ld pages", cpu,
				 K->stock_pages(ctr(LEAF), cpu));
			return S.msg;
		}
	}
	for (t = 0; t < KS_THREADS; t++)
		held += S.held[t];
	for (lvl = 0; lvl < KS_LEVELS; lvl++) {
		long usage = (long)K->read(ctr(lvl));

		if (usage < held + stock || (end && usage != held + stock)) {
			snprintf(S.msg, sizeof(S.msg), "%s.usage %ld %s held"
				 " %ld + stock slots %ld",
				 lvl == LEAF ? "leaf" : "root", usage,
				 end ? "!=" : "<", held, stock);
			return S.msg;
		}
	}
	return NULL;
}

static const char *kstock_check_step(const struct explore_scenario *s)
{
	(void)s;
	return check(false);
}

static const char *kstock_check_end(const struct explore_scenario *s)
{
	(void)s;
	return check(true);
}

static void kstock_teardown(const struct explore_scenario *s)
{
	(void)s;
	K->free_stock(ctr(LEAF));
}

/* Charge @nr through the stock; the pages are held once it returns. */
static void charge(unsigned int t, unsigned long nr)
{
	unsigned long charged;

	if (K->try_charge_stock(ctr(LEAF), nr, NULL, &charged))
		S.held[t] += (long)nr;
}

/* Give back everything @t holds: off the books first. */
static void uncharge_all(unsigned int t)
{
	unsigned long nr = (unsigned long)S.held[t];

	S.held[t] = 0;
	if (nr)
		K->uncharge(ctr(LEAF), nr);
}

/*
 * kstock-drain: threads 0 and 1 consume and refill their CPUs' slots;
 * thread 2 (on CPU 0) drains both slots, CPU 1's remotely.
 */
static void drain_setup(const struct explore_scenario *s)
{
	(void)s;
	setup_common();
}

static void drain_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (t == 0) {
		charge(t, 1);
		charge(t, 1);
		charge(t, 2);
		uncharge_all(t);
	} else if (t == 1) {
		charge(t, 1);
		charge(t, 2);
	} else {
		K->drain_stock(ctr(LEAF), 1);
		K->drain_stock(ctr(LEAF), 0);
	}
}

/*
 * kstock-free: both slots hold pages (charged at setup, on each CPU);
 * thread 1 frees the stock (which drains every CPU) while thread 0
 * charges and uncharges the leaf directly and thread 2 gives back what
 * setup charged.  (No stocked call or drain runs against the free: the
 * series frees a stock with its memcg, when nothing else can.)
 */
static void free_setup(const struct explore_scenario *s)
{
	unsigned int cpu;

	(void)s;
	setup_common();
	for (cpu = 0; cpu < KS_CPUS; cpu++) {
		K->set_cpu(cpu);
		charge(2, 1);
	}
	K->set_cpu(0);
}

static void free_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (t == 0) {
		if (K->try_charge(ctr(LEAF), 2, NULL))
			S.held[t] += 2;
		uncharge_all(t);
	} else if (t == 1) {
		K->free_stock(ctr(LEAF));
	} else {
		uncharge_all(t);
	}
}

#define KSTOCK_SCENARIO(id, nm, hlp, su, rn)                                \
	static const struct explore_scenario id = {                         \
		.name = nm, .help = hlp, .nr_threads = KS_THREADS,          \
		.init = kstock_init, .thread_init = kstock_thread_init,     \
		.setup = su, .run = rn, .check_step = kstock_check_step,    \
		.check_end = kstock_check_end,                              \
		.teardown = kstock_teardown,                                \
	}

KSTOCK_SCENARIO(kstock_drain, "kstock-drain",
		"the kernel's stock: consume and refill on two CPUs against"
		" remote drains", drain_setup, drain_run);
KSTOCK_SCENARIO(kstock_free, "kstock-free",
		"the kernel's stock: free_stock against direct charges",
		free_setup, free_run);

const struct explore_scenario *const explore_stock_scenarios[] = {
	&kstock_drain,
	&kstock_free,
	NULL,
};
