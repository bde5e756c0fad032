// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_stock.c - schedule-explorer scenarios for the stock layer.
 *
 * Every scenario is run per registered policy whose stock is the
 * per-counter one, with that policy's kind of it (explore.h).
 *
 * A stocked counter c (batch 4) under an unstocked parent p, on a domain
 * of two simulated CPUs.  Each explored thread runs a small script of
 * stocked charges, stocked uncharges, drains of either CPU, and (thread 2
 * only) disable and CPU offline.  Two threads may share a CPU: that models
 * preemption, which is what lets two refills of one slot race.
 *
 * Blocking: cpu_set_online() holds the domain's hotplug mutex while it
 * drains (scheduling points inside), and alloc/free take the hotplug and
 * arena mutexes.  Only thread 2 ever goes offline; allocation and
 * free_stock() (whose contract excludes concurrent stocked calls anyway)
 * run in setup and in the final check, unscheduled, so no explored thread
 * can block on a mutex a descheduled thread holds.
 *
 * The books: pages held per thread (a stocked charge returned true, no
 * uncharge of them started) and a bound on the pages each thread has in
 * flight (its own pages plus what it may have taken out of a slot).
 * Pages move between usage, the slots and the callers one atomic at a
 * time, and usage is always the first to gain and the last to lose: a
 * charge adds to usage before its pages reach a slot or the caller; a
 * drain, an uncharge or a trim empties the slot or the caller before it
 * subtracts from usage.  So usage never lags behind the other two.
 * Invariants:
 *  - every step: 0 <= usage(c) - held - sum(slots) <= in flight, no slot
 *    negative (a slot's pages: a disabled stock's slots carry its mark),
 *    no underflow warning, held + sum(slots) <= max(p);
 *  - every step, for a policy that caps its slots
 *    (explore_caps_slots(); and one that does not in stock-cap, to be
 *    caught): every slot <= batch;
 *  - after each of its operations a thread reads usage(c) (relaxed) and
 *    never sees less than it holds: in weak mode (--weak) the read may
 *    return an older value, but the pages it holds were charged before it
 *    got them (its own charge, or the refill its consume acquired);
 *  - (stock-disable) at the end, before the checker's own drains: the
 *    disable and the drains after it left every slot empty;
 *  - at the end, if the stock was disabled: every slot still marked;
 *  - (stock-retry) a charge of thread 2 fails only if another thread's
 *    drain took the stock's pages first, or there is no room for it once
 *    its own drain gave them back: a failure after its own drain emptied
 *    a slot, with no other thread charging or uncharging meanwhile and
 *    room for it beside what they hold, is a violation;
 *  - at the end: usage(c) == usage(p) == held + sum(slots); after draining
 *    every CPU all slots are 0 and usage == held; after free_stock() and
 *    giving back what is held, usage is 0 at both levels.
 */
#include <stdio.h>

#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>
/* The slot's encoding (the disable mark): the library's, not API. */
#define PCSTOCK_INLINE_TYPES_ONLY_
#include <pcstock/stock_inline.h>
#undef PCSTOCK_INLINE_TYPES_ONLY_

#include "explore.h"
#include "policy.h"

#define NR_CPUS 2
#define NR_THREADS 3
#define BATCH 4
#define MAX_OPS 8
/*
 * More than any slot holds in these scripts, V4's racing refills included:
 * the bound on pages an operation can have taken out of a slot (a drain,
 * or a refill that empties the slot and sends its pages up with its own)
 * and not yet uncharged.
 */
#define SLOT_MAX (4 * BATCH)

enum stock_op {
	OP_END = 0,
	OP_CHARGE,	/* try_charge_stock(n) */
	OP_UNCHARGE,	/* uncharge_stock(n) of pages this thread holds */
	OP_DRAIN,	/* drain_stock(cpu n) */
	OP_OFFLINE,	/* cpu_set_online(n, false); thread 2 only */
	OP_DISABLE,	/* disable_stock() */
	OP_GO_EXACT,	/* stock_go_exact(), as make_room calls it */
};

struct stock_step {
	enum stock_op op;
	unsigned long n;
};

/*
 * struct stock_params - one stock scenario's script (the stock's kind
 * comes from the scenario's policy, explore_scenario.info)
 * @check_cap: assert slot <= batch even if the policy's stock does not
 *	promise it (stock-cap: to be caught)
 */
