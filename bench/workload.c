// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * workload.c - the timed workloads: fault, tenants, sock, scale, depth,
 * tight.  (drain and strand, which measure stock state rather than
 * throughput, are in drain.c; nearmax, which counts pressure, in
 * nearmax.c.)
 *
 *  fault    the series' cover letter: G tasks, each in its own group, on
 *           one CPU of a COOP domain (one OS thread runs them round-robin
 *           with a time slice, never inside a library call); each task
 *           faults every page of its anonymous mapping (a real page fault,
 *           one page charged per fault), then MADV_DONTNEED and one
 *           batched uncharge (mainline's uncharge_batch()); ms per
 *           iteration (all G tasks through their mapping once).
 *  fault-stock  the stock alone: G workers on one simulated CPU, each
 *           iteration charging then uncharging 512 single pages per group
 *           through the stock; ms per iteration.
 *  tenants  one worker per CPU charging and uncharging one page round-robin
 *           over N groups (the 7-slot eviction cliff at N = 8).
 *  sock     producer/consumer pairs on different CPUs, 1-4 page charges on
 *           one side, uncharges on the other, through a ring, 3-level tree:
 *           "rr" sends both ways (netperf *_RR), "stream" one way.
 *  scale    will-it-scale: one worker per CPU, up to the machine and
 *           oversubscribed, each on its own leaf under a shared parent or
 *           all on one shared leaf; ops/s per thread.
 *  depth    the pair loop in bursts of 2 x batch pages on trees 1 to 16
 *           levels deep (every refill and trim walks the tree).
 *  tight    workers on every CPU holding, together, exactly the limit of
 *           one shared leaf: attempts/s per thread, and the failures an
 *           exact limit would not have (pages stuck in stock).
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "strategy.h"

/* ---- the shared measuring routine --------------------------------------- */

/*
 * Run @body on cfg->threads workers; all on domain CPU 0 and one OS CPU if
 * @one_cpu.  Leaves the measured seconds in out->value, checks
 * conservation and returns all pages.
 */
int measure_workers(const struct opts *o, const struct config *cfg,
		    const struct strategy *s, void *inst, worker_fn body,
		    void *shared, bool one_cpu, struct sample *out)
{
	const struct tree_spec *t = &cfg->tree;
	struct run r = {
		.o = o, .cfg = cfg, .s = s, .inst = inst, .shared = shared,
		.body = body, .nr = cfg->threads,
	};
	long *total = calloc(t->nr_leaves, sizeof(*total));
	unsigned int i, l;
	char why[160];
	int ret = -ENOMEM;

	r.w = zalloc_lines(r.nr * sizeof(*r.w));
	if (!r.w || !total)
		goto out;
	for (i = 0; i < r.nr; i++) {
		/*
		 * Lines of its own: a worker writes its held[] twice per
		 * operation, and two calloc()s of a few leaves are adjacent
		 * (32 bytes apart at one leaf), so that the workers would
		 * share a line the library does not touch.
		 */
		r.w[i].held = zalloc_lines(t->nr_leaves * sizeof(long));
		if (!r.w[i].held)
			goto out;
		r.w[i].cpu = one_cpu ? 0 : i;
		r.w[i].os_cpu = one_cpu ? o->os_cpus[0] : run_os_cpu(o, i);
		r.w[i].rng = o->seed * 0x9E3779B97F4A7C15ULL + i + 1;
	}
	ret = run_timed(&r, out);
	for (i = 0; i < r.nr; i++)
		for (l = 0; l < t->nr_leaves; l++)
			total[l] += r.w[i].held[l];
	out->cons_ok = !release_and_check(s, inst, t, total, why,
					  sizeof(why));
	if (!out->cons_ok)
		fprintf(stderr, "\nconservation violated: %s %s %s: %s\n",
			cfg->wl->name, cfg->label, s->name, why);
out:
	for (i = 0; r.w && i < r.nr; i++)
		free(r.w[i].held);
	free(r.w);
	free(total);
	return ret;
}

struct config *bench_config_add(struct config *cfg, unsigned int *n,
				unsigned int room, const struct opts *o,
				unsigned int threads, unsigned int leaves,
				unsigned int depth)
{
	struct config *c;

	if (*n >= room)
		return NULL;
	c = &cfg[(*n)++];
	memset(c, 0, sizeof(*c));
	c->threads = threads;
	c->tree.nr_leaves = leaves;
	c->tree.depth = depth;
	c->tree.nr_cpus = threads;
	c->tree.batch = o->batch;
	c->tree.mode = o->mode;
	return c;
}

/* --threads LIST, or @dflt. */
unsigned int bench_thread_list(const struct opts *o, unsigned int *v,
			       unsigned int room, const unsigned int *dflt,
			       unsigned int nr_dflt)
{
	unsigned int n = 0;
	char *copy, *tok, *save;
	long t;

	if (!o->threads) {
		for (n = 0; n < nr_dflt && n < room; n++)
			v[n] = dflt[n];
		return n;
	}
	copy = strdup(o->threads);
	for (tok = strtok_r(copy, ",", &save); tok && n < room;
	     tok = strtok_r(NULL, ",", &save)) {
		t = strtol(tok, NULL, 10);
		if (t > 0 && t <= BENCH_MAX_THREADS / 2)
			v[n++] = (unsigned int)t;
	}
	free(copy);
	return n;
}

/* ---- the pair loop: fault, tenants, scale, depth ------------------------ */

/*
 * cfg->arg: [0] span: round-robin over this many leaves; [1] own: start
 * at the worker's own leaf (else spread the starts over the span);
 * [2] burst: charge this many single pages, then uncharge them.
 * One tick per charge/uncharge pair.
 */
static void pair_body(struct worker *w)
{
	const struct run *r = w->run;
	const struct config *c = r->cfg;
	unsigned int span = c->arg[0], burst = c->arg[2], leaf, k, got, i;
	unsigned long ticks = 0, fails = 0;

	leaf = c->arg[1] ? w->id : w->id * span / c->threads;
	k = leaf;
	while (!worker_stopped(w)) {
		for (got = 0, i = 0; i < burst; i++) {
			if (r->s->charge(r->inst, w->id, leaf, 1))
				got++;
			else
				fails++;
		}
		w->held[leaf] += got;
		for (i = 0; i < got; i++)
			r->s->uncharge(r->inst, w->id, leaf, 1);
		w->held[leaf] -= got;
		ticks += burst;
		worker_tick(w, ticks);
		atomic_store_explicit(&w->fails, fails, memory_order_relaxed);
		if (span > 1) {
			k = k + 1 == span ? 0 : k + 1;
			leaf = k;
		}
	}
}

static double per_thread_rate(const struct config *c, const struct sample *s)
{
	return (double)s->ops / s->value / c->threads;
}

static int pair_measure(const struct opts *o, const struct config *c,
			const struct strategy *s, void *inst, bool one_cpu,
			struct sample *out)
{
	int ret = measure_workers(o, c, s, inst, pair_body, NULL, one_cpu,
				  out);

	if (!ret)
		out->value = per_thread_rate(c, out);
	return ret;
}

/* fault-stock */

#define FAULT_PAGES 512

/* G groups, G workers on CPU 0; the old pure-stock loop. */
static unsigned int fault_configs(const struct opts *o, struct config *cfg,
				  unsigned int room)
{
	static const unsigned int groups[] = { 1, 4, 32 };
	struct config *c;
	unsigned int n = 0, i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		c = bench_config_add(cfg, &n, room, o, groups[i], groups[i], 2);
		if (!c)
			break;
		c->tree.nr_cpus = 1;
		c->arg[0] = 1;
		c->arg[1] = 1;
		c->arg[2] = FAULT_PAGES;
		c->x = groups[i];
		snprintf(c->label, sizeof(c->label), "G=%u", groups[i]);
	}
	return n;
}

