// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lines.c - pcstock-bench --lines: how many contended cache lines one
 * operation of each stock design moves, and what that predicts for
 * machines we do not have (docs/lines-model.md states the model).
 *
 * This file is built only into pcstock-bench-lines, whose library is the
 * trace variant (PCSTOCK_TRACE): every atomic access the library makes
 * calls pcstock_trace_hook.  The workloads run in one OS thread that plays
 * N CPUs of a COOP domain (a CPU has one owner at a time, as a kernel CPU
 * runs one task: memcg7 takes the kernel's owner-only path), one library
 * call (sock: one pass of its loop) at a time.  The accesses go to a
 * directory model of a MESI-style protocol on N CPUs placed on an hwloc
 * synthetic topology, which counts line transfers (same package or cross
 * package), invalidations and transfers per line.  By default they are
 * applied one at a time in simulated time (sim_timed()); --interleave op
 * applies each call's at once, the CPUs in an order shuffled each round.
 *
 * Two costs are measured first, in the same run on this machine: the
 * local cost of an operation (the same stepped loop, untraced, on two
 * pinned threads with a tree each: no line leaves its core) and the cost
 * of one line transfer (two pinned threads adding to one shared counter,
 * against each adding to its own line, over the transfers counted per
 * shared add).  The prediction per CPU count is
 *	ops/s per CPU = min(1 / (local + transfers/op x transfer),
 *			    1 / (N x transfer x hottest-line transfers/op)).
 * Where N fits this machine the real workload is measured beside it.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <hwloc.h>

#include "atomic.h"
#include "bench.h"
#include "strategy.h"

#define LM_MAX_CPUS 1024U
#define LM_WORDS (LM_MAX_CPUS / 64)
#define LM_LINE 64U
#define LM_HOT 3		/* hottest lines reported per run */
#define LM_MAX_N 16		/* CPU counts per run */
/* The group strategies, one per registered design. */
#define LM_STRATS PCSTOCK_TREE_NR_POLICIES
#define LM_LOCAL_Q 64		/* steps per turn when timing local cost */
#define LM_CALIB_CPUS 2U	/* where local costs and measurements are */
#define LM_BOTH_RAN 0.95	/* measured: both threads ran this share */
#define LM_TICK 1e-12		/* time replay: a waiter asks again after */
#define LM_PLACE_TOL 1.5	/* measured: a line move within this factor */

/* ---- the directory ------------------------------------------------------ */

struct lm_line {
	uintptr_t tag;			/* address / LM_LINE; 0: free entry */
	int owner;			/* CPU holding it modified, -1: none */
	int first;			/* first CPU that touched it */
	unsigned long xfer;		/* transfers of this line */
	unsigned long xfer_remote;	/* of which cross-package */
	unsigned long acc;		/* accesses to it */
	double arrive;			/* hold: when it reached its owner */
	double free_at;			/* and may leave from then on */
	uint64_t sharers[LM_WORDS];	/* CPUs holding a copy */
};

struct lm_dir {
	struct lm_line *tab;
	size_t cap, used;
	unsigned int nr_cpus;
	int pkg[LM_MAX_CPUS];		/* package of each simulated CPU */
	unsigned long xfer, xfer_remote, inval, accesses;
};

static struct lm_line *dir_slot(struct lm_line *tab, size_t cap,
				uintptr_t tag)
{
	size_t i = (size_t)(tag * 0x9E3779B97F4A7C15ULL) & (cap - 1);

	while (tab[i].tag && tab[i].tag != tag)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int dir_grow(struct lm_dir *d)
{
	size_t cap = d->cap ? 2 * d->cap : 4096, i;
	struct lm_line *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < d->cap; i++)
		if (d->tab[i].tag)
			*dir_slot(tab, cap, d->tab[i].tag) = d->tab[i];
	free(d->tab);
	d->tab = tab;
	d->cap = cap;
	return 0;
}

static struct lm_line *dir_find(struct lm_dir *d, uintptr_t tag)
{
	struct lm_line *l;

	if (2 * (d->used + 1) > d->cap && dir_grow(d))
		abort();	/* the model cannot go on without its table */
	l = dir_slot(d->tab, d->cap, tag);
	if (!l->tag) {
		l->tag = tag;
		l->owner = -1;
		l->first = -1;
		d->used++;
	}
	return l;
}

/* Count a transfer; 1: same package, 2: cross package. */
static unsigned int dir_transfer(struct lm_dir *d, struct lm_line *l,
				 unsigned int to, unsigned int from)
{
	bool remote = d->pkg[to] != d->pkg[from];

	d->xfer++;
	d->xfer_remote += remote;
	l->xfer++;
	l->xfer_remote += remote;
	return 1 + remote;
}

/*
 * One access of @cpu to the line holding @addr.  A read of a line that
 * another CPU holds modified is a transfer (perf c2c's HITM) and leaves
 * both with a shared copy; a write (store or RMW, failed CAS included:
 * x86 takes the line exclusive either way) by a CPU holding no copy of a
 * line that others hold is a transfer, from the modified holder if any,
 * else from a sharer in the writer's package if any.  A write
 * invalidates every other copy; a write by a sharer (an upgrade) moves no
 * data and counts its invalidations only.  A line nobody holds comes from
 * memory: no transfer.  Return: 0, or, when the access waits for another
 * core (a transfer, or an upgrade's invalidations), 1 if every core it
 * waits for is in its package, else 2; *@lp: the line.
 */
static unsigned int dir_access(struct lm_dir *d, unsigned int cpu,
			       uintptr_t addr, bool write,
			       struct lm_line **lp)
{
	struct lm_line *l = dir_find(d, addr / LM_LINE);
	unsigned int w = cpu / 64, i;
	uint64_t bit = 1ULL << (cpu % 64), o;
	bool have = l->sharers[w] & bit;
	int src = l->owner, cand;
	unsigned int wait = 0;

	*lp = l;
	d->accesses++;
	l->acc++;
	if (l->first < 0)
		l->first = (int)cpu;
	if (!write) {
		if (have)
			return 0;
		l->sharers[w] |= bit;
		l->owner = -1;
		if (src < 0)
			return 0;
		return dir_transfer(d, l, cpu, (unsigned int)src);
	}
	if (l->owner == (int)cpu)
		return 0;
	for (i = 0; i < LM_WORDS; i++) {
		o = l->sharers[i] & ~(i == w ? bit : 0);
		d->inval += (unsigned long)__builtin_popcountll(o);
		for (; have && o && wait < 2; o &= o - 1) {
			cand = (int)(i * 64 + (unsigned)__builtin_ctzll(o));
			wait = d->pkg[cand] == d->pkg[cpu] ? 1 : 2;
		}
		for (; !have && o && (src < 0 || d->pkg[src] != d->pkg[cpu]);
		     o &= o - 1) {
			cand = (int)(i * 64 + (unsigned)__builtin_ctzll(o));
			if (src < 0 || d->pkg[cand] == d->pkg[cpu])
				src = cand;
		}
		l->sharers[i] = 0;
	}
	l->sharers[w] = bit;
	l->owner = (int)cpu;
	return src >= 0 ? dir_transfer(d, l, cpu, (unsigned int)src) : wait;
}

/* Keep every line's state, forget what was counted (after a warm-up). */
static void dir_zero(struct lm_dir *d)
{
	size_t i;

	for (i = 0; i < d->cap; i++) {
		d->tab[i].xfer = 0;
		d->tab[i].xfer_remote = 0;
		d->tab[i].acc = 0;
	}
	d->xfer = d->xfer_remote = d->inval = d->accesses = 0;
}

static void dir_clear(struct lm_dir *d)
{
	free(d->tab);
	d->tab = NULL;
	d->cap = d->used = 0;
	dir_zero(d);
}

/* The @n most transferred lines, most first. */
static unsigned int dir_hottest(const struct lm_dir *d, struct lm_line *out,
				unsigned int n)
{
	unsigned int k = 0, j;
	size_t i;

	for (i = 0; i < d->cap; i++) {
		if (!d->tab[i].tag || !d->tab[i].xfer)
			continue;
		for (j = k < n ? k++ : n; j > 0 &&
		     out[j - 1].xfer < d->tab[i].xfer; j--)
			if (j < n)
				out[j] = out[j - 1];
		if (j < n)
			out[j] = d->tab[i];
	}
	return k;
}

/* ---- the trace ---------------------------------------------------------- */

/* A simulated CPU's traced accesses not yet applied (time replay). */
struct lm_queue {
	uintptr_t *v;			/* address | 1 if a write */
	unsigned int nr, at, room;	/* queued, applied, allocated */
};

static struct lm_dir dir;
/* Thread-local: liburcu's call_rcu thread runs library code too. */
static _Thread_local int sim_cpu = -1;	/* CPU being played, -1: none */
static struct lm_queue *pending;	/* time replay: queue, not apply */

static void trace_access(enum pcs_atomic_op op, const void *obj)
{
	struct lm_queue *q;
	struct lm_line *l;
	uintptr_t *v;

	if (sim_cpu < 0 || !obj)
		return;
	if (!pending) {
		dir_access(&dir, (unsigned int)sim_cpu, (uintptr_t)obj,
			   op != PCS_OP_LOAD, &l);
		return;
	}
	q = &pending[sim_cpu];
	if (q->nr == q->room) {
		v = realloc(q->v, (q->room * 2 + 64) * sizeof(*v));
		if (!v)
			abort();	/* the replay cannot drop an access */
		q->v = v;
		q->room = q->room * 2 + 64;
	}
	/* Bits 0 and 1 do not change the line (LM_LINE > 3). */
	q->v[q->nr++] = ((uintptr_t)obj & ~(uintptr_t)3) |
			(op != PCS_OP_LOAD) | (op == PCS_OP_STORE) << 1;
}

#define SOCK_RING 256U

/* workload.c's ring, laid out alike: its lines are traced as well. */
struct sim_ring {
	_Alignas(BENCH_LINE) unsigned int head;	/* written by the sender */
	_Alignas(BENCH_LINE) unsigned int tail;	/* written by the receiver */
	_Alignas(BENCH_LINE) unsigned char pages[SOCK_RING];
};

/* ---- naming lines ------------------------------------------------------- */

struct lm_owner {
	const struct pcstock_counter *c;
	char label[24];
};

struct lm_owners {
	struct lm_owner *v;
	unsigned int nr, room;
	const struct sim_ring *ring;	/* sock's rings, or NULL */
};

static void owner_add(const struct pcstock_counter *c, const char *label,
		      void *arg)
{
	struct lm_owners *ow = arg;
	struct lm_owner *v;

	if (ow->nr == ow->room) {
		v = realloc(ow->v, (ow->room * 2 + 16) * sizeof(*v));
		if (!v)
			return;
		ow->v = v;
		ow->room = ow->room * 2 + 16;
	}
	ow->v[ow->nr].c = c;
	snprintf(ow->v[ow->nr].label, sizeof(ow->v[0].label), "%s", label);
	ow->nr++;
}

static bool in_line(const void *p, uintptr_t tag)
{
	return (uintptr_t)p / LM_LINE == tag;
}

/*
 * What line @tag holds: one of a counter's four lines (pcstock/counter.h
 * lays them out), or a stock slot or statistics of some CPU (the bench
 * peeks at the counter's arena handles for this name only), else the CPU
 * that touched it first.
 */
static void line_name(const struct lm_owners *ow, const struct lm_line *l,
		      unsigned int nr_cpus, char *buf, size_t len)
{
	static const char *const part[] = {
		"usage", "protection", "limits", "stock descriptor",
	};
	const struct pcstock_counter *c;
	uintptr_t base;
	unsigned int i, cpu;
	bool slot, stats;

	for (i = 0; i < ow->nr; i++) {
		c = ow->v[i].c;
		base = (uintptr_t)c / LM_LINE;
		if (l->tag >= base && l->tag < base + 4) {
			snprintf(buf, len, "%s %s", ow->v[i].label,
				 part[l->tag - base]);
			return;
		}
		/* A group's memory counter opens it (hierarchy.c). */
		if (l->tag >= base + 4 && l->tag < base + 12) {
			snprintf(buf, len, "%s group +%#x", ow->v[i].label,
				 (unsigned int)(l->tag - base) * LM_LINE);
			return;
		}
	}
	for (i = 0; i < ow->nr; i++) {
		c = ow->v[i].c;
		if (!c->stock_domain)
			continue;
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			slot = in_line(pcstock_percpu_ptr(c->stock_domain,
							  c->stock_slots, cpu),
				       l->tag);
			stats = in_line(pcstock_percpu_ptr(c->stock_domain,
							   c->stock_stats,
							   cpu),
					l->tag);
			if (!slot && !stats)
				continue;
			snprintf(buf, len, "stock %s of cpu %u (%s)",
				 slot && stats ? "slot+stats" :
				 slot ? "slot" : "stats", cpu, ow->v[i].label);
			return;
		}
	}
	snprintf(buf, len, "unnamed line first used by cpu %d", l->first);
	if (ow->ring && l->tag >= (uintptr_t)ow->ring / LM_LINE &&
	    l->tag < (uintptr_t)(ow->ring + nr_cpus) / LM_LINE)
		snprintf(buf, len, "sock ring of cpu %u",
			 (unsigned int)((l->tag * LM_LINE -
					 (uintptr_t)ow->ring) /
					sizeof(*ow->ring)));
}

