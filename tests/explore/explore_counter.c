// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_counter.c - schedule-explorer scenarios for the counter layer.
 *
 * A small tree: root <- mid <- {leaf0, leaf1}.  Threads 0 and 1 charge and
 * uncharge a leaf each; thread 2 moves mid's hard limit and leaf0's min.
 * The counter takes no lock, so any thread may do anything.
 *
 * The scenario keeps its own books, updated only by the thread holding the
 * baton: pages committed per leaf (a try_charge() returned true, and no
 * uncharge has started), and pages in flight per thread (an operation has
 * started but not returned).  Invariants:
 *  - every step: committed <= usage <= committed + in flight, per level
 *    (conservation with the speculative adds allowed for), and no
 *    underflow warning;
 *  - every step: mid's committed usage is at most the limit promised by
 *    the last successful set_max() (while a raising set_max() runs, at
 *    most the larger of the two);
 *  - after each of its operations, a leaf thread reads usage at every
 *    level of its path (pcstock_counter_read(), relaxed) and never sees
 *    less than it holds there itself: in weak mode (--weak) that read may
 *    return an older value, but never one from before its own charges;
 *  - at the end: usage == committed at every level, and
 *    children_min_usage == the sum of the children's min_usage.
 */
#include <stdio.h>

#include <pcstock/counter.h>

#include "explore.h"

enum { LEAF0, LEAF1, MID, ROOT, NR_LEVELS };

struct counter_params {
	unsigned long root_max;
	unsigned long mid_max;		/* at setup */
	unsigned long charge[2][4];	/* per leaf thread; 0 ends the list */
	unsigned long set_max[4];	/* thread 2's limits for mid */
	unsigned long leaf0_min;	/* thread 2 sets it after set_max[0] */
};

static struct {
	struct pcstock_counter c[NR_LEVELS];
	long committed[2];		/* per leaf */
	unsigned long inflight[3];	/* per thread */
	int inflight_leaf[3];		/* -1: mid only (set_max: 0 pages) */
	unsigned long promise;		/* mid's committed bound */
	const char *observed;		/* a leaf thread's read went wrong */
	char msg[160];
} S;

static const char *const names[NR_LEVELS] = { "leaf0", "leaf1", "mid",
					      "root" };

static void counter_setup(const struct explore_scenario *s)
{
	const struct counter_params *p = s->arg;
	int i;

	pcstock_counter_init(&S.c[ROOT], NULL, true);
	pcstock_counter_init(&S.c[MID], &S.c[ROOT], true);
	pcstock_counter_init(&S.c[LEAF0], &S.c[MID], true);
	pcstock_counter_init(&S.c[LEAF1], &S.c[MID], true);
	pcstock_counter_set_max(&S.c[ROOT], p->root_max);
	pcstock_counter_set_max(&S.c[MID], p->mid_max);
	for (i = 0; i < NR_LEVELS; i++)
		explore_label(&S.c[i], sizeof(S.c[i]), names[i],
			      explore_counter_fields);
	S.committed[0] = S.committed[1] = 0;
	for (i = 0; i < 3; i++) {
		S.inflight[i] = 0;
		S.inflight_leaf[i] = -1;
	}
	S.promise = p->mid_max;
	S.observed = NULL;
	pcstock_warn_reset();
}

/* Does level @lvl lie on the path from leaf @leaf to the root? */
static int on_path(int leaf, int lvl)
{
	return lvl >= MID || lvl == leaf;
}

static long committed_at(int lvl)
{
	long sum = 0;
	int leaf;

	for (leaf = LEAF0; leaf <= LEAF1; leaf++)
		if (on_path(leaf, lvl))
			sum += S.committed[leaf];
	return sum;
}

static const char *counter_check_step(const struct explore_scenario *s)
{
	int lvl, t;

	(void)s;
	if (pcstock_warn_count())
		return "usage underflow (warn_count != 0)";
	if (S.observed)
		return S.observed;
	for (lvl = 0; lvl < NR_LEVELS; lvl++) {
		long usage = (long)pcstock_counter_read(&S.c[lvl]);
		long lo = committed_at(lvl), hi = lo;

		for (t = 0; t < 3; t++)
			if (S.inflight_leaf[t] >= 0 &&
			    on_path(S.inflight_leaf[t], lvl))
				hi += (long)S.inflight[t];
		if (usage < lo || usage > hi) {
			snprintf(S.msg, sizeof(S.msg),
				 "%s.usage %ld outside committed range "
				 "[%ld, %ld]", names[lvl], usage, lo, hi);
			return S.msg;
		}
	}
	if ((unsigned long)committed_at(MID) > S.promise) {
		snprintf(S.msg, sizeof(S.msg),
			 "mid: committed %ld above the limit %lu promised by "
			 "set_max", committed_at(MID), S.promise);
		return S.msg;
	}
	return NULL;
}

/* What the leaf thread of @leaf reads of its path, against what it holds. */
static void observe(int leaf)
{
	int lvl;

	for (lvl = 0; lvl < NR_LEVELS; lvl++)
		if (on_path(leaf, lvl) && !S.observed &&
		    (long)pcstock_counter_read(&S.c[lvl]) < S.committed[leaf])
			S.observed = "a leaf thread read usage below what it "
				     "holds";
}

static void leaf_thread(const struct counter_params *p, int leaf)
{
	struct pcstock_counter *c = &S.c[leaf];
	unsigned int t = explore_self();
	int i;

	S.inflight_leaf[t] = leaf;
	for (i = 0; i < 4 && p->charge[leaf][i]; i++) {
		unsigned long n = p->charge[leaf][i];

		S.inflight[t] = n;
		if (pcstock_counter_try_charge(c, n, NULL))
			S.committed[leaf] += (long)n;
		S.inflight[t] = 0;
		/* Every other step gives everything back. */
		if (i % 2 && S.committed[leaf]) {
			n = (unsigned long)S.committed[leaf];
			S.committed[leaf] = 0;
			S.inflight[t] = n;
			pcstock_counter_uncharge(c, n);
			S.inflight[t] = 0;
		}
		observe(leaf);
	}
}

