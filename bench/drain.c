// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * drain.c - the workloads about stock state rather than throughput.
 *
 *  drain    latency of one drain_all over M groups x C simulated CPUs,
 *           with 99 % of the slots empty (the read-before-exchange case)
 *           or every slot stocked, with and without a charger running on
 *           CPU 0 meanwhile.  Slots are stocked by the main thread entering
 *           each CPU and charging then uncharging one page; that filling is
 *           not timed.
 *  strand   the "litter" pattern: threads visit every CPU and charge then
 *           uncharge one page in each of M groups.  Reports the pages left
 *           stranded in stock against the bound the policy reports
 *           (pcstock_group_stock_bound() for the groups), and what is
 *           left after one drain_all (must be 0).  "near max" gives every
 *           group a max of half what its stock can hide (nr_cpus × batch
 *           / 2): a stock that stops stocking near max (exact) strands
 *           nothing there.
 *
 * Both run on simulated CPUs whatever --cpu-mode says: they need to enter
 * CPUs that do not exist.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "strategy.h"

static struct config *config_add(struct config *cfg, unsigned int *n,
				 unsigned int room, const struct opts *o,
				 unsigned int groups, unsigned int cpus)
{
	struct config *c;

	if (*n >= room)
		return NULL;
	c = &cfg[(*n)++];
	memset(c, 0, sizeof(*c));
	c->threads = 1;
	c->tree.nr_leaves = groups;
	c->tree.depth = 2;
	c->tree.nr_cpus = cpus;
	c->tree.batch = o->batch;
	c->tree.mode = PCSTOCK_CPU_SIM;
	return c;
}

static int litter(const struct strategy *s, void *inst, unsigned int cpu,
		  unsigned int groups, unsigned int every)
{
	unsigned int g, slot;
	int ret = s->enter(inst, cpu);

	if (ret)
		return ret;
	for (g = 0; g < groups; g++) {
		slot = g * 7919U + cpu;
		if (slot % every)
			continue;
		if (s->charge(inst, 0, g, 1))
			s->uncharge(inst, 0, g, 1);
	}
	s->exit(inst);
	return 0;
}

/* ---- drain -------------------------------------------------------------- */

enum { FILL_SPARSE, FILL_FULL };

struct charger {
	const struct strategy *s;
	void *inst;
	unsigned int groups;
	int os_cpu;
	atomic_bool stop;
	atomic_ulong ops;
	int err;
	pthread_t tid;
};

static void *charger_main(void *arg)
{
	struct charger *ch = arg;
	unsigned long ops = 0;
	unsigned int g = 0;

	bind_self(ch->os_cpu);
	ch->err = ch->s->enter(ch->inst, 0);
	if (ch->err)
		return NULL;
	while (!atomic_load_explicit(&ch->stop, memory_order_relaxed)) {
		if (ch->s->charge(ch->inst, 1, g, 1))
			ch->s->uncharge(ch->inst, 1, g, 1);
		g = g + 1 == ch->groups ? 0 : g + 1;
		atomic_store_explicit(&ch->ops, ++ops, memory_order_relaxed);
	}
	ch->s->exit(ch->inst);
	return NULL;
}

/*
 * 10 and 1000 groups x 1, 16, 256 CPUs (--full: also 10k and 100k groups,
 * whose trees take long to build: per-CPU allocation is a first-fit scan),
 * for 99 %-empty and full slots, and 99 %-empty with a charger running
 * (the read-before-exchange case with an active owner).
 */
#define DRAIN_MAX_SLOTS 2000000UL

