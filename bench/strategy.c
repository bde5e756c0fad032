// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * strategy.c - the ways pcstock-bench charges a tree.
 *
 *  floor    one relaxed atomic add/sub on the calling worker's own cache
 *           line: what a stock hit can at best cost (no limit, no tree).
 *  local    the same slot added to with a relaxed load and store, no
 *           locked instruction: what a hit without one (plain's, a
 *           restartable sequence's commit) can at best cost in the same
 *           loop.  Not in the default set: it bounds the goals set
 *           against floor (docs/bench/figures.md).
 *  mutex    one pthread mutex around a plain counter tree with limits:
 *           what a naive accounting daemon does.
 *  ctr-none, ctr-v4, ctr-default
 *           the library's counters driven through counter.h and stock.h
 *           directly, leaves unstocked or stocked with the V4 or DEFAULT
 *           policy; a failed stocked charge drains the failing subtree on
 *           every CPU and retries once.  Not in the default set: they show
 *           what the group layer costs on top of the counters.
 *  ctr-inline
 *           ctr-default compiled with PCSTOCK_INLINE (inline.c): the hit
 *           and the uncharge into the stock inline in the caller.
 *
 * group.c makes the rest of the default set: one strategy per registered
 * stock policy (none, memcg7, v4, default, exact, ...), each through the
 * group API, named as its policy.
 * Every strategy builds the same shape (bench.h, struct tree_spec): node 0
 * is the top, ancestors 0..nr_anc-1 form a chain, leaves follow; and every
 * strategy checks its own conservation invariant.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "strategy.h"
#include "ctr_ops.h"

#ifdef BENCH_LINES
/*
 * pcstock-bench-lines: the line model replays floor and local too (their
 * sock rows price the rings with and without a locked hit), so their
 * accesses go to it as the traced library's do.
 */
#include "lines/lines.h"
#define FLOOR_TRACE(op, obj) trace_access((op), (obj))
#else
#define FLOOR_TRACE(op, obj) ((void)0)
#endif

long held_sum(const long *held, unsigned int n)
{
	long sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += held[i];
	return sum;
}

void *zalloc_lines(size_t size)
{
	size_t rounded = (size + BENCH_LINE - 1) / BENCH_LINE * BENCH_LINE;
	void *p = aligned_alloc(BENCH_LINE, rounded);

	if (p)
		memset(p, 0, rounded);
	return p;
}

/* ---- floor ------------------------------------------------------------- */

struct floor_slot {
	_Alignas(BENCH_LINE) atomic_long pages;
};

struct floor {
	struct floor_slot slot[BENCH_MAX_THREADS];
	unsigned int nr_leaves;
};

static int floor_create(const struct tree_spec *spec, void **inst)
{
	struct floor *f = zalloc_lines(sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->nr_leaves = spec->nr_leaves;
	*inst = f;
	return 0;
}

static bool floor_charge(void *inst, unsigned int thread, unsigned int leaf,
			 unsigned long nr)
{
	struct floor *f = inst;

	FLOOR_TRACE(PCS_OP_ADD, &f->slot[thread].pages);
	atomic_fetch_add_explicit(&f->slot[thread].pages, (long)nr,
				  memory_order_relaxed);
	return true;
}

static void floor_uncharge(void *inst, unsigned int thread, unsigned int leaf,
			   unsigned long nr)
{
	struct floor *f = inst;

	FLOOR_TRACE(PCS_OP_SUB, &f->slot[thread].pages);
	atomic_fetch_sub_explicit(&f->slot[thread].pages, (long)nr,
				  memory_order_relaxed);
}

/*
 * local: only the slot's worker writes it, so a load then a store loses
 * nothing; the check reads the slots after every worker has stopped.
 */
static inline void local_add(void *inst, unsigned int thread, long delta)
{
	struct floor *f = inst;
	atomic_long *p = &f->slot[thread].pages;

	FLOOR_TRACE(PCS_OP_STORE, p);	/* a plain store; its load hits */
	atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) +
			      delta, memory_order_relaxed);
}

static bool local_charge(void *inst, unsigned int thread, unsigned int leaf,
			 unsigned long nr)
{
	local_add(inst, thread, (long)nr);
	return true;
}

static void local_uncharge(void *inst, unsigned int thread, unsigned int leaf,
			   unsigned long nr)
{
	local_add(inst, thread, -(long)nr);
}

