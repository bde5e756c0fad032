// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * drain.c - what one drain_all costs in line transfers while a charger
 * runs (lines.h), each stock policy on the shared leaf of scale.
 */
#include <errno.h>
#include <stdio.h>

#include "lines.h"

/* ---- drain_all: reading a slot before exchanging it --------------------- */

static void drain_take(struct drain_cost *d, unsigned long nr,
		       const unsigned long *base, double base_share)
{
	d->xfer = ((double)dir.xfer - (double)base[0] * base_share) / nr;
	d->remote = ((double)dir.xfer_remote - (double)base[1] * base_share) /
		    nr;
	d->inval = ((double)dir.inval - (double)base[2] * base_share) / nr;
}

/*
 * @n CPUs charge the shared leaf a few rounds (every CPU's slot warm),
 * then CPU 0 keeps charging while, every @every of its steps, drain_all
 * runs on another CPU: CPU 1 each time, or rotating over 1..n-1 (the CPU
 * that hits the limit varies).  What CPU 0 costs alone over as many steps
 * is subtracted.  The first drain (every slot full) and the later ones
 * (only CPU 0 refills) are reported apart.
 */
static int drain_effect(struct lm_run *x, const struct strategy *s,
			unsigned int n, bool rotate, struct drain_cost *first,
			struct drain_cost *later)
{
	const struct series *se = &all_series[1];
	unsigned int steps = x->o->quick ? 1024 : 4096, every = 256, i;
	unsigned int drains = steps / every, drainer;
	unsigned long base[3];
	struct config c;
	struct sim m;
	char topo[96];
	void *inst;
	int ret;

	config_for(x->o, se, n, PCSTOCK_CPU_COOP, &c);
	topo_string(x->o->topology, n, topo, sizeof(topo));
	dir_clear(&dir);
	ret = topo_place(topo, n, dir.pkg);
	if (!ret)
		ret = s->create(&c.tree, &inst);
	if (ret)
		return ret;
	ret = sim_init(&m, s, inst, &c, x->o->seed);
	pcstock_trace_hook = trace_access;
	if (!ret)
		ret = sim_rounds(&m, false, 4, 1, true);
	/* CPU 0 alone (once settled), then CPU 0 with the drains. */
	m.n = 1;
	if (!ret)
		ret = sim_rounds(&m, false, steps, 1, true);
	dir_zero(&dir);
	if (!ret)
		ret = sim_rounds(&m, false, steps, 1, true);
	base[0] = dir.xfer;
	base[1] = dir.xfer_remote;
	base[2] = dir.inval;
	dir_zero(&dir);
	for (i = 0; !ret && i < drains; i++) {
		ret = sim_rounds(&m, false, every, 1, true);
		drainer = rotate ? 1 + i % (n - 1) : 1;
		if (!ret)
			ret = s->enter(inst, drainer);
		if (!ret) {
			sim_cpu = (int)drainer;
			s->drain_all(inst);
			sim_cpu = -1;
			s->exit(inst);
		}
		if (!i) {
			drain_take(first, 1, base, 1.0 / drains);
			dir_zero(&dir);
		}
	}
	drain_take(later, drains - 1, base, (drains - 1.0) / drains);
	pcstock_trace_hook = NULL;
	m.n = n;
	i = sim_fini(&m) ? 1 : 0;
	s->destroy(inst);
	return ret ? ret : i ? -EIO : 0;
}

int model_drain(struct lm_run *x)
{
	unsigned int n = x->o->quick ? 16 : 256, k, rot;
	struct drain_cost first, later;
	char topo[96];
	int ret;

	topo_string(x->o->topology, n, topo, sizeof(topo));
	printf("\n### drain_all with a charger running, %u CPUs (%s)\n\n"
	       "| strategy | drainer | drain | transfers | remote | "
	       "invalidations | predicted us |\n"
	       "|---|---|---|---:|---:|---:|---:|\n", n, topo);
	for (k = 0; k < x->nr_st; k++) {
		if (!(x->st[k]->flags & STRAT_STOCK))
			continue;
		for (rot = 0; rot < 2; rot++) {
			ret = drain_effect(x, x->st[k], n, rot, &first,
					   &later);
			if (ret)
				return ret;
			emit_drain(x, x->st[k], n, rot ? "rotating" : "cpu 1",
				   "first", &first);
			emit_drain(x, x->st[k], n, rot ? "rotating" : "cpu 1",
				   "later", &later);
		}
	}
	return 0;
}