struct stock_params {
	bool check_cap;
	bool check_disable;		/* thread 2 disables, then drains all */
	bool check_retry;		/* thread 2's charges, see the top */
	unsigned long parent_max;
	int cpu[NR_THREADS];		/* -1: not a CPU of the domain */
	struct stock_step ops[NR_THREADS][MAX_OPS];
};

static struct {
	struct pcstock_domain *d;
	struct pcstock_counter p, c;
	unsigned long held[NR_THREADS];
	unsigned long inflight[NR_THREADS];
	const char *observed;		/* a thread's own read went wrong */
	/* stock-retry: */
	bool busy[NR_THREADS];		/* in a charge or an uncharge */
	bool overlap;			/* another was busy during 2's */
	bool drained;			/* 2 took pages out of a slot */
	int last[NR_CPUS];		/* each slot's pages at the last step */
	char msg[160];
} S;

static int stock_init(const struct explore_scenario *s)
{
	struct pcstock_domain_attr attr = {
		.nr_cpus = NR_CPUS,
		.mode = PCSTOCK_CPU_SIM,
	};

	(void)s;
	return pcstock_domain_create(&attr, &S.d);
}

static void stock_thread_init(const struct explore_scenario *s, unsigned int t)
{
	const struct stock_params *p = s->arg;

	if (p->cpu[t] >= 0)
		pcstock_cpu_enter(S.d, (unsigned int)p->cpu[t]);
}

static atomic_int *slot(unsigned int cpu)
{
	return pcstock_percpu_ptr(S.d, S.c.stock_slots, cpu);
}

static void stock_setup(const struct explore_scenario *s)
{
	const struct stock_params *p = s->arg;
	char name[32];
	unsigned int cpu;
	int t;

	pcstock_counter_init(&S.p, NULL, false);
	pcstock_counter_init(&S.c, &S.p, false);
	pcstock_counter_set_max(&S.p, p->parent_max);
	/* The policy's stock: its kind and its own steps (policy.h). */
	pcs_policy_alloc_counter_stock(s->policy, &S.c, S.d, BATCH);
	explore_label(&S.p, sizeof(S.p), "p", explore_counter_fields);
	explore_label(&S.c, sizeof(S.c), "c", explore_counter_fields);
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		snprintf(name, sizeof(name), "c.slot[cpu%u]", cpu);
		explore_label(slot(cpu), sizeof(atomic_int), name, NULL);
		snprintf(name, sizeof(name), "c.stats[cpu%u]", cpu);
		explore_label(pcstock_percpu_ptr(S.d, S.c.stock_stats, cpu),
			      6 * sizeof(unsigned long), name, NULL);
	}
	for (t = 0; t < NR_THREADS; t++) {
		S.held[t] = S.inflight[t] = 0;
		S.busy[t] = false;
	}
	S.observed = NULL;
	S.overlap = S.drained = false;
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		S.last[cpu] = 0;
	pcstock_warn_reset();
}

static unsigned long sum(const unsigned long *v)
{
	unsigned long total = 0;
	int t;

	for (t = 0; t < NR_THREADS; t++)
		total += v[t];
	return total;
}

/*
 * The pages a slot's value stands for: a disabled stock's slots carry the
 * mark (PCSTOCK_STOCK_MARK_) on top of them, and an EXACT stock's slots,
 * while exact, a mark of its own (half the disable's, src/stock_hit.h),
 * alone or with the disable's.  Negative if the value is none of these.
 */
#define EXACT_MARK (PCSTOCK_STOCK_MARK_ / 2)
static int slot_pages(int v)
{
	if (v >= EXACT_MARK)
		return v < 0 ? v - EXACT_MARK : v;
	if (v >= PCSTOCK_STOCK_MARK_)
		return v - PCSTOCK_STOCK_MARK_;
	return v - PCSTOCK_STOCK_MARK_ - EXACT_MARK;
}

/* Reads the slots directly: valid while the stock is allocated. */
/*
 * stock-retry's books, kept at each step.  A step's hook runs in the
 * thread about to make an access, and only one thread runs at a time:
 * the accesses since the previous hook were all that thread's.
 */
static void retry_books(unsigned int cpu, int pages)
{
	if (S.busy[2] && explore_self() == 2 && pages < S.last[cpu])
		S.drained = true;
	S.last[cpu] = pages;
	if (S.busy[2] && (S.busy[0] || S.busy[1]))
		S.overlap = true;
}