/* No tree: the slots together must hold what the workers hold. */
static int floor_check(void *inst, const long *held, char *why, size_t len)
{
	struct floor *f = inst;
	long sum = 0, want = held_sum(held, f->nr_leaves);
	unsigned int i;

	for (i = 0; i < BENCH_MAX_THREADS; i++)
		sum += atomic_load_explicit(&f->slot[i].pages,
					    memory_order_relaxed);
	if (sum == want)
		return 0;
	snprintf(why, len, "the slots sum to %ld, the workers hold %ld", sum,
		 want);
	return -1;
}

/* ---- mutex ------------------------------------------------------------- */

struct plain_node {
	long usage;
	unsigned long max;
	int parent;
};

struct mutex_tree {
	_Alignas(BENCH_LINE) pthread_mutex_t lock;
	struct tree_shape shape;
	struct plain_node *node;
};

static int mutex_create(const struct tree_spec *spec, void **inst)
{
	struct mutex_tree *t = zalloc_lines(sizeof(*t));
	unsigned int i;

	if (!t)
		return -ENOMEM;
	shape_init(&t->shape, spec);
	t->node = calloc(t->shape.nr_nodes, sizeof(*t->node));
	if (!t->node) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	for (i = 0; i < t->shape.nr_nodes; i++) {
		t->node[i].parent = shape_parent(&t->shape, i);
		t->node[i].max = i >= t->shape.nr_anc && spec->leaf_max ?
				 spec->leaf_max : ~0UL;
	}
	*inst = t;
	return 0;
}

static void mutex_destroy(void *inst)
{
	struct mutex_tree *t = inst;

	pthread_mutex_destroy(&t->lock);
	free(t->node);
	free(t);
}

static bool mutex_charge(void *inst, unsigned int thread, unsigned int leaf,
			 unsigned long nr)
{
	struct mutex_tree *t = inst;
	int first = (int)(t->shape.nr_anc + leaf), i;
	bool ok = true;

	pthread_mutex_lock(&t->lock);
	for (i = first; i >= 0 && ok; i = t->node[i].parent)
		ok = (unsigned long)t->node[i].usage + nr <= t->node[i].max;
	for (i = first; i >= 0 && ok; i = t->node[i].parent)
		t->node[i].usage += (long)nr;
	pthread_mutex_unlock(&t->lock);
	return ok;
}

static void mutex_uncharge(void *inst, unsigned int thread, unsigned int leaf,
			   unsigned long nr)
{
	struct mutex_tree *t = inst;
	int i;

	pthread_mutex_lock(&t->lock);
	for (i = (int)(t->shape.nr_anc + leaf); i >= 0; i = t->node[i].parent)
		t->node[i].usage -= (long)nr;
	pthread_mutex_unlock(&t->lock);
}

static long mutex_usage(void *inst, unsigned int node)
{
	struct mutex_tree *t = inst;

	return t->node[node].usage;
}

static int mutex_check(void *inst, const long *held, char *why, size_t len)
{
	struct mutex_tree *t = inst;

	return shape_check(&t->shape, inst, mutex_usage, NULL, held, why,
			   len);
}

/* ---- library counters, driven directly --------------------------------- */

static int ctr_create(const struct tree_spec *spec, void **inst, int policy)
{
	struct pcstock_domain_attr attr = {
		.nr_cpus = spec->mode == PCSTOCK_CPU_RSEQ ? 0 : spec->nr_cpus,
		.mode = spec->mode,
	};
	struct ctr_tree *t = zalloc_lines(sizeof(*t));
	unsigned int i;
	int ret, parent;

	if (!t)
		return -ENOMEM;
	shape_init(&t->shape, spec);
	t->mode = spec->mode;
	t->stocked = policy >= 0;
	t->node = zalloc_lines(t->shape.nr_nodes * sizeof(*t->node));
	ret = t->node ? pcstock_domain_create(&attr, &t->d) : -ENOMEM;
	if (ret) {
		free(t->node);
		free(t);
		return ret;
	}
	for (i = 0; i < t->shape.nr_nodes; i++) {
		parent = shape_parent(&t->shape, i);
		pcstock_counter_init(&t->node[i],
				     parent < 0 ? NULL : &t->node[parent],
				     false);
		if (i >= t->shape.nr_anc && spec->leaf_max)
			pcstock_counter_set_max(&t->node[i], spec->leaf_max);
		if (i < t->shape.nr_anc || !t->stocked)
			continue;
		ret = pcstock_counter_alloc_stock(&t->node[i], t->d,
						  spec->batch,
						  (enum pcstock_stock_policy)
						  policy);
		if (ret) {
			t->shape.nr_nodes = i;
			ctr_destroy(t);
			return ret;
		}
	}
	*inst = t;
	return 0;
}

