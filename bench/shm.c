// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm.c - the shared tree's rows (--shm; issue 33, item 8): what charging
 * one tree from many processes (pcstock/shared.h) costs against charging
 * a private tree from threads, measured side by side in one run.
 *
 *  1. The hit pair: a 1-page charge served by this CPU's slot, then its
 *     uncharge into the slot, on root/mid/leaf with the stock batch
 *     (--batch), one thread pinned to the first allowed CPU as the RSEQ
 *     rows pin their workers: pcstock_group_charge()/_uncharge() on a
 *     private tree (default policy, RSEQ domain) against
 *     pcstock_shm_charge()/_uncharge().  2 x --reps + 1 rounds of --ops
 *     pairs, the trees alternated and the first of each round too, so
 *     that a hiccup of the VM spoils one round of one tree, not the
 *     figure: the median and range of each, and of the rounds' ratios.
 *  2. N workers against N: the tenants loop (N workers round-robin over G
 *     groups, one page) and scale's (each on its own leaf, or all on one)
 *     rebuilt here, because workload.c's harness runs threads of one
 *     process through strategies that cannot cross a fork(): N threads
 *     charging a private tree (default policy, RSEQ domain) against N
 *     fork()ed processes, each attached on its own, charging a shared
 *     one (of the default shape, as an application gets it: see
 *     nvn_config()); root and leaves as the bench's depth 2; workers
 *     pinned round-robin over the allowed CPUs; --duration measured after
 *     --warmup (the window opening once every worker has run, and
 *     closing once every worker has run in it), --reps times, which kind runs first alternating; ops/s of
 *     all the workers (a charge and its uncharge is one operation), and
 *     the median of the repetitions' ratios.
 *  3. Recovery: a fork()ed worker charges 2 pages and uncharges 1,
 *     round-robin over every leaf, until a SIGKILL lands wherever it lands
 *     (often inside a window); after waitpid(), pcstock_shm_recover() and
 *     pcstock_shm_reap() are timed apart, 10 x --reps times, on a tree of
 *     SMALL_GROUPS groups and one of BIG_GROUPS.  The recount reads every
 *     record's figure and every CPU's slot of each group: O(groups x
 *     (records + CPUs)); the reap each group's figure of the dead record.
 *
 * Every run ends with a conservation check, the bench's exit status 2 if
 * one fails: no charge failed (no limit is set), and the root's usage is
 * the pages parked in the slots (the workers hold nothing when they stop;
 * after a reap, the dead worker's pages are given back), then nothing
 * once drained.
 *
 * --profile shm-KIND (shm_profile()) runs the hit and the uncharge in
 * marked functions for scripts/callgrind-fastpath.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "shm_bench.h"

/* Workers of one N-against-N run: with the creator, a default region's. */
#define NVN_MAX 63U
#define DEFAULT_PAIRS 1000000UL

/* ---- the two trees -------------------------------------------------------- */



void priv_free(struct priv *t)
{
	while (t->nr_leaves) {
		pcstock_group_destroy(t->leaf[--t->nr_leaves]);
		pcstock_group_put(t->leaf[t->nr_leaves]);
	}
	if (t->mid) {
		pcstock_group_destroy(t->mid);
		pcstock_group_put(t->mid);
	}
	if (t->t)
		pcstock_tree_destroy(t->t);
	if (t->d)
		pcstock_domain_destroy(t->d);
	free(t->leaf);
	memset(t, 0, sizeof(*t));
}

int priv_build(struct priv *t, unsigned int batch, bool mid,
		      unsigned int nr_leaves)
{
	struct pcstock_tree_attr a = {
		.policy = PCSTOCK_TREE_DEFAULT, .batch = batch,
	};
	struct pcstock_group *parent;
	char name[16];
	int ret;

	memset(t, 0, sizeof(*t));
	t->leaf = calloc(nr_leaves, sizeof(*t->leaf));
	if (!t->leaf)
		return -ENOMEM;
	/* NULL: RSEQ, one CPU per usable PU, what an application gets. */
	ret = pcstock_domain_create(NULL, &t->d);
	if (!ret)
		ret = pcstock_tree_create(t->d, &a, &t->t);
	if (!ret && mid)
		ret = pcstock_group_create(pcstock_tree_root(t->t), "mid",
					   &t->mid);
	parent = t->mid ? t->mid : ret ? NULL : pcstock_tree_root(t->t);
	while (!ret && t->nr_leaves < nr_leaves) {
		snprintf(name, sizeof(name), "l%u", t->nr_leaves);
		ret = pcstock_group_create(parent, name,
					   &t->leaf[t->nr_leaves]);
		t->nr_leaves += !ret;
	}
	if (ret)
		priv_free(t);
	return ret;
}

void shared_free(struct shared *t)
{
	if (t->s)
		pcstock_shm_detach(t->s);
	free(t->leaf);
	memset(t, 0, sizeof(*t));
}

/*
 * @a: the region's shape (0s: the defaults), and mid if @mid, and
 * @nr_leaves leaves below it or below the root.
 */
int shared_build(struct shared *t, const struct pcstock_shm_attr *a,
			bool mid, unsigned int nr_leaves)
{
	pcstock_shm_gid parent = PCSTOCK_SHM_ROOT;
	char name[16];
	int ret;

	memset(t, 0, sizeof(*t));
	t->leaf = calloc(nr_leaves, sizeof(*t->leaf));
	if (!t->leaf)
		return -ENOMEM;
	ret = pcstock_shm_create(NULL, a, &t->s);
	if (!ret && mid) {
		ret = pcstock_shm_group_create(t->s, parent, "mid", &t->mid);
		parent = t->mid;
	}
	while (!ret && t->nr_leaves < nr_leaves) {
		snprintf(name, sizeof(name), "l%u", t->nr_leaves);
		ret = pcstock_shm_group_create(t->s, parent, name,
					       &t->leaf[t->nr_leaves]);
		t->nr_leaves += !ret;
	}
	if (ret)
		shared_free(t);
	return ret;
}

/* Pages parked in the slots of every group below the root. */
unsigned long shared_stock(struct shared *t)
{
	unsigned long v = t->mid ? pcstock_shm_stock_pages(t->s, t->mid) : 0;

	for (unsigned int l = 0; l < t->nr_leaves; l++)
		v += pcstock_shm_stock_pages(t->s, t->leaf[l]);
	return v;
}

/*
 * Conservation with no page held: the root's usage is the slots' pages,
 * then 0 once drained (the next run starts from empty slots, as the
 * bench's runs do).  0 or -1 with the reason in @why.
 */
int shared_check(struct shared *t, char *why, size_t len)
{
	unsigned long use = pcstock_shm_usage(t->s, PCSTOCK_SHM_ROOT);
	unsigned long stock = shared_stock(t);

	if (use != stock) {
		snprintf(why, len, "shared: root usage %lu, %lu pages in "
			 "slots", use, stock);
		return -1;
	}
	if (t->mid)
		pcstock_shm_drain(t->s, t->mid);
	for (unsigned int l = 0; l < t->nr_leaves; l++)
		pcstock_shm_drain(t->s, t->leaf[l]);
	use = pcstock_shm_usage(t->s, PCSTOCK_SHM_ROOT);
	if (use) {
		snprintf(why, len, "shared: root usage %lu after a drain",
			 use);
		return -1;
	}
	return 0;
}

int priv_check(struct priv *t, char *why, size_t len)
{
	struct pcstock_group *root = pcstock_tree_root(t->t);
	unsigned long use = pcstock_group_usage(root);
	unsigned long stock = pcstock_group_stock_pages(root);

	if (use != stock) {
		snprintf(why, len, "private: root usage %lu, %lu pages in "
			 "stock", use, stock);
		return -1;
	}
	pcstock_group_drain_all(root);
	use = pcstock_group_usage(root);
	if (use) {
		snprintf(why, len, "private: root usage %lu after a drain",
			 use);
		return -1;
	}
	return 0;
}

/* ---- figures --------------------------------------------------------------- */


static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median and range of @v (sorted in place). */
struct spread spread_of(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return (struct spread){
		.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2,
		.lo = v[0],
		.hi = v[n - 1],
	};
}

double load1(void)
{
	double l[1];

	return getloadavg(l, 1) == 1 ? l[0] : -1;
}


/* ---- 1. the hit pair ----------------------------------------------------------- */

/* Out of line and alike, so that both loops cost the same around the calls. */
static __attribute__((noinline)) unsigned long
priv_pairs(struct pcstock_group *g, unsigned long n)
{
	unsigned long fails = 0;

	for (unsigned long i = 0; i < n; i++) {
		if (pcstock_group_charge(g, 1, 0))
			fails++;
		else
			pcstock_group_uncharge(g, 1);
	}
	return fails;
}

static __attribute__((noinline)) unsigned long
shared_pairs(struct pcstock_shm *s, pcstock_shm_gid g, unsigned long n)
{
	unsigned long fails = 0;

	for (unsigned long i = 0; i < n; i++) {
		if (pcstock_shm_charge(s, g, 1, 0))
			fails++;
		else
			pcstock_shm_uncharge(s, g, 1);
	}
	return fails;
}

static unsigned long priv_misses(struct priv *t)
{
	struct pcstock_group_stats st;

	pcstock_group_stats(t->leaf[0], &st);
	return st.stock.misses;
}

/* One timed round of @pairs pairs on one tree; ns per pair. */
static double hit_round(struct priv *p, struct shared *s, bool shared,
			unsigned long pairs, unsigned long *fails)
{
	double t0 = now_s();

	if (shared)
		*fails += shared_pairs(s->s, s->leaf[0], pairs);
	else
		*fails += priv_pairs(p->leaf[0], pairs);
	return (now_s() - t0) * 1e9 / (double)pairs;
}

static int hit_pair(struct shm_run *run)
{
	const struct opts *o = run->o;
	unsigned int rounds = 2 * o->reps + 1, r;
	double *ns[2], *ratio, l0 = load1();
	unsigned long fails = 0, misses;
	/*
	 * The default shape (4096 groups, 64 records), as pcstock_shm_create()
	 * gives it to an application: see nvn_config().
	 */
	struct pcstock_shm_attr a = { .batch = o->batch };
	struct spread sp[2], rs;
	struct priv p;
	struct shared s;
	cpu_set_t saved;
	bool all_hits;
	int ret;

	ns[0] = calloc(rounds, sizeof(double));
	ns[1] = calloc(rounds, sizeof(double));
	ratio = calloc(rounds, sizeof(double));
	if (!ns[0] || !ns[1] || !ratio ||
	    sched_getaffinity(0, sizeof(saved), &saved)) {
		ret = -ENOMEM;
		goto out_mem;
	}
	ret = priv_build(&p, o->batch, true, 1);
	if (ret)
		goto out_mem;
	ret = shared_build(&s, &a, true, 1);
	if (ret)
		goto out_priv;
	ret = bind_self(o->os_cpus[0]);
	if (ret)
		goto out_shared;
	/* A first pair each: the miss that fills the slot, then hits only. */
	hit_round(&p, &s, false, 1, &fails);
	hit_round(&p, &s, true, 1, &fails);
	misses = priv_misses(&p);
	for (r = 0; r < rounds; r++) {
		bool first = r % 2;

		ns[first][r] = hit_round(&p, &s, first, run->pairs, &fails);
		ns[!first][r] = hit_round(&p, &s, !first, run->pairs, &fails);
		ratio[r] = ns[1][r] / ns[0][r];
	}
	/*
	 * Every pair a hit: no private miss counted, and the shared leaf
	 * charged one batch only (a miss on another slot would add one).
	 */
	all_hits = !fails && priv_misses(&p) == misses &&
		   pcstock_shm_usage(s.s, s.leaf[0]) == o->batch;
	sched_setaffinity(0, sizeof(saved), &saved);
	sp[0] = spread_of(ns[0], rounds);
	sp[1] = spread_of(ns[1], rounds);
	rs = spread_of(ratio, rounds);
	if (o->json) {
		printf("{\"kind\":\"shm_hit\",\"pairs\":%lu,\"rounds\":%u,"
		       "\"batch\":%u,\"os_cpu\":%d,\"all_hits\":%s,"
		       "\"private_ns\":%.3f,\"private_min\":%.3f,"
		       "\"private_max\":%.3f,\"shared_ns\":%.3f,"
		       "\"shared_min\":%.3f,\"shared_max\":%.3f,"
		       "\"ratio\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f,"
		       "\"load_before\":%.2f,\"load_after\":%.2f,"
		       "\"cpu_model\":\"%s\"}\n", run->pairs, rounds,
		       o->batch, o->os_cpus[0], all_hits ? "true" : "false",
		       sp[0].med, sp[0].lo, sp[0].hi, sp[1].med, sp[1].lo,
		       sp[1].hi, rs.med, rs.lo, rs.hi, l0, load1(),
		       run->model);
	} else {
		printf("### Hit pair: a 1-page charge from the stock and its "
		       "uncharge into it\n\nroot/mid/leaf, batch %u, one "
		       "thread pinned to CPU %d; %u rounds of %lu pairs, the "
		       "trees alternated; every pair a hit: %s; load %.2f "
		       "before, %.2f after\n\n| tree | ns per pair, median | "
		       "range |\n|---|---:|---:|\n"
		       "| private (default policy, RSEQ domain) | %.2f | "
		       "%.2f-%.2f |\n| shared (pcstock_shm_charge) | %.2f | "
		       "%.2f-%.2f |\n| **shared / private** (goal <= 1.1x) | "
		       "**%.2fx** | %.2f-%.2fx |\n\n", o->batch,
		       o->os_cpus[0], rounds, run->pairs,
		       all_hits ? "yes" : "NO", l0, load1(), sp[0].med,
		       sp[0].lo, sp[0].hi, sp[1].med, sp[1].lo, sp[1].hi,
		       rs.med, rs.lo, rs.hi);
	}
	/* Not a conservation failure, but the rows would not be hits. */
	if (!all_hits)
		fprintf(stderr, "pcstock-bench --shm: the hit pair missed "
			"(%lu failed charges)\n", fails);
out_shared:
	shared_free(&s);
out_priv:
	priv_free(&p);
out_mem:
	free(ns[0]);
	free(ns[1]);
	free(ratio);
	return ret;
}

/* ---- 2. N processes against N threads --------------------------------------------- */

struct nvn_worker {
	_Alignas(BENCH_LINE) atomic_ulong ops;	/* published progress */
	atomic_ulong fails;
	atomic_int err;
};

/* In a MAP_SHARED mapping: the fork()ed workers write it too. */
struct nvn_ctl {
	_Alignas(BENCH_LINE) atomic_int phase;	/* RUN_* */
	atomic_uint ready;
	struct nvn_worker w[NVN_MAX];
};

struct nvn_cfg {
	const char *workload;
	unsigned int groups;		/* tenants: the round-robin's span */
	bool own;			/* scale: a leaf per worker */
};

struct nvn {
	const struct opts *o;
	struct nvn_ctl *ctl;
	unsigned int n, span;
	bool own;
	struct priv priv;
	struct shared sh;
};

struct nvn_arg {
	struct nvn *r;
	unsigned int id;
};

/*
 * workload.c's pair_body() on either tree (@shared: the shared one through
 * this process's handle @h), inlined into each caller with @shared a
 * constant, so that the choice costs neither a branch nor an indirect call.
 */
static inline __attribute__((always_inline)) void
nvn_loop(struct nvn *r, unsigned int id, bool shared, struct pcstock_shm *h)
{
	struct nvn_worker *w = &r->ctl->w[id];
	unsigned int leaf = r->own ? id : id * r->span / r->n, k = leaf;
	unsigned long ops = 0, fails = 0;
	int err;

	while (atomic_load_explicit(&r->ctl->phase, memory_order_relaxed) !=
	       RUN_STOP) {
		err = shared ? pcstock_shm_charge(h, r->sh.leaf[leaf], 1, 0) :
			       pcstock_group_charge(r->priv.leaf[leaf], 1, 0);
		if (err)
			atomic_store_explicit(&w->fails, ++fails,
					      memory_order_relaxed);
		else if (shared)
			pcstock_shm_uncharge(h, r->sh.leaf[leaf], 1);
		else
			pcstock_group_uncharge(r->priv.leaf[leaf], 1);
		atomic_store_explicit(&w->ops, ++ops, memory_order_relaxed);
		if (r->span > 1) {
			k = k + 1 == r->span ? 0 : k + 1;
			leaf = k;
		}
	}
}

/* Ready, then wait for the start; false if the run was called off. */
static bool nvn_go(struct nvn_ctl *c)
{
	int phase;

	atomic_fetch_add_explicit(&c->ready, 1, memory_order_release);
	while ((phase = atomic_load_explicit(&c->phase,
					     memory_order_acquire)) == RUN_WAIT)
		sched_yield();
	return phase == RUN_GO;
}

static int nvn_os_cpu(const struct opts *o, unsigned int id)
{
	return o->os_cpus[id % o->nr_os_cpus];
}

static void *nvn_thread(void *arg)
{
	struct nvn_arg *a = arg;
	struct nvn_ctl *c = a->r->ctl;
	int err = bind_self(nvn_os_cpu(a->r->o, a->id));

	if (err) {
		atomic_store(&c->w[a->id].err, err);
		atomic_fetch_add_explicit(&c->ready, 1, memory_order_release);
		return NULL;
	}
	if (nvn_go(c))
		nvn_loop(a->r, a->id, false, NULL);
	return NULL;
}

/* The child of a fork(): attach on its own, run, detach, exit. */
static __attribute__((noreturn)) void nvn_child(struct nvn *r,
						unsigned int id)
{
	struct nvn_ctl *c = r->ctl;
	struct pcstock_shm *h = NULL;
	int err = bind_self(nvn_os_cpu(r->o, id));

	if (!err)
		err = pcstock_shm_attach_fd(pcstock_shm_fd(r->sh.s), &h);
	if (err) {
		atomic_store(&c->w[id].err, err);
		atomic_fetch_add_explicit(&c->ready, 1, memory_order_release);
		_exit(1);
	}
	if (nvn_go(c))
		nvn_loop(r, id, true, h);
	/* Every figure 0: the record is freed, not left for a reap. */
	_exit(pcstock_shm_detach(h) ? 1 : 0);
}

static void nvn_snapshot(const struct nvn *r, unsigned long *v)
{
	for (unsigned int i = 0; i < r->n; i++)
		v[i] = atomic_load_explicit(&r->ctl->w[i].ops,
					    memory_order_relaxed);
}

/* How long nvn_wait_all() waits for a worker that does not run, in s. */
#define NVN_STALL_S 10.0

/*
 * Snapshot into @v once every worker has made an operation since @base
 * (since the start if NULL): 0, or -ETIMEDOUT after NVN_STALL_S.
 */
static int nvn_wait_all(const struct nvn *r, const unsigned long *base,
			unsigned long *v)
{
	double until = now_s() + NVN_STALL_S;
	unsigned int i;

	for (;;) {
		nvn_snapshot(r, v);
		for (i = 0; i < r->n && v[i] > (base ? base[i] : 0); i++)
			;
		if (i == r->n)
			return 0;
		if (now_s() > until) {
			fprintf(stderr, "pcstock-bench --shm: worker %u of %u "
				"made no operation in %g s\n", i, r->n,
				NVN_STALL_S);
			return -ETIMEDOUT;
		}
		sleep_s(0.0002);
	}
}

/*
 * One run of r->n workers, threads on the private tree or processes on
 * the shared one, timed as run.c's run_timed(): ops/s in *@rate, failed
 * charges in *@fails.  0 or -errno.
 */
static int nvn_timed(struct nvn *r, bool procs, double *rate,
		     unsigned long *fails)
{
	struct nvn_ctl *c = r->ctl;
	struct nvn_arg arg[NVN_MAX];
	unsigned long v0[NVN_MAX], v1[NVN_MAX];
	/* Not in @c: a child's fork() returns 0 there too. */
	pthread_t tid[NVN_MAX];
	pid_t pid[NVN_MAX];
	unsigned int i, started = 0;
	double t0, t1;
	int ret = 0, st;

	atomic_store(&c->phase, RUN_WAIT);
	atomic_store(&c->ready, 0);
	for (i = 0; i < r->n; i++) {
		atomic_store(&c->w[i].ops, 0);
		atomic_store(&c->w[i].fails, 0);
		atomic_store(&c->w[i].err, 0);
		arg[i] = (struct nvn_arg){ r, i };
		if (procs) {
			pid[i] = fork();
			if (!pid[i])
				nvn_child(r, i);
			ret = pid[i] < 0 ? -errno : 0;
		} else {
			ret = -pthread_create(&tid[i], NULL, nvn_thread,
					      &arg[i]);
		}
		if (ret)
			break;
		started++;
	}
	while (atomic_load_explicit(&c->ready, memory_order_acquire) <
	       started)
		sleep_s(0.0005);
	for (i = 0; i < started && !ret; i++)
		ret = atomic_load(&c->w[i].err);
	if (ret || started < r->n) {
		atomic_store_explicit(&c->phase, RUN_STOP,
				      memory_order_release);
		goto join;
	}
	/* release: pairs with the acquire poll in nvn_go(). */
	atomic_store_explicit(&c->phase, RUN_GO, memory_order_release);
	sleep_s(r->o->warmup);
	/*
	 * The window opens once every worker has run and closes once every
	 * worker has advanced in it: on a loaded machine (ctest -j on two
	 * CPUs) a pinned worker can wait longer than a --quick window for its
	 * CPU, and a rate of 0 would make the ratio infinite.
	 */
	ret = nvn_wait_all(r, NULL, v0);
	t0 = now_s();
	sleep_s(r->o->duration);
	if (!ret)
		ret = nvn_wait_all(r, v0, v1);
	t1 = now_s();
	atomic_store_explicit(&c->phase, RUN_STOP, memory_order_relaxed);
	*rate = 0;
	for (i = 0; i < r->n; i++)
		*rate += (double)(v1[i] - v0[i]);
	*rate /= t1 - t0;
join:
	*fails = 0;
	for (i = 0; i < started; i++) {
		if (!procs) {
			pthread_join(tid[i], NULL);
		} else if (waitpid(pid[i], &st, 0) < 0 ||
			   !WIFEXITED(st) || WEXITSTATUS(st)) {
			ret = ret ? ret : -ECHILD;
		}
		*fails += atomic_load(&c->w[i].fails);
	}
	return ret;
}

static void nvn_print_head(const struct shm_run *run)
{
	const struct opts *o = run->o;

	if (o->json)
		return;
	printf("### N processes against N threads\n\nthreads: a private "
	       "tree (default policy, RSEQ domain); processes: fork()ed, "
	       "each attached on its own, on a shared tree of the default "
	       "shape (4096 groups, 64 records); root and "
	       "leaves, batch %u, workers pinned round-robin over %u CPUs; "
	       "%u repetitions of %g s after %g s, which kind runs first "
	       "alternating; ops/s of all the workers, an operation a "
	       "1-page charge and its uncharge; tenants: round-robin over G "
	       "groups, scale: each worker on its own leaf, or all on one; "
	       "processes / threads: the median of the repetitions' "
	       "ratios, and their range\n\n| workload | config | N | threads ops/s | processes "
	       "ops/s | processes / threads | range | load |\n"
	       "|---|---|---:|---:|---:|---:|---:|---:|\n", o->batch,
	       o->nr_os_cpus, o->reps, o->duration, o->warmup);
}

/* Both trees of one configuration, --reps runs of each. */
static int nvn_config(struct shm_run *run, struct nvn_ctl *ctl,
		      const struct nvn_cfg *cfg, unsigned int n)
{
	const struct opts *o = run->o;
	unsigned int leaves = cfg->groups ? cfg->groups : cfg->own ? n : 1;
	/*
	 * The default shape, as an application gets it, not one sized to the
	 * leaves: a record's figures are a row of max_groups words, so that
	 * in a region of a few groups two processes' figures of one group
	 * share a cache line, which every operation writes.
	 */
	struct pcstock_shm_attr a = { .batch = o->batch };
	struct nvn r = {
		.o = o, .ctl = ctl, .n = n, .own = cfg->own,
		.span = cfg->groups ? cfg->groups : 1,
	};
	double *rate[2], *ratio, l0 = load1();
	struct spread sp[2], rs;
	unsigned long fails;
	char label[32], why[160];
	unsigned int rep, k;
	bool cons_ok = true;
	int ret;

	rate[0] = calloc(o->reps, sizeof(double));
	rate[1] = calloc(o->reps, sizeof(double));
	ratio = calloc(o->reps, sizeof(double));
	ret = rate[0] && rate[1] && ratio ? 0 : -ENOMEM;
	if (!ret)
		ret = priv_build(&r.priv, o->batch, false, leaves);
	if (!ret) {
		ret = shared_build(&r.sh, &a, false, leaves);
		if (ret)
			priv_free(&r.priv);
	}
	if (ret)
		goto out;
	for (rep = 0; rep < o->reps && !ret; rep++) {
		for (k = 0; k < 2 && !ret; k++) {
			bool procs = (rep + k) % 2;

			ret = nvn_timed(&r, procs, &rate[procs][rep], &fails);
			if (ret)
				break;
			if (fails ||
			    (procs ? shared_check(&r.sh, why, sizeof(why)) :
				     priv_check(&r.priv, why, sizeof(why)))) {
				if (fails)
					snprintf(why, sizeof(why), "%lu failed "
						 "charges", fails);
				fprintf(stderr, "pcstock-bench --shm: %s N=%u: "
					"%s\n", cfg->workload, n, why);
				cons_ok = false;
			}
		}
		ratio[rep] = rate[1][rep] / rate[0][rep];
	}
	shared_free(&r.sh);
	priv_free(&r.priv);
	if (ret)
		goto out;
	run->bad |= !cons_ok;
	sp[0] = spread_of(rate[0], o->reps);
	sp[1] = spread_of(rate[1], o->reps);
	rs = spread_of(ratio, o->reps);
	if (cfg->groups)
		snprintf(label, sizeof(label), "G=%u", cfg->groups);
	else
		snprintf(label, sizeof(label), "%s leaf",
			 cfg->own ? "own" : "shared");
	if (o->json)
		printf("{\"kind\":\"shm_nvn\",\"workload\":\"%s\","
		       "\"config\":\"%s\",\"n\":%u,\"reps\":%u,"
		       "\"threads_ops_s\":%.0f,\"threads_min\":%.0f,"
		       "\"threads_max\":%.0f,\"procs_ops_s\":%.0f,"
		       "\"procs_min\":%.0f,\"procs_max\":%.0f,"
		       "\"ratio\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f,"
		       "\"cons_ok\":%s,\"load_before\":%.2f,"
		       "\"load_after\":%.2f,\"cpu_model\":\"%s\"}\n",
		       cfg->workload, label, n, o->reps, sp[0].med, sp[0].lo,
		       sp[0].hi, sp[1].med, sp[1].lo, sp[1].hi, rs.med, rs.lo,
		       rs.hi, cons_ok ? "true" : "false", l0, load1(),
		       run->model);
	else
		printf("| %s | %s | %u | %.3g | %.3g | %.2fx | %.2f-%.2fx | "
		       "%.2f |\n", cfg->workload, label, n, sp[0].med,
		       sp[1].med, rs.med, rs.lo, rs.hi, l0);
out:
	free(rate[0]);
	free(rate[1]);
	free(ratio);
	return ret;
}

static int nvn_all(struct shm_run *run)
{
	static const struct nvn_cfg cfgs[] = {
		{ "tenants", 8, false },
		{ "tenants", 64, false },
		{ "scale", 0, true },
		{ "scale", 0, false },
	};
	static const unsigned int dflt[] = { 1, 2, 4 };
	unsigned int ns[8], nr_n, i, j;
	struct nvn_ctl *ctl;
	int ret = 0;

	nr_n = bench_thread_list(run->o, ns, 8, dflt, 3);
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED)
		return -errno;
	nvn_print_head(run);
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]) && !ret; i++)
		for (j = 0; j < nr_n && !ret; j++)
			ret = ns[j] > NVN_MAX ? -E2BIG :
			      nvn_config(run, ctl, &cfgs[i], ns[j]);
	if (!run->o->json)
		printf("\n");
	munmap(ctl, sizeof(*ctl));
	return ret;
}