/* ---- topology ----------------------------------------------------------- */

/*
 * The topology for @n CPUs: the user's, else two packages of n / 4 cores
 * of two threads each when n is a multiple of 4 and at least 16 (n = 224
 * is the LKP machine, package:2 core:56 pu:2), else one package of n
 * cores (this machine's shape at 2).
 */
static void topo_string(const char *user, unsigned int n, char *buf,
			size_t len)
{
	if (user)
		snprintf(buf, len, "%s", user);
	else if (n >= 16 && n % 4 == 0)
		snprintf(buf, len, "package:2 core:%u pu:2", n / 4);
	else
		snprintf(buf, len, "package:1 core:%u pu:1", n);
}

/* Simulated CPU i is PU P#i: its package's logical index, for each CPU. */
static int topo_place(const char *desc, unsigned int n, int *pkg)
{
	hwloc_topology_t t;
	hwloc_obj_t pu, p;
	unsigned int i;
	int ret = 0;

	if (hwloc_topology_init(&t))
		return -ENOMEM;
	if (hwloc_topology_set_synthetic(t, desc) || hwloc_topology_load(t)) {
		hwloc_topology_destroy(t);
		return -EINVAL;
	}
	for (i = 0; i < n && !ret; i++) {
		pu = hwloc_get_pu_obj_by_os_index(t, i);
		if (!pu) {
			ret = -ERANGE;
			break;
		}
		p = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu);
		pkg[i] = p ? (int)p->logical_index : 0;
	}
	hwloc_topology_destroy(t);
	return ret;
}

/* ---- the stepped workloads ---------------------------------------------- */

/* A series is one workload shape, at any CPU count. */
struct series {
	const char *name;
	const char *workload;		/* its name for --workload */
	const struct workload *wl;	/* the timed twin, NULL: none */
	bool sock;
	bool folio;			/* uncharge_batch() the burst */
	unsigned int leaves;		/* 0: one per CPU (sock: per pair) */
	unsigned int depth;
	unsigned int arg[3];
};

struct sim {
	const struct strategy *s;
	void *inst;
	const struct config *cfg;
	unsigned int n;
	unsigned int *pos;		/* pair: each CPU's leaf */
	unsigned int *phase;		/* pair: charges made in the burst */
	unsigned int *got;		/* pair: pages to give back */
	unsigned int *order;		/* this round's order of the CPUs */
	uint64_t order_rng;
	uint64_t *rng;
	struct sim_ring *ring;		/* sock: one per CPU (its sends) */
	long *held;			/* per leaf */
	unsigned long ops;
	unsigned long rx_passes, rx_msgs; /* sock: receiving passes */
	unsigned long sent;		/* sock: messages sent */
	bool folio;			/* the burst goes back in one batch */
	/* The time replay (sim_timed()). */
	struct lm_queue *q;		/* each CPU's pending accesses */
	double *clock;			/* each CPU's simulated seconds */
	unsigned int *heap;		/* the CPUs, earliest clock first */
	double *asked;			/* hold: waiting since, -1: not, -2: done */
	double *miss;			/* hold: its last transfer ends then */
	double *sb;			/* its buffered stores are done then */
	uintptr_t *miss_tag;		/* hold: of which line */
	double t_access;		/* local cost per access, seconds */
	double t_xfer;			/* cost of a same-package transfer */
	double remote_factor;		/* a cross-package one against it */
	double t_hold;			/* hold: a taken line stays this long */
	bool hold;			/* --pricing hold */
	/* Simulated seconds spent, all CPUs (time replay). */
	double spent_local, spent_xfer, spent_wait;
	unsigned long settle;		/* sock: passes before counting */
	bool settled;			/* sock: the rings settled in them */
};

/* Count from here on: forget the traffic, operations and time so far. */
static void sim_count_from_here(struct sim *m)
{
	dir_zero(&dir);
	m->ops = 0;
	m->rx_passes = m->rx_msgs = m->sent = 0;
	m->spent_local = m->spent_xfer = m->spent_wait = 0;
}

/*
 * One library call of pair_body()'s loop for @cpu (workload.c): the
 * burst's charges one per step, then the uncharges of what they got, one
 * per step, or all at once for fault (its folio uncharge_batch()).  One
 * operation per charge attempt, as the timed workload counts.
 */
static void pair_step(struct sim *m, unsigned int cpu)
{
	const struct config *c = m->cfg;
	unsigned int leaf = m->pos[cpu];

	if (m->phase[cpu] < c->arg[2]) {
		if (m->s->charge(m->inst, cpu, leaf, 1)) {
			m->got[cpu]++;
			m->held[leaf]++;
		}
		m->phase[cpu]++;
		m->ops++;
	} else if (m->got[cpu] && m->folio) {
		m->held[leaf] -= m->got[cpu];
		m->s->uncharge_batch(m->inst, cpu, leaf, m->got[cpu]);
		m->got[cpu] = 0;
	} else if (m->got[cpu]) {
		m->s->uncharge(m->inst, cpu, leaf, 1);
		m->got[cpu]--;
		m->held[leaf]--;
	}
	if (m->phase[cpu] < c->arg[2] || m->got[cpu])
		return;
	m->phase[cpu] = 0;
	if (c->arg[0] > 1)
		m->pos[cpu] = leaf + 1 == c->arg[0] ? 0 : leaf + 1;
}

/*
 * One pass of sock_body()'s loop for @cpu, rr: pairs (2p, 2p + 1).  The
 * ring accesses ring_pop() and ring_push() make are traced too: they are
 * the workload's own line traffic.  The operation is a message
 * delivered (received and uncharged), not one sent: the two rates agree
 * once the rings have settled, but a replay is short against a ring of
 * SOCK_RING messages, and where the receivers are the slower side (v4
 * at 224 CPUs: every uncharge walks to the root) the senders fill their
 * rings for the whole replay, so counting sends would count messages
 * whose uncharge, the expensive half, is never made.
 */
static bool sock_step(struct sim *m, unsigned int cpu)
{
	unsigned int pair = cpu / 2, i;
	struct sim_ring *tx = &m->ring[cpu], *rx = &m->ring[cpu ^ 1];
	unsigned long pages;
	int got;

	if (pair >= m->cfg->tree.nr_leaves)
		return false;
	for (i = 0; i < 8; i++) {
		trace_access(PCS_OP_LOAD, &rx->head);
		if (rx->tail == rx->head)
			break;
		m->rx_passes += !i;
		m->rx_msgs++;
		m->ops++;
		trace_access(PCS_OP_LOAD, &rx->pages[rx->tail % SOCK_RING]);
		got = rx->pages[rx->tail++ % SOCK_RING];
		trace_access(PCS_OP_STORE, &rx->tail);
		m->s->uncharge(m->inst, cpu, pair, (unsigned long)got);
		m->held[pair] -= got;
	}
	trace_access(PCS_OP_LOAD, &tx->tail);
	if (tx->head - tx->tail == SOCK_RING)
		return i > 0;
	pages = 1 + rng_next(&m->rng[cpu]) % 4;
	if (m->s->charge(m->inst, cpu, pair, pages)) {
		m->held[pair] += (long)pages;
		trace_access(PCS_OP_STORE, &tx->pages[tx->head % SOCK_RING]);
		tx->pages[tx->head++ % SOCK_RING] = (unsigned char)pages;
		trace_access(PCS_OP_STORE, &tx->head);
		m->sent++;
		return true;
	}
	return i > 0;
}

/* One step of @cpu; false: an idle pass of sock (nothing in, no room). */
static bool sim_step(struct sim *m, bool sock, unsigned int cpu)
{
	if (sock)
		return sock_step(m, cpu);
	pair_step(m, cpu);
	return true;
}

static int sim_init(struct sim *m, const struct strategy *s, void *inst,
		    const struct config *cfg, uint64_t seed)
{
	unsigned int i, n = cfg->threads;

	memset(m, 0, sizeof(*m));
	m->s = s;
	m->inst = inst;
	m->cfg = cfg;
	m->n = n;
	m->pos = calloc(n, sizeof(*m->pos));
	m->phase = calloc(n, sizeof(*m->phase));
	m->got = calloc(n, sizeof(*m->got));
	m->order = calloc(n, sizeof(*m->order));
	m->order_rng = seed * 0xD1B54A32D192ED03ULL + n;
	m->rng = calloc(n, sizeof(*m->rng));
	m->ring = zalloc_lines(n * sizeof(*m->ring));
	m->held = calloc(cfg->tree.nr_leaves, sizeof(*m->held));
	m->q = calloc(n, sizeof(*m->q));
	m->clock = calloc(n, sizeof(*m->clock));
	m->heap = calloc(n, sizeof(*m->heap));
	m->asked = calloc(n, sizeof(*m->asked));
	m->miss = calloc(n, sizeof(*m->miss));
	m->sb = calloc(n, sizeof(*m->sb));
	m->miss_tag = calloc(n, sizeof(*m->miss_tag));
	if (!m->pos || !m->phase || !m->got || !m->order || !m->rng ||
	    !m->ring || !m->held || !m->q || !m->clock || !m->heap ||
	    !m->asked || !m->miss || !m->sb ||
	    !m->miss_tag)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->order[i] = i;
		m->pos[i] = cfg->arg[1] ? i : i * cfg->arg[0] / n;
		m->rng[i] = seed * 0x9E3779B97F4A7C15ULL + i + 1;
	}
	return 0;
}