void ctr_destroy(void *inst)
{
	struct ctr_tree *t = inst;
	unsigned int i;

	for (i = t->shape.nr_anc; t->stocked && i < t->shape.nr_nodes; i++)
		pcstock_counter_free_stock(&t->node[i]);
	pcstock_domain_destroy(t->d);
	free(t->node);
	free(t);
}

static int ctr_create_none(const struct tree_spec *spec, void **inst)
{
	return ctr_create(spec, inst, -1);
}

static int ctr_create_v4(const struct tree_spec *spec, void **inst)
{
	return ctr_create(spec, inst, PCSTOCK_STOCK_V4);
}

static int ctr_create_default(const struct tree_spec *spec, void **inst)
{
	return ctr_create(spec, inst, PCSTOCK_STOCK_DEFAULT);
}

/*
 * The enter and exit of every strategy over a domain (ctr-*, the group
 * strategies), whose instance opens with its domain (strategy.h): enter
 * CPU @cpu of the domain, modulo its CPUs, and leave it, in the modes
 * whose threads enter CPUs.
 */
int domain_enter(void *inst, unsigned int cpu)
{
	struct pcstock_domain *d = *(struct pcstock_domain **)inst;
	enum pcstock_cpu_mode m = pcstock_domain_mode(d);

	if (m != PCSTOCK_CPU_SIM && m != PCSTOCK_CPU_PINNED &&
	    m != PCSTOCK_CPU_COOP)
		return 0;
	return pcstock_cpu_enter(d, cpu % pcstock_domain_nr_cpus(d));
}

void domain_exit(void *inst)
{
	struct pcstock_domain *d = *(struct pcstock_domain **)inst;
	enum pcstock_cpu_mode m = pcstock_domain_mode(d);

	if (m == PCSTOCK_CPU_SIM || m == PCSTOCK_CPU_PINNED ||
	    m == PCSTOCK_CPU_COOP)
		pcstock_cpu_exit(d);
}

/*
 * Drain every stocked counter under node @top on every CPU; a @top that is
 * no leaf (an ancestor, or CTR_DRAIN_ALL) means every leaf.
 */
void ctr_drain_under(struct ctr_tree *t, unsigned int top)
{
	unsigned int n = pcstock_domain_nr_cpus(t->d), cpu, i, first, last;
	bool leaf = top >= t->shape.nr_anc && top < t->shape.nr_nodes;

	if (!t->stocked)
		return;
	first = leaf ? top : t->shape.nr_anc;
	last = leaf ? top + 1 : t->shape.nr_nodes;
	/* CPU-major, the arena's layout: one CPU's slots are contiguous. */
	for (cpu = 0; cpu < n; cpu++)
		for (i = first; i < last; i++)
			pcstock_counter_drain_stock(&t->node[i], cpu);
}

static bool ctr_charge(void *inst, unsigned int thread, unsigned int leaf,
		       unsigned long nr)
{
	return ctr_charge_body(inst, leaf, nr);
}

static void ctr_uncharge(void *inst, unsigned int thread, unsigned int leaf,
			 unsigned long nr)
{
	ctr_uncharge_body(inst, leaf, nr);
}

static void ctr_drain_all(void *inst)
{
	ctr_drain_under(inst, CTR_DRAIN_ALL);
}

static unsigned long ctr_sum(void *inst,
			     unsigned long (*fn)(const struct pcstock_counter *))
{
	struct ctr_tree *t = inst;
	unsigned long sum = 0;
	unsigned int i;

	for (i = 0; i < t->shape.nr_nodes; i++)
		sum += fn(&t->node[i]);
	return sum;
}

static unsigned long ctr_stock_pages(void *inst)
{
	return ctr_sum(inst, pcstock_counter_stock_pages);
}

static unsigned long ctr_stock_bound(void *inst)
{
	return ctr_sum(inst, pcstock_counter_stock_bound);
}

static long ctr_usage(void *inst, unsigned int node)
{
	struct ctr_tree *t = inst;

	return (long)pcstock_counter_read(&t->node[node]);
}

/* Only leaves are stocked: an ancestor's subtree holds all their stock. */
static long ctr_node_stock(void *inst, unsigned int node)
{
	struct ctr_tree *t = inst;

	if (node < t->shape.nr_anc)
		return (long)ctr_stock_pages(inst);
	return (long)pcstock_counter_stock_pages(&t->node[node]);
}

static int ctr_check(void *inst, const long *held, char *why, size_t len)
{
	struct ctr_tree *t = inst;

	return shape_check(&t->shape, inst, ctr_usage, ctr_node_stock, held,
			   why, len);
}