/* ---- --profile shm-KIND: callgrind's marks ------------------------------------------ */

#define MARK BENCH_MARK

MARK static int bench_mark_shm_charge(struct pcstock_shm *s, pcstock_shm_gid g)
{
	return pcstock_shm_charge(s, g, 1, 0);
}

MARK static int bench_mark_shm_uncharge(struct pcstock_shm *s,
					pcstock_shm_gid g)
{
	return pcstock_shm_uncharge(s, g, 1);
}

MARK static int bench_mark_shm_getcpu(void)
{
	return sched_getcpu();
}

/*
 * The slot walks as profile.c's g-hit and g-uncharge (the drains and the
 * setup charges outside the marks), on a shared root/mid/leaf, batch
 * PROF_BATCH: hit, uncharge, and getcpu, a bare sched_getcpu(), which is
 * where a shared tree finds its CPU when glibc registered no rseq area
 * (valgrind has no rseq(2)): part of both counts there, one load of the
 * rseq area instead on a real run.  The process is pinned to its first
 * CPU so that every operation finds the slot it filled.
 */
#define PROF_BATCH 64U

int shm_profile(const char *kind, unsigned long n)
{
	struct pcstock_shm_attr a = { .batch = PROF_BATCH };
	struct shared t;
	cpu_set_t set;
	unsigned long i = 0, k;
	int ret, cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	ret = bind_self(cpu);
	if (!ret)
		ret = shared_build(&t, &a, true, 1);
	if (ret)
		goto out;
	while (!ret && i < n) {
		pcstock_shm_drain(t.s, t.leaf[0]);
		if (!strcmp(kind, "getcpu")) {
			for (; i < n; i++)
				bench_mark_shm_getcpu();
		} else if (!strcmp(kind, "hit")) {
			/* A miss parks batch - 1 pages: that many hits. */
			ret = pcstock_shm_charge(t.s, t.leaf[0], 1, 0);
			for (k = 1; !ret && k < PROF_BATCH && i < n; k++, i++)
				ret = bench_mark_shm_charge(t.s, t.leaf[0]);
			if (!ret)
				ret = pcstock_shm_uncharge(t.s, t.leaf[0], k);
		} else if (!strcmp(kind, "uncharge")) {
			/* Leaves 1 page in the slot: batch - 1 fit. */
			ret = pcstock_shm_charge(t.s, t.leaf[0],
						 PROF_BATCH - 1, 0);
			for (k = 0; !ret && k < PROF_BATCH - 1 && i < n;
			     k++, i++)
				ret = bench_mark_shm_uncharge(t.s, t.leaf[0]);
			if (!ret && k < PROF_BATCH - 1)
				ret = pcstock_shm_uncharge(t.s, t.leaf[0],
							   PROF_BATCH - 1 - k);
		} else {
			ret = -EINVAL;
		}
	}
	pcstock_shm_drain(t.s, t.leaf[0]);
	if (!ret && pcstock_shm_usage(t.s, PCSTOCK_SHM_ROOT))
		ret = -EPROTO;
	shared_free(&t);
out:
	if (ret)
		fprintf(stderr, "pcstock-bench: --profile shm-%s: %s\n", kind,
			ret == -EINVAL ? "unknown kind" : strerror(-ret));
	else
		printf("profiled shm-%s x %lu (rseq area: %s; windows: %s)\n",
		       kind, n, __rseq_size ? "registered" : "none",
		       syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) &
				       MEMBARRIER_CMD_GLOBAL_EXPEDITED ?
			       "membarrier" : "fenced");
	return ret;
}

/* ---- the mode ---------------------------------------------------------------------- */

int shm_main(const struct opts *o, unsigned long pairs)
{
	struct shm_run run = {
		.o = o, .pairs = pairs ? pairs : DEFAULT_PAIRS,
	};
	int ret;

	bench_cpu_model(run.model, sizeof(run.model));
	if (!o->json)
		printf("## pcstock-bench --shm: a shared tree against a "
		       "private one, %s\n\n", run.model);
	ret = hit_pair(&run);
	if (!ret)
		ret = nvn_all(&run);
	if (!ret)
		ret = shm_recovery(&run);
	if (ret) {
		fprintf(stderr, "pcstock-bench --shm: %s\n", strerror(-ret));
		return 1;
	}
	if (run.bad) {
		fprintf(stderr, "pcstock-bench --shm: conservation violated\n");
		return 2;
	}
	return 0;
}
