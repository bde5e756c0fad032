/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench.h - pcstock-bench internals.
 *
 * A *strategy* is one way of charging pages to a tree of groups (a bare
 * atomic floor, a mutex-protected plain tree, or the library with one of its
 * stock policies).  A *workload* builds configurations (a tree shape, a
 * thread placement, parameters) and measures one strategy on one
 * configuration, giving a *sample*.  main.c runs every strategy on every
 * configuration, interleaved in a shuffled order within each repetition,
 * checks conservation after every run and hands the samples to report.c.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include <pcstock/pcstock.h>

/* will-it-scale's spacing between per-task counters: no false sharing. */
#define BENCH_LINE 256
#define BENCH_MAX_THREADS 512
#define BENCH_MAX_CONFIGS 256
/* Room to select every strategy at once: 6 fixed ones and the policies. */
#define BENCH_MAX_STRATEGIES (6 + PCSTOCK_TREE_NR_POLICIES)
#define BENCH_MAX_REPS 1000
/* --lines-store-buffer's largest bound, in stores. */
#define BENCH_LINES_SB_MAX 256

/*
 * A function the profiles and the instruction counts find by its name: one
 * copy, kept, never inlined (clang has no noclone; it does not clone).
 */
#ifdef __clang__
#define BENCH_MARK __attribute__((noinline, used))
#else
#define BENCH_MARK __attribute__((noinline, noclone, used))
#endif

/*
 * The tree every strategy builds for a configuration: a chain of depth - 1
 * shared ancestors (none when depth == 1) with nr_leaves leaves under the
 * deepest one.  Workers charge leaves only.
 */
struct tree_spec {
	unsigned int nr_leaves;
	unsigned int depth;		/* charged levels on a leaf's path */
	unsigned long leaf_max;		/* limit of every leaf, 0: none */
	unsigned int nr_cpus;		/* CPUs of the domain */
	unsigned int batch;
	enum pcstock_cpu_mode mode;
};

/* Strategy capabilities. */
#define STRAT_LIMITS	0x1	/* enforces leaf_max */
#define STRAT_STOCK	0x2	/* hides pages in per-CPU stock */
#define STRAT_DOMAIN	0x4	/* threads must be CPUs of its domain */
#define STRAT_BOUNDED	0x8	/* stock never exceeds stock_bound() */
#define STRAT_PRESSURE	0x10	/* counts reclaim calls and max events */
#define STRAT_POLICY	0x20	/* a registered policy: @policy is valid */

/**
 * struct strategy - one way of charging a tree
 *
 * Every hook gets the instance made by create().  uncharge() gives back
 * kmem/socket pages (through the stock), uncharge_direct() folio pages.  @thread is the worker's
 * index (0..BENCH_MAX_THREADS-1; the main thread uses 0 outside runs).
 * check() verifies conservation at a quiescent point: @held[l] is what the
 * workers hold through leaf l; it returns 0 or -1 with a reason in @why.
 * pressure(), with STRAT_PRESSURE, reads the tree's running totals of
 * reclaim callback calls (the callback reclaims nothing) and max events.
 * counters(), optional, calls @fn on every counter of the tree with a
 * label ("level 0", "leaf 3"), so that the line model can name lines.
 * With STRAT_POLICY, @policy is the registered policy the strategy runs
 * through the group API (group.c makes one such strategy per policy);
 * the bench asks its properties, pcstock_tree_policy_info(), not its
 * value.
 */
struct strategy {
	const char *name;
	const char *what;
	unsigned int flags;
	enum pcstock_tree_policy policy;	/* with STRAT_POLICY */
	int (*create)(const struct tree_spec *spec, void **inst);
	void (*destroy)(void *inst);
	int (*enter)(void *inst, unsigned int cpu);
	void (*exit)(void *inst);
	bool (*charge)(void *inst, unsigned int thread, unsigned int leaf,
		       unsigned long nr);
	void (*uncharge)(void *inst, unsigned int thread, unsigned int leaf,
			 unsigned long nr);
	/* folio pages (uncharge_direct()); NULL: as uncharge */
	void (*uncharge_direct)(void *inst, unsigned int thread,
			       unsigned int leaf, unsigned long nr);
	/* the calling CPU schedules: run its queued work; NULL: none */
	void (*idle)(void *inst);
	void (*drain_all)(void *inst);
	unsigned long (*stock_pages)(void *inst);
	unsigned long (*stock_bound)(void *inst);
	int (*check)(void *inst, const long *held, char *why, size_t len);
	/* STRAT_PRESSURE: reclaim callback calls and max events so far */
	void (*pressure)(void *inst, unsigned long *reclaims,
			 unsigned long *max_events);
	void (*counters)(void *inst,
			 void (*fn)(const struct pcstock_counter *c,
				    const char *label, void *arg),
			 void *arg);
};

