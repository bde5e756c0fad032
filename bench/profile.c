// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * profile.c - the callgrind mode (--profile WHAT --ops N).
 *
 * Runs N operations of one kind, each inside a noinline function whose
 * name starts with bench_mark_, on a 3-level counter tree (top, middle,
 * leaf; the leaf stocked with batch 64) on one simulated CPU.  Everything
 * that puts the slot in the state the operation needs happens outside the
 * marked functions, so `valgrind --tool=callgrind
 * --toggle-collect='bench_mark_*'` counts exactly the N operations (plus the
 * call's own ret, measured by WHAT = null and subtracted by
 * scripts/callgrind-fastpath).
 *
 *   null        an empty marked function
 *   floor       one relaxed fetch_add on a private atomic
 *   hit         try_charge_stock(1) served from the slot
 *   uncharge    uncharge_stock(1) with room in the slot
 *   trim        uncharge_stock(1) with a full slot (DEFAULT sends it up)
 *   miss        try_charge_stock(1) on an empty slot (batch up 3 levels)
 *   plain       counter try_charge(1) up 3 levels, no stock
 *   unplain     counter uncharge(1) up 3 levels, no stock
 * Prefix v4- to hit, uncharge, trim or miss for the V4 policy.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define PROF_BATCH 64U

struct prof {
	struct pcstock_domain *d;
	struct pcstock_counter c[3];	/* top, middle, leaf */
	atomic_long floor;
};

#define MARK __attribute__((noinline, noclone, used))

MARK static void bench_mark_null(struct prof *p)
{
	__asm__ volatile("" ::"r"(p) : "memory");
}

MARK static void bench_mark_floor(struct prof *p)
{
	atomic_fetch_add_explicit(&p->floor, 1, memory_order_relaxed);
}

MARK static bool bench_mark_charge_stock(struct prof *p)
{
	return pcstock_counter_try_charge_stock(&p->c[2], 1, NULL, NULL);
}

MARK static void bench_mark_uncharge_stock(struct prof *p)
{
	pcstock_counter_uncharge_stock(&p->c[2], 1);
}

MARK static bool bench_mark_try_charge(struct prof *p)
{
	return pcstock_counter_try_charge(&p->c[2], 1, NULL);
}

MARK static void bench_mark_uncharge(struct prof *p)
{
	pcstock_counter_uncharge(&p->c[2], 1);
}

static int prof_setup(struct prof *p, enum pcstock_stock_policy policy)
{
	struct pcstock_domain_attr attr = { .nr_cpus = 1 };
	int ret;

	memset(p, 0, sizeof(*p));
	ret = pcstock_domain_create(&attr, &p->d);
	if (ret)
		return ret;
	pcstock_counter_init(&p->c[0], NULL, false);
	pcstock_counter_init(&p->c[1], &p->c[0], false);
	pcstock_counter_init(&p->c[2], &p->c[1], false);
	ret = pcstock_counter_alloc_stock(&p->c[2], p->d, PROF_BATCH, policy);
	if (!ret)
		ret = pcstock_cpu_enter(p->d, 0);
	return ret;
}

static void empty_slot(struct prof *p)
{
	pcstock_counter_drain_stock(&p->c[2], 0);
}

/* Slot exactly full: @batch pages charged plainly, pushed into the slot. */
static void full_slot(struct prof *p)
{
	empty_slot(p);
	pcstock_counter_charge(&p->c[2], PROF_BATCH);
	if (pcstock_counter_stock_pages(&p->c[2]) == 0)
		pcstock_counter_uncharge_stock(&p->c[2], PROF_BATCH);
	/* V4 never refills on uncharge: fill through a miss instead. */
	if (pcstock_counter_stock_pages(&p->c[2]) == 0 &&
	    pcstock_counter_try_charge_stock(&p->c[2], 1, NULL, NULL))
		pcstock_counter_uncharge(&p->c[2], 1);
}

static int run(struct prof *p, const char *what, unsigned long n)
{
	unsigned long i, k;

	if (!strcmp(what, "null") || !strcmp(what, "floor")) {
		for (i = 0; i < n; i++)
			if (what[0] == 'n')
				bench_mark_null(p);
			else
				bench_mark_floor(p);
	} else if (!strcmp(what, "hit")) {
		/* Runs of slot-sized hits between unmarked refills. */
		for (i = 0; i < n;) {
			full_slot(p);
			k = pcstock_counter_stock_pages(&p->c[2]);
			for (; k && i < n; k--, i++)
				bench_mark_charge_stock(p);
			pcstock_counter_uncharge(&p->c[2],
						 pcstock_counter_read(&p->c[2]) -
						 pcstock_counter_stock_pages(
							 &p->c[2]));
		}
	} else if (!strcmp(what, "uncharge")) {
		for (i = 0; i < n;) {
			empty_slot(p);
			pcstock_counter_charge(&p->c[2], PROF_BATCH - 1);
			for (k = 0; k < PROF_BATCH - 1 && i < n; k++, i++)
				bench_mark_uncharge_stock(p);
			pcstock_counter_uncharge(&p->c[2],
						 PROF_BATCH - 1 - k);
		}
	} else if (!strcmp(what, "trim")) {
		full_slot(p);
		for (i = 0; i < n; i++) {
			pcstock_counter_charge(&p->c[2], 1);
			bench_mark_uncharge_stock(p);
		}
	} else if (!strcmp(what, "miss")) {
		for (i = 0; i < n; i++) {
			empty_slot(p);
			if (bench_mark_charge_stock(p))
				pcstock_counter_uncharge(&p->c[2], 1);
		}
	} else if (!strcmp(what, "plain")) {
		for (i = 0; i < n; i++)
			if (bench_mark_try_charge(p))
				pcstock_counter_uncharge(&p->c[2], 1);
	} else if (!strcmp(what, "unplain")) {
		for (i = 0; i < n; i++) {
			pcstock_counter_charge(&p->c[2], 1);
			bench_mark_uncharge(p);
		}
	} else {
		return -EINVAL;
	}
	empty_slot(p);
	return 0;
}

int profile_main(const char *what, unsigned long n)
{
	enum pcstock_stock_policy policy = PCSTOCK_STOCK_DEFAULT;
	struct prof p;
	int ret;

	if (!strncmp(what, "v4-", 3)) {
		policy = PCSTOCK_STOCK_V4;
		what += 3;
	}
	ret = prof_setup(&p, policy);
	if (!ret)
		ret = run(&p, what, n);
	if (!ret && pcstock_counter_read(&p.c[0]) != 0)
		ret = -EPROTO;
	if (ret)
		fprintf(stderr, "pcstock-bench: --profile %s: %s\n", what,
			ret == -EINVAL ? "unknown kind" : strerror(-ret));
	else
		printf("profiled %s%s x %lu\n",
		       policy == PCSTOCK_STOCK_V4 ? "v4-" : "", what, n);
	pcstock_cpu_exit(p.d);
	pcstock_counter_free_stock(&p.c[2]);
	pcstock_domain_destroy(p.d);
	return ret;
}