static const char *stock_check_step(const struct explore_scenario *s)
{
	const struct stock_params *p = s->arg;
	long usage = (long)pcstock_counter_read(&S.c), slots = 0, gap;
	long held = (long)sum(S.held);
	unsigned int cpu;

	if (pcstock_warn_count())
		return "usage underflow (warn_count != 0)";
	if (S.observed)
		return S.observed;
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		int v = slot_pages(atomic_load(slot(cpu)));

		if (v < 0 || ((p->check_cap || explore_caps_slots(&s->info)) &&
			      v > BATCH)) {
			snprintf(S.msg, sizeof(S.msg),
				 "slot of cpu%u holds %d pages (batch %d)",
				 cpu, v, BATCH);
			return S.msg;
		}
		slots += v;
		if (p->check_retry)
			retry_books(cpu, v);
	}
	gap = usage - held - slots;
	if (gap < 0 || gap > (long)sum(S.inflight)) {
		snprintf(S.msg, sizeof(S.msg),
			 "usage %ld - held %ld - stock %ld = %ld, outside "
			 "[0, %lu in flight]", usage, held, slots, gap,
			 sum(S.inflight));
		return S.msg;
	}
	if ((unsigned long)(held + slots) > p->parent_max) {
		snprintf(S.msg, sizeof(S.msg),
			 "held %ld + stock %ld above the parent's max %lu",
			 held, slots, p->parent_max);
		return S.msg;
	}
	return NULL;
}

/*
 * stock-retry: thread 2's charge of @n failed.  Its own drain found pages
 * (a slot emptied by its accesses), nobody else moved pages meanwhile, and
 * what the others hold leaves room for @n: the retry after that drain
 * cannot have failed.
 */
static void retry_check(const struct stock_params *p, unsigned long n)
{
	if (S.drained && !S.overlap &&
	    S.held[0] + S.held[1] + n <= p->parent_max && !S.observed)
		S.observed = "a charge failed for pages its own drain took out "
			     "of the stock, with room for it once they were "
			     "uncharged: an exact charge whose drain finds "
			     "pages tries once more (no charge fails for pages "
			     "in its own counter's stock)";
}

static void stock_run(const struct explore_scenario *s, unsigned int t)
{
	const struct stock_params *p = s->arg;
	const struct stock_step *st;
	bool ok;

	for (st = p->ops[t]; st < p->ops[t] + MAX_OPS && st->op; st++) {
		switch (st->op) {
		case OP_CHARGE:
			S.inflight[t] = (st->n > BATCH ? st->n : BATCH) +
					SLOT_MAX;
			S.busy[t] = true;
			if (t == 2) {
				S.overlap = S.busy[0] || S.busy[1];
				S.drained = false;
			}
			ok = pcstock_counter_try_charge_stock(&S.c, st->n, NULL,
							      NULL);
			S.busy[t] = false;
			if (ok)
				S.held[t] += st->n;
			else if (t == 2 && p->check_retry)
				retry_check(p, st->n);
			break;
		case OP_UNCHARGE:
			if (S.held[t] < st->n)
				break;
			S.held[t] -= st->n;
			S.inflight[t] = st->n + SLOT_MAX;
			S.busy[t] = true;
			pcstock_counter_uncharge_stock(&S.c, st->n);
			S.busy[t] = false;
			break;
		case OP_DRAIN:
		case OP_OFFLINE:
			S.inflight[t] = SLOT_MAX;
			if (st->op == OP_DRAIN)
				pcstock_counter_drain_stock(&S.c,
							    (unsigned int)st->n);
			else
				pcstock_cpu_set_online(S.d, (unsigned int)st->n,
						       false);
			break;
		case OP_DISABLE:
			pcstock_counter_disable_stock(&S.c);
			break;
		case OP_GO_EXACT:
			S.inflight[t] = SLOT_MAX;
			pcstock_counter_stock_go_exact(&S.c);
			break;
		case OP_END:
			break;
		}
		S.inflight[t] = 0;
		if (pcstock_counter_read(&S.c) < S.held[t] && !S.observed)
			S.observed = "a thread read usage below what it holds";
	}
}

