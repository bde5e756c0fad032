// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * calib.c - the costs the model prices with (lines.h), measured on this
 * machine: the line transfer (ping-pong readings), an operation's local
 * cost, and the real workload beside the model, one repetition at a time
 * (calibrate_rep()); or the transfer and local costs of another run, read
 * from its lines.jsonl (--lines-calib).
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lines.h"
#include "strategy.h"

#define LM_LOCAL_Q 64		/* steps per turn when timing local cost */
#define LM_BOTH_RAN 0.95	/* measured: both threads ran this share */

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
 *
 * The same loop over LM_PP_LINES lines in turn (each thread adds to line
 * 0, then 1, then 0 ...; shared chunks on shared lines, private chunks on
 * the thread's own) is a second reading, the two-line one: a core that
 * comes back to a line only after an add to another contended line is
 * what a hierarchical charge does (a leaf's parent, then the root), and
 * the replay's pricing of it (pp_model()) can be checked against it.
 * With LM_RA_LOADS dependent loads of a thread's own before each add it
 * is the third, the run-ahead reading (runahead.c says what it reads).
 */
#define PP_CHUNK 200U
#define PP_CHUNKS 8000U
#define PP_PERIOD 50e-6
#define PP_NEAR_CHUNKS 1000U	/* the short reading beside each sample */

struct pp_line {
	_Alignas(BENCH_LINE) atomic_long v;
};

struct pp {
	struct pp_line ctr[LM_PP_LINES];
	struct pp_line own[2][LM_PP_LINES];
	struct pp_line mine[2];			/* the work reading's locks */
	_Alignas(BENCH_LINE) long chain[2][64];	/* run-ahead loads */
	long sink[2][BENCH_LINE / sizeof(long)];
	_Alignas(BENCH_LINE) atomic_uint done[2][BENCH_LINE / sizeof(int)];
	atomic_int ready;
	int os_cpu[2];
	unsigned int chunks;		/* per thread, at most PP_CHUNKS */
	unsigned int lines;		/* in turn: 1 or LM_PP_LINES */
	unsigned int loads;		/* dependent loads before each add */
	unsigned int locks;		/* and locked adds to a line of its own */
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
	unsigned int c, k, j, g, seen, kind, at;
	unsigned long moved;
	long old, next[LM_PP_LINES], x = 0;
	struct pp_line *v;
	double t0;

	for (j = 0; j < LM_PP_LINES; j++)
		next[j] = -1;

	bind_self(p->os_cpu[a->i]);
	atomic_fetch_add(&p->ready, 1);
	while (atomic_load(&p->ready) < 2)
		cpu_relax();
	for (c = 0; c < p->chunks; c++) {
		seen = atomic_load_explicit(other, memory_order_relaxed);
		t0 = now_s();
		kind = (unsigned int)((t0 - p->t0) / PP_PERIOD) % 2;
		v = kind ? p->ctr : p->own[a->i];
		/*
		 * The chunk's first add to each line follows the other
		 * kind's chunk: whether the line moved for it is unknown,
		 * so it is not counted (on a core that keeps the line for
		 * 17 adds, one more per chunk of 200 would be 9 % too many).
		 */
		for (k = 0, j = 0, moved = 0; k < PP_CHUNK; k++) {
			for (g = 0; g < p->loads; g++)
				x = p->chain[a->i][x & 63];
			for (g = 0; g < p->locks; g++)
				atomic_fetch_add_explicit(&p->mine[a->i].v, 1,
							  memory_order_relaxed);
			old = atomic_fetch_add_explicit(&v[j].v, 1,
							memory_order_relaxed);
			moved += k >= p->lines && old != next[j];
			next[j] = old + 1;
			j = j + 1 == p->lines ? 0 : j + 1;
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
	p->sink[a->i][0] = x;
	return NULL;
}

/*
 * One ping-pong trial of @chunks chunks per thread over @lines lines in
 * turn, @loads dependent loads of the thread's own before each add (the
 * run-ahead reading, runahead.c) and @locks locked adds to a line of its
 * own after them (the work reading, worksweep.c): the median chunks of
 * shared adds and private adds, seconds per add with its work (*@shared,
 * *@priv), and
 * the transfers per shared add counted in the shared chunks kept
 * (*@per_add).  Return: 0, -ENOMEM, -EAGAIN if no chunk of a kind was
 * kept.
 */
int pp_trial(const struct opts *o, unsigned int chunks, unsigned int lines,
	     unsigned int loads, unsigned int locks, double *shared,
	     double *priv, double *per_add)
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
	p->lines = lines;
	p->loads = loads;
	p->locks = locks;
	for (k = 0; k < 64; k++)
		p->chain[0][k] = p->chain[1][k] = (long)(k * 37 + 11) & 63;
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
		   ((double)(p->nr[0][1] + p->nr[1][1]) * (PP_CHUNK - lines));
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
 * The third reading: an idle fetch.  The free-running ping-pong times a
 * transfer whose request was already waiting when the holder let go (the
 * holder was using the line); strict alternation times a line that both
 * cores keep asking for.  A workload's core often asks for a line that
 * sits modified at another core which is busy elsewhere: its request
 * must first travel to that core, then the data back.  Here the two
 * threads take turns in time slots of PF_SLOT: in its slot a thread makes
 * PF_LINES locked adds, each on its own line, spread a page apart in a
 * shuffled order (no prefetcher guesses the next), each add's address
 * depending on the one before (no two are in flight at once).  In the
 * shared rounds the lines are the ones the other thread added to in the
 * slot before, so every add fetches an idle modified line; in the own
 * rounds each thread's lines are its own.  The difference of the median
 * rounds per add is what a fetch adds to a local add.  A round counts
 * only if it started within its slot and, for a shared round, the other
 * thread's round before it ran.
 */
#define PF_LINES 64U
#define PF_STRIDE (4096U + 3U * BENCH_LINE)
#define PF_ROUNDS 600U		/* per thread, own and shared alternating */
#define PF_SLOT 25e-6

struct pf {
	char *area[3];			/* shared, own of thread 0, of 1 */
	unsigned int perm[PF_LINES];
	_Alignas(BENCH_LINE) atomic_uint done[2][BENCH_LINE / sizeof(int)];
	int os_cpu[2];
	double t0;
	double round[2][2 * PF_ROUNDS];	/* [shared] seconds per round */
	unsigned int nr[2];
};

struct pf_arg {
	struct pf *p;
	unsigned int i;
};

static long pf_adds(const struct pf *p, char *area)
{
	unsigned long dep = 0;
	atomic_long *v;
	unsigned int j;

	for (j = 0; j < PF_LINES; j++) {
		/* dep is 0, but only the add before can say so. */
		v = (atomic_long *)(void *)(area + (size_t)p->perm[(j + dep) %
					    PF_LINES] * PF_STRIDE);
		dep = (unsigned long)atomic_fetch_add_explicit(
			      v, 1, memory_order_relaxed) >> 62;
	}
	return (long)dep;
}

static void *pf_thread(void *arg)
{
	struct pf_arg *a = arg;
	struct pf *p = a->p;
	unsigned int k, shared, need;
	double start, t, end;

	bind_self(p->os_cpu[a->i]);
	for (k = 0; k < 2 * PF_ROUNDS; k++) {
		start = p->t0 + (2.0 * k + a->i) * PF_SLOT;
		shared = k % 2;
		/* Thread 1 fetches what 0 added in this round, 0 what 1
		 * added two rounds before (its last shared round). */
		need = a->i ? k + 1 : k - 1;
		p->round[shared][a->i * PF_ROUNDS + k / 2] = NAN;
		while ((t = now_s()) < start)
			cpu_relax();
		if (t < start + PF_SLOT / 4 &&
		    (!shared || atomic_load_explicit(&p->done[!a->i][0],
						     memory_order_acquire) >=
				need)) {
			pf_adds(p, p->area[shared ? 0 : 1 + a->i]);
			end = now_s();
			if (end < start + PF_SLOT)
				p->round[shared][a->i * PF_ROUNDS + k / 2] =
					end - t;
		}
		atomic_store_explicit(&p->done[a->i][0], k + 1,
				      memory_order_release);
	}
	return NULL;
}

/* The median of @v's finite values, NAN if none. */
double median_finite(double *v, unsigned int n)
{
	unsigned int i, m = 0;

	for (i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[m++] = v[i];
	return median(v, m);
}

/*
 * The idle fetch (above): seconds a fetch of a line modified at the other
 * core, which is busy elsewhere, adds to a local locked add.  NAN if it
 * cannot be taken (no memory, no thread, no round of a kind kept).
 */
static double pp_fetch(const struct opts *o)
{
	struct pf *p = zalloc_lines(sizeof(*p));
	struct pf_arg a[2];
	pthread_t tid[2];
	double own, shared = NAN;
	unsigned int i, j, k, started = 0;
	uint64_t rng = o->seed ^ 0x9e3779b97f4a7c15ULL;

	if (!p)
		return NAN;
	for (i = 0; i < 3; i++) {
		p->area[i] = zalloc_lines((size_t)PF_LINES * PF_STRIDE);
		if (!p->area[i])
			goto out;
	}
	for (i = 0; i < PF_LINES; i++)
		p->perm[i] = i;
	for (i = PF_LINES - 1; i > 0; i--) {
		j = (unsigned int)(rng_next(&rng) % (i + 1));
		k = p->perm[i];
		p->perm[i] = p->perm[j];
		p->perm[j] = k;
	}
	p->t0 = now_s() + 1e-3;
	for (i = 0; i < 2; i++) {
		p->os_cpu[i] = o->os_cpus[i];
		a[i] = (struct pf_arg){ p, i };
		if (pthread_create(&tid[i], NULL, pf_thread, &a[i]))
			break;
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (started == 2) {
		own = median_finite(p->round[0], 2 * PF_ROUNDS);
		shared = (median_finite(p->round[1], 2 * PF_ROUNDS) - own) /
			 PF_LINES;
	}
out:
	for (i = 0; i < 3; i++)
		free(p->area[i]);
	free(p);
	return shared;
}

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
void calib_derive(struct lm_calib *c)
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
	/*
	 * The idle fetch is a request's way to the holder and the data's
	 * way back; the free-running handover (the latency) is the data's
	 * way alone, the request having waited at the holder already.  So
	 * the request's own way is what the fetch adds to the latency.  A
	 * calibration without the reading (before 0.8) is given twice the
	 * latency, the two ways alike, as the AMD EPYC reads (2.0x under
	 * its near placement), and says so (fetch_assumed).  In the
	 * free-running loop a request leaves when its core loses the line
	 * and must reach the other core before that one's hold ends, or
	 * the loop would move the line less often than it was counted to:
	 * the way is at most the latency and the hold (a longer reading
	 * says the fetch is slower than the handover for some other cause,
	 * which the model does not price).
	 */
	c->fetch_assumed = !isfinite(c->fetch_s);
	if (c->fetch_assumed)
		c->fetch_s = 2 * c->latency_s;
	c->request_s = fmin(fmax(0, c->fetch_s - c->latency_s),
			    c->latency_s + c->hold_s);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(double *v, unsigned int n)
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
double best(double *v, unsigned int n, bool rate)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return rate ? v[n - 1] : v[0];
}

/* ---- the local cost ----------------------------------------------------- */

/* Seconds per operation of the stepped loop on one OS thread, untraced. */
static double local_time(const struct opts *o, const struct series *se,
			 const struct strategy *s, void *inst,
			 const struct config *c)
{
	struct sim m;
	double t0, t = 0;
	unsigned long ops;
	int ret = sim_init(&m, s, inst, c, o->seed);

	m.folio = se->folio && s->uncharge_direct;
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

/* ---- the harnesses ------------------------------------------------------ */

/*
 * The local cost above is the stepped loop's (replay.c): it keeps each
 * simulated CPU's place in the workload in memory (its phase, the pages it
 * got and holds, the operation count), updated around every call, where
 * the timed workload beside it keeps a worker's in registers.  On a CPU
 * whose locked add is cheap those updates are a large part of an
 * operation (an AMD EPYC of family 25 model 17: about 6 ns of the stepped
 * loop's 18 against 13 for the pinned workload, on every row that moves no
 * line), so the model would price work the measured run never does.  Both
 * harnesses are timed here with calls that do nothing, under the same
 * conditions as the policies (two pinned threads at once), and the model
 * takes the policy's stepped time less the stepped harness plus the
 * pinned one (model_series()).  Not for sock: its loop's work is the
 * rings', traced and priced as the workload's own lines, and its pinned
 * harness moves them between the cores.
 */
static double process_s(void);

/*
 * One pinned sample of @s on @inst: its metric in smp->value (NAN if the
 * run failed or lost pages), and the share of the wall time both threads
 * ran (process CPU time over LM_CALIB_CPUS x wall), which decides whether
 * it counts (LM_BOTH_RAN).
 */
static double pinned_sample(struct opts *pinned, const struct config *cp,
			    const struct strategy *s, void *inst,
			    struct sample *smp)
{
	double w0 = now_s(), c0 = process_s();

	memset(smp, 0, sizeof(*smp));
	smp->cons_ok = true;
	if (cp->wl->measure(pinned, cp, s, inst, smp) || !smp->cons_ok)
		smp->value = NAN;
	return (process_s() - c0) / (LM_CALIB_CPUS * (now_s() - w0));
}

static char null_inst;

static int null_create(const struct tree_spec *spec, void **inst)
{
	*inst = &null_inst;
	return 0;
}

static void null_destroy(void *inst)
{
}

static int null_enter(void *inst, unsigned int cpu)
{
	return 0;
}

static void null_exit(void *inst)
{
}

static bool null_charge(void *inst, unsigned int thread, unsigned int leaf,
			unsigned long nr)
{
	return true;
}

static void null_uncharge(void *inst, unsigned int thread, unsigned int leaf,
			  unsigned long nr)
{
}

static void null_drain_all(void *inst)
{
}

static unsigned long null_stock_pages(void *inst)
{
	return 0;
}

/* It holds nothing: whatever the workers hold, nothing is owed. */
static int null_check(void *inst, const long *held, char *why, size_t len)
{
	return 0;
}

static const struct strategy null_strategy = {
	.name = "harness", .what = "calls that do nothing (calib.c)",
	.flags = STRAT_DOMAIN,
	.create = null_create, .destroy = null_destroy,
	.enter = null_enter, .exit = null_exit,
	.charge = null_charge, .uncharge = null_uncharge,
	.drain_all = null_drain_all, .stock_pages = null_stock_pages,
	.check = null_check,
};

/*
 * One reading of series @si's two harnesses, seconds per operation: the
 * stepped loop's (as local_cost()) and the pinned workload's (as the
 * measured samples, kept only if both threads ran).
 */
static void harness_rep(struct lm_run *x, struct opts *pinned,
			unsigned int si, const struct config *cs,
			const struct config *cp)
{
	const struct series *se = &all_series[si];
	struct sample smp;
	double stepped;
	void *inst;

	if (se->sock || !cp->wl || !x->measure)
		return;
	stepped = local_cost(x->o, se, &null_strategy, cs);
	if (!isfinite(stepped) || null_create(&cp->tree, &inst))
		return;
	if (pinned_sample(pinned, cp, &null_strategy, inst, &smp) <
		    LM_BOTH_RAN || !(smp.value > 0))
		return;
	x->harness_stepped[si][x->nr_harness[si]] = stepped;
	x->harness_pinned[si][x->nr_harness[si]++] = 1 / smp.value;
}

/*
 * The stepped harness less the pinned one, per operation, for series @si
 * (NAN if either was never read): the best of each, as the local costs.
 */
double harness_cost(struct lm_run *x, unsigned int si)
{
	unsigned int n = x->nr_harness[si];

	return best(x->harness_stepped[si], n, false) -
	       best(x->harness_pinned[si], n, false);
}

/* ---- one repetition ----------------------------------------------------- */

/* CPU seconds this process has run, all threads. */
static double process_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
	if (pp_trial(o, PP_NEAR_CHUNKS, 1, 0, 0, &shared, &priv, &per_add) ||
	    !(per_add > 0))
		return;
	r->per_add = per_add;
	r->move_s = shared / (2 * per_add);
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
int calibrate_rep(struct lm_run *x, struct opts *pinned)
{
	const struct opts *o = x->o;
	struct lm_near near[2];
	struct config cs, cp;
	struct sample smp;
	unsigned int i, j, k;
	double ran, sbr[LM_SB_K], sbl[LM_SBL], ws[3][LM_WS], wl[3][LM_WL];
	void *pi;

	x->rep++;
	if (!o->lines_calib &&
	    !pp_trial(o, PP_CHUNKS, 1, 0, 0, &x->tshared[x->nr_tcost],
		      &x->tpriv[x->nr_tcost], &x->tmoved[x->nr_tcost])) {
		x->talt[x->nr_tcost] = pp_alternate(o);
		x->tfetch[x->nr_tcost] = pp_fetch(o);
		if (pp_trial(o, PP_CHUNKS, LM_PP_LINES, 0, 0,
			     &x->t2shared[x->nr_tcost],
			     &x->t2priv[x->nr_tcost],
			     &x->t2moved[x->nr_tcost]))
			x->t2shared[x->nr_tcost] = x->t2priv[x->nr_tcost] =
				x->t2moved[x->nr_tcost] = NAN;
		i = sb_trial(o, sbr, sbl) != 0;
		for (k = 0; k < LM_SB_K; k++)
			x->tsb[k][x->nr_tcost] = i ? (double)NAN : sbr[k];
		for (k = 0; k < LM_SBL; k++)
			x->tsbl[k][x->nr_tcost] = i ? (double)NAN : sbl[k];
		for (k = 0; k < 3; k++)
			x->tra[k][x->nr_tcost] = NAN;
		pp_trial(o, PP_CHUNKS, 1, LM_RA_LOADS, 0,
			 &x->tra[0][x->nr_tcost],
			 &x->tra[1][x->nr_tcost], &x->tra[2][x->nr_tcost]);
		if (sbs_trial(o, &x->tsbs[x->nr_tcost]))
			x->tsbs[x->nr_tcost].why = "out of memory";
		ws_trial(o, ws, wl);
		for (k = 0; k < 3; k++) {
			for (j = 0; j < LM_WS; j++)
				x->tws[k][j][x->nr_tcost] = ws[k][j];
			for (j = 0; j < LM_WL; j++)
				x->twl[k][j][x->nr_tcost] = wl[k][j];
		}
		x->nr_tcost++;
	}
	for (i = 0; i < NR_SERIES; i++) {
		if (!series_wanted(o, &all_series[i]))
			continue;
		config_for(o, &all_series[i], LM_CALIB_CPUS, PCSTOCK_CPU_COOP,
			   &cs);
		config_for(o, &all_series[i], LM_CALIB_CPUS,
			   PCSTOCK_CPU_PINNED, &cp);
		harness_rep(x, pinned, i, &cs, &cp);
		for (k = 0; k < x->nr_st; k++) {
			struct lm_cell *cell = &x->cell[i][k];

			cell->local[cell->nr_local] =
				local_cost(o, &all_series[i], x->st[k], &cs);
			cell->nr_local += isfinite(cell->local[cell->nr_local]);
			if (!cp.wl || !x->measure)
				continue;
			if (x->st[k]->create(&cp.tree, &pi))
				return -ENOMEM;
			near_reading(o, &near[0]);
			ran = pinned_sample(pinned, &cp, x->st[k], pi, &smp);
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

/* ---- the calibration of another run (--lines-calib) -------------------- */

/* The number after "@key": in the JSON object @rec; false if none. */
bool json_num(const char *rec, const char *key, double *v)
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
/* The two-line reading of a record, NAN where it has none (before it). */
static void calib_read_two_lines(const char *rec, struct lm_calib *c)
{
	if (!json_num(rec, "two_lines_shared_add_ns", &c->two_shared_s) ||
	    !json_num(rec, "two_lines_private_add_ns", &c->two_private_s) ||
	    !json_num(rec, "two_lines_transfers_per_shared_add",
		      &c->two_per_add)) {
		c->two_shared_s = c->two_private_s = c->two_per_add = NAN;
		return;
	}
	c->two_shared_s *= 1e-9;
	c->two_private_s *= 1e-9;
}

int calib_read(struct lm_run *x, const char *path)
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
			c->fetch_s = NAN;
			if (json_num(rec, "fetch_ns", &c->fetch_s))
				c->fetch_s *= 1e-9;
			calib_read_two_lines(rec, c);
			sb_read(rec, c);	/* stores.c */
			sbs_read(rec, c);	/* sbsize.c */
			ws_read(rec, c);	/* worksweep.c */
			ra_read(rec, c);	/* runahead.c */
			if (strstr(rec, "\"fetch_assumed\":true"))
				c->fetch_s = NAN;	/* assume again */
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
