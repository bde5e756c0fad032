// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_protect.c - a stock scenario whose books are the protection
 * counters, for the orders a drain needs.
 *
 * A page's uncharge must happen after its charge.  Usage itself cannot
 * show a weakened drain: usage is only ever changed by seq_cst RMWs, which
 * the weak-memory model runs in schedule order, so usage never goes
 * negative whatever the slot's orders.  What a weakened drain does show
 * is the protection its uncharge publishes: propagate_one() reads the
 * published min_usage (relaxed) and skips its exchange when that already
 * equals min(usage, min).  A drainer that did not acquire the refill may
 * read the min_usage from before the refiller's charge, find it equal to
 * what it would publish, and skip: min_usage and the parent's
 * children_min_usage then keep the refiller's value for good.
 *
 * stock-protect-*: per registered policy whose per-counter stock keeps
 * uncharges (properties per_counter and uncharges_refill; explore.h):
 * counter c (protection, min = low = 1000) under p, stocked with the
 * policy's kind with batch 4 on two SIM CPUs.  Thread 0, CPU 0, charges
 * one page (a miss: 4 charged, 3 left in the slot) and gives it back (into
 * the slot, which holds 4 then); thread 1, no CPU, drains CPU 0 at any
 * time, and again once thread 0 has returned.  Only
 * two calls change usage, the refiller's charge and the drainer's
 * uncharge of what it took from the slot, so the publications never race
 * (the kernel accepts a stale min_usage after racing publishers) and at
 * rest min_usage must be exactly min(usage, min).
 *
 * Invariants at the end, before the checker drains anything:
 *  - min_usage(c) == min(usage(c), 1000), low_usage(c) likewise;
 *  - children_min_usage(p) == min_usage(c), children_low_usage(p)
 *    likewise;
 *  - usage(c) == usage(p) == the pages in the stock; after a drain of
 *    every CPU, usage and min_usage are 0.
 */
#include <stdio.h>

#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>
#include <pcstock/stock.h>

#include "atomic.h"
#include "explore.h"
#include "policy.h"

#define NR_CPUS 2
#define BATCH 4
#define PROTECTION 1000UL

static struct {
	struct pcstock_domain *d;
	struct pcstock_counter p, c;
	volatile bool done;		/* thread 0 returned */
	bool taken;			/* thread 0's batch left the slot */
	unsigned long drained;		/* stock-drain-watermark's drain */
	char msg[200];
} S;

static int protect_init(const struct explore_scenario *s)
{
	struct pcstock_domain_attr attr = {
		.nr_cpus = NR_CPUS,
		.mode = PCSTOCK_CPU_SIM,
	};

	(void)s;
	return pcstock_domain_create(&attr, &S.d);
}

static void protect_thread_init(const struct explore_scenario *s,
				unsigned int t)
{
	(void)s;
	if (t == 0 && pcstock_cpu_enter(S.d, 0))
		fprintf(stderr, "stock-protect: thread 0 cannot enter\n");
}

static void protect_setup(const struct explore_scenario *s)
{
	pcstock_counter_init(&S.p, NULL, true);
	pcstock_counter_init(&S.c, &S.p, true);
	pcstock_counter_set_min(&S.c, PROTECTION);
	pcstock_counter_set_low(&S.c, PROTECTION);
	/* The policy's stock: its kind and its own steps (policy.h). */
	pcs_policy_alloc_counter_stock(s->policy, &S.c, S.d, BATCH);
	explore_label(&S.p, sizeof(S.p), "p", explore_counter_fields);
	explore_label(&S.c, sizeof(S.c), "c", explore_counter_fields);
	S.done = false;
	pcstock_warn_reset();
}

static void protect_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (t == 1) {
		pcstock_counter_drain_stock(&S.c, 0);
		/*
		 * Then once more after thread 0's last call: a plain flag,
		 * which the weak-memory model does not see, so it orders the
		 * calls without synchronising them.
		 */
		while (!S.done)
			pcs_spin_yield();
		pcstock_counter_drain_stock(&S.c, 0);
		return;
	}
	if (pcstock_counter_try_charge_stock(&S.c, 1, NULL, NULL))
		pcstock_counter_uncharge_stock(&S.c, 1);
	S.done = true;
}

/* @what's published value against min(usage, setting). */
static const char *published(const char *what, unsigned long value,
			     unsigned long usage, unsigned long parent_sum)
{
	unsigned long want = usage < PROTECTION ? usage : PROTECTION;

	if (value == want && parent_sum == want)
		return NULL;
	snprintf(S.msg, sizeof(S.msg),
		 "at rest: c.%s_usage %lu, p.children_%s_usage %lu, but "
		 "usage %lu (protection %lu): an uncharge skipped its "
		 "publication on a stale read", what, value, what, parent_sum,
		 usage, PROTECTION);
	return S.msg;
}