static const char *stock_check_end(const struct explore_scenario *s)
{
	const struct stock_params *p = s->arg;
	unsigned long held = sum(S.held), usage;
	const char *msg = stock_check_step(s);
	unsigned int cpu;

	if (msg)
		return msg;
	if (p->check_disable && pcstock_counter_stock_pages(&S.c))
		return "after disable and a drain of every CPU, a slot still "
		       "holds pages";
	/* Once disabled, a slot stays marked, whatever drained it since. */
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		if (atomic_load(&S.c.stock_state) != PCSTOCK_STOCK_ENABLED_ &&
		    atomic_load(slot(cpu)) >= 0)
			return "a disabled stock's slot lost its mark";
	usage = pcstock_counter_read(&S.c);
	if (usage != held + pcstock_counter_stock_pages(&S.c))
		return "at rest: usage != held + stock";
	if (pcstock_counter_read(&S.p) != usage)
		return "at rest: parent usage != child usage";
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		pcstock_counter_drain_stock(&S.c, cpu);
	if (pcstock_counter_stock_pages(&S.c) ||
	    pcstock_counter_read(&S.c) != held)
		return "after a full drain: stock != 0 or usage != held";
	pcstock_counter_free_stock(&S.c);
	if (pcstock_counter_read(&S.c) != held)
		return "after free_stock: usage != held";
	pcstock_counter_uncharge(&S.c, held);
	if (pcstock_counter_read(&S.c) || pcstock_counter_read(&S.p))
		return "after giving everything back: usage != 0";
	if (pcstock_warn_count())
		return "usage underflow at the end";
	return NULL;
}

static void stock_teardown(const struct explore_scenario *s)
{
	unsigned int cpu;

	(void)s;
	pcstock_counter_free_stock(&S.c);
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		pcstock_cpu_set_online(S.d, cpu, true);
}

#define C(n) { OP_CHARGE, n }
#define U(n) { OP_UNCHARGE, n }
#define D(n) { OP_DRAIN, n }
#define OFF(n) { OP_OFFLINE, n }
#define DIS { OP_DISABLE, 0 }
#define EXACT { OP_GO_EXACT, 0 }

/* Two threads on CPU0 (preemption), one on CPU1 draining CPU0 remotely. */
#define CHARGE_PARAMS(cap)                                                  \
	{                                                                   \
		.check_cap = cap, .parent_max = 1000,                       \
		.cpu = { 0, 0, 1 },                                         \
		.ops = { { C(1), C(1), U(1), C(2), U(2), C(1) },            \
			 { C(1), C(3), U(1), C(5), U(3), U(5) },            \
			 { C(1), D(0), C(2), D(0), U(1), D(1) } },          \
	}

static const struct stock_params charge = CHARGE_PARAMS(false);
static const struct stock_params cap = CHARGE_PARAMS(true);

/* Owners on both CPUs, a thread outside the domain draining both. */
static const struct stock_params drain = {
	.parent_max = 1000, .cpu = { 0, 1, -1 },
	.ops = { { C(1), C(1), C(1), U(2), C(2), U(1) },
		 { C(2), U(1), C(1), C(3) },
		 { D(0), D(1), C(2), D(0), D(1), U(2), D(0) } },
};

/* Offline of CPU0 while its owner runs, then disable. */
static const struct stock_params lifecycle = {
	.parent_max = 1000, .cpu = { 0, 1, 1 },
	.ops = { { C(1), C(2), U(1), C(1), C(1), U(2) },
		 { C(1), U(1), C(2), C(1) },
		 { D(0), OFF(0), C(1), DIS, D(1), U(1), C(1) } },
};

/* A parent limit of 6 with batch 4: greedy charges fail, exact ones. */
static const struct stock_params limit = {
	.parent_max = 6, .cpu = { 0, 1, 0 },
	.ops = { { C(1), C(2), U(1), C(2) },
		 { C(2), C(1), U(2), C(1) },
		 { C(1), D(1), U(1), D(0), C(3) } },
};

/*
 * Owners on both CPUs charge (refills race the disable); thread 2 disables
 * and then drains both CPUs: the mark must leave no page behind.
 */
static const struct stock_params disable = {
	.check_disable = true, .parent_max = 1000, .cpu = { 0, 1, -1 },
	.ops = { { C(1), U(1) },
		 { C(2), U(2) },
		 { D(1), D(0), DIS, D(0), D(1) } },
};

