// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_group.c - schedule-explorer scenarios for groups (hierarchy).
 *
 * Every scenario here is a template run once per registered stock policy
 * (explore.h): group-default, group-v4, ..., each policy's expectations
 * taken from its properties (struct pcstock_policy_info).
 *
 * Per schedule a fresh tree (the policy's, batch 4) on a domain of two
 * simulated CPUs:  root <- a (max 8) <- a1,  root <- b.  Threads 0 and
 * 1 share CPU 0 and charge and uncharge a1 and b; thread 2 (CPU 1) charges
 * a, drains a's subtree, takes CPU 0 offline, destroys b and drains
 * everything.
 *
 * Blocking: destroy and CPU offline take the tree's and the domain's
 * mutexes, so only thread 2 calls them; drain_all only try-locks.  Each
 * worker registers with urcu-bp in thread_init (its first read-side
 * section takes the registry mutex, which a grace period holds while it
 * waits for readers, possibly parked explored threads).  The scenario holds
 * a reference on every group until teardown, so no group is freed while
 * threads run; teardown destroys the tree, whose barrier runs those frees
 * (in an explorer build, in the driver: src/rcu.h): the next schedule
 * starts from the same state.
 *
 * Invariants, per group g and with "subtree" meaning g and its
 * descendants, online or not:
 *  - every step: |usage(g) - held(subtree) - stock(subtree)| <= pages in
 *    flight, and never below 0 for the per-counter stock (usage is the
 *    first to gain and the last to lose, stock.h; another policy may
 *    uncharge a stock's pages before it empties the stock), no underflow
 *    warning, (a policy that caps its slots, explore_caps_slots()) every
 *    slot <= batch, held(a's subtree) <= max(a);
 *  - at the end: usage(g) == held(subtree) + stock(subtree); (a policy
 *    that never fails a charge for pages in stock: exact_at_limit, or no
 *    stock at all) a NOWAIT charge of a's room succeeds; after
 *    drain_all(root) the online groups' stock is 0 and, for a policy with
 *    stock, the tree's statistics counted that drain_all;
 *  - every step, too: each group's stock_pages at most its stock_bound.
 *
 * group-switch-*: for the policies that are exact at the limit, the same
 * tree and checks with a's max at 20, see switch_script below.
 *
 * group-coop-*: the same tree and checks on COOP CPUs, each of threads 0
 * and 1 the owner of one, see coop_script below.
 *
 * group-publish-*: the same tree; thread 0 creates a child "n" of a while
 * threads 1 and 2 walk the tree (pcstock_group_walk() and
 * pcstock_group_walk_post(), see walk_either()) and look "a/n" up.
 * Nothing is destroyed, so every group a walker or a lookup reaches must
 * be seen fully initialised: online and memory.high at "max"
 * (group_init() stores them before link_child() and name_index_add()
 * publish the group), and every walk must reach a, a1 and b, which exist
 * throughout it.  In weak mode (--weak) a walker or a lookup reading
 * a stale value would see them unset unless the publication's release
 * pairs with the walk's and the lookup's acquires.
 *
 * group-unlink-*: the same tree; thread 0 creates "x" then "n" under a
 * (children n, x, a1: the list takes new children at its head) and
 * destroys n, whose unlink stores a's children link to x, while threads 1
 * and 2 walk the tree.  Every group a walker reaches but n must be seen
 * initialised, and a, a1 and b reached, as in group-publish.  A walker
 * that reads the unlink's store has not necessarily seen n, so it
 * synchronises with x's creation only through that store's release (a
 * later plain store by the same thread is not part of a release sequence
 * in the model, as in RC11 and C++20).
 *
 * group-offline-*: the same tree; threads 0 and 1 (CPU 0) charge b, hits
 * once its stock is filled, while thread 2 destroys it.  A charge made
 * after its caller saw b offline (pcstock_group_online()) must fail, and
 * at the end the invariants above hold with b's stock empty.
 *
 * group-enoent-*: the same, but the chargers learn of the destroy from a
 * charge's -ENOENT, see enoent_run() below.
 *
 * group-last-put-*: the same tree and a group "v" under the root whose
 * last reference may be put by a thread that did not destroy it, see
 * last_put_run() below.
 *
 * group-rebuild-*: the same tree with the name index one entry below its
 * growth; thread 0's creation rebuilds it while threads 1 and 2 look up
 * "a/a1", see rebuild_run() below.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>
#include <pcstock/percpu.h>

#include <urcu-bp.h>

#include "explore.h"

#define NR_CPUS 2
#define NR_THREADS 3
#define BATCH 4
#define A_MAX 8
#define MAX_OPS 8
/* Pages an operation may have taken out of one slot (as explore_stock.c). */
#define SLOT_MAX (4 * BATCH)

enum { G_A, G_A1, G_B, NR_GROUPS };

enum group_op {
	OP_END = 0,
	OP_CHARGE,	/* group_charge(g, n, 0) */
	OP_UNCHARGE,	/* group_uncharge(g, n) of pages this thread holds */
	OP_DRAIN_ALL,	/* group_drain_all(g); G_B means the root here */
	OP_OFFLINE,	/* cpu_set_online(n, false) */
	OP_DESTROY,	/* group_destroy(g) */
};

struct group_step {
	enum group_op op;
	int g;
	unsigned long n;
};

static const char *const names[NR_GROUPS] = { "a", "a1", "b" };
/* Is group @g in the subtree of @of? */
static bool in_subtree(int g, int of)
{
	return g == of || (of == G_A && g == G_A1);
}

/*
 * struct group_params - one group scenario's tree (the policy is the
 * scenario's, explore_scenario.policy)
 * @a_max: a's memory.max
 * @flags: group_run()'s charge flags
 * @script: group_run()'s operations per thread
 * @cpu_of: the CPU each thread enters, -1 for none; NULL: cpu_of below
 * @mode: the domain's CPUs (SIM unless set), one scenario per process
 */
struct group_params {
	unsigned long a_max;
	unsigned int flags;
	const struct group_step (*script)[MAX_OPS];
	const int *cpu_of;
	enum pcstock_cpu_mode mode;
};

static const struct group_step script[NR_THREADS][MAX_OPS] = {
	{ { OP_CHARGE, G_A1, 1 }, { OP_CHARGE, G_A1, 2 },
	  { OP_UNCHARGE, G_A1, 1 }, { OP_CHARGE, G_A1, 3 },
	  { OP_UNCHARGE, G_A1, 2 } },
	{ { OP_CHARGE, G_B, 2 }, { OP_CHARGE, G_A1, 1 },
	  { OP_UNCHARGE, G_B, 2 }, { OP_CHARGE, G_B, 1 } },
	{ { OP_CHARGE, G_A, 2 }, { OP_DRAIN_ALL, G_A, 0 },
	  { OP_OFFLINE, 0, 0 }, { OP_DESTROY, G_B, 0 },
	  { OP_UNCHARGE, G_A, 2 }, { OP_DRAIN_ALL, -1, 0 } },
};
static const int cpu_of[NR_THREADS] = { 0, 0, 1 };

static struct {
	struct pcstock_domain *d;
	struct pcstock_tree *reg_tree;	/* for urcu-bp registration only */
	struct pcstock_tree *t;
	struct pcstock_group *g[NR_GROUPS];
	unsigned long held[NR_THREADS][NR_GROUPS];
	unsigned long inflight[NR_THREADS];
	bool overlapped[NR_THREADS];	/* another op ran during this one */
	struct pcstock_group *created;	/* group-publish: "n", or NULL */
	struct pcstock_group *doomed;	/* group-unlink: "n", or NULL */
	struct pcstock_group *victim;	/* group-last-put: "v" */
	struct pcstock_group *fill[8];	/* group-rebuild: index fillers */
	bool reading;			/* group-rebuild: driver in RCU */
	const char *observed;		/* what a walker saw wrong */
	char msg[160];
} S;

static int group_init(const struct explore_scenario *s)
{
	const struct group_params *p = s->arg;
	struct pcstock_domain_attr attr = {
		.nr_cpus = NR_CPUS,
		.mode = p->mode,
	};
	int err;

	err = pcstock_domain_create(&attr, &S.d);
	if (err)
		return err;
	return pcstock_tree_create(S.d, NULL, &S.reg_tree);
}

static void group_thread_init(const struct explore_scenario *s,
			      unsigned int t)
{
	const struct group_params *p = s->arg;
	int cpu = p->cpu_of ? p->cpu_of[t] : cpu_of[t];
	struct pcstock_group *root;

	if (cpu >= 0)
		pcstock_cpu_enter(S.d, (unsigned int)cpu);
	/* A read-side section registers this thread with urcu-bp. */
	if (!pcstock_group_lookup(pcstock_tree_root(S.reg_tree), "", &root))
		pcstock_group_put(root);
}

static const struct pcstock_counter *mem(int g)
{
	return pcstock_group_memory(S.g[g]);
}

static void group_setup(const struct explore_scenario *s)
{
	const struct group_params *p = s->arg;
	struct pcstock_tree_attr attr = { .policy = s->policy, .batch = BATCH };
	struct pcstock_group *root;
	char name[32];
	unsigned int cpu;
	int g;

	if (pcstock_tree_create(S.d, &attr, &S.t))
		abort();
	root = pcstock_tree_root(S.t);
	if (pcstock_group_create(root, "a", &S.g[G_A]) ||
	    pcstock_group_create(S.g[G_A], "a1", &S.g[G_A1]) ||
	    pcstock_group_create(root, "b", &S.g[G_B]) ||
	    pcstock_group_set_max(S.g[G_A], p->a_max))
		abort();
	for (g = 0; g < NR_GROUPS; g++) {
		const struct pcstock_counter *c = mem(g);

		snprintf(name, sizeof(name), "%s.mem", names[g]);
		explore_label(c, sizeof(*c), name, explore_counter_fields);
		for (cpu = 0; cpu < NR_CPUS && c->stock_slots; cpu++) {
			snprintf(name, sizeof(name), "%s.slot[cpu%u]",
				 names[g], cpu);
			explore_label(pcstock_percpu_ptr(S.d, c->stock_slots,
							 cpu),
				      sizeof(atomic_int), name, NULL);
		}
	}
	memset(S.held, 0, sizeof(S.held));
	memset(S.inflight, 0, sizeof(S.inflight));
	memset(S.overlapped, 0, sizeof(S.overlapped));
	S.created = NULL;
	S.doomed = NULL;
	S.observed = NULL;
	pcstock_warn_reset();
}

static unsigned long held_in(int of)
{
	unsigned long sum = 0;
	int t, g;

	for (t = 0; t < NR_THREADS; t++)
		for (g = 0; g < NR_GROUPS; g++)
			if (in_subtree(g, of))
				sum += S.held[t][g];
	return sum;
}

/* Whatever the policy keeps its stock in. */
static unsigned long stock_in(int of)
{
	return pcstock_group_stock_pages(S.g[of]);
}

/*
 * The policy fails no charge for pages that sit in a stock: it drains
 * them first (exact_at_limit), or it has none.  Then at rest a NOWAIT
 * charge of a's whole room succeeds, and so does every charge that runs
 * alone (solo_charge_failed(), room_at_rest()).
 */
static bool no_failure_for_stock(const struct explore_scenario *s)
{
	return s->info.exact_at_limit || !s->info.stocks;
}

/* Any slot of any group above batch? (A capped policy promises none.) */
static const char *check_cap(void)
{
	unsigned int cpu;
	int g;

	for (g = 0; g < NR_GROUPS; g++) {
		const struct pcstock_counter *c = mem(g);

		for (cpu = 0; cpu < NR_CPUS && c->stock_slots; cpu++) {
			atomic_int *v = pcstock_percpu_ptr(S.d, c->stock_slots,
							   cpu);

			if (atomic_load(v) > BATCH) {
				snprintf(S.msg, sizeof(S.msg),
					 "%s: slot of cpu%u above batch",
					 names[g], cpu);
				return S.msg;
			}
		}
	}
	return NULL;
}

static const char *group_check_step(const struct explore_scenario *s)
{
	const struct group_params *p = s->arg;
	long inflight = 0, lowest;
	int t, g;

	if (pcstock_warn_count())
		return "usage underflow (warn_count != 0)";
	if (S.observed)
		return S.observed;
	if (explore_caps_slots(&s->info) && check_cap())
		return S.msg;
	if (held_in(G_A) > p->a_max)
		return "a: pages held above its max";
	for (t = 0; t < NR_THREADS; t++)
		inflight += (long)S.inflight[t];
	lowest = s->info.per_counter ? 0 : -inflight;
	for (g = 0; g < NR_GROUPS; g++) {
		long gap = (long)pcstock_counter_read(mem(g)) -
			   (long)held_in(g) - (long)stock_in(g);

		/* stock_bound: at least what stock_pages can read. */
		if (stock_in(g) > pcstock_group_stock_bound(S.g[g])) {
			snprintf(S.msg, sizeof(S.msg),
				 "%s: stock %lu above its bound %lu", names[g],
				 stock_in(g),
				 pcstock_group_stock_bound(S.g[g]));
			return S.msg;
		}

		if (gap < lowest || gap > inflight) {
			snprintf(S.msg, sizeof(S.msg),
				 "%s: usage - held - stock = %ld, outside "
				 "[%ld, %ld in flight]", names[g], gap, lowest,
				 inflight);
			return S.msg;
		}
	}
	return NULL;
}

/*
 * Thread @t starts an operation: it and every other thread with one in
 * flight overlap.  (One explored thread runs at a time, and this code has
 * no scheduling point: the books are consistent.)
 */
static void op_start(unsigned int t)
{
	unsigned int u;

	S.overlapped[t] = false;
	for (u = 0; u < NR_THREADS; u++) {
		if (u == t || !S.inflight[u])
			continue;
		S.overlapped[u] = true;
		S.overlapped[t] = true;
	}
}

/*
 * (no_failure_for_stock()) A charge of @n pages to @g (a or a1) that
 * failed: a violation
 * if no other thread's operation was in flight at any time during it and
 * held(a's subtree) + @n <= max(a).  Then usage(a) was held + stock, no
 * batch of another charge in flight, and make_room must have drained the
 * stocks that stood in the way (NOWAIT: neither reclaim nor drain_all
 * would have done it).
 */
static void solo_charge_failed(const struct explore_scenario *s,
			       unsigned int t, int g, unsigned long n)
{
	const struct group_params *p = s->arg;

	if (!no_failure_for_stock(s) || S.overlapped[t] ||
	    !in_subtree(g, G_A) || S.observed)
		return;
	if (held_in(G_A) + n <= p->a_max)
		S.observed = "a charge that ran alone failed with held + "
			     "request <= max (pages left in a stock)";
}

static void group_run(const struct explore_scenario *s, unsigned int t)
{
	const struct group_params *p = s->arg;
	const struct group_step *st;

	for (st = p->script[t]; st < p->script[t] + MAX_OPS && st->op; st++) {
		struct pcstock_group *g = st->g >= 0 ? S.g[st->g] :
				pcstock_tree_root(S.t);

		op_start(t);
		switch (st->op) {
		case OP_CHARGE:
			S.inflight[t] = st->n + BATCH + SLOT_MAX;
			if (!pcstock_group_charge(g, st->n, p->flags))
				S.held[t][st->g] += st->n;
			else
				solo_charge_failed(s, t, st->g, st->n);
			break;
		case OP_UNCHARGE:
			if (S.held[t][st->g] < st->n)
				break;
			S.held[t][st->g] -= st->n;
			S.inflight[t] = st->n + SLOT_MAX;
			pcstock_group_uncharge(g, st->n);
			break;
		case OP_DRAIN_ALL:
			S.inflight[t] = SLOT_MAX;
			pcstock_group_drain_all(g);
			break;
		case OP_OFFLINE:
			S.inflight[t] = SLOT_MAX;
			pcstock_cpu_set_online(S.d, (unsigned int)st->n, false);
			break;
		case OP_DESTROY:
			S.inflight[t] = SLOT_MAX;
			pcstock_group_destroy(g);
			break;
		case OP_END:
			break;
		}
		S.inflight[t] = 0;
	}
}

/*
 * (no_failure_for_stock()) At rest, a's whole room, max(a) - held(a's subtree), can be
 * charged to a without waiting (NOWAIT: no reclaim, no drain_all): pages
 * in any stock under a must not stand in the way (make_room).  Given
 * back at once.
 */
static const char *room_at_rest(const struct explore_scenario *s)
{
	const struct group_params *p = s->arg;
	unsigned long room = p->a_max - held_in(G_A);

	if (!no_failure_for_stock(s) || !room)
		return NULL;
	if (pcstock_group_charge(S.g[G_A], room, PCSTOCK_CHARGE_NOWAIT))
		return "at rest: a NOWAIT charge of a's room (max - held) "
		       "failed (pages left in a stock)";
	pcstock_group_uncharge(S.g[G_A], room);
	return NULL;
}

static const char *group_check_end(const struct explore_scenario *s)
{
	const char *msg = group_check_step(s);
	struct pcstock_tree_stats st;
	int g;

	if (msg)
		return msg;
	for (g = 0; g < NR_GROUPS; g++)
		if (pcstock_counter_read(mem(g)) != held_in(g) + stock_in(g))
			return "at rest: usage != held + stock";
	msg = room_at_rest(s);
	if (msg)
		return msg;
	/*
	 * Every worker has returned: a destroyed group's stock must already
	 * be empty (its destroy disabled and drained it, and a refill that
	 * raced the disable found the mark, or landed before it and was
	 * drained), whatever drain_all does next.
	 */
	for (g = 0; g < NR_GROUPS; g++)
		if (!pcstock_group_online(S.g[g]) &&
		    pcstock_counter_stock_pages(mem(g)))
			return "a destroyed group's stock is not empty "
			       "(a refill raced its destroy)";
	pcstock_group_drain_all(pcstock_tree_root(S.t));
	for (g = 0; g < NR_GROUPS; g++) {
		if (!pcstock_group_online(S.g[g]))
			continue;
		if (pcstock_counter_stock_pages(mem(g)))
			return "after drain_all(root): an online group's "
			       "stock is not empty";
	}
	/*
	 * That drain_all ran alone: a policy with stock counted it (and the
	 * policy's own statistics, tree_stats, are read with the tree's).
	 */
	pcstock_tree_stats(S.t, &st);
	if (s->info.stocks && !st.drain_all)
		return "after drain_all(root): drain_all not counted";
	return NULL;
}

static void group_teardown(const struct explore_scenario *s)
{
	unsigned int cpu;
	int t, g;

	(void)s;
	if (S.reading) {
		urcu_bp_read_unlock();
		S.reading = false;
	}
	for (g = 0; g < (int)(sizeof(S.fill) / sizeof(S.fill[0])); g++) {
		if (!S.fill[g])
			continue;
		pcstock_group_destroy(S.fill[g]);
		pcstock_group_put(S.fill[g]);
		S.fill[g] = NULL;
	}
	if (S.created) {
		pcstock_group_destroy(S.created);
		pcstock_group_put(S.created);
	}
	if (S.doomed)
		pcstock_group_put(S.doomed);
	for (t = 0; t < NR_THREADS; t++)
		for (g = 0; g < NR_GROUPS; g++)
			pcstock_group_uncharge(S.g[g], S.held[t][g]);
	for (g = NR_GROUPS - 1; g >= 0; g--) {
		pcstock_group_destroy(S.g[g]);
		pcstock_group_put(S.g[g]);
	}
	if (pcstock_tree_destroy(S.t))
		abort();
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		pcstock_cpu_set_online(S.d, cpu, true);
}

/* ---- group-publish ------------------------------------------------------ */

/*
 * @g, reached by a walk or a lookup, must be seen initialised: online, and
 * its memory.high at "max" (group_init() stores it relaxed before the
 * publication, the name index's or the sibling list's, orders it).
 */
static void seen(const struct pcstock_group *g, bool lookup)
{
	if (S.observed)
		return;
	if (!pcstock_group_online(g))
		S.observed = lookup ? "a lookup found a group not seen "
				      "initialised (offline)" :
				      "a walker reached a group not seen "
				      "initialised (offline)";
	else if (pcstock_counter_high(pcstock_group_memory(g)) !=
		 PCSTOCK_COUNTER_MAX)
		S.observed = lookup ? "a lookup found a group not seen "
				      "initialised (memory.high)" :
				      "a walker reached a group not seen "
				      "initialised (memory.high)";
}

/* A walk's visitor notes the groups of the setup it reaches in *@arg. */
static void visited(const struct pcstock_group *g, void *arg)
{
	unsigned int *mask = arg;
	int i;

	for (i = 0; i < NR_GROUPS; i++)
		if (g == S.g[i])
			*mask |= 1u << i;
}

/*
 * Walk number @i of this thread: thread 1 starts in pre-order, thread 2
 * in post-order, and each takes the other order next, so both orders'
 * loads meet the publication.  a, a1 and b exist throughout: a walk may
 * miss a group created or destroyed during it, not these
 * (pcstock_group_walk()).
 */
static void walk_either(struct pcstock_group *root, int i, pcstock_walk_fn fn)
{
	unsigned int mask = 0;

	if ((explore_self() + (unsigned int)i) % 2)
		pcstock_group_walk(root, fn, &mask);
	else
		pcstock_group_walk_post(root, fn, &mask);
	if (mask != (1u << NR_GROUPS) - 1 && !S.observed)
		S.observed = "a walk missed a group that existed throughout it";
}

static int walk_visit(struct pcstock_group *g, void *arg)
{
	visited(g, arg);
	seen(g, false);
	return 0;
}

static void publish_run(const struct explore_scenario *s, unsigned int t)
{
	struct pcstock_group *root = pcstock_tree_root(S.t), *g;
	int i;

	(void)s;
	if (t == 0) {
		if (pcstock_group_create(S.g[G_A], "n", &S.created))
			S.created = NULL;
		return;
	}
	for (i = 0; i < 2; i++) {
		walk_either(root, i, walk_visit);
		if (!pcstock_group_lookup(root, "a/n", &g)) {
			seen(g, true);
			pcstock_group_put(g);
		}
	}
}

/* ---- group-unlink ------------------------------------------------------- */

/* n, destroyed while walkers run, may be seen offline. */
static int unlink_visit(struct pcstock_group *g, void *arg)
{
	visited(g, arg);
	if (g != S.doomed)
		seen(g, false);
	return 0;
}

static void unlink_run(const struct explore_scenario *s, unsigned int t)
{
	struct pcstock_group *root = pcstock_tree_root(S.t);
	int i;

	(void)s;
	if (t == 0) {
		if (pcstock_group_create(S.g[G_A], "x", &S.created)) {
			S.created = NULL;
			return;
		}
		if (pcstock_group_create(S.g[G_A], "n", &S.doomed)) {
			S.doomed = NULL;
			return;
		}
		pcstock_group_destroy(S.doomed);
		return;
	}
	for (i = 0; i < 2; i++)
		walk_either(root, i, unlink_visit);
}

/* ---- group-offline ------------------------------------------------------ */

/* A charge of @n pages to "b" by thread @t, accounted as group_run() does. */
static int offline_charge(unsigned int t, unsigned long n)
{
	int err;

	S.inflight[t] = n + BATCH + SLOT_MAX;
	err = pcstock_group_charge(S.g[G_B], n, 0);
	if (!err)
		S.held[t][G_B] += n;
	S.inflight[t] = 0;
	return err;
}

/*
 * Threads 0 and 1 (CPU 0) charge "b", a hit once its stock is filled,
 * while thread 2 destroys it.  A charge made after its caller saw "b"
 * offline must fail: the destroy cleared the hit key before its release
 * of online, which pcstock_group_online()'s acquire pairs with.  At rest
 * group_check_end() checks usage == held + stock and b's stock empty.
 */
static void offline_run(const struct explore_scenario *s, unsigned int t)
{
	int i;

	(void)s;
	if (t == 2) {
		S.inflight[t] = SLOT_MAX;
		pcstock_group_destroy(S.g[G_B]);
		S.inflight[t] = 0;
		return;
	}
	offline_charge(t, 1);
	for (i = 0; i < 2; i++) {
		if (pcstock_group_online(S.g[G_B])) {
			offline_charge(t, 1);
			continue;
		}
		if (!offline_charge(t, 1) && !S.observed)
			S.observed = "a charge made after its caller saw the "
				     "group offline succeeded (a stale hit "
				     "key)";
		break;
	}
}

/* ---- group-enoent ------------------------------------------------------- */

#define ENOENT_TRIES 8

/*
 * Threads 0 and 1 (CPU 0) charge "b" a page, which leaves pages in CPU
 * 0's slot, then charge BATCH + 1 pages, more than a slot gives, until
 * one fails, while thread 2 destroys b.  The failure, -ENOENT, says what
 * pcstock_group_online()'s false says in group-offline: the destroy
 * cleared the hit key before its release of online, which
 * group_charge_slow()'s acquire pairs with.  The next charge, of a page
 * the slot still holds until the destroy drains it, must fail too: a
 * stale hit key would take it from the dead group's stock.
 */
static void enoent_run(const struct explore_scenario *s, unsigned int t)
{
	int i;

	if (t == 2) {
		offline_run(s, t);
		return;
	}
	offline_charge(t, 1);
	for (i = 0; i < ENOENT_TRIES; i++) {
		if (offline_charge(t, BATCH + 1) != -ENOENT)
			continue;
		if (!offline_charge(t, 1) && !S.observed)
			S.observed = "a charge made after a charge's -ENOENT "
				     "succeeded (a stale hit key)";
		break;
	}
}

/* ---- group-last-put ----------------------------------------------------- */

#define LAST_PUT_LOOKUPS 2
#define LAST_PUT_READS 48

/*
 * "v" under the root with three references: the tree's (while online),
 * the creator's, given to thread 0, and one more for thread 1.
 */
static void last_put_setup(const struct explore_scenario *s)
{
	group_setup(s);
	if (pcstock_group_create(pcstock_tree_root(S.t), "v", &S.victim))
		abort();
	pcstock_group_get(S.victim);
	/* Its address, as the abort's message prints it (explore.c). */
	explore_label(S.victim, 1, "v", NULL);
}

/*
 * Threads 0 and 1 each look "v" up and put the lookup's reference,
 * LAST_PUT_LOOKUPS times, then, still holding their own reference, read
 * v's usage LAST_PUT_READS times and put it, while thread 2 destroys v,
 * which puts the tree's.  Whoever puts last queues v's free.  When that
 * is thread 0 or 1, its decrement reads from the destroyer's (directly,
 * or through the other thread's decrements), and pcstock_group_put()'s
 * check after it (an online group at zero references was put more often
 * than it was got) must see the destroy's store of online: the last
 * decrement's acquire, with every earlier put's release, orders it.
 * Seeing the group still online, the library aborts, which the explorer
 * reports as the violation (explore.c).
 *
 * The reads (relaxed loads: they order nothing) make a thread's last put
 * come after the destroy's, which takes about 50 steps, in the random
 * walk too; a lookup, whose acquires may read the destroy's stores, would
 * mostly order them.  Each lookup runs while its thread holds its own
 * reference, so v is never freed under it: the model does not know the
 * grace period, and a lookup after the free could read a stale name index
 * and reach freed memory.  No thread touches v after its last put.
 */
static void last_put_run(const struct explore_scenario *s, unsigned int t)
{
	struct pcstock_group *g;
	int i;

	(void)s;
	if (t == 2) {
		pcstock_group_destroy(S.victim);
		return;
	}
	for (i = 0; i < LAST_PUT_LOOKUPS; i++) {
		if (pcstock_group_lookup(pcstock_tree_root(S.t), "v", &g))
			continue;
		if (g != S.victim && !S.observed)
			S.observed = "a lookup of \"v\" found another group";
		pcstock_group_put(g);
	}
	for (i = 0; i < LAST_PUT_READS; i++)
		(void)pcstock_counter_read(pcstock_group_memory(S.victim));
	pcstock_group_put(S.victim);
}

/* ---- group-rebuild ------------------------------------------------------ */

/*
 * Entries of the name index at setup: a, a1, b and the fillers.  A table
 * of 16 slots (names.c's smallest) is rebuilt by the add that would pass
 * half of it in live entries and tombstones: the ninth.
 */
#define REBUILD_FILL 5
#define REBUILD_LOOKUPS 3
#define REBUILD_READS 16

/*
 * Five more groups under the root: the index holds eight entries, and
 * thread 0's creation rebuilds it.  The driver stays in an RCU read-side
 * section until teardown: the rebuild frees the old table after a grace
 * period, which the model does not know, so a lookup that reads the old
 * table (as it may) must still find it whole.
 */
static void rebuild_setup(const struct explore_scenario *s)
{
	char name[8];
	int i;

	group_setup(s);
	for (i = 0; i < REBUILD_FILL; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		if (pcstock_group_create(pcstock_tree_root(S.t), name,
					 &S.fill[i]))
			abort();
	}
	urcu_bp_read_lock();
	S.reading = true;
}

/*
 * Thread 0 creates "n" under a, whose add to the name index rebuilds it
 * (names.c: rebuild() copies the live entries into a new table, then
 * publishes it), while threads 1 and 2 look "a/a1" up REBUILD_LOOKUPS
 * times, with relaxed reads between (they order nothing) so that some
 * lookups come after the rebuild.  a1 exists throughout: every lookup
 * must find it.  A lookup that reads the new table must see the entries
 * copied into it: the publication's release pairs with
 * name_index_find()'s acquire of the table.  In weak memory, without
 * that pair, it may read the new table's slots empty and miss a1.
 */
static void rebuild_run(const struct explore_scenario *s, unsigned int t)
{
	struct pcstock_group *g;
	int i, j;

	(void)s;
	if (t == 0) {
		if (pcstock_group_create(S.g[G_A], "n", &S.created))
			S.created = NULL;
		return;
	}
	for (i = 0; i < REBUILD_LOOKUPS; i++) {
		for (j = 0; j < REBUILD_READS * i; j++)
			(void)pcstock_counter_read(mem(G_B));
		if (pcstock_group_lookup(pcstock_tree_root(S.t), "a/a1",
					 &g)) {
			if (!S.observed)
				S.observed = "a lookup of \"a/a1\" failed "
					     "while the name index grew";
			continue;
		}
		if (g != S.g[G_A1] && !S.observed)
			S.observed = "a lookup of \"a/a1\" found another "
				     "group";
		pcstock_group_put(g);
	}
}

/*
 * group-switch-*: a policy exact at the limit with a's max at 20, far
 * above what a stock can hide (nr_cpus x batch = 8), so (for exact) a's
 * subtree stocks while usage(a) <= 12 and goes exact above.  All three threads (0 and 1 on
 * CPU 0, 2 on CPU 1) first charge a1 while far from max, leaving pages
 * in a1's slots; threads 1 and 2 then charge a across the bound while
 * thread 2 drains a's subtree.  The threads hold at most 20 pages at
 * once (2 + 12 + 2 + 4), so a charge may fail only for pages in flight;
 * a charge at a refused while a1's slots hold pages needs make_room.
 * Charges are NOWAIT: nothing else drains for them.  Beyond every step's
 * invariants: solo_charge_failed(), and at rest (15 pages held, a near
 * its max) usage == held + stock and room_at_rest().
 */
static const struct group_step switch_script[NR_THREADS][MAX_OPS] = {
	{ { OP_CHARGE, G_A1, 1 }, { OP_CHARGE, G_A1, 1 },
	  { OP_UNCHARGE, G_A1, 1 } },
	{ { OP_CHARGE, G_A1, 1 }, { OP_UNCHARGE, G_A1, 1 },
	  { OP_CHARGE, G_A, 6 }, { OP_CHARGE, G_A, 6 } },
	{ { OP_CHARGE, G_A1, 2 }, { OP_CHARGE, G_A, 4 },
	  { OP_UNCHARGE, G_A, 4 }, { OP_DRAIN_ALL, G_A, 0 },
	  { OP_CHARGE, G_A, 2 }, { OP_UNCHARGE, G_A1, 2 } },
};

static const struct group_params tree = {
	.a_max = A_MAX, .script = script,
};

static const struct group_params exact_switch = {
	.a_max = 20, .flags = PCSTOCK_CHARGE_NOWAIT, .script = switch_script,
};

/*
 * group-coop-*: the same tree on COOP CPUs, where a policy may take
 * another path (memcg7's owner-exclusive cache, whose drains are queued
 * to the CPU's owner): threads 0 and 1 own CPUs 0 and 1 and charge and
 * uncharge a1 and b; thread 2, no CPU, charges a and drains a's subtree
 * and the root while they run (a drain of an owned CPU is queued, run
 * at the owner's next operation).  Nothing goes offline or is destroyed:
 * an owner outlives the schedule.  The checks are group-*'s.
 */
static const struct group_step coop_script[NR_THREADS][MAX_OPS] = {
	{ { OP_CHARGE, G_A1, 1 }, { OP_CHARGE, G_A1, 2 },
	  { OP_UNCHARGE, G_A1, 1 }, { OP_CHARGE, G_B, 1 },
	  { OP_UNCHARGE, G_A1, 2 }, { OP_UNCHARGE, G_B, 1 } },
	{ { OP_CHARGE, G_B, 2 }, { OP_CHARGE, G_A1, 1 },
	  { OP_UNCHARGE, G_B, 2 }, { OP_CHARGE, G_A1, 3 } },
	{ { OP_CHARGE, G_A, 2 }, { OP_DRAIN_ALL, G_A, 0 },
	  { OP_UNCHARGE, G_A, 2 }, { OP_DRAIN_ALL, -1, 0 } },
};
static const int coop_cpu_of[NR_THREADS] = { 0, 1, -1 };

static const struct group_params coop = {
	.a_max = A_MAX, .script = coop_script, .cpu_of = coop_cpu_of,
	.mode = PCSTOCK_CPU_COOP,
};

/* Every registered policy whose largest batch admits the scenarios'. */
static bool any_policy(const struct pcstock_policy_info *info)
{
	return info->max_batch >= BATCH;
}

/* group-switch: a policy that is exact at the limit. */
static bool exact_at_limit(const struct pcstock_policy_info *info)
{
	return any_policy(info) && info->exact_at_limit;
}

#define GROUP_SCENARIO_SETUP(id, nm, hlp, setup_fn, run_fn, end_fn, par,  \
			     which, weak)                                    \
	static const struct explore_scenario id = {                         \
		.name = nm, .help = hlp, .nr_threads = NR_THREADS,          \
		.init = group_init, .thread_init = group_thread_init,        \
		.setup = setup_fn, .run = run_fn,                           \
		.check_step = group_check_step,                             \
		.check_end = end_fn, .teardown = group_teardown,            \
		.arg = &par, .applies = which, .weak_only = weak,           \
		.policy_info = pcstock_tree_policy_info,                    \
	}
#define GROUP_SCENARIO(id, nm, hlp, run_fn, end_fn, par, which, weak)       \
	GROUP_SCENARIO_SETUP(id, nm, hlp, group_setup, run_fn, end_fn, par,  \
			     which, weak)

GROUP_SCENARIO(group, "group",
	       "groups: charge/uncharge, drain_all, offline, destroy",
	       group_run, group_check_end, tree, any_policy, false);
GROUP_SCENARIO(group_coop, "group-coop",
	       "groups on COOP CPUs: owners charge, drain_all queues to them",
	       group_run, group_check_end, coop, any_policy, false);
GROUP_SCENARIO(group_switch, "group-switch",
	       "charges cross the near-max bound, drain_all races",
	       group_run, group_check_end, exact_switch, exact_at_limit,
	       false);
/*
 * Nothing to check at rest beyond every step's invariants.  In SC every
 * walker sees every group it reaches initialised, whatever the orders:
 * weak memory only.
 */
GROUP_SCENARIO(publish, "group-publish",
	       "a child created while walkers and lookups run", publish_run,
	       group_check_step, tree, any_policy, true);
GROUP_SCENARIO(unlink, "group-unlink",
	       "a child unlinked from the head of its siblings while walkers "
	       "run", unlink_run, group_check_step, tree, any_policy, true);
GROUP_SCENARIO(offline, "group-offline",
	       "charges, hits and misses, racing the group's destroy",
	       offline_run, group_check_end, tree, any_policy, false);
GROUP_SCENARIO(enoent, "group-enoent",
	       "charges racing the group's destroy, again after an -ENOENT",
	       enoent_run, group_check_end, tree, any_policy, false);
/* v may be freed by the end: the checks of every step only. */
GROUP_SCENARIO_SETUP(last_put, "group-last-put",
		     "lookups and puts racing a destroy: any may put last",
		     last_put_setup, last_put_run, group_check_step, tree,
		     any_policy, false);
/* Nothing to check at rest beyond every step's: weak memory only. */
GROUP_SCENARIO_SETUP(rebuild, "group-rebuild",
		     "lookups while a creation rebuilds the name index",
		     rebuild_setup, rebuild_run, group_check_step, tree,
		     any_policy, true);

const struct explore_scenario *const explore_group_scenarios[] = {
	&group,
	&group_coop,
	&group_switch,
	&publish,
	&unlink,
	&offline,
	&enoent,
	&last_put,
	&rebuild,
	NULL,
};