static unsigned int drain_expand(const struct opts *o, struct config *cfg,
				 unsigned int room)
{
	static const unsigned int groups[] = { 10, 1000, 10000, 100000 };
	static const unsigned int cpus[] = { 1, 16, 256 };
	static const struct {
		unsigned int fill, chargers;
		const char *name;
	} series[] = {
		{ FILL_SPARSE, 0, "99%-empty" },
		{ FILL_FULL, 0, "full" },
		{ FILL_SPARSE, 1, "99%-empty+charger" },
	};
	unsigned int n = 0, i, j, k, nr_groups = o->full ? 4 : 2;
	unsigned long max_slots = o->full ? ~0UL : o->quick ? 20000 :
				  DRAIN_MAX_SLOTS;
	struct config *c;

	/* Series innermost: consecutive configurations share their trees. */
	for (i = 0; i < nr_groups; i++)
		for (j = 0; j < sizeof(cpus) / sizeof(cpus[0]); j++)
			for (k = 0; k < sizeof(series) / sizeof(series[0]);
			     k++) {
				if ((unsigned long)groups[i] * cpus[j] >
				    max_slots)
					continue;
				c = config_add(cfg, &n, room, o, groups[i],
					       cpus[j]);
				if (!c)
					return n;
				c->arg[0] = series[k].fill;
				c->arg[1] = series[k].chargers;
				c->x = (double)groups[i] * cpus[j];
				c->series = series[k].name;
				snprintf(c->label, sizeof(c->label),
					 "M=%u C=%u %s", groups[i], cpus[j],
					 c->series);
			}
	return n;
}

static int fill_slots(const struct config *c, const struct strategy *s,
		      void *inst)
{
	unsigned int cpu, every = c->arg[0] == FILL_FULL ? 1 : 100;
	int ret = 0;

	for (cpu = 0; cpu < c->tree.nr_cpus && !ret; cpu++)
		ret = litter(s, inst, cpu, c->tree.nr_leaves, every);
	return ret;
}

static int drain_measure(const struct opts *o, const struct config *c,
			 const struct strategy *s, void *inst,
			 struct sample *out)
{
	struct charger ch = {
		.s = s, .inst = inst, .os_cpu = o->os_cpus[1 % o->nr_os_cpus],
		.groups = c->tree.nr_leaves < 8 ? c->tree.nr_leaves : 8,
	};
	double start, t, spent = 0, ops0 = 0, ops1, ops_t = 0;
	unsigned long drains = 0;
	bool started = false;
	long *zero = calloc(c->tree.nr_leaves, sizeof(*zero));
	char why[160];
	int ret = zero ? 0 : -ENOMEM;

	if (!ret && c->arg[1]) {
		ret = -pthread_create(&ch.tid, NULL, charger_main, &ch);
		started = !ret;
	}
	/* One untimed cycle of warm-up, then cycles for --duration. */
	if (!ret)
		ret = fill_slots(c, s, inst);
	if (!ret)
		s->drain_all(inst);
	start = now_s();
	ops0 = (double)atomic_load(&ch.ops);
	while (!ret && (!drains || now_s() - start < o->duration)) {
		ret = fill_slots(c, s, inst);
		if (ret)
			break;
		t = now_s();
		s->drain_all(inst);
		spent += now_s() - t;
		drains++;
	}
	ops_t = now_s() - start;
	ops1 = (double)atomic_load(&ch.ops);
	if (started) {
		/* ch.err is the charger's until it is joined (a TSan race). */
		atomic_store(&ch.stop, true);
		pthread_join(ch.tid, NULL);
		ret = ret ? ret : ch.err;
		out->aux[1] = (ops1 - ops0) / ops_t;
	}
	if (!ret) {
		out->value = spent / (double)drains * 1e6;
		out->aux[0] = spent / (double)drains * 1e9 /
			      ((double)c->tree.nr_leaves * c->tree.nr_cpus);
		out->ops = drains;
		out->cons_ok = !release_and_check(s, inst, &c->tree, zero,
						  why, sizeof(why));
		if (!out->cons_ok)
			fprintf(stderr, "\nconservation violated: drain %s %s: "
				"%s\n", c->label, s->name, why);
	}
	free(zero);
	return ret;
}

const struct workload wl_drain = {
	.name = "drain",
	.metric = "us/drain_all",
	.aux_name = { "ns/slot", "charger ops/s" },
	.needs = STRAT_STOCK,
	.expand = drain_expand,
	.measure = drain_measure,
};