/* Give back what the messages in flight hold, drain, check conservation. */
static int sim_fini(struct sim *m)
{
	char why[160];
	unsigned int i;
	int ret = 0;

	if (m->held && release_and_check(m->s, m->inst, &m->cfg->tree,
					 m->held, why, sizeof(why))) {
		fprintf(stderr, "\nlines: conservation violated: %s %s: %s\n",
			m->cfg->label, m->s->name, why);
		ret = -EIO;
	}
	free(m->pos);
	free(m->phase);
	free(m->got);
	free(m->order);
	free(m->rng);
	free(m->ring);
	free(m->held);
	for (i = 0; m->q && i < m->n; i++)
		free(m->q[i].v);
	free(m->q);
	free(m->clock);
	free(m->heap);
	free(m->asked);
	free(m->miss);
	free(m->sb);
	free(m->miss_tag);
	return ret;
}

/*
 * @rounds rounds, each giving every CPU @q consecutive steps, the CPUs in
 * an order shuffled afresh each round from a seeded generator: so that a
 * contended line comes from a CPU picked at random (as under real
 * contention) rather than from the previous CPU by number, which a fixed
 * round-robin would make a same-package neighbour almost always.  @trace:
 * feed the accesses to the directory.
 */
static int sim_rounds(struct sim *m, bool sock, unsigned long rounds,
		      unsigned int q, bool trace)
{
	unsigned int cpu, k, i, j, t;
	unsigned long r;
	int ret;

	for (r = 0; r < rounds; r++) {
		for (i = m->n; i > 1; i--) {
			j = (unsigned int)(rng_next(&m->order_rng) % i);
			t = m->order[i - 1];
			m->order[i - 1] = m->order[j];
			m->order[j] = t;
		}
		for (i = 0; i < m->n; i++) {
			cpu = m->order[i];
			ret = m->s->enter(m->inst, cpu);
			if (ret)
				return ret;
			/* Entering and leaving are the bench's: untraced. */
			sim_cpu = trace ? (int)cpu : -1;
			for (k = 0; k < q; k++)
				sim_step(m, sock, cpu);
			sim_cpu = -1;
			m->s->exit(m->inst);
		}
	}
	return 0;
}

/*
 * Does @a come before @b: the earlier clock; on a tie the one waiting for
 * a held line the longest (so that waiters are served in order), then
 * the lower number.
 */
static bool heap_before(const struct sim *m, unsigned int a, unsigned int b)
{
	double ka = m->asked[a] >= 0 ? m->asked[a] : m->clock[a];
	double kb = m->asked[b] >= 0 ? m->asked[b] : m->clock[b];

	if (m->clock[a] != m->clock[b])
		return m->clock[a] < m->clock[b];
	return ka < kb || (ka == kb && a < b);
}

/* Sift heap entry @i of @nr down to its place. */
static void heap_down(struct sim *m, unsigned int i, unsigned int nr)
{
	unsigned int c, t;

	while ((c = 2 * i + 1) < nr) {
		if (c + 1 < nr && heap_before(m, m->heap[c + 1], m->heap[c]))
			c++;
		if (!heap_before(m, m->heap[c], m->heap[i]))
			break;
		t = m->heap[i];
		m->heap[i] = m->heap[c];
		m->heap[c] = t;
		i = c;
	}
}

/*
 * Would @cpu's access (@write: store or RMW) to @l wait for another core:
 * a transfer, or an upgrade's invalidations?  dir_access()'s rule, without
 * applying it.
 */
static bool dir_waits(const struct lm_line *l, unsigned int cpu, bool write)
{
	unsigned int w = cpu / 64, i;
	uint64_t bit = 1ULL << (cpu % 64);

	if (!write)
		return !(l->sharers[w] & bit) && l->owner >= 0;
	if (l->owner == (int)cpu)
		return false;
	for (i = 0; i < LM_WORDS; i++)
		if (l->sharers[i] & ~(i == w ? bit : 0))
			return true;
	return false;
}

/*
 * Is @h, which holds @l, still working on at @t (--pricing hold)?  Not
 * while it waits for a line (or has nothing left to do), nor while
 * another line is in flight to it: a core lets go of a line it holds
 * as soon as it stalls.
 */
static bool hold_working(const struct sim *m, int h, const struct lm_line *l,
			 double t)
{
	return m->asked[h] == -1 &&
	       !(m->miss[h] > t && m->miss_tag[h] != l->tag);
}

/*
 * When can @cpu's transaction on @l start (--pricing hold)?  Its clock,
 * unless the line is busy: in flight to the CPU that asked for it before
 * (it leaves only once it has arrived), or held by a core that took it
 * with a locked op, which keeps it for m->t_hold after it arrived while it
 * works on (it lets go at once when it stalls).  Then the line's
 * free_at, or, while the holder may stall first, just after the
 * holder's next access, when the CPU asks again.  Requests are served in
 * the order they were made (heap_before()), and the line changes hands
 * when its transfer starts: what the holder does after that misses.
 */
static double line_start(const struct sim *m, const struct lm_line *l,
			 unsigned int cpu)
{
	double t = m->clock[cpu];
	int h = l->owner;

	if (l->free_at <= t)
		return t;
	if (h < 0)
		return l->free_at;	/* in flight to a reader: not held */
	if (t >= l->arrive && !hold_working(m, h, l, t))
		return t;
	return fmin(l->free_at, fmax(l->arrive, m->clock[h] + LM_TICK));
}

/*
 * Apply @cpu's access @a (address, | 1 if a write, | 2 if a plain store)
 * at its clock.  With --pricing hold the access first waits until the
 * line can move (line_start(): the access stays pending, return false);
 * a locked op waits for the CPU's buffered stores, and a plain store
 * does not stop the CPU (x86's store buffer: the line's latency is paid
 * by the next locked op, if any is still waiting for it).  Otherwise the
 * clock advances by the local cost per access, plus the transfer cost if
 * it waited for another core (a cross-package one times the remote
 * factor).  Return: true once applied.
 */
static bool timed_apply(struct sim *m, unsigned int cpu, uintptr_t a)
{
	uintptr_t addr = a & ~(uintptr_t)3;
	struct lm_line *l = dir_find(&dir, addr / LM_LINE);
	bool store = a & 2, locked = (a & 1) && !store;
	int prev = l->owner;
	unsigned int moved;
	double cost, go;

	if (m->hold && dir_waits(l, cpu, a & 1)) {
		go = line_start(m, l, cpu);
		if (go > m->clock[cpu]) {
			if (m->asked[cpu] < 0)
				m->asked[cpu] = m->clock[cpu];
			m->spent_wait += go - m->clock[cpu];
			m->clock[cpu] = go;
			return false;
		}
	}
	m->asked[cpu] = -1;
	/* A locked op waits for the stores before it (x86). */
	if (m->hold && locked && m->sb[cpu] > m->clock[cpu]) {
		m->spent_xfer += m->sb[cpu] - m->clock[cpu];
		m->clock[cpu] = m->sb[cpu];
	}
	moved = dir_access(&dir, cpu, addr, a & 1, &l);
	cost = moved ? m->t_xfer * (moved == 2 ? m->remote_factor : 1) : 0;
	if (m->hold && moved) {
		/*
		 * A locked op keeps the line while it runs; taken from a
		 * modified copy, for the hold after that.  A hold ends when
		 * the access at that point would be half done, so the
		 * accesses that fit in it round to the nearest.
		 */
		l->arrive = m->clock[cpu] + cost;
		l->free_at = l->arrive +
			     (locked ? m->t_access / 2 : 0) +
			     (locked && prev >= 0 && prev != (int)cpu ?
			      m->t_hold : 0);
	}
	if (m->hold && store) {
		/* Buffered: the core goes on while the line comes. */
		m->sb[cpu] = fmax(m->sb[cpu], m->clock[cpu] + cost);
		cost = 0;
	} else if (moved) {
		m->miss[cpu] = m->clock[cpu] + cost;
		m->miss_tag[cpu] = l->tag;
	}
	m->clock[cpu] += m->t_access + cost;
	m->spent_local += m->t_access;
	m->spent_xfer += cost;
	return true;
}

/* Every CPU's clock at a seeded random point within one access. */
static void clocks_start(struct sim *m)
{
	unsigned int i;

	for (i = 0; i < m->n; i++) {
		m->heap[i] = i;
		m->asked[i] = -1;
		m->clock[i] = m->t_access * 0x1p-53 *
			      (double)(rng_next(&m->order_rng) >> 11);
	}
	for (i = m->n / 2; i-- > 0;)
		heap_down(m, i, m->n);
}

/*
 * The time-ordered replay: @steps library calls (sock: passes of its
 * loop) in all, then every access still pending.  Each simulated CPU has
 * a clock, started at a seeded random point within one access's local
 * cost (so that no CPU number order is built in).  The CPU with the
 * earliest clock goes next: if none of its accesses is pending it makes
 * its next step, which runs whole (the library's semantics are untouched)
 * but whose traced accesses only queue up; then its oldest pending access
 * goes to timed_apply(): an upgrade waits for the other copies'
 * invalidations, the same round trip as a transfer.  With --pricing move
 * a line in flight is not held busy and a taken line leaves at the next
 * request: the formula's hottest-line bound serialises
 * (docs/lines-model.md says why); with --pricing hold the holds do.
 * A sock pass that finds nothing to receive and no room to send is idle:
 * only its partner can change that, so the CPU waits for the partner's
 * clock, and the pass does not count against @steps (spinning senders
 * would otherwise use the replay up while few messages arrive).  sock
 * counts nothing until its rings have settled (where the receivers are
 * the slower side, the senders fill their rings first), for at most
 * @steps passes.
 */