struct opts;
struct config;

/* What one run of one strategy on one configuration measured. */
struct sample {
	double value;		/* the workload's metric */
	double thread_min;	/* slowest worker, ops/s */
	double thread_max;	/* fastest worker, ops/s */
	unsigned long ops;	/* operations measured, all workers */
	unsigned long fails;	/* failed charges measured */
	double aux[2];		/* workload-specific, see workload.aux_name */
	bool cons_ok;		/* conservation held at the end */
};

/**
 * struct workload - a family of configurations and how to measure one
 * @metric: what sample.value is ("ms/iter", "ops/s/thread", ...)
 * @higher_better: direction of @metric, for ratios
 * @no_ratio: @metric is a state, not a cost: no ratios
 * @needs: strategy flags a strategy must have to take part
 * @expand: appends this workload's configurations; returns how many
 * @measure: runs @s on @cfg once; returns 0 or -errno (setup failure)
 */
struct workload {
	const char *name;
	const char *metric;
	const char *aux_name[2];
	bool higher_better;
	bool no_ratio;
	unsigned int needs;
	unsigned int (*expand)(const struct opts *o, struct config *cfg,
			       unsigned int room);
	int (*measure)(const struct opts *o, const struct config *cfg,
		       const struct strategy *s, void *inst,
		       struct sample *out);
};

struct config {
	const struct workload *wl;
	char label[48];
	double x;			/* abscissa for plots */
	const char *series;		/* plot/line grouping, or NULL */
	unsigned int threads;
	struct tree_spec tree;
	unsigned int arg[4];		/* workload-specific */
};

struct opts {
	char *workloads;		/* comma list, NULL: all */
	char *strategies;		/* comma list, NULL: all */
	char *threads;			/* comma list, NULL: per workload */
	const char *out;
	const char *baseline;
	double duration;		/* seconds measured per run */
	double warmup;			/* seconds before measuring */
	unsigned int reps;
	unsigned int batch;
	enum pcstock_cpu_mode mode;
	bool json;
	bool quick;
	bool full;
	uint64_t seed;
	bool lines;			/* --lines: the cache-line model */
	bool opcount;			/* --opcount: locked ops per op */
	const char *sim_cpus;		/* --cpus LIST for --lines */
	const char *topology;		/* --topology for --lines */
	double remote_factor;		/* --remote-factor for --lines */
	bool interleave_op;		/* --interleave op for --lines */
	bool pricing_hold;		/* --pricing measured or hold */
	bool pricing_request;		/* --pricing measured: a request's way */
	double lines_fetch_ns;		/* --lines-fetch-ns, NAN: measured */
	double lines_store_serial;	/* --lines-store-serial, NAN: read */
	double lines_runahead;		/* --lines-runahead, NAN: read */
	double lines_lock_ends;		/* --lines-lock-ends, NAN: fitted */
	double lines_under_load;	/* --lines-drain-under-load, NAN: read */
	unsigned int lines_store_buffer; /* --lines-store-buffer, 0: no end */
	bool lines_store_buffer_set;	/* given: no design's own bound */
	double sock_work_ns;		/* --sock-work-ns for --lines */
	const char *lines_calib;	/* --lines-calib FILE */
	unsigned int nr_os_cpus;	/* CPUs this process may run on */
	int *os_cpus;
};

/* strategy.c: the table, built at first use (policies from the registry) */
const struct strategy *bench_strategy_nth(unsigned int i);
const char *bench_default_strategies(void);
const char *bench_policy_strategies(void);
bool bench_strategy_is_default(const struct strategy *s);
const struct strategy *bench_strategy(const char *name);
const char *bench_strategy_note(void);