/* ---- strand ------------------------------------------------------------- */

#define STRAND_CPUS 64

struct litterer {
	const struct strategy *s;
	void *inst;
	const struct config *c;
	unsigned int first, step;
	int err;
	pthread_t tid;
};

static void *litter_main(void *arg)
{
	struct litterer *l = arg;
	unsigned int cpu;

	for (cpu = l->first; cpu < l->c->tree.nr_cpus && !l->err;
	     cpu += l->step)
		l->err = litter(l->s, l->inst, cpu, l->c->tree.nr_leaves, 1);
	return NULL;
}

static unsigned int strand_expand(const struct opts *o, struct config *cfg,
				  unsigned int room)
{
	static const unsigned int groups[] = { 64, 1024, 64 };
	unsigned int n = 0, i, nr = o->quick ? 1 : 2;
	struct config *c;

	for (i = 0; i < nr + 1; i++) {
		c = config_add(cfg, &n, room, o, groups[i == nr ? 2 : i],
			       STRAND_CPUS);
		if (!c)
			break;
		c->threads = o->nr_os_cpus;
		c->x = c->tree.nr_leaves;
		if (i == nr)
			c->tree.leaf_max = (unsigned long)STRAND_CPUS *
					   o->batch / 2;
		snprintf(c->label, sizeof(c->label), "M=%u C=%u%s",
			 c->tree.nr_leaves, STRAND_CPUS,
			 i == nr ? " near max" : "");
	}
	return n;
}

static int strand_measure(const struct opts *o, const struct config *c,
			  const struct strategy *s, void *inst,
			  struct sample *out)
{
	struct litterer l[BENCH_MAX_THREADS];
	unsigned int i, nr = c->threads;
	long *zero = calloc(c->tree.nr_leaves, sizeof(*zero));
	double t;
	char why[160];
	int ret = zero ? 0 : -ENOMEM;

	t = now_s();
	for (i = 0; i < nr && !ret; i++) {
		l[i] = (struct litterer){ .s = s, .inst = inst, .c = c,
					  .first = i, .step = nr };
		ret = -pthread_create(&l[i].tid, NULL, litter_main, &l[i]);
		if (ret)
			nr = i;
	}
	for (i = 0; i < nr; i++) {
		pthread_join(l[i].tid, NULL);
		ret = ret ? ret : l[i].err;
	}
	t = now_s() - t;
	if (ret)
		goto out;
	out->cons_ok = !s->check(inst, zero, why, sizeof(why));
	out->value = (double)s->stock_pages(inst);
	out->aux[0] = (double)s->stock_bound(inst);
	out->ops = (unsigned long)c->tree.nr_leaves * c->tree.nr_cpus;
	out->thread_min = out->thread_max = (double)out->ops / t / nr;
	s->drain_all(inst);
	out->aux[1] = (double)s->stock_pages(inst);
	if (out->aux[1] != 0) {
		out->cons_ok = false;
		snprintf(why, sizeof(why), "%.0f pages stranded after a drain",
			 out->aux[1]);
	} else if ((s->flags & STRAT_BOUNDED) && out->value > out->aux[0]) {
		out->cons_ok = false;
		snprintf(why, sizeof(why), "%.0f pages stranded, bound %.0f",
			 out->value, out->aux[0]);
	}
	if (out->cons_ok)
		out->cons_ok = !release_and_check(s, inst, &c->tree, zero,
						  why, sizeof(why));
	if (!out->cons_ok)
		fprintf(stderr, "\nconservation violated: strand %s %s: %s\n",
			c->label, s->name, why);
out:
	free(zero);
	return ret;
}

const struct workload wl_strand = {
	.name = "strand",
	.metric = "stranded pages",
	.aux_name = { "bound", "after drain" },
	.no_ratio = true,
	.needs = STRAT_STOCK,
	.expand = strand_expand,
	.measure = strand_measure,
};