static unsigned int fault_stock_expand(const struct opts *o,
				       struct config *cfg, unsigned int room)
{
	unsigned int n = fault_configs(o, cfg, room), i;

	/* G threads share CPU 0: only SIM CPUs may be shared. */
	for (i = 0; i < n; i++)
		if (cfg[i].tree.mode != PCSTOCK_CPU_RSEQ &&
		    cfg[i].tree.mode != PCSTOCK_CPU_THREAD)
			cfg[i].tree.mode = PCSTOCK_CPU_SIM;
	return n;
}

/* ms per iteration: every group through its FAULT_PAGES pages once. */
static void per_iteration(const struct config *c, struct sample *out)
{
	out->value = out->value * 1e3 /
		     ((double)out->ops / FAULT_PAGES / c->tree.nr_leaves);
}

static int fault_stock_measure(const struct opts *o, const struct config *c,
			       const struct strategy *s, void *inst,
			       struct sample *out)
{
	int ret = measure_workers(o, c, s, inst, pair_body, NULL, true, out);

	if (!ret)
		per_iteration(c, out);
	return ret;
}

const struct workload wl_fault_stock = {
	.name = "fault-stock",
	.metric = "ms/iter",
	.expand = fault_stock_expand,
	.measure = fault_stock_measure,
};