static int sim_timed(struct sim *m, bool sock, unsigned long steps)
{
	unsigned int nr = m->n, cpu;
	unsigned long idle = 64 * steps;
	unsigned long chunk = 32UL * m->n, left = chunk, cap = steps;
	unsigned long sent = m->sent, got = m->ops;
	bool settling = sock;
	struct lm_queue *q;
	unsigned int p;
	bool busy;
	int ret = 0;

	clocks_start(m);
	pending = m->q;
	while (nr && !ret) {
		if (settling && !left) {
			/*
			 * sock: settled once 32 passes per CPU that moved
			 * a message sent at most 10 % more than they
			 * delivered (give or take one per 8 CPUs): the
			 * rings no longer fill.  Count from there, and
			 * from @steps passes on in any case.
			 */
			m->settled = (m->sent - sent) * 10 <=
				     (m->ops - got) * 11 + m->n * 10 / 8;
			if (m->settled || m->settle >= cap) {
				settling = false;
				sim_count_from_here(m);
			}
			sent = m->sent;
			got = m->ops;
			left = chunk;
		}
		cpu = m->heap[0];
		q = &m->q[cpu];
		if (q->at == q->nr && steps) {
			q->at = q->nr = 0;
			ret = m->s->enter(m->inst, cpu);
			if (ret)
				break;
			sim_cpu = (int)cpu;
			busy = sim_step(m, sock, cpu);
			sim_cpu = -1;
			m->s->exit(m->inst);
			p = cpu ^ 1;
			if (busy && settling) {
				m->settle++;
				left--;
			} else if (busy) {
				steps--;
			} else if (!--idle) {
				steps = 0;	/* nobody can go on */
			} else if (p < m->n && m->clock[p] > m->clock[cpu]) {
				/*
				 * sock: nothing to receive and no room to
				 * send.  Only the partner can change that,
				 * not before its clock: wait for it there.
				 */
				m->spent_wait += m->clock[p] - m->clock[cpu];
				m->clock[cpu] = m->clock[p];
			}
		}
		if (q->at < q->nr) {
			q->at += timed_apply(m, cpu, q->v[q->at]);
		} else if (steps) {
			/* A step with no shared access still takes time. */
			m->clock[cpu] += m->t_access;
			m->spent_local += m->t_access;
		} else {
			/* Done: out of the heap, its clock final. */
			m->asked[cpu] = -2;	/* holds nothing any more */
			m->heap[0] = m->heap[--nr];
		}
		heap_down(m, 0, nr);
	}
	pending = NULL;
	return ret;
}

/*
 * cfg->arg as in workload.c.  sock: n / 2 request/response pairs, a leaf
 * each; scale: every CPU on one leaf, or each on its own; tenants at the
 * 7-slot cliff: every CPU round-robin over 8 groups; fault: the cover
 * letter's calls (512 single-page charges, one per fault, then one folio
 * uncharge of them all) with a group per CPU.  The timed fault runs its
 * tasks on one CPU with real faults: nothing to measure beside the model.
 */
static const struct series all_series[] = {
	{ "sock", "sock", &wl_sock, true, false, 0, 3, { 1 } },
	{ "scale-shared", "scale", &wl_scale, false, false, 1, 2, { 1, 0, 1 } },
	{ "scale-own", "scale", &wl_scale, false, false, 0, 2, { 1, 1, 1 } },
	{ "tenants", "tenants", &wl_tenants, false, false, 8, 2, { 8, 0, 1 } },
	{ "fault", "fault", NULL, false, true, 0, 2, { 1, 1, 512 } },
};
#define NR_SERIES (sizeof(all_series) / sizeof(all_series[0]))

static void config_for(const struct opts *o, const struct series *se,
		       unsigned int n, enum pcstock_cpu_mode mode,
		       struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->wl = se->wl;
	c->tree.batch = o->batch;
	c->tree.mode = mode;
	c->threads = n;
	c->tree.nr_cpus = n;
	c->tree.nr_leaves = se->leaves ? se->leaves : se->sock ? n / 2 : n;
	c->tree.depth = se->depth;
	memcpy(c->arg, se->arg, sizeof(se->arg));
	snprintf(c->label, sizeof(c->label), "%s N=%u", se->name, n);
}

/* ---- calibration -------------------------------------------------------- */

/*
 * The transfer cost: two pinned threads add to one shared counter, against
 * each adding to its own line; the difference per add, divided by the
 * transfers per shared add, is the time a CPU loses per transfer.  Not
 * every shared add transfers: a core that has the line exclusive often
 * adds again before the other core's request takes it away (here about a
 * third of the adds transfer).  An add whose old value is not what the
 * thread's own previous add left had the other core add in between, so
 * the line came back to this core: one transfer.  The machine is shared:
 * a thread can be descheduled at any time, letting the other add
 * uncontended, and neighbours change the clock and the caches.  So both
 * threads alternate between the two kinds of adds in short chunks, in step
 * (the kind is chosen by the clock, 50 us per kind), a chunk counts only if
 * the other thread made progress meanwhile, and the cost is the difference
 * of the median chunks of each kind over the transfers per add of the
 * shared chunks kept.
 */
#define PP_CHUNK 200U
#define PP_CHUNKS 8000U
#define PP_PERIOD 50e-6
#define PP_NEAR_CHUNKS 1000U	/* the short reading beside each sample */

struct pp {
	_Alignas(BENCH_LINE) atomic_long ctr;
	_Alignas(BENCH_LINE) atomic_long own[2][BENCH_LINE / sizeof(long)];
	_Alignas(BENCH_LINE) atomic_uint done[2][BENCH_LINE / sizeof(int)];
	atomic_int ready;
	int os_cpu[2];
	unsigned int chunks;		/* per thread, at most PP_CHUNKS */
	double t0;
	double chunk[2][2 * PP_CHUNKS];	/* [shared] seconds per chunk */
	unsigned int nr[2][2];		/* [thread][shared] chunks kept */
	unsigned long moved[2];		/* transfers in shared chunks kept */
};

struct pp_arg {
	struct pp *p;
	unsigned int i;
};

static void *pp_thread(void *arg)
{
	struct pp_arg *a = arg;
	struct pp *p = a->p;
	atomic_uint *other = &p->done[!a->i][0];
	unsigned int c, k, seen, kind, at;
	unsigned long moved;
	long old, next = -1;
	atomic_long *v;
	double t0;

	bind_self(p->os_cpu[a->i]);
	atomic_fetch_add(&p->ready, 1);
	while (atomic_load(&p->ready) < 2)
		cpu_relax();
	for (c = 0; c < p->chunks; c++) {
		seen = atomic_load_explicit(other, memory_order_relaxed);
		t0 = now_s();
		kind = (unsigned int)((t0 - p->t0) / PP_PERIOD) % 2;
		v = kind ? &p->ctr : &p->own[a->i][0];
		/*
		 * The chunk's first add follows the other kind's chunk:
		 * whether the line moved for it is unknown, so it is not
		 * counted (on a core that keeps the line for 17 adds, one
		 * more per chunk of 200 would be 9 % too many).
		 */
		for (k = 0, moved = 0; k < PP_CHUNK; k++) {
			old = atomic_fetch_add_explicit(v, 1,
							memory_order_relaxed);
			moved += k && old != next;
			next = old + 1;
		}
		if (atomic_load_explicit(other, memory_order_relaxed) != seen) {
			/* Each thread its own half of the kind's array. */
			at = a->i * PP_CHUNKS + p->nr[a->i][kind]++;
			p->chunk[kind][at] = now_s() - t0;
			p->moved[a->i] += kind ? moved : 0;
		}
		atomic_store_explicit(&p->done[a->i][0], c + 1,
				      memory_order_relaxed);
	}
	return NULL;
}

static double median(double *v, unsigned int n);

/*
 * One ping-pong trial of @chunks chunks per thread: the median chunks of
 * shared adds and private adds, seconds per add (*@shared, *@priv), and
 * the transfers per shared add counted in the shared chunks kept
 * (*@per_add).  Return: 0, -ENOMEM, -EAGAIN if no chunk of a kind was
 * kept.
 */