static const char *protect_check_end(const struct explore_scenario *s)
{
	unsigned long usage = pcstock_counter_read(&S.c);
	const char *why;
	unsigned int cpu;

	(void)s;
	if (pcstock_warn_count())
		return "usage underflow (warn_count != 0)";
	if (usage != pcstock_counter_stock_pages(&S.c) ||
	    pcstock_counter_read(&S.p) != usage)
		return "at rest: usage != stock, or parent != child";
	why = published("min", pcstock_counter_min_usage(&S.c), usage,
			pcstock_counter_children_min_usage(&S.p));
	if (!why)
		why = published("low", pcstock_counter_low_usage(&S.c), usage,
				pcstock_counter_children_low_usage(&S.p));
	if (why)
		return why;
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		pcstock_counter_drain_stock(&S.c, cpu);
	pcstock_counter_free_stock(&S.c);
	if (pcstock_counter_read(&S.c) || pcstock_counter_read(&S.p) ||
	    pcstock_counter_min_usage(&S.c) ||
	    pcstock_counter_children_min_usage(&S.p))
		return "after a full drain: usage or min_usage != 0";
	return NULL;
}

static void protect_teardown(const struct explore_scenario *s)
{
	(void)s;
	pcstock_counter_free_stock(&S.c);
}

/* The scenario's uncharge must go into the slot, for the drain to take. */
static bool refilling_counter_stock(const struct pcstock_policy_info *info)
{
	return info->per_counter && info->uncharges_refill;
}

/* Every per-counter stock: stock-drain-watermark. */
static bool counter_stock(const struct pcstock_policy_info *info)
{
	return info->per_counter;
}

static const struct explore_scenario protect = {
	.name = "stock-protect",
	.help = "a remote drain's uncharge publishes min_usage after the "
		"refill's",
	.applies = refilling_counter_stock,
	.policy_info = pcstock_tree_policy_info,
	.nr_threads = 2,
	.init = protect_init,
	.thread_init = protect_thread_init,
	.setup = protect_setup,
	.run = protect_run,
	.check_end = protect_check_end,
	.teardown = protect_teardown,
};

/*
 * The watermark scenarios: two more removals from a slot that must
 * acquire the refill, seen through the peak the refiller stores after its
 * charge and before its slot addition (update_watermarks(), a lossy
 * relaxed read-compare-store).  Setup charges SETUP pages (plain).  When
 * thread 1 finds that thread 0's miss charged its batch and that those
 * pages have left the slot (the flag S.taken), its last charge happens
 * after thread 0's store of the peak SETUP + BATCH and must see it, so at
 * rest the watermarks are at least that peak.  With the removal weakened,
 * that charge may read the setup's watermark and overwrite the peak with
 * a lower value.  (Without the flag, two racing charges may legitimately
 * lose the higher peak: the lossy update.)
 *
 * stock-flush-watermark: DEFAULT, both threads on SIM CPU 0.  Thread 0
 * charges one page (a miss: BATCH charged, BATCH - 1 in the slot);
 * thread 1 gives back the SETUP pages (into the slot, which overflows if
 * thread 0's pages are there: the flush of pcs_refill_capped() takes them
 * all up), and sets the flag if usage is then 1 (thread 0's batch and
 * the flush, by either thread, both happened), then charges 2 pages plain.
 *
 * stock-remark-watermark: V4 on SIM CPU 0 for thread 0, as above;
 * thread 1 (no CPU) disables the stock, drains CPU 0 (V4 exchanges
 * without reading first, so a marked value it takes is put back by the
 * drain's second exchange, which also takes what thread 0's addition put
 * in between), sets the flag if it drained BATCH - 1 pages, then charges
 * 2 pages plain.
 *
 * stock-drain-watermark-*: per registered policy with a per-counter stock
 * (property per_counter), its kind and steps with batch BATCH: the drain
 * step's own removal, whatever the policy's other properties (a policy
 * whose uncharges do not refill never reaches stock-protect).  Thread 0,
 * SIM CPU 0, charges one page (a miss: its refill keeps some of the
 * surplus in the slot); thread 1, no CPU, drains CPU 0, then charges 2
 * pages plain.  The pages it drained can only be thread 0's, put in the
 * slot after thread 0's store of a peak of at least SETUP + 1 + drained,
 * so with any drained the watermarks must be at least that at rest.
 */
#define SETUP 2
#define PEAK (SETUP + BATCH)

static bool watermark_remark(const struct explore_scenario *s)
{
	return s->arg != NULL;
}

static void watermark_thread_init(const struct explore_scenario *s,
				  unsigned int t)
{
	if ((t == 0 || !watermark_remark(s)) && pcstock_cpu_enter(S.d, 0))
		fprintf(stderr, "%s: thread %u cannot enter\n", s->name, t);
}

static void watermark_setup(const struct explore_scenario *s)
{
	pcstock_counter_init(&S.c, NULL, false);
	pcstock_counter_charge(&S.c, SETUP);
	pcstock_counter_alloc_stock(&S.c, S.d, BATCH,
				    watermark_remark(s) ? PCSTOCK_STOCK_V4 :
				    PCSTOCK_STOCK_DEFAULT);
	explore_label(&S.c, sizeof(S.c), "c", explore_counter_fields);
	S.taken = false;
	pcstock_warn_reset();
}