/* fault */

/* EEVDF's base slice: how long a task runs before the next one. */
#define FAULT_SLICE_S 0.003
/* Pages between two looks at the clock. */
#define FAULT_CLOCK_EVERY 32

struct fault_task {
	char *map;
	unsigned int leaf;
	unsigned int next;		/* next page to fault */
	unsigned long charged;		/* this round's pages */
};

struct fault_state {
	struct fault_task *task;
	unsigned int nr;
	size_t page;
};

static unsigned int fault_expand(const struct opts *o, struct config *cfg,
				 unsigned int room)
{
	unsigned int n = fault_configs(o, cfg, room), i;

	for (i = 0; i < n; i++) {
		cfg[i].threads = 1;
		cfg[i].tree.mode = PCSTOCK_CPU_COOP;
	}
	return n;
}

/* The end of a task's round: drop the pages, one batched uncharge. */
static void fault_release(struct worker *w, const struct fault_state *fs,
			  struct fault_task *t)
{
	const struct run *r = w->run;

	madvise(t->map, (size_t)FAULT_PAGES * fs->page, MADV_DONTNEED);
	if (t->charged)
		(r->s->uncharge_direct ? r->s->uncharge_direct :
					r->s->uncharge)(r->inst, w->id,
							t->leaf, t->charged);
	t->charged = 0;
	t->next = 0;
}

/*
 * The CPU's one thread: each task in turn runs for a slice (checked every
 * FAULT_CLOCK_EVERY pages, never inside a library call), then the CPU
 * "schedules": queued work runs, the next task goes.  One tick per page.
 */
static void fault_body(struct worker *w)
{
	const struct run *r = w->run;
	struct fault_state *fs = r->shared;
	unsigned long ticks = 0, fails = 0;
	unsigned int k = 0, i;

	while (!worker_stopped(w)) {
		struct fault_task *t = &fs->task[k];
		double end = now_s() + FAULT_SLICE_S;

		do {
			for (i = 0; i < FAULT_CLOCK_EVERY; i++) {
				/* A write fault on an untouched page. */
				*(volatile char *)(t->map + t->next * fs->page) =
					1;
				if (r->s->charge(r->inst, w->id, t->leaf, 1))
					t->charged++;
				else
					fails++;
				if (++t->next == FAULT_PAGES)
					fault_release(w, fs, t);
			}
			ticks += FAULT_CLOCK_EVERY;
		} while (now_s() < end);
		w->held[t->leaf] = (long)t->charged;	/* its pages now */
		worker_tick(w, ticks);
		atomic_store_explicit(&w->fails, fails, memory_order_relaxed);
		if (r->s->idle)
			r->s->idle(r->inst);
		k = k + 1 == fs->nr ? 0 : k + 1;
	}
}

static int fault_measure(const struct opts *o, const struct config *c,
			 const struct strategy *s, void *inst,
			 struct sample *out)
{
	struct fault_state fs = {
		.nr = c->tree.nr_leaves,
		.page = (size_t)sysconf(_SC_PAGESIZE),
	};
	size_t len = (size_t)FAULT_PAGES * fs.page;
	unsigned int i;
	int ret = -ENOMEM;

	fs.task = calloc(fs.nr, sizeof(*fs.task));
	for (i = 0; fs.task && i < fs.nr; i++) {
		fs.task[i].leaf = i;
		fs.task[i].map = mmap(NULL, len, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fs.task[i].map == MAP_FAILED) {
			fs.task[i].map = NULL;
			goto out;
		}
		/* 4 KiB faults, as the cover letter's (no THP). */
		madvise(fs.task[i].map, len, MADV_NOHUGEPAGE);
	}
	ret = measure_workers(o, c, s, inst, fault_body, &fs, true, out);
	if (!ret)
		per_iteration(c, out);
out:
	for (i = 0; fs.task && i < fs.nr; i++)
		if (fs.task[i].map)
			munmap(fs.task[i].map, len);
	free(fs.task);
	return ret;
}