static void limit_thread(const struct counter_params *p)
{
	int i;

	for (i = 0; i < 4 && p->set_max[i]; i++) {
		unsigned long m = p->set_max[i], prev = S.promise;

		if (m > S.promise)
			S.promise = m;
		S.promise = pcstock_counter_set_max(&S.c[MID], m) ? prev : m;
		if (i == 0 && p->leaf0_min)
			pcstock_counter_set_min(&S.c[LEAF0], p->leaf0_min);
	}
}

static void counter_run(const struct explore_scenario *s, unsigned int t)
{
	const struct counter_params *p = s->arg;

	if (t < 2)
		leaf_thread(p, (int)t);
	else
		limit_thread(p);
}

static const char *counter_check_end(const struct explore_scenario *s)
{
	unsigned long sum;
	int lvl;

	(void)s;
	for (lvl = 0; lvl < NR_LEVELS; lvl++) {
		if ((long)pcstock_counter_read(&S.c[lvl]) != committed_at(lvl)) {
			snprintf(S.msg, sizeof(S.msg),
				 "%s.usage %lu != committed %ld", names[lvl],
				 pcstock_counter_read(&S.c[lvl]),
				 committed_at(lvl));
			return S.msg;
		}
	}
	sum = pcstock_counter_min_usage(&S.c[LEAF0]) +
	      pcstock_counter_min_usage(&S.c[LEAF1]);
	if (pcstock_counter_children_min_usage(&S.c[MID]) != sum)
		return "mid: children_min_usage != sum of children's min_usage";
	if (pcstock_counter_children_min_usage(&S.c[ROOT]) !=
	    pcstock_counter_min_usage(&S.c[MID]))
		return "root: children_min_usage != mid's min_usage";
	return counter_check_step(s);
}

static const struct counter_params tree_params = {
	.root_max = 12,
	.mid_max = 10,
	.charge = { { 2, 3, 1, 2 }, { 3, 2, 2, 0 } },
	.set_max = { 6, 4, 9, 0 },
	.leaf0_min = 2,
};

/* A limit that is always nearly reached: failing charges, retries. */
static const struct counter_params tight_params = {
	.root_max = 7,
	.mid_max = 4,
	.charge = { { 3, 3, 3, 0 }, { 3, 3, 2, 0 } },
	.set_max = { 3, 5, 2, 0 },
	.leaf0_min = 1,
};

#define COUNTER_SCENARIO_RUN(id, nm, hlp, params, run_fn, end_fn)          \
	static const struct explore_scenario id = {                         \
		.name = nm, .help = hlp, .nr_threads = 3,                   \
		.setup = counter_setup, .run = run_fn,                      \
		.check_step = counter_check_step,                           \
		.check_end = end_fn, .arg = &params,                        \
	}
#define COUNTER_SCENARIO(id, nm, hlp, params)                               \
	COUNTER_SCENARIO_RUN(id, nm, hlp, params, counter_run,               \
			     counter_check_end)

/*
 * counter-xchg: pcstock_counter_xchg_max() against try_charge().  Each
 * leaf thread charges XCHG_PAGES once under mid's limit of twice that;
 * thread 2 exchanges mid's limit to 1, which no such charge fits, then
 * reads mid's usage (pcstock_counter_read()).  A charge that succeeded
 * read the old limit, so it did not see the new one: the exchange's
 * promise (counter.h) is that the read sees it.  At rest the read must
 * therefore count every successful charge.
 */
#define XCHG_PAGES 2

static const struct counter_params xchg_params = {
	.root_max = 4 * XCHG_PAGES,
	.mid_max = 2 * XCHG_PAGES,
	.charge = { { XCHG_PAGES }, { XCHG_PAGES } },
};

static unsigned long xchg_read;

static void xchg_run(const struct explore_scenario *s, unsigned int t)
{
	const struct counter_params *p = s->arg;

	if (t < 2) {
		leaf_thread(p, (int)t);
		return;
	}
	S.inflight_leaf[t] = MID;
	pcstock_counter_xchg_max(&S.c[MID], 1);
	S.promise = (unsigned long)-1;	/* the checks' bound: none */
	xchg_read = pcstock_counter_read(&S.c[MID]);
}

static const char *xchg_check_end(const struct explore_scenario *s)
{
	const char *msg = counter_check_end(s);

	if (msg)
		return msg;
	if (xchg_read < (unsigned long)committed_at(MID)) {
		snprintf(S.msg, sizeof(S.msg),
			 "mid: the read after xchg_max saw usage %lu, but "
			 "charges of %ld pages that read the old limit "
			 "succeeded", xchg_read, committed_at(MID));
		return S.msg;
	}
	return NULL;
}

COUNTER_SCENARIO(counter_tree, "counter-tree",
		 "try_charge/uncharge on two leaves, set_max/set_min on mid",
		 tree_params);
COUNTER_SCENARIO(counter_tight, "counter-tight",
		 "charges against a nearly full limit that set_max moves",
		 tight_params);

COUNTER_SCENARIO_RUN(counter_xchg, "counter-xchg",
		     "xchg_max against charges: a charge that missed the new "
		     "limit is seen by the usage read after it",
		     xchg_params, xchg_run, xchg_check_end);

const struct explore_scenario *const explore_counter_scenarios[] = {
	&counter_tree,
	&counter_tight,
	&counter_xchg,
	NULL,
};