static int pp_trial(const struct opts *o, unsigned int chunks,
		    double *shared, double *priv, double *per_add)
{
	struct pp *p = zalloc_lines(sizeof(*p));
	struct pp_arg a[2];
	pthread_t tid[2];
	double t[2];
	unsigned int i, k, n0, n1;

	if (!p)
		return -ENOMEM;
	p->t0 = now_s();
	p->chunks = chunks;
	for (i = 0; i < 2; i++) {
		p->os_cpu[i] = o->os_cpus[i];
		a[i] = (struct pp_arg){ p, i };
		if (pthread_create(&tid[i], NULL, pp_thread, &a[i])) {
			free(p);
			return -ENOMEM;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	for (k = 0; k < 2; k++) {
		n0 = p->nr[0][k];
		n1 = p->nr[1][k];
		memmove(&p->chunk[k][n0], &p->chunk[k][PP_CHUNKS],
			n1 * sizeof(double));
		t[k] = median(p->chunk[k], n0 + n1) / PP_CHUNK;
	}
	*priv = t[0];
	*shared = t[1];
	*per_add = (double)(p->moved[0] + p->moved[1]) /
		   ((double)(p->nr[0][1] + p->nr[1][1]) * (PP_CHUNK - 1));
	i = p->nr[0][0] + p->nr[1][0] && p->nr[0][1] + p->nr[1][1];
	free(p);
	return i ? 0 : -EAGAIN;
}

/*
 * The other ping-pong reading: strict alternation.  Each thread spins
 * reading the counter until its parity says it is its turn, then adds
 * one: every move of the line is one read that finds the other core's
 * add (a transfer) and one add that must invalidate the other core's copy
 * (an upgrade, the same round trip), and no core can keep the line for a
 * run.  Chunks of PP_TURNS turns; the lower quartile of thread 0's chunks
 * (a neighbour that deschedules a thread only slows a chunk), seconds
 * per move.
 */
#define PP_TURNS 50U
#define PP_ALT_CHUNKS 4000U

struct pp_alt {
	_Alignas(BENCH_LINE) atomic_long ctr;
	atomic_int ready;
	int os_cpu[2];
	double chunk[PP_ALT_CHUNKS];
};

struct pp_alt_arg {
	struct pp_alt *p;
	long i;
};

static void *pp_alt_thread(void *arg)
{
	struct pp_alt_arg *a = arg;
	struct pp_alt *p = a->p;
	unsigned int c, k;
	double t0;

	bind_self(p->os_cpu[a->i]);
	atomic_fetch_add(&p->ready, 1);
	while (atomic_load(&p->ready) < 2)
		cpu_relax();
	for (c = 0; c < PP_ALT_CHUNKS; c++) {
		t0 = now_s();
		for (k = 0; k < PP_TURNS; k++) {
			while ((atomic_load_explicit(&p->ctr,
						     memory_order_relaxed) & 1)
			       != a->i)
				cpu_relax();
			atomic_fetch_add_explicit(&p->ctr, 1,
						  memory_order_relaxed);
		}
		if (!a->i)
			p->chunk[c] = (now_s() - t0) / (2 * PP_TURNS);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b);

static double pp_alternate(const struct opts *o)
{
	struct pp_alt *p = zalloc_lines(sizeof(*p));
	struct pp_alt_arg a[2];
	pthread_t tid[2];
	double t;
	unsigned int i;

	if (!p)
		return NAN;
	for (i = 0; i < 2; i++) {
		p->os_cpu[i] = o->os_cpus[i];
		a[i] = (struct pp_alt_arg){ p, i };
		if (pthread_create(&tid[i], NULL, pp_alt_thread, &a[i])) {
			free(p);
			return NAN;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	qsort(p->chunk, PP_ALT_CHUNKS, sizeof(double), cmp_double);
	t = p->chunk[PP_ALT_CHUNKS / 4];
	free(p);
	return t;
}

/*
 * The transfer calibration, measured here (pp_trial()) or taken from
 * another run's lines.jsonl (--lines-calib), e.g. another CPU's.
 */
struct lm_calib {
	double shared_s, private_s;	/* seconds per add: shared, own line */
	double per_add;			/* transfers per shared add */
	double loss_s;			/* what a requester loses per transfer */
	double move_s;			/* the line's time per move */
	double run;			/* adds a core makes per visit */
	double hold_s;			/* how long it keeps the line */
	double latency_s;		/* one transfer's own time */
	double alternate_s;		/* strict alternation, per move */
	double alt_latency_s;		/* its latency: half a move */
	double alt_run;			/* the run it implies */
	double model_per_add;		/* the hold replay of the same loop */
	double model_shared_s;
	char cpu[128];			/* the CPU it was taken on */
	char from[160];			/* "measured" or the file */
};

/*
 * What the three readings say, on a core that keeps the line it took for
 * a while.  The two threads add at once and the line visits each in turn:
 * a visit is one add that waits for the line (a transfer) and run - 1
 * adds that hit, run = 1 / per_add.  So the line moves once per
 *	move = shared / (2 x per_add) = latency + run x private
 * seconds (the hits take the private time each), and a core holds it for
 *	hold = (run - 1) x private
 * after it arrived, before the other core's request takes it.  A
 * requester's loss, the earlier price, is (shared - private) / per_add =
 * 2 x latency + hold + private: its own transfer and the other core's
 * whole visit.  On a core that lets the line go at once (run near 1)
 * loss is about twice the move; on one that keeps it for 17 adds it is
 * mostly the other's hold.
 */
static void calib_derive(struct lm_calib *c)
{
	c->loss_s = (c->shared_s - c->private_s) / c->per_add;
	c->move_s = c->shared_s / (2 * c->per_add);
	c->run = 1 / c->per_add;
	c->hold_s = (c->run - 1) * c->private_s;
	c->latency_s = fmax(0, c->move_s - c->run * c->private_s);
	/*
	 * The other reading: strict alternation moves the line in two
	 * latencies (a read and an upgrade, no run), so it gives the
	 * latency directly, and the free-running move then gives the run:
	 * the two readings agree when alt_run is run.
	 */
	c->alt_latency_s = c->alternate_s / 2;
	c->alt_run = (c->move_s - c->alt_latency_s) / c->private_s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned int n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The least disturbed of @n samples (the smallest time or the largest
 * rate): the machine is shared, and a neighbour only ever slows a run.
 */
static double best(double *v, unsigned int n, bool rate)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return rate ? v[n - 1] : v[0];
}

/* ---- one run of the model ----------------------------------------------- */

struct lm_result {
	unsigned int n;
	unsigned long ops;
	double xfer, xfer_remote, inval;	/* per op */
	double hot_per_op, hot_share;
	char hot[LM_HOT][72];
	double hot_shares[LM_HOT];
	double hot_acc[LM_HOT];		/* accesses per op */
	unsigned int nr_hot;
	double local_s, pred, cap, measured;
	double measured_any;		/* any placement (as before) */
	unsigned int nr_ran, nr_placed;	/* samples: ran, and placed */
	double near_move[2];		/* the measured sample's readings */
	/* Time replay: simulated seconds per op, local, transfers, waits. */
	double t_local, t_xfer, t_wait;
	double rx_batch;		/* sock: messages per receiving pass */
	double sent_per_op;		/* sock: sent per delivered */
	double settle;			/* sock: passes per CPU not counted */
	bool settled;			/* sock: and the rings settled */
	bool done;
};

/* Steps measured per run: about this many library calls. */
static unsigned long rounds_for(const struct opts *o, const struct config *c,
				const struct series *se)
{
	unsigned long per_round = (unsigned long)c->threads *
				  (se->sock ? 2 : 1);
	unsigned long budget = o->quick ? 20000 : 300000;
	unsigned long least = se->sock ? 8 : 4UL * c->arg[2];

	return budget / per_round > least ? budget / per_round : least;
}

/*
 * Replay @se on @n CPUs of @topo; r->local_s is the local cost per
 * operation, @t_xfer the transfer cost (both calibrated already), @t_hold
 * how long a core keeps a line it took (NAN: --pricing move).  The
 * warm-up interleaves whole steps whatever --interleave says: it fills the
 * stocks, places the lines and gives the accesses per operation that the
 * time replay spreads the local cost over.
 */
static int model_run(const struct opts *o, const struct series *se,
		     const struct strategy *s, unsigned int n,
		     const char *topo, double t_xfer, double t_hold,
		     struct lm_result *r)
{
	struct lm_line hot[LM_HOT];
	struct lm_owners ow = { 0 };
	struct config c;
	struct sim m;
	unsigned long rounds;
	unsigned int i;
	void *inst;
	int ret;

	config_for(o, se, n, PCSTOCK_CPU_COOP, &c);
	dir_clear(&dir);
	dir.nr_cpus = n;
	ret = topo_place(topo, n, dir.pkg);
	if (ret) {
		fprintf(stderr, "lines: topology '%s' cannot place %u CPUs\n",
			topo, n);
		return ret;
	}
	ret = s->create(&c.tree, &inst);
	if (ret)
		return ret;
	if (s->counters)
		s->counters(inst, owner_add, &ow);
	rounds = rounds_for(o, &c, se);
	ret = sim_init(&m, s, inst, &c, o->seed);
	m.folio = se->folio && s->uncharge_batch;
	ow.ring = se->sock ? m.ring : NULL;
	pcstock_trace_hook = trace_access;
	if (!ret)
		ret = sim_rounds(&m, se->sock, rounds / 4 + 1, 1, true);
	if (m.ops && dir.accesses && isfinite(r->local_s))
		m.t_access = r->local_s * (double)m.ops /
			     (double)dir.accesses;
	m.t_xfer = t_xfer;
	m.hold = isfinite(t_hold);
	m.t_hold = m.hold ? t_hold : 0;
	m.remote_factor = o->remote_factor;
	sim_count_from_here(&m);
	if (!ret && o->interleave_op)
		ret = sim_rounds(&m, se->sock, rounds, 1, true);
	else if (!ret)
		ret = sim_timed(&m, se->sock, rounds * n);
	pcstock_trace_hook = NULL;
	r->n = n;
	r->ops = m.ops;
	if (!ret && m.ops) {
		r->xfer = (double)dir.xfer / (double)m.ops;
		r->xfer_remote = (double)dir.xfer_remote / (double)m.ops;
		r->inval = (double)dir.inval / (double)m.ops;
		r->nr_hot = dir_hottest(&dir, hot, LM_HOT);
		for (i = 0; i < r->nr_hot; i++) {
			line_name(&ow, &hot[i], n, r->hot[i],
				  sizeof(r->hot[i]));
			r->hot_shares[i] = (double)hot[i].xfer /
					   (double)dir.xfer;
			r->hot_acc[i] = (double)hot[i].acc / (double)m.ops;
		}
		r->hot_per_op = r->nr_hot ? (double)hot[0].xfer /
					    (double)m.ops : 0;
		r->hot_share = r->nr_hot ? r->hot_shares[0] : 0;
		r->t_local = m.spent_local / (double)m.ops;
		r->t_xfer = m.spent_xfer / (double)m.ops;
		r->t_wait = m.spent_wait / (double)m.ops;
		r->rx_batch = m.rx_passes ? (double)m.rx_msgs /
					    (double)m.rx_passes : (double)NAN;
		r->settle = se->sock && !o->interleave_op ?
			    (double)m.settle / n : (double)NAN;
		r->settled = m.settled;
		r->sent_per_op = se->sock ? (double)m.sent / (double)m.ops :
					    (double)NAN;
		r->done = true;
	}
	i = sim_fini(&m) ? 1 : 0;
	s->destroy(inst);
	free(ow.v);
	return ret ? ret : i ? -EIO : 0;
}

/* Seconds per operation of the stepped loop on one OS thread, untraced. */
static double local_time(const struct opts *o, const struct series *se,
			 const struct strategy *s, void *inst,
			 const struct config *c)
{
	struct sim m;
	double t0, t = 0;
	unsigned long ops;
	int ret = sim_init(&m, s, inst, c, o->seed);

	m.folio = se->folio && s->uncharge_batch;
	if (ret || sim_rounds(&m, se->sock, 4, LM_LOCAL_Q, false)) {
		sim_fini(&m);
		return NAN;
	}
	m.ops = 0;
	t0 = now_s();
	do {
		if (sim_rounds(&m, se->sock, 4, LM_LOCAL_Q, false))
			break;
		t = now_s() - t0;
	} while (t < o->duration);
	ops = m.ops;
	if (sim_fini(&m))
		return NAN;
	return ops ? t / (double)ops : (double)NAN;
}

struct lt_arg {
	const struct opts *o;
	const struct series *se;
	const struct strategy *s;
	const struct config *c;
	atomic_uint *ready;
	int os_cpu;
	double secs;
};

static void *lt_thread(void *arg)
{
	struct lt_arg *a = arg;
	void *inst = NULL;

	a->secs = NAN;
	if (bind_self(a->os_cpu) || a->s->create(&a->c->tree, &inst))
		inst = NULL;
	atomic_fetch_add(a->ready, 1);
	while (atomic_load(a->ready) < 2)
		sched_yield();
	if (!inst)
		return NULL;
	a->secs = local_time(a->o, a->se, a->s, inst, a->c);
	a->s->destroy(inst);
	return NULL;
}

/*
 * The local cost: the stepped loop, untraced, LM_LOCAL_Q steps per CPU
 * per turn (so that a line stays on its core), on two pinned threads at
 * once, each on a tree of its own.  Nothing is shared between them, but
 * they run under the same conditions as the measured run beside them
 * (both cores busy, the same neighbours).  Mean of the two.
 */
static double local_cost(const struct opts *o, const struct series *se,
			 const struct strategy *s, const struct config *c)
{
	atomic_uint ready = 0;
	struct lt_arg a[2];
	pthread_t tid[2];
	unsigned int i, started = 0;

	for (i = 0; i < 2; i++) {
		a[i] = (struct lt_arg){ .o = o, .se = se, .s = s, .c = c,
					.ready = &ready,
					.os_cpu = o->os_cpus[i] };
		if (pthread_create(&tid[i], NULL, lt_thread, &a[i]))
			break;
		started++;
	}
	if (started < 2)
		atomic_fetch_add(&ready, 2);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	return started < 2 ? (double)NAN : (a[0].secs + a[1].secs) / 2;
}

/* ---- the run ------------------------------------------------------------ */

/* A short ping-pong reading beside a measured sample. */
struct lm_near {
	double move_s;			/* the line's time per move */
	double per_add;			/* transfers per shared add */
};

struct lm_cell {
	double local[BENCH_MAX_REPS];
	double meas[BENCH_MAX_REPS];
	struct lm_near near[BENCH_MAX_REPS][2];	/* before, after */
	unsigned int nr_local, nr_meas;
	struct lm_result res[LM_MAX_N];
};

struct lm_run {
	const struct opts *o;
	const struct strategy *st[LM_STRATS];
	unsigned int nr_st;
	unsigned int cpus[LM_MAX_N];
	unsigned int nr_cpus;
	double tshared[BENCH_MAX_REPS];	/* seconds per shared add */
	double tpriv[BENCH_MAX_REPS];	/* seconds per private add */
	double tmoved[BENCH_MAX_REPS];	/* transfers per shared add */
	double talt[BENCH_MAX_REPS];	/* strict alternation, per move */
	unsigned int nr_tcost;
	unsigned int rep;		/* repetitions started */
	bool measure;			/* --cpus has LM_CALIB_CPUS */
	struct lm_calib cal;
	bool hold;			/* --pricing hold, time replay */
	double transfer_s;		/* the replay's price per transfer */
	double move_s;			/* --pricing move: the cap's price */
	double remote_factor;
	/* --lines-calib: the file's 2-CPU local costs, NAN: none. */
	double file_local[NR_SERIES][LM_STRATS];
	struct lm_cell cell[NR_SERIES][LM_STRATS];
	FILE *jsonl;
};

/* CPU seconds this process has run, all threads. */
static double process_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void json_s(FILE *f, const char *k, const char *v, bool first);
static void json_d(FILE *f, const char *k, double v);

/* The load average over the last minute, NAN if unknown. */
static double load1(void)
{
	double v = NAN;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = NAN;
		fclose(f);
	}
	return v;
}

/*
 * A short ping-pong reading beside a measured sample: the line's move
 * time (calib_derive()'s shared / (2 x per_add)) and the transfers per
 * shared add, NAN if no chunk was kept.  The host may place the two
 * vCPUs on other cores at any time, which changes the move by up to 7x
 * on the AMD EPYC (docs/lines-model.md); this says under which placement
 * the sample beside it ran.
 */
static void near_reading(const struct opts *o, struct lm_near *r)
{
	double shared, priv, per_add;

	r->move_s = r->per_add = NAN;
	if (pp_trial(o, PP_NEAR_CHUNKS, &shared, &priv, &per_add) ||
	    !(per_add > 0))
		return;
	r->per_add = per_add;
	r->move_s = shared / (2 * per_add);
}

/*
 * One measured sample, kept or not, with the readings taken just before
 * and after it and the load: the lines_sample record, so that every
 * measurement can be read against the calibration taken next to it.
 */
static void emit_sample(const struct lm_run *x, const struct series *se,
			const struct strategy *s, const struct sample *smp,
			double ran, const struct lm_near *near)
{
	FILE *f = x->jsonl;

	if (!f)
		return;
	json_s(f, "kind", "lines_sample", true);
	json_s(f, "workload", se->name, false);
	json_s(f, "strategy", s->name, false);
	json_d(f, "rep", x->rep);
	json_d(f, "measured_ops_per_s", smp->value);
	json_d(f, "thread_min_ops_per_s", smp->thread_min);
	json_d(f, "thread_max_ops_per_s", smp->thread_max);
	json_d(f, "both_ran", ran);
	json_d(f, "move_before_ns", near[0].move_s * 1e9);
	json_d(f, "move_after_ns", near[1].move_s * 1e9);
	json_d(f, "transfers_per_shared_add_before", near[0].per_add);
	json_d(f, "transfers_per_shared_add_after", near[1].per_add);
	json_d(f, "load1", load1());
	fprintf(f, "}\n");
}

/* Is the run's --workload (or all) asking for series @se? */
static bool series_wanted(const struct opts *o, const struct series *se)
{
	return !o->workloads || strstr(o->workloads, se->workload);
}

/*
 * One repetition of the paired measurements at LM_CALIB_CPUS.  A measured
 * sample is kept only if its two threads ran nearly all the time
 * (LM_BOTH_RAN of twice the wall time, as process CPU time): where a
 * neighbour deschedules one of them, the other runs uncontended and a
 * contended workload looks faster than it is, so neither the best nor
 * the median of all samples would do.  Each sample is bracketed by two
 * short ping-pong readings (near_reading()); model_series() keeps it only
 * if both match the run's calibration (placed()).  Only the
 * series --workload asks for are costed and measured, and measured only
 * if --cpus has LM_CALIB_CPUS.
 */
static int calibrate_rep(struct lm_run *x, struct opts *pinned)
{
	const struct opts *o = x->o;
	struct lm_near near[2];
	struct config cs, cp;
	struct sample smp;
	unsigned int i, k;
	double w0, c0, ran;
	void *pi;

	x->rep++;
	if (!o->lines_calib &&
	    !pp_trial(o, PP_CHUNKS, &x->tshared[x->nr_tcost],
		      &x->tpriv[x->nr_tcost], &x->tmoved[x->nr_tcost])) {
		x->talt[x->nr_tcost] = pp_alternate(o);
		x->nr_tcost++;
	}
	for (i = 0; i < NR_SERIES; i++) {
		if (!series_wanted(o, &all_series[i]))
			continue;
		config_for(o, &all_series[i], LM_CALIB_CPUS, PCSTOCK_CPU_COOP,
			   &cs);
		config_for(o, &all_series[i], LM_CALIB_CPUS,
			   PCSTOCK_CPU_PINNED, &cp);
		for (k = 0; k < x->nr_st; k++) {
			struct lm_cell *cell = &x->cell[i][k];

			cell->local[cell->nr_local] =
				local_cost(o, &all_series[i], x->st[k], &cs);
			cell->nr_local += isfinite(cell->local[cell->nr_local]);
			if (!cp.wl || !x->measure)
				continue;
			if (x->st[k]->create(&cp.tree, &pi))
				return -ENOMEM;
			memset(&smp, 0, sizeof(smp));
			smp.cons_ok = true;
			near_reading(o, &near[0]);
			w0 = now_s();
			c0 = process_s();
			if (cp.wl->measure(pinned, &cp, x->st[k], pi, &smp) ||
			    !smp.cons_ok)
				smp.value = NAN;
			ran = (process_s() - c0) /
			      (LM_CALIB_CPUS * (now_s() - w0));
			near_reading(o, &near[1]);
			if (isfinite(smp.value) && ran >= LM_BOTH_RAN) {
				cell->near[cell->nr_meas][0] = near[0];
				cell->near[cell->nr_meas][1] = near[1];
				cell->meas[cell->nr_meas++] = smp.value;
			}
			emit_sample(x, &all_series[i], x->st[k], &smp, ran,
				    near);
			x->st[k]->destroy(pi);
			if (!smp.cons_ok)
				return -EIO;
		}
	}
	return 0;
}

/*
 * --pricing hold: the time replay's clocks are the prediction (local
 * cost, each transfer's latency and the waits for held lines, all CPUs'
 * simulated seconds over the operations): a held line serialises by
 * itself.  --pricing move: one CPU's own time prices a transfer at what a
 * requester loses (transfer_s); the hottest line's serialisation at how
 * long the line takes per move (move_s): pricing both alike would count
 * the wait for the other cores twice in the cap.
 */
static double predict(const struct lm_run *x, const struct lm_result *r,
		      double local, double *cap)
{
	double remote = 1 + (x->remote_factor - 1) *
			    (r->xfer ? r->xfer_remote / r->xfer : 0);
	double one = 1 / (local + r->xfer * x->transfer_s * remote);

	if (x->hold) {
		*cap = (double)NAN;
		return isfinite(local) ?
		       1 / (r->t_local + r->t_xfer + r->t_wait) :
		       (double)NAN;
	}
	*cap = r->hot_per_op > 0 ?
	       1 / ((double)r->n * x->move_s * remote * r->hot_per_op) :
	       (double)INFINITY;
	return fmin(one, *cap);
}

static void json_s(FILE *f, const char *k, const char *v, bool first)
{
	fprintf(f, "%s\"%s\":\"%s\"", first ? "{" : ",", k, v);
}

static void json_d(FILE *f, const char *k, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"%s\":%.6g", k, v);
	else
		fprintf(f, ",\"%s\":null", k);
}

/*
 * The calibration's fields, in the lines_calibration record and in every
 * lines record (so that each figure names the CPU it was priced for).
 */
static void emit_calib(FILE *f, const struct lm_run *x)
{
	const struct lm_calib *c = &x->cal;

	json_s(f, "pricing", x->hold ? "hold" : "move", false);
	json_s(f, "calib_cpu_model", c->cpu, false);
	json_s(f, "calib_from", c->from, false);
	json_d(f, "shared_add_ns", c->shared_s * 1e9);
	json_d(f, "private_add_ns", c->private_s * 1e9);
	json_d(f, "transfers_per_shared_add", c->per_add);
	json_d(f, "loss_ns", c->loss_s * 1e9);
	json_d(f, "line_move_ns", c->move_s * 1e9);
	json_d(f, "hold_run", c->run);
	json_d(f, "hold_ns", c->hold_s * 1e9);
	json_d(f, "latency_ns", c->latency_s * 1e9);
	json_d(f, "alternation_ns", c->alternate_s * 1e9);
	json_d(f, "alternation_over_two_latencies",
	       c->alternate_s / (2 * c->latency_s));
	json_d(f, "alternation_latency_ns", c->alt_latency_s * 1e9);
	json_d(f, "hold_run_from_alternation", c->alt_run);
	json_d(f, "hold_runs_agree", c->alt_run / c->run);
	json_d(f, "model_transfers_per_shared_add", c->model_per_add);
	json_d(f, "model_shared_add_ns", c->model_shared_s * 1e9);
	json_d(f, "model_over_measured_transfers",
	       c->model_per_add / c->per_add);
}

static void emit_result(const struct lm_run *x, const struct series *se,
			const struct strategy *s, const char *topo,
			const struct lm_result *r)
{
	FILE *f = x->jsonl;
	unsigned int i;

	if (!f)
		return;
	json_s(f, "kind", "lines", true);
	json_s(f, "workload", se->name, false);
	json_s(f, "strategy", s->name, false);
	json_s(f, "topology", topo, false);
	json_d(f, "cpus", r->n);
	json_d(f, "ops", (double)r->ops);
	json_d(f, "transfers_per_op", r->xfer);
	json_d(f, "remote_transfers_per_op", r->xfer_remote);
	json_d(f, "invalidations_per_op", r->inval);
	json_s(f, "hot_line", r->nr_hot ? r->hot[0] : "", false);
	json_d(f, "hot_share", r->hot_share);
	json_d(f, "hot_transfers_per_op", r->hot_per_op);
	fprintf(f, ",\"hot_lines\":[");
	for (i = 0; i < r->nr_hot; i++)
		fprintf(f, "%s{\"line\":\"%s\",\"share\":%.4f,"
			"\"accesses_per_op\":%.4f}", i ? "," : "",
			r->hot[i], r->hot_shares[i], r->hot_acc[i]);
	fprintf(f, "]");
	json_d(f, "local_ns", r->local_s * 1e9);
	json_d(f, "transfer_ns", x->transfer_s * 1e9);
	emit_calib(f, x);
	json_d(f, "replay_local_ns_per_op", r->t_local * 1e9);
	json_d(f, "replay_transfer_ns_per_op", r->t_xfer * 1e9);
	json_d(f, "replay_wait_ns_per_op", r->t_wait * 1e9);
	json_d(f, "messages_per_receiving_pass", r->rx_batch);
	json_d(f, "messages_sent_per_delivered", r->sent_per_op);
	json_d(f, "settle_passes_per_cpu", r->settle);
	fprintf(f, ",\"rings_settled\":%s", isnan(r->settle) ? "null" :
		   r->settled ? "true" : "false");
	json_d(f, "predicted_ops_per_s", r->pred);
	json_d(f, "predicted_cap_ops_per_s", r->cap);
	json_d(f, "measured_ops_per_s", r->measured);
	json_d(f, "measured_any_placement_ops_per_s", r->measured_any);
	json_d(f, "samples_both_ran", r->nr_ran);
	json_d(f, "samples_placed", r->nr_placed);
	json_d(f, "measured_move_before_ns", r->near_move[0] * 1e9);
	json_d(f, "measured_move_after_ns", r->near_move[1] * 1e9);
	fprintf(f, "}\n");
}

static void print_header(const struct series *se)
{
	printf("\n### %s\n\n| cpus | strategy | xfer/op | remote/op | "
	       "inval/op | hottest line (share of transfers) | local ns | "
	       "predicted ops/s/CPU | measured | pred/meas |\n"
	       "|---:|---|---:|---:|---:|---|---:|---:|---:|---:|\n",
	       se->name);
}

static void print_result(const struct strategy *s, const struct lm_result *r)
{
	char hot[100];

	snprintf(hot, sizeof(hot), "%s (%.0f %%)",
		 r->nr_hot ? r->hot[0] : "-", 100 * r->hot_share);
	printf("| %u | %s | %.3f | %.3f | %.3f | %s | %.1f | %.3g |",
	       r->n, s->name, r->xfer, r->xfer_remote, r->inval, hot,
	       r->local_s * 1e9, r->pred);
	if (isfinite(r->measured))
		printf(" %.3g | %.2f |\n", r->measured,
		       r->pred / r->measured);
	else
		printf(" - | - |\n");
}

/*
 * Was a sample taken under the placement the run's calibration was:
 * both readings beside it move the line within LM_PLACE_TOL of the
 * calibration's move?  With --lines-calib there is nothing here to
 * compare with, and every sample counts.
 */
static bool placed(const struct lm_run *x, const struct lm_near *near)
{
	unsigned int i;

	if (x->o->lines_calib)
		return true;
	for (i = 0; i < 2; i++)
		if (!(near[i].move_s <= x->cal.move_s * LM_PLACE_TOL &&
		      near[i].move_s >= x->cal.move_s / LM_PLACE_TOL))
			return false;
	return true;
}

/*
 * The measurement beside the model at @n CPUs: the best sample whose
 * threads both ran (calibrate_rep()) and that was taken under the
 * calibration's placement (placed()); measured_any, the best of all that
 * ran, is the figure before the placement check.
 */
static void measured_of(const struct lm_run *x, const struct lm_cell *cell,
			unsigned int n, struct lm_result *r)
{
	unsigned int i;

	r->measured = r->measured_any = NAN;
	r->near_move[0] = r->near_move[1] = NAN;
	r->nr_ran = r->nr_placed = 0;
	if (n != LM_CALIB_CPUS)
		return;
	r->nr_ran = cell->nr_meas;
	for (i = 0; i < cell->nr_meas; i++) {
		if (!(cell->meas[i] <= r->measured_any))
			r->measured_any = cell->meas[i];
		if (!placed(x, cell->near[i]))
			continue;
		r->nr_placed++;
		if (!(cell->meas[i] <= r->measured)) {
			r->measured = cell->meas[i];
			r->near_move[0] = cell->near[i][0].move_s;
			r->near_move[1] = cell->near[i][1].move_s;
		}
	}
}

static int model_series(struct lm_run *x, unsigned int si)
{
	const struct series *se = &all_series[si];
	struct lm_result *r;
	char topo[96];
	unsigned int j, k;
	int ret;

	print_header(se);
	for (j = 0; j < x->nr_cpus; j++) {
		topo_string(x->o->topology, x->cpus[j], topo, sizeof(topo));
		for (k = 0; k < x->nr_st; k++) {
			struct lm_cell *cell = &x->cell[si][k];

			r = &cell->res[j];
			fprintf(stderr, "lines: %s %s %u CPUs (%s)\n",
				se->name, x->st[k]->name, x->cpus[j], topo);
			r->local_s = isfinite(x->file_local[si][k]) ?
				     x->file_local[si][k] :
				     best(cell->local, cell->nr_local, false);
			ret = model_run(x->o, se, x->st[k], x->cpus[j], topo,
					x->transfer_s,
					x->hold ? x->cal.hold_s : (double)NAN,
					r);
			if (ret)
				return ret;
			r->pred = predict(x, r, r->local_s, &r->cap);
			measured_of(x, cell, x->cpus[j], r);
			print_result(x->st[k], r);
			emit_result(x, se, x->st[k], topo, r);
		}
	}
	return 0;
}

/* ---- drain_all: reading a slot before exchanging it --------------------- */

struct drain_cost {
	double xfer, remote, inval;	/* per drain_all, beyond the charger */
};

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

static void emit_drain(const struct lm_run *x, const struct strategy *s,
		       unsigned int n, const char *drainer, const char *which,
		       const struct drain_cost *d)
{
	printf("| %s | %s | %s | %.1f | %.1f | %.1f | %.2f |\n", s->name,
	       drainer, which, d->xfer, d->remote, d->inval,
	       d->xfer * x->transfer_s * 1e6);
	if (!x->jsonl)
		return;
	json_s(x->jsonl, "kind", "lines_drain", true);
	json_s(x->jsonl, "strategy", s->name, false);
	json_s(x->jsonl, "drainer", drainer, false);
	json_s(x->jsonl, "drain", which, false);
	json_d(x->jsonl, "cpus", n);
	json_d(x->jsonl, "transfers_per_drain", d->xfer);
	json_d(x->jsonl, "remote_transfers_per_drain", d->remote);
	json_d(x->jsonl, "invalidations_per_drain", d->inval);
	json_d(x->jsonl, "transfer_ns", x->transfer_s * 1e9);
	fprintf(x->jsonl, "}\n");
}

static int model_drain(struct lm_run *x)
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

/* ---- LKP comparison and plots ------------------------------------------- */

static int strat_index(const struct lm_run *x, const char *name)
{
	unsigned int k;

	for (k = 0; k < x->nr_st; k++)
		if (!strcmp(x->st[k]->name, name))
			return (int)k;
	return -1;
}

static void compare_lkp(const struct lm_run *x)
{
	int v4 = strat_index(x, "v4"), m7 = strat_index(x, "memcg7");
	const struct lm_result *a, *b;
	unsigned int j;

	if (v4 < 0 || m7 < 0)
		return;
	for (j = 0; j < x->nr_cpus; j++) {
		a = &x->cell[0][v4].res[j];
		b = &x->cell[0][m7].res[j];
		if (!a->done || !b->done || a->n < 16)
			continue;
		printf("\nsock at %u CPUs, v4 against memcg7: predicted "
		       "messages/s per CPU %+.1f %%; cross-package transfers "
		       "per message %.3f -> %.3f (%+.0f %%); all transfers "
		       "%.3f -> %.3f (LKP, 224 CPUs: netperf SCTP_RR "
		       "-73.9 %%, HITM.remote +105 %%)\n",
		       a->n, 100 * (a->pred / b->pred - 1), b->xfer_remote,
		       a->xfer_remote,
		       b->xfer_remote > 0 ?
		       100 * (a->xfer_remote / b->xfer_remote - 1) :
		       (double)NAN,
		       b->xfer, a->xfer);
	}
}

static void emit_plots(const struct lm_run *x)
{
	char path[4096], cmd[4400];
	unsigned int i, j, k;
	FILE *gp, *dat;

	snprintf(path, sizeof(path), "%s/lines.gp", x->o->out);
	gp = fopen(path, "w");
	if (!gp)
		return;
	fprintf(gp, "# gnuplot script written by pcstock-bench --lines\n"
		"set terminal pngcairo size 900,560\nset key outside right\n"
		"set grid\nset logscale xy\nset xlabel 'simulated CPUs'\n"
		"set ylabel 'predicted ops/s per CPU'\n");
	for (i = 0; i < NR_SERIES; i++) {
		if (!x->cell[i][0].res[0].done)
			continue;	/* not run (--workload) */
		snprintf(path, sizeof(path), "%s/lines-%s.dat", x->o->out,
			 all_series[i].name);
		dat = fopen(path, "w");
		if (!dat)
			continue;
		fprintf(dat, "# cpus");
		for (k = 0; k < x->nr_st; k++)
			fprintf(dat, " %s", x->st[k]->name);
		fprintf(dat, "\n");
		for (j = 0; j < x->nr_cpus; j++) {
			fprintf(dat, "%u", x->cpus[j]);
			for (k = 0; k < x->nr_st; k++)
				fprintf(dat, " %g", x->cell[i][k].res[j].pred);
			fprintf(dat, "\n");
		}
		fclose(dat);
		fprintf(gp, "set output 'lines-%s.png'\nset title "
			"'%s: predicted throughput per CPU (line model)'\n"
			"plot ", all_series[i].name, all_series[i].name);
		for (k = 0; k < x->nr_st; k++)
			fprintf(gp, "%s'lines-%s.dat' using 1:%u with "
				"linespoints title '%s'", k ? ", " : "",
				all_series[i].name, k + 2, x->st[k]->name);
		fprintf(gp, "\n");
	}
	fclose(gp);
	snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot lines.gp 2>gnuplot.log"
		 " || echo 'pcstock-bench: gnuplot failed or is missing' >&2",
		 x->o->out);
	if (system(cmd) == -1)
		fprintf(stderr, "pcstock-bench: cannot run gnuplot\n");
}

/* ---- options ------------------------------------------------------------ */

static int parse_cpus(struct lm_run *x, const char *list)
{
	const char *p = list;
	char *end;
	unsigned long v;

	x->nr_cpus = 0;
	while (*p) {
		v = strtoul(p, &end, 10);
		if (end == p || v < 2 || v > LM_MAX_CPUS || v % 2 ||
		    x->nr_cpus == LM_MAX_N || (*end && *end != ','))
			return -EINVAL;
		x->cpus[x->nr_cpus++] = (unsigned int)v;
		p = *end ? end + 1 : end;
	}
	return x->nr_cpus ? 0 : -EINVAL;
}

static int pick_strategies(struct lm_run *x, const char *list)
{
	const char *p;
	char name[32];
	size_t len;

	for (p = list; *p; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		if (!bench_strategy(name) || x->nr_st == LM_STRATS ||
		    !(bench_strategy(name)->flags & STRAT_DOMAIN)) {
			fprintf(stderr, "pcstock-bench: --lines models the "
				"group strategies (%s), not '%s'\n",
				bench_design_strategies(), name);
			return -EINVAL;
		}
		x->st[x->nr_st++] = bench_strategy(name);
	}
	return 0;
}

/* ---- the calibration of another run (--lines-calib) -------------------- */

/* The number after "@key": in the JSON object @rec; false if none. */
static bool json_num(const char *rec, const char *key, double *v)
{
	char pat[64];
	const char *p;
	char *end;
	double d;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(rec, pat);
	if (!p)
		return false;
	d = strtod(p + strlen(pat), &end);
	if (end == p + strlen(pat))
		return false;	/* null: not measured */
	*v = d;
	return true;
}

/* The string after "@key": in @rec, into @buf; false if none. */
static bool json_str(const char *rec, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(rec, pat);
	if (!p)
		return false;
	p += strlen(pat);
	n = strcspn(p, "\"");
	snprintf(buf, len, "%.*s", (int)n, p);
	return true;
}

/* The CPU model of @path's meta.json, beside it; "unknown" if none. */
static void calib_cpu_beside(const char *path, char *buf, size_t len)
{
	char meta[4096], rec[4096];
	const char *slash = strrchr(path, '/');
	FILE *f;

	snprintf(buf, len, "unknown");
	snprintf(meta, sizeof(meta), "%.*smeta.json",
		 slash ? (int)(slash - path + 1) : 0, path);
	f = fopen(meta, "r");
	if (!f)
		return;
	if (fgets(rec, sizeof(rec), f))
		json_str(rec, "cpu_model", buf, len);
	fclose(f);
}

/*
 * Take the lines_calibration record of another run's lines.jsonl at
 * @path, and the local costs of its 2-CPU lines records, so that the
 * model predicts for that run's CPU.  A record written before the hold
 * was modelled gives the requester's loss (transfer_ns), the transfers
 * per shared add and the line move: the shared and private add times
 * follow from them (calib_derive()'s equations).  Return: 0, -ENOENT,
 * -EINVAL (no calibration record in it).
 */
static int calib_read(struct lm_run *x, const char *path)
{
	struct lm_calib *c = &x->cal;
	char rec[8192], wl[32], st[32];
	double cpus, local, loss = NAN, move = NAN;
	bool found = false;
	unsigned int i;
	int k;
	FILE *f = fopen(path, "r");

	if (!f)
		return -ENOENT;
	while (fgets(rec, sizeof(rec), f)) {
		if (strstr(rec, "\"kind\":\"lines_calibration\"")) {
			found = json_num(rec, "transfers_per_shared_add",
					 &c->per_add);
			if (!json_num(rec, "shared_add_ns", &c->shared_s) ||
			    !json_num(rec, "private_add_ns", &c->private_s)) {
				found = found &&
					json_num(rec, "transfer_ns", &loss) &&
					json_num(rec, "line_move_ns", &move);
				c->shared_s = 2 * c->per_add * move;
				c->private_s = c->shared_s -
					       loss * c->per_add;
			}
			c->shared_s *= 1e-9;
			c->private_s *= 1e-9;
			c->alternate_s = NAN;
			if (json_num(rec, "alternation_ns", &c->alternate_s))
				c->alternate_s *= 1e-9;
			if (!json_str(rec, "calib_cpu_model", c->cpu,
				      sizeof(c->cpu)))
				calib_cpu_beside(path, c->cpu,
						 sizeof(c->cpu));
			continue;
		}
		if (!strstr(rec, "\"kind\":\"lines\"") ||
		    !json_num(rec, "cpus", &cpus) || cpus != LM_CALIB_CPUS ||
		    !json_num(rec, "local_ns", &local) ||
		    !json_str(rec, "workload", wl, sizeof(wl)) ||
		    !json_str(rec, "strategy", st, sizeof(st)))
			continue;
		k = strat_index(x, st);
		for (i = 0; i < NR_SERIES && k >= 0; i++)
			if (!strcmp(all_series[i].name, wl))
				x->file_local[i][k] = local * 1e-9;
	}
	fclose(f);
	snprintf(c->from, sizeof(c->from), "%s", path);
	return found && c->per_add > 0 && c->shared_s > 0 &&
	       c->private_s > 0 ? 0 : -EINVAL;
}

/*
 * The calibration's loop replayed with the hold: two CPUs adding to one
 * line, an add taking the private time, a transfer the latency, a taken
 * line kept for the hold.  Its transfers per add and time per add should
 * give back the measured ones (calib_derive()'s equations, up to the
 * whole number of adds that fit in a hold): a check that the replay
 * counts the transfers the calibration counted.
 */
static void pp_model(struct lm_calib *c, uint64_t seed)
{
	struct sim m = { .n = 2 };
	double clock[2], asked[2], miss[2] = { 0 };
	double sb[2] = { 0 };
	uintptr_t miss_tag[2] = { 0 };
	unsigned int heap[2], adds = 0;

	dir_clear(&dir);
	dir.nr_cpus = 2;
	dir.pkg[0] = dir.pkg[1] = 0;
	m.clock = clock;
	m.asked = asked;
	m.miss = miss;
	m.miss_tag = miss_tag;
	m.sb = sb;
	m.heap = heap;
	m.order_rng = seed;
	m.t_access = c->private_s;
	m.t_xfer = c->latency_s;
	m.t_hold = c->hold_s;
	m.hold = true;
	m.remote_factor = 1;
	clocks_start(&m);
	while (adds < 100000) {
		/* Any line address will do: the directory keys on it. */
		adds += timed_apply(&m, m.heap[0], LM_LINE | 1);
		heap_down(&m, 0, 2);
	}
	c->model_per_add = (double)dir.xfer / adds;
	c->model_shared_s = (clock[0] + clock[1]) / adds;
	dir_clear(&dir);
}

int lines_main(const struct opts *o)
{
	static struct lm_run x;
	struct opts pinned = *o;
	unsigned int rep, i;
	char path[4096];
	char *mj, *mt;
	double t0 = now_s();
	int ret = 0;

	x.o = o;
	x.remote_factor = o->remote_factor;
	x.hold = o->pricing_hold && !o->interleave_op;
	for (i = 0; i < NR_SERIES; i++)
		for (rep = 0; rep < LM_STRATS; rep++)
			x.file_local[i][rep] = NAN;
	if (pick_strategies(&x, o->strategies ? o->strategies :
			    bench_design_strategies()) ||
	    parse_cpus(&x, o->sim_cpus ? o->sim_cpus : "2,16,64,224,1024"))
		return 1;
	if (o->nr_os_cpus < LM_CALIB_CPUS) {
		fprintf(stderr, "pcstock-bench: --lines calibrates on %u "
			"CPUs; this process may use %u\n", LM_CALIB_CPUS,
			o->nr_os_cpus);
		return 1;
	}
	if (mkdir(o->out, 0777) && errno != EEXIST) {
		fprintf(stderr, "pcstock-bench: cannot create %s\n", o->out);
		return 1;
	}
	if (o->lines_calib) {
		ret = calib_read(&x, o->lines_calib);
		if (ret) {
			fprintf(stderr, "pcstock-bench: %s: no usable "
				"lines_calibration record\n", o->lines_calib);
			return 1;
		}
	}
	snprintf(path, sizeof(path), "%s/lines.jsonl", o->out);
	x.jsonl = fopen(path, "w");
	pinned.mode = PCSTOCK_CPU_PINNED;
	for (i = 0; i < x.nr_cpus; i++)
		x.measure |= x.cpus[i] == LM_CALIB_CPUS;
	for (rep = 0; rep < o->reps; rep++) {
		fprintf(stderr, "lines: calibration %u/%u\n", rep + 1,
			o->reps);
		ret = calibrate_rep(&x, &pinned);
		if (ret)
			goto out;
	}
	if (!o->lines_calib) {
		x.cal.shared_s = median(x.tshared, x.nr_tcost);
		x.cal.private_s = median(x.tpriv, x.nr_tcost);
		x.cal.per_add = median(x.tmoved, x.nr_tcost);
		x.cal.alternate_s = median(x.talt, x.nr_tcost);
		bench_cpu_model(x.cal.cpu, sizeof(x.cal.cpu));
		snprintf(x.cal.from, sizeof(x.cal.from), "measured");
	}
	calib_derive(&x.cal);
	if (!(x.cal.loss_s > 0) || !(x.cal.move_s > 0)) {
		fprintf(stderr, "pcstock-bench: no line transfer cost "
			"measurable (a shared add no slower than a private "
			"one): predicting with 0\n");
		x.cal.loss_s = x.cal.move_s = x.cal.latency_s = 0;
		x.cal.hold_s = 0;
	}
	pp_model(&x.cal, o->seed);
	x.transfer_s = x.hold ? x.cal.latency_s : x.cal.loss_s;
	x.move_s = x.cal.move_s;
	mt = meta_text(o, now_s() - t0);
	printf("## pcstock-bench --lines\n\n%s\n"
	       "calibration (%s, %s): shared add %.1f ns, private %.1f ns, "
	       "%.3f transfers per shared add (medians): a core keeps the "
	       "line %.1f adds, %.1f ns; transfer latency %.1f ns, line "
	       "move %.1f ns, requester's loss %.1f ns; strict "
	       "alternation %.1f ns per move, so a run of %.1f adds; "
	       "the hold replay of "
	       "the same loop: %.3f transfers per add, %.1f ns per add\n"
	       "pricing %s (%.1f ns per transfer%s), remote factor %g; "
	       "local cost and measured at %u CPUs (best of %u "
	       "repetitions); interleave %s\n", mt ? mt : "",
	       x.cal.cpu, x.cal.from, x.cal.shared_s * 1e9,
	       x.cal.private_s * 1e9, x.cal.per_add, x.cal.run,
	       x.cal.hold_s * 1e9, x.cal.latency_s * 1e9,
	       x.cal.move_s * 1e9, x.cal.loss_s * 1e9,
	       x.cal.alternate_s * 1e9, x.cal.alt_run,
	       x.cal.model_per_add,
	       x.cal.model_shared_s * 1e9, x.hold ? "hold" : "move",
	       x.transfer_s * 1e9,
	       x.hold ? ", lines held" : ", capped at the line move",
	       x.remote_factor, LM_CALIB_CPUS, o->reps,
	       o->interleave_op ? "op" : "time");
	free(mt);
	if (x.jsonl) {
		json_s(x.jsonl, "kind", "lines_calibration", true);
		json_d(x.jsonl, "transfer_ns", x.transfer_s * 1e9);
		emit_calib(x.jsonl, &x);
		json_d(x.jsonl, "remote_factor", x.remote_factor);
		json_d(x.jsonl, "reps", x.nr_tcost);
		json_s(x.jsonl, "interleave",
		       o->interleave_op ? "op" : "time", false);
		fprintf(x.jsonl, "}\n");
	}
	for (i = 0; i < NR_SERIES; i++) {
		if (!series_wanted(o, &all_series[i]))
			continue;
		ret = model_series(&x, i);
		if (ret)
			goto out;
	}
	if (!o->workloads || strstr(o->workloads, "drain"))
		ret = model_drain(&x);
	if (!ret) {
		compare_lkp(&x);
		emit_plots(&x);
	}
	mj = meta_json(o, now_s() - t0);
	snprintf(path, sizeof(path), "%s/meta.json", o->out);
	if (mj) {
		FILE *f = fopen(path, "w");

		if (f) {
			fputs(mj, f);
			fclose(f);
		}
		free(mj);
	}
out:
	if (x.jsonl)
		fclose(x.jsonl);
	dir_clear(&dir);
	if (ret)
		fprintf(stderr, "pcstock-bench --lines: %s\n",
			strerror(-ret));
	return ret ? (ret == -EIO ? 2 : 1) : 0;
}