const struct workload wl_fault = {
	.name = "fault",
	.metric = "ms/iter",
	.expand = fault_expand,
	.measure = fault_measure,
};

/* tenants */

static unsigned int tenants_expand(const struct opts *o, struct config *cfg,
				   unsigned int room)
{
	static const unsigned int groups[] = { 1, 4, 7, 8, 16, 64, 1024 };
	unsigned int thr[8], nt, n = 0, i, j;
	struct config *c;

	nt = bench_thread_list(o, thr, 8, &o->nr_os_cpus, 1);
	for (j = 0; j < nt; j++) {
		for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
			c = bench_config_add(cfg, &n, room, o, thr[j],
					     groups[i], 2);
			if (!c)
				return n;
			c->arg[0] = groups[i];
			c->arg[2] = 1;
			c->x = groups[i];
			snprintf(c->label, sizeof(c->label), "N=%u T=%u",
				 groups[i], thr[j]);
		}
	}
	return n;
}

static int tenants_measure(const struct opts *o, const struct config *c,
			   const struct strategy *s, void *inst,
			   struct sample *out)
{
	return pair_measure(o, c, s, inst, false, out);
}

const struct workload wl_tenants = {
	.name = "tenants",
	.metric = "ops/s/thread",
	.higher_better = true,
	.expand = tenants_expand,
	.measure = tenants_measure,
};

/* scale */

static unsigned int scale_expand(const struct opts *o, struct config *cfg,
				 unsigned int room)
{
	unsigned int dflt[16], thr[16], nd = 0, nt, n = 0, t, j, own;
	struct config *c;

	for (t = 1; t < o->nr_os_cpus && nd < 12; t *= 2)
		dflt[nd++] = t;
	dflt[nd++] = o->nr_os_cpus;
	dflt[nd++] = 2 * o->nr_os_cpus;
	nt = bench_thread_list(o, thr, 16, dflt, nd);
	for (own = 0; own < 2; own++) {
		for (j = 0; j < nt; j++) {
			c = bench_config_add(cfg, &n, room, o, thr[j],
				       own ? thr[j] : 1, 2);
			if (!c)
				return n;
			c->arg[0] = 1;
			c->arg[1] = own;
			c->arg[2] = 1;
			c->x = thr[j];
			c->series = own ? "own leaf" : "shared leaf";
			snprintf(c->label, sizeof(c->label), "T=%u %s",
				 thr[j], own ? "own" : "shared");
		}
	}
	return n;
}

const struct workload wl_scale = {
	.name = "scale",
	.metric = "ops/s/thread",
	.higher_better = true,
	.expand = scale_expand,
	.measure = tenants_measure,
};

/* depth */

static unsigned int depth_expand(const struct opts *o, struct config *cfg,
				 unsigned int room)
{
	static const unsigned int depths[] = { 1, 2, 4, 8, 16 };
	unsigned int thr[8], nt, n = 0, i, j;
	struct config *c;

	nt = bench_thread_list(o, thr, 8, &o->nr_os_cpus, 1);
	for (j = 0; j < nt; j++) {
		for (i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
			c = bench_config_add(cfg, &n, room, o, thr[j], thr[j],
				       depths[i]);
			if (!c)
				return n;
			c->arg[0] = 1;
			c->arg[1] = 1;
			c->arg[2] = 2 * o->batch;
			c->x = depths[i];
			snprintf(c->label, sizeof(c->label), "D=%u T=%u",
				 depths[i], thr[j]);
		}
	}
	return n;
}

const struct workload wl_depth = {
	.name = "depth",
	.metric = "ops/s/thread",
	.higher_better = true,
	.expand = depth_expand,
	.measure = tenants_measure,
};

/* ---- sock --------------------------------------------------------------- */

#define RING_SIZE 256U	/* messages in flight per direction */

struct ring {
	_Alignas(BENCH_LINE) atomic_uint head;	/* written by the sender */
	_Alignas(BENCH_LINE) atomic_uint tail;	/* written by the receiver */
	_Alignas(BENCH_LINE) unsigned char pages[RING_SIZE];
	/* The receiver's passes, by its exit: all, and those that got any. */
	_Alignas(BENCH_LINE) atomic_ulong passes;
	atomic_ulong rx_passes, rx_msgs;
};