/* workload.c, drain.c */
extern const struct workload *const bench_workloads[];
unsigned int bench_nr_workloads(void);
unsigned int bench_thread_list(const struct opts *o, unsigned int *v,
			       unsigned int room, const unsigned int *dflt,
			       unsigned int nr_dflt);
extern const struct workload wl_drain, wl_strand;
extern const struct workload wl_sock, wl_scale, wl_tenants, wl_nearmax;

/* run.c: the timed thread harness shared by the workloads */
struct worker;
typedef void (*worker_fn)(struct worker *w);

struct run {
	const struct opts *o;
	const struct config *cfg;
	const struct strategy *s;
	void *inst;
	void *shared;			/* workload state */
	worker_fn body;
	atomic_int phase;		/* RUN_* */
	atomic_uint ready;
	struct worker *w;
	unsigned int nr;
};

enum { RUN_WAIT, RUN_GO, RUN_STOP };

struct worker {
	_Alignas(BENCH_LINE) atomic_ulong ops;	/* published progress */
	atomic_ulong fails;
	struct run *run;
	long *held;			/* pages held, per leaf */
	uint64_t rng;
	unsigned int id;
	unsigned int cpu;		/* domain CPU */
	int os_cpu;			/* OS CPU to bind to, -1: none */
	int err;
	pthread_t tid;
};

int run_timed(struct run *r, struct sample *out);
int run_os_cpu(const struct opts *o, unsigned int cpu);
int bind_self(int os_cpu);
double now_s(void);
void sleep_s(double s);
bool worker_go(struct worker *w);
void cpu_relax(void);
uint64_t rng_next(uint64_t *s);
int release_and_check(const struct strategy *s, void *inst,
		      const struct tree_spec *t, long *held, char *why,
		      size_t len);
/* workload.c: run @body on cfg->threads workers, check conservation */
int measure_workers(const struct opts *o, const struct config *cfg,
		    const struct strategy *s, void *inst, worker_fn body,
		    void *shared, bool one_cpu, struct sample *out);
struct config *bench_config_add(struct config *cfg, unsigned int *n,
				unsigned int room, const struct opts *o,
				unsigned int threads, unsigned int leaves,
				unsigned int depth);

static inline void worker_tick(struct worker *w, unsigned long n)
{
	atomic_store_explicit(&w->ops, n, memory_order_relaxed);
}

static inline bool worker_stopped(const struct worker *w)
{
	return atomic_load_explicit(&w->run->phase, memory_order_relaxed) ==
	       RUN_STOP;
}

/* report.c */
struct result;
struct result *result_new(const struct opts *o, unsigned int nr_cfg,
			  unsigned int nr_strat);
void result_put(struct result *res, unsigned int cfg, unsigned int strat,
		unsigned int rep, const struct sample *smp);
int report_write(struct result *res, const struct config *cfgs,
		 unsigned int nr_cfg, const struct strategy *const *strats,
		 unsigned int nr_strat, const char *meta_json,
		 const char *meta_text);
void result_free(struct result *res);

/* meta.c */
char *meta_json(const struct opts *o, double elapsed);
char *meta_text(const struct opts *o, double elapsed);
void bench_cpu_model(char *buf, size_t len);
const char *cpu_mode_name(enum pcstock_cpu_mode m);

/* profile.c */
int profile_main(const char *what, unsigned long n);
/* shm.c: --shm (@pairs: hit pairs per round, 0: its default) and
 * profile.c's shm- kinds */
int shm_main(const struct opts *o, unsigned long pairs);
int shm_profile(const char *kind, unsigned long n);
/* inline.c: profile.c's marks for the inline fast paths, on c[2]. */
bool bench_mark_inline_charge_stock(struct pcstock_counter *c);
void bench_mark_inline_uncharge_stock(struct pcstock_counter *c);

/* lines/lines.c (pcstock-bench-lines only) */
int lines_main(const struct opts *o);
int netrr_main(const struct opts *o, unsigned long n);

/*
 * opcount.c: --opcount (pcstock-bench-lines only), and profile.c's
 * NAME-tenants-N and NAME-scale-own kinds.
 */
int opcount_main(const struct opts *o);
int opcount_profile(enum pcstock_tree_policy policy,
		    enum pcstock_cpu_mode mode, const char *kind,
		    unsigned long n);

#endif /* BENCH_H */