/* ---- the shape shared by the tree strategies --------------------------- */

void shape_init(struct tree_shape *s, const struct tree_spec *spec)
{
	s->nr_anc = spec->depth > 1 ? spec->depth - 1 : 0;
	s->nr_leaves = spec->nr_leaves;
	s->nr_nodes = s->nr_anc + s->nr_leaves;
}

int shape_parent(const struct tree_shape *s, unsigned int node)
{
	if (node < s->nr_anc)
		return (int)node - 1;
	return (int)s->nr_anc - 1;
}

/*
 * Conservation at a quiescent point, every level: usage == pages the
 * workers hold below it + pages in the stock of its subtree (@stock gives
 * the subtree's figure, NULL for none).  Ancestors form a chain above all
 * leaves, so each holds every leaf.
 */
int shape_check(const struct tree_shape *s, void *inst,
		long (*usage)(void *, unsigned int),
		long (*stock)(void *, unsigned int), const long *held,
		char *why, size_t len)
{
	long below = 0, sub, got;
	unsigned int node;

	for (node = s->nr_nodes; node-- > 0;) {
		if (node >= s->nr_anc)
			below += held[node - s->nr_anc];
		sub = stock ? stock(inst, node) : 0;
		got = usage(inst, node);
		if (node >= s->nr_anc && got == held[node - s->nr_anc] + sub)
			continue;
		if (node < s->nr_anc && got == below + sub)
			continue;
		snprintf(why, len, "%s %u: usage %ld != held %ld + stock %ld",
			 node < s->nr_anc ? "level" : "leaf",
			 node < s->nr_anc ? node : node - s->nr_anc, got,
			 node < s->nr_anc ? below : held[node - s->nr_anc],
			 sub);
		return -1;
	}
	return 0;
}

/* ---- strategy descriptions ---------------------------------------------- */

static void nop_exit(void *inst)
{
}

static int nop_enter(void *inst, unsigned int cpu)
{
	return 0;
}

static void nop_drain(void *inst)
{
}

static unsigned long zero_pages(void *inst)
{
	return 0;
}

const struct strategy strat_floor = {
	.name = "floor",
	.what = "bare relaxed atomic add/sub on a per-thread line",
	.create = floor_create,
	.destroy = free,
	.enter = nop_enter,
	.exit = nop_exit,
	.charge = floor_charge,
	.uncharge = floor_uncharge,
	.drain_all = nop_drain,
	.stock_pages = zero_pages,
	.stock_bound = zero_pages,
	.check = floor_check,
};

const struct strategy strat_local = {
	.name = "local",
	.what = "relaxed load and store add/sub on a per-thread line, "
		"no locked instruction",
	.create = floor_create,
	.destroy = free,
	.enter = nop_enter,
	.exit = nop_exit,
	.charge = local_charge,
	.uncharge = local_uncharge,
	.drain_all = nop_drain,
	.stock_pages = zero_pages,
	.stock_bound = zero_pages,
	.check = floor_check,
};

const struct strategy strat_mutex = {
	.name = "mutex",
	.what = "one pthread mutex around a plain counter tree",
	.flags = STRAT_LIMITS,
	.create = mutex_create,
	.destroy = mutex_destroy,
	.enter = nop_enter,
	.exit = nop_exit,
	.charge = mutex_charge,
	.uncharge = mutex_uncharge,
	.drain_all = nop_drain,
	.stock_pages = zero_pages,
	.stock_bound = zero_pages,
	.check = mutex_check,
};

#define CTR_STRATEGY_OPS(sname, swhat, sflags, screate, scharge, suncharge)   \
	{                                                                    \
		.name = sname, .what = swhat, .flags = sflags,               \
		.create = screate, .destroy = ctr_destroy,                   \
		.enter = domain_enter, .exit = domain_exit,                  \
		.charge = scharge, .uncharge = suncharge,                    \
		.drain_all = ctr_drain_all,                                  \
		.stock_pages = ctr_stock_pages,                              \
		.stock_bound = ctr_stock_bound, .check = ctr_check,          \
	}
#define CTR_STRATEGY(sname, swhat, sflags, screate)                          \
	CTR_STRATEGY_OPS(sname, swhat, sflags, screate, ctr_charge,          \
			 ctr_uncharge)

const struct strategy strat_ctr_none = CTR_STRATEGY("ctr-none",
	"counter.h try_charge/uncharge, no stock (direct)",
	STRAT_LIMITS | STRAT_DOMAIN, ctr_create_none);