/*
 * An EXACT stock's retry: thread 0 stocks 3 pages in CPU1's slot (usage 4
 * of max 12, margin 8: the bound, so no switch), thread 1 switches the
 * stock to exact (make_room's call), thread 2 on CPU0 charges 9.  Its
 * first try may find the 3 pages still stocked (the switch has marked the
 * slots, ENTERING, and not yet drained them; or no switch yet), fail, and
 * drain them itself: it must then try again, and 1 + 9 fits.  A switch
 * that drains them first leaves it nothing to find and may make it fail
 * (its drain's uncharge still to come): allowed.
 */
/* The drains of CPU0's slot, always empty, only let thread 0 go first. */
static const struct stock_params retry = {
	.check_retry = true, .parent_max = 12, .cpu = { 1, 1, 0 },
	.ops = { { C(1) },
		 { D(0), D(0), D(0), D(0), D(0), D(0), D(0), EXACT },
		 { D(0), D(0), D(0), D(0), D(0), D(0), D(0), C(9) } },
};

/*
 * An exact stock that goes exact and back: parent max 20, batch 4 on two
 * CPUs, so the slots hide up to 8 pages: the stock goes exact once a
 * margin falls below 8 (usage above 12) and leaves at an exact charge
 * once the margins are twice that (usage 4 or less).  Threads 0 and 1
 * charge past the bound and give everything back, then charge again:
 * switches both ways race each other, thread 2's charges and its drains.
 */
static const struct stock_params toggle = {
	.parent_max = 20, .cpu = { 0, 1, 0 },
	.ops = { { C(5), C(5), U(10), C(1), U(1), C(1) },
		 { C(3), C(2), U(5), C(1), C(2), U(3) },
		 { D(1), C(1), U(1), D(0), C(1), D(1) } },
};

/*
 * Every scenario here runs once per registered policy whose stock is the
 * per-counter one (the kind its properties name), "stock-charge-default"
 * and so on; stock-cap only for a kind that does not cap its slots (the
 * series' V4: its racing refills do not), to show that it does not.
 */
static bool per_counter(const struct pcstock_policy_info *info)
{
	return info->per_counter;
}

static bool exact(const struct pcstock_policy_info *info)
{
	return info->per_counter && info->exact_at_limit;
}

static bool uncapped(const struct pcstock_policy_info *info)
{
	return info->per_counter && !explore_caps_slots(info);
}

#define STOCK_SCENARIO(id, nm, hlp, exp, which)                             \
	static const struct explore_scenario id##_scenario = {              \
		.name = nm, .help = hlp, .nr_threads = NR_THREADS,          \
		.expect = exp, .init = stock_init,                          \
		.thread_init = stock_thread_init, .setup = stock_setup,     \
		.run = stock_run, .check_step = stock_check_step,           \
		.check_end = stock_check_end, .teardown = stock_teardown,   \
		.arg = &id, .applies = which,                               \
		.policy_info = pcstock_tree_policy_info,                    \
	}

STOCK_SCENARIO(charge, "stock-charge",
	       "charges/uncharges, two threads share cpu0, remote drains",
	       NULL, per_counter);
STOCK_SCENARIO(cap, "stock-cap",
	       "as stock-charge with slot <= batch asserted",
	       "refills race past batch", uncapped);
STOCK_SCENARIO(drain, "stock-drain",
	       "owners on both CPUs, an outside thread draining both", NULL,
	       per_counter);
STOCK_SCENARIO(lifecycle, "stock-lifecycle",
	       "CPU offline and disable_stock while owners charge", NULL,
	       per_counter);
STOCK_SCENARIO(limit, "stock-limit",
	       "parent max 6 with batch 4: greedy and exact charges fail",
	       NULL, per_counter);
STOCK_SCENARIO(disable, "stock-disable",
	       "refills on both CPUs race disable + drain of both", NULL,
	       per_counter);
STOCK_SCENARIO(retry, "stock-retry",
	       "a charge racing a switch to exact needs the stocked pages",
	       NULL, exact);
STOCK_SCENARIO(toggle, "stock-switch",
	       "an exact stock goes exact and back while charges race",
	       NULL, exact);

const struct explore_scenario *const explore_stock_scenarios[] = {
	&charge_scenario,
	&cap_scenario,
	&drain_scenario,
	&lifecycle_scenario,
	&limit_scenario,
	&disable_scenario,
	&retry_scenario,
	&toggle_scenario,
	NULL,
};