static bool ring_push(struct ring *q, unsigned char pages)
{
	unsigned int head = atomic_load_explicit(&q->head,
						 memory_order_relaxed);

	/* acquire: pairs with the release store of tail in ring_pop(). */
	if (head - atomic_load_explicit(&q->tail, memory_order_acquire) ==
	    RING_SIZE)
		return false;
	q->pages[head % RING_SIZE] = pages;
	/* release: pairs with the acquire load of head in ring_pop(). */
	atomic_store_explicit(&q->head, head + 1, memory_order_release);
	return true;
}

static int ring_pop(struct ring *q)
{
	unsigned int tail = atomic_load_explicit(&q->tail,
						 memory_order_relaxed);
	int pages;

	/* acquire: pairs with the release store of head in ring_push(). */
	if (atomic_load_explicit(&q->head, memory_order_acquire) == tail)
		return -1;
	pages = q->pages[tail % RING_SIZE];
	/* release: pairs with the acquire load of tail in ring_push(). */
	atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
	return pages;
}

/*
 * Worker 2p and 2p+1 form pair p and charge leaf p.  rr: each sends on
 * its own ring and receives on its partner's; stream: 2p sends, 2p+1
 * receives.  A message's pages are charged by its sender and uncharged by
 * its receiver; messages still in a ring at the end stay in the sender's
 * held count and are returned by release_and_check().
 */
static void sock_body(struct worker *w)
{
	const struct run *r = w->run;
	struct ring *rings = r->shared;
	unsigned int pair = w->id / 2, side = w->id % 2, idle = 0, i;
	bool rr = r->cfg->arg[0], progress;
	struct ring *tx = rr || !side ? &rings[2 * pair + side] : NULL;
	struct ring *rx = rr || side ? &rings[2 * pair + (rr ? !side : 0)] :
			  NULL;
	unsigned long ticks = 0, fails = 0, pages, passes = 0, rx_passes = 0;
	unsigned long rx_msgs = 0;
	int got;

	while (!worker_stopped(w)) {
		progress = false;
		for (i = 0; rx && i < 8 && (got = ring_pop(rx)) > 0; i++) {
			r->s->uncharge(r->inst, w->id, pair, (unsigned)got);
			w->held[pair] -= got;
			progress = true;
			if (!tx)
				worker_tick(w, ++ticks);
		}
		passes++;
		rx_passes += i > 0;
		rx_msgs += i;
		if (tx && atomic_load_explicit(&tx->head,
					       memory_order_relaxed) -
				  atomic_load_explicit(&tx->tail,
						       memory_order_relaxed) <
			  RING_SIZE) {
			pages = 1 + rng_next(&w->rng) % 4;
			if (r->s->charge(r->inst, w->id, pair, pages)) {
				w->held[pair] += (long)pages;
				ring_push(tx, (unsigned char)pages);
				worker_tick(w, ++ticks);
				progress = true;
			} else {
				atomic_store_explicit(&w->fails, ++fails,
						      memory_order_relaxed);
			}
		}
		if (progress)
			idle = 0;
		else if (++idle < 64)
			cpu_relax();
		else
			sched_yield();
	}
	if (rx) {
		atomic_store_explicit(&rx->passes, passes,
				      memory_order_relaxed);
		atomic_store_explicit(&rx->rx_passes, rx_passes,
				      memory_order_relaxed);
		atomic_store_explicit(&rx->rx_msgs, rx_msgs,
				      memory_order_relaxed);
	}
}

static unsigned int sock_expand(const struct opts *o, struct config *cfg,
				unsigned int room)
{
	static const unsigned int pairs[] = { 1, 4 };
	struct config *c;
	unsigned int n = 0, i, rr;

	for (rr = 2; rr-- > 0;) {
		for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
			c = bench_config_add(cfg, &n, room, o, 2 * pairs[i],
				       pairs[i], 3);
			if (!c)
				return n;
			c->arg[0] = rr;
			c->x = pairs[i];
			c->series = rr ? "rr" : "stream";
			snprintf(c->label, sizeof(c->label), "P=%u %s",
				 pairs[i], rr ? "rr" : "stream");
		}
	}
	return n;
}

static int sock_measure(const struct opts *o, const struct config *c,
			const struct strategy *s, void *inst,
			struct sample *out)
{
	struct ring *rings = zalloc_lines(c->threads * sizeof(*rings));
	unsigned long passes = 0, rx_passes = 0, rx_msgs = 0;
	unsigned int i;
	int ret;