static void watermark_run(const struct explore_scenario *s, unsigned int t)
{
	if (t == 0) {
		/* Cannot fail: no limit. */
		(void)pcstock_counter_try_charge_stock(&S.c, 1, NULL, NULL);
		return;
	}
	if (watermark_remark(s)) {
		pcstock_counter_disable_stock(&S.c);
		S.taken = pcstock_counter_drain_stock(&S.c, 0) == BATCH - 1;
	} else {
		pcstock_counter_uncharge_stock(&S.c, SETUP);
		S.taken = pcstock_counter_read(&S.c) == 1;
	}
	pcstock_counter_charge(&S.c, 2);
}

static const char *watermark_check_end(const struct explore_scenario *s)
{
	unsigned long local = pcstock_counter_local_watermark(&S.c);
	unsigned long global = pcstock_counter_watermark(&S.c);

	if (pcstock_warn_count())
		return "usage underflow (warn_count != 0)";
	if (pcstock_counter_read(&S.c) != pcstock_counter_stock_pages(&S.c) +
	    (watermark_remark(s) ? SETUP : 0) + 1 + 2)
		return "at rest: usage != the pages held";
	if (!S.taken || (local >= PEAK && global >= PEAK))
		return NULL;
	snprintf(S.msg, sizeof(S.msg),
		 "at rest: watermark %lu, local %lu, below the peak %d: a "
		 "charge after taking thread 0's pages did not see its store",
		 global, local, PEAK);
	return S.msg;
}

static void drain_watermark_thread_init(const struct explore_scenario *s,
					unsigned int t)
{
	if (t == 0 && pcstock_cpu_enter(S.d, 0))
		fprintf(stderr, "%s: thread 0 cannot enter\n", s->name);
}

static void drain_watermark_setup(const struct explore_scenario *s)
{
	pcstock_counter_init(&S.c, NULL, false);
	pcstock_counter_charge(&S.c, SETUP);
	/* The policy's stock: its kind and its own steps (policy.h). */
	pcs_policy_alloc_counter_stock(s->policy, &S.c, S.d, BATCH);
	explore_label(&S.c, sizeof(S.c), "c", explore_counter_fields);
	S.drained = 0;
	pcstock_warn_reset();
}

static void drain_watermark_run(const struct explore_scenario *s,
				unsigned int t)
{
	(void)s;
	if (t == 0) {
		/* Cannot fail: no limit. */
		(void)pcstock_counter_try_charge_stock(&S.c, 1, NULL, NULL);
		return;
	}
	S.drained = pcstock_counter_drain_stock(&S.c, 0);
	pcstock_counter_charge(&S.c, 2);
}

static const char *drain_watermark_check_end(const struct explore_scenario *s)
{
	unsigned long local = pcstock_counter_local_watermark(&S.c);
	unsigned long global = pcstock_counter_watermark(&S.c);
	unsigned long peak = SETUP + 1 + S.drained;

	(void)s;
	if (pcstock_warn_count())
		return "usage underflow (warn_count != 0)";
	if (pcstock_counter_read(&S.c) !=
	    pcstock_counter_stock_pages(&S.c) + SETUP + 1 + 2)
		return "at rest: usage != the pages held";
	if (!S.drained || (local >= peak && global >= peak))
		return NULL;
	snprintf(S.msg, sizeof(S.msg),
		 "at rest: watermark %lu, local %lu, below the peak %lu: a "
		 "charge after draining %lu of thread 0's pages did not see "
		 "its store", global, local, peak, S.drained);
	return S.msg;
}

static const struct explore_scenario drain_watermark = {
	.name = "stock-drain-watermark",
	.help = "a drain acquires the pages it takes from a slot",
	.applies = counter_stock,
	.policy_info = pcstock_tree_policy_info,
	.nr_threads = 2,
	.init = protect_init,
	.thread_init = drain_watermark_thread_init,
	.setup = drain_watermark_setup,
	.run = drain_watermark_run,
	.check_end = drain_watermark_check_end,
	.teardown = protect_teardown,
};

static const struct explore_scenario flush_watermark = {
	.name = "stock-flush-watermark",
	.help = "a flushing refill acquires the pages it sends up",
	.nr_threads = 2,
	.init = protect_init,
	.thread_init = watermark_thread_init,
	.setup = watermark_setup,
	.run = watermark_run,
	.check_end = watermark_check_end,
	.teardown = protect_teardown,
};

static const struct explore_scenario remark_watermark = {
	.name = "stock-remark-watermark",
	.help = "a V4 drain's re-marking exchange acquires what it takes",
	.nr_threads = 2,
	.init = protect_init,
	.thread_init = watermark_thread_init,
	.setup = watermark_setup,
	.run = watermark_run,
	.check_end = watermark_check_end,
	.teardown = protect_teardown,
	.arg = "remark",
};

const struct explore_scenario *const explore_protect_scenarios[] = {
	&protect,
	&drain_watermark,
	&flush_watermark,
	&remark_watermark,
	NULL,
};