const struct strategy strat_ctr_v4 = CTR_STRATEGY("ctr-v4",
	"stock.h V4 policy on counter.h (direct)",
	STRAT_LIMITS | STRAT_STOCK | STRAT_DOMAIN, ctr_create_v4);
const struct strategy strat_ctr_default = CTR_STRATEGY("ctr-default",
	"stock.h DEFAULT policy on counter.h (direct)",
	STRAT_LIMITS | STRAT_STOCK | STRAT_DOMAIN | STRAT_BOUNDED,
	ctr_create_default);
const struct strategy strat_ctr_inline = CTR_STRATEGY_OPS("ctr-inline",
	"ctr-default through the opt-in inline fast paths (PCSTOCK_INLINE)",
	STRAT_LIMITS | STRAT_STOCK | STRAT_DOMAIN | STRAT_BOUNDED,
	ctr_create_default, ctr_inline_charge, ctr_inline_uncharge);

/* ---- the table --------------------------------------------------------- */

/*
 * Every strategy pcstock-bench knows: floor and mutex, then one per
 * registered policy (group.c, in the registry's order), then local and the
 * ctr-* ones, which run only when --strategy names them.  Built once,
 * at first use, from the registry: a new policy needs no edit here.
 */
#define NR_FIXED 2	/* floor, mutex: ahead of the policies */

static const struct strategy *const extra_strategies[] = {
	&strat_local, &strat_ctr_none, &strat_ctr_v4, &strat_ctr_default, &strat_ctr_inline,
};

#define NR_EXTRA (sizeof(extra_strategies) / sizeof(extra_strategies[0]))

static struct {
	const struct strategy *all[NR_FIXED + PCSTOCK_TREE_NR_POLICIES +
				   NR_EXTRA + 1];
	unsigned int nr_default;	/* all[0..nr_default-1] */
	char default_list[NR_FIXED * 8 + PCSTOCK_TREE_NR_POLICIES * 64];
	char policy_list[PCSTOCK_TREE_NR_POLICIES * 64];
	char note[PCSTOCK_TREE_NR_POLICIES * 64 + 128];
} table;

static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* Appends @name to the comma list @buf of @len bytes. */
static void list_add(char *buf, size_t len, const char *name,
		     const char *sep)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? sep : "", name);
}

static void table_build(void)
{
	unsigned int n = 0, nr_policy, i;

	table.all[n++] = &strat_floor;
	table.all[n++] = &strat_mutex;
	nr_policy = grp_strategies(table.all + n, PCSTOCK_TREE_NR_POLICIES);
	for (i = 0; i < NR_FIXED + nr_policy; i++) {
		list_add(table.default_list, sizeof(table.default_list),
			 table.all[i]->name, ",");
		if (i >= NR_FIXED) {
			list_add(table.policy_list, sizeof(table.policy_list),
				 table.all[i]->name, ",");
			list_add(table.note, sizeof(table.note),
				 table.all[i]->name, "/");
		}
	}
	n += nr_policy;
	table.nr_default = n;
	for (i = 0; i < NR_EXTRA; i++)
		table.all[n++] = extra_strategies[i];
	table.all[n] = NULL;
	snprintf(table.note + strlen(table.note),
		 sizeof(table.note) - strlen(table.note),
		 " go through the group API (hierarchy.h); ctr-* (on "
		 "request) drive counter.h + stock.h directly");
}

/* The @i-th strategy, NULL past the last. */
const struct strategy *bench_strategy_nth(unsigned int i)
{
	pthread_once(&table_once, table_build);
	return i < sizeof(table.all) / sizeof(table.all[0]) ? table.all[i] :
	       NULL;
}

/* The default set: floor, mutex and every registered policy. */
const char *bench_default_strategies(void)
{
	pthread_once(&table_once, table_build);
	return table.default_list;
}

/* The registered policies' strategies, a comma list in registry order. */
const char *bench_policy_strategies(void)
{
	pthread_once(&table_once, table_build);
	return table.policy_list;
}

bool bench_strategy_is_default(const struct strategy *s)
{
	unsigned int i;

	pthread_once(&table_once, table_build);
	for (i = 0; i < table.nr_default; i++)
		if (table.all[i] == s)
			return true;
	return false;
}

const char *bench_strategy_note(void)
{
	pthread_once(&table_once, table_build);
	return table.note;
}

const struct strategy *bench_strategy(const char *name)
{
	const struct strategy *s;
	unsigned int i;

	for (i = 0; (s = bench_strategy_nth(i)); i++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}