	if (!rings)
		return -ENOMEM;
	ret = measure_workers(o, c, s, inst, sock_body, rings, false, out);
	if (!ret)
		out->value = per_thread_rate(c, out);
	/*
	 * How the receivers' passes batch, over the whole run (the workers
	 * have joined): the messages a pass that got any got, and the
	 * passes per message got, idle ones included.  The line model's
	 * replay reports its own batch beside (docs/lines-model.md).
	 */
	for (i = 0; i < c->threads; i++) {
		passes += atomic_load(&rings[i].passes);
		rx_passes += atomic_load(&rings[i].rx_passes);
		rx_msgs += atomic_load(&rings[i].rx_msgs);
	}
	out->aux[0] = rx_passes ? (double)rx_msgs / (double)rx_passes :
				 (double)NAN;
	out->aux[1] = rx_msgs ? (double)passes / (double)rx_msgs :
				 (double)NAN;
	free(rings);
	return ret;
}

const struct workload wl_sock = {
	.name = "sock",
	.metric = "msgs/s/thread",
	.aux_name = { "msgs/receiving pass", "passes/msg" },
	.higher_better = true,
	.expand = sock_expand,
	.measure = sock_measure,
};

/* ---- tight -------------------------------------------------------------- */

/*
 * cfg->arg[0]: each worker's target; the targets add up to exactly the
 * limit.  A worker charges one page while it holds less than its target and
 * gives one back when it holds its target, so the leaf sits at its limit
 * with pages spread over every CPU's stock.  An exact limit would never
 * refuse a charge here: every failure is a page hidden in some stock that
 * the failing charge did not get back (drain_all busy, or not tried).  One
 * tick per attempt.
 */
static void tight_body(struct worker *w)
{
	const struct run *r = w->run;
	long target = (long)r->cfg->arg[0];
	unsigned long ticks = 0, fails = 0;

	while (!worker_stopped(w)) {
		if (w->held[0] >= target) {
			r->s->uncharge(r->inst, w->id, 0, 1);
			w->held[0]--;
		} else if (r->s->charge(r->inst, w->id, 0, 1)) {
			w->held[0]++;
		} else {
			atomic_store_explicit(&w->fails, ++fails,
					      memory_order_relaxed);
		}
		worker_tick(w, ++ticks);
	}
}

static unsigned int tight_expand(const struct opts *o, struct config *cfg,
				 unsigned int room)
{
	static const unsigned int mult[] = { 1, 8 };
	unsigned int thr[8], nt, n = 0, i, j;
	struct config *c;

	nt = bench_thread_list(o, thr, 8, &o->nr_os_cpus, 1);
	for (j = 0; j < nt; j++) {
		for (i = 0; i < sizeof(mult) / sizeof(mult[0]); i++) {
			c = bench_config_add(cfg, &n, room, o, thr[j], 1, 2);
			if (!c)
				return n;
			/* The limit: mult x the stock bound. */
			c->tree.leaf_max = (unsigned long)mult[i] * thr[j] *
					   o->batch;
			c->arg[0] = (unsigned int)(c->tree.leaf_max / thr[j]);
			c->x = (double)c->tree.leaf_max;
			snprintf(c->label, sizeof(c->label),
				 "max=%lu T=%u", c->tree.leaf_max, thr[j]);
		}
	}
	return n;
}

static int tight_measure(const struct opts *o, const struct config *c,
			 const struct strategy *s, void *inst,
			 struct sample *out)
{
	int ret = measure_workers(o, c, s, inst, tight_body, NULL, false,
				  out);

	if (ret)
		return ret;
	out->aux[0] = out->ops ? 100.0 * (double)out->fails /
					 (double)out->ops : 0;
	out->value = per_thread_rate(c, out);
	return 0;
}

const struct workload wl_tight = {
	.name = "tight",
	.metric = "attempts/s/thread",
	.aux_name = { "spurious fail%" },
	.higher_better = true,
	.needs = STRAT_LIMITS,
	.expand = tight_expand,
	.measure = tight_measure,
};

const struct workload *const bench_workloads[] = {
	&wl_fault, &wl_fault_stock, &wl_tenants, &wl_sock, &wl_scale, &wl_depth,
	&wl_drain, &wl_tight, &wl_strand, &wl_nearmax,
};

unsigned int bench_nr_workloads(void)
{
	return sizeof(bench_workloads) / sizeof(bench_workloads[0]);
}
