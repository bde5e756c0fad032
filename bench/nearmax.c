// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nearmax.c - pressure that only pages parked in stocks cause.
 *
 *  nearmax  one worker per CPU (different CPUs of a SIM domain, THREAD
 *           with --cpu-mode thread) on one shared leaf whose max sits a
 *           gap above what the workers hold together at most: each
 *           charges single pages up to its target, then gives them all
 *           back, over and over, so pages pass through every CPU's stock
 *           while the pages in use stay at or below max - gap.  A charge
 *           is only made below the worker's target, so an exact limit
 *           would take every one: each reclaim callback call, failed
 *           charge and max event counted here is caused by pages parked
 *           in some CPU's stock.  Counts per run (warm-up included), then
 *           conservation is checked as for every workload.
 */
#include <stdio.h>

#include "bench.h"

struct nearmax_state {
	atomic_ulong fails;		/* every failed charge of the run */
};

static void nearmax_body(struct worker *w)
{
	const struct run *r = w->run;
	struct nearmax_state *st = r->shared;
	long target = (long)r->cfg->arg[0];
	unsigned long ticks = 0, fails = 0;
	bool up = true;

	while (!worker_stopped(w)) {
		if (up && w->held[0] < target) {
			if (r->s->charge(r->inst, w->id, 0, 1))
				w->held[0]++;
			else
				atomic_store_explicit(&w->fails, ++fails,
						      memory_order_relaxed);
		} else if (w->held[0] > 0) {
			up = false;
			r->s->uncharge(r->inst, w->id, 0, 1);
			w->held[0]--;
		}
		if (w->held[0] == 0)
			up = true;
		worker_tick(w, ++ticks);
	}
	atomic_fetch_add_explicit(&st->fails, fails, memory_order_relaxed);
}

/*
 * Targets of 3/2 batch: a miss below the target parks a batch on top of
 * what its CPU holds.  Gaps: half a batch, and one page.
 */
static unsigned int nearmax_expand(const struct opts *o, struct config *cfg,
				   unsigned int room)
{
	unsigned int thr[8], nt, n = 0, i, j, gap[2];
	struct config *c;

	gap[0] = o->batch / 2 ? o->batch / 2 : 1;
	gap[1] = 1;
	nt = bench_thread_list(o, thr, 8, &o->nr_os_cpus, 1);
	for (j = 0; j < nt; j++) {
		for (i = 0; i < 2 && (i == 0 || gap[1] != gap[0]); i++) {
			c = bench_config_add(cfg, &n, room, o, thr[j], 1, 2);
			if (!c)
				return n;
			c->tree.mode = o->mode == PCSTOCK_CPU_THREAD ?
				       PCSTOCK_CPU_THREAD : PCSTOCK_CPU_SIM;
			c->arg[0] = o->batch + o->batch / 2;
			c->arg[1] = gap[i];
			c->tree.leaf_max = (unsigned long)thr[j] * c->arg[0] +
					   gap[i];
			c->x = (double)gap[i];
			snprintf(c->label, sizeof(c->label),
				 "T=%u max=%lu gap=%u", thr[j],
				 c->tree.leaf_max, gap[i]);
		}
	}
	return n;
}

static int nearmax_measure(const struct opts *o, const struct config *c,
			   const struct strategy *s, void *inst,
			   struct sample *out)
{
	struct nearmax_state st = { 0 };
	unsigned long r0, e0, r1, e1;
	int ret;

	s->pressure(inst, &r0, &e0);
	ret = measure_workers(o, c, s, inst, nearmax_body, &st, false, out);
	if (ret)
		return ret;
	s->pressure(inst, &r1, &e1);
	out->value = (double)(r1 - r0);
	out->aux[0] = (double)atomic_load(&st.fails);
	out->aux[1] = (double)(e1 - e0);
	return 0;
}

const struct workload wl_nearmax = {
	.name = "nearmax",
	.metric = "reclaim calls",
	.aux_name = { "failed charges", "max events" },
	.no_ratio = true,
	.needs = STRAT_LIMITS | STRAT_PRESSURE,
	.expand = nearmax_expand,
	.measure = nearmax_measure,
};
