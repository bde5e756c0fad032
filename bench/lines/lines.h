/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lines.h - pcstock-bench --lines: how many contended cache lines one
 * operation of each stock policy moves, and what that predicts for
 * machines we do not have (docs/lines-model.md states the model).
 * What the files of bench/lines/ share (private).
 *
 * They are built only into pcstock-bench-lines, whose library is the
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
 *
 * The files, each using only those above it:
 *	model.c		the directory, the trace hook feeding it, the
 *			names of lines and the simulated topology;
 *	replay.c	the stepped workloads and their replays, by rounds
 *			or in simulated time;
 *	report.c	the records, tables and plots;
 *	stores.c	the calibration's store reading, and
 *	runahead.c	its run-ahead reading,
 *	sbsize.c	its reading of the store buffer's size, and
 *	worksweep.c	its work reading (the four taken by calib.c);
 *	calib.c		the costs measured on this machine, or read from
 *			another run's calibration (--lines-calib);
 *	drain.c		what drain_all costs beside a charger;
 *	lines.c		one run of the model per series, CPU count and
 *			strategy, and lines_main().
 */
#ifndef BENCH_LINES_H
#define BENCH_LINES_H

#include <stdio.h>

#include "atomic.h"
#include "bench.h"

#define LM_MAX_CPUS 1024U
#define LM_WORDS (LM_MAX_CPUS / 64)
#define LM_LINE 64U
#define LM_HOT 3		/* hottest lines reported per run */
#define LM_MAX_N 16		/* CPU counts per run */
/* The group strategies, one per registered policy. */
#define LM_STRATS PCSTOCK_TREE_NR_POLICIES
#define LM_CALIB_CPUS 2U	/* where local costs and measurements are */

/* ---- model.c: the directory, the trace, naming lines, topology ---------- */

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
	unsigned long stores;		/* the op replay's traced plain stores */
};

/* The store reading (stores.c): 0 to LM_SB_K - 1 stores per round. */
#define LM_SB_K 3U
/*
 * The drain reading (stores.c): a round with a store (bit 0), a load of a
 * line the other core stored (bit 1), both, or neither, before its add.
 */
#define LM_SBL 4U
#define LM_SBL_LINES 16U	/* the other thread's lines in it */
/* --lines-store-buffer: at most this many buffered stores per CPU. */
#define LM_SB_CAP_MAX ((unsigned int)BENCH_LINES_SB_MAX)
/*
 * The work reading (worksweep.c): its loads between adds, one per trial;
 * and its locked adds to a line of the thread's own between them.
 */
#define LM_WS 6U
extern const unsigned int lm_ws_loads[LM_WS];
#define LM_WL 3U
extern const unsigned int lm_wl_locks[LM_WL];

/* The run-ahead reading (runahead.c): dependent loads before each add. */
#define LM_RA_LOADS 32U

/* A simulated CPU's traced accesses not yet applied (time replay). */
struct lm_queue {
	uintptr_t *v;			/* address | 1 if a write */
	unsigned int nr, at, room;	/* queued, applied, allocated */
};

#define SOCK_RING 256U

/* workload.c's ring, laid out alike: its lines are traced as well. */
struct sim_ring {
	_Alignas(BENCH_LINE) unsigned int head;	/* written by the sender */
	_Alignas(BENCH_LINE) unsigned int tail;	/* written by the receiver */
	_Alignas(BENCH_LINE) unsigned char pages[SOCK_RING];
};

struct lm_owner {
	const struct pcstock_counter *c;
	char label[24];
};

struct lm_owners {
	struct lm_owner *v;
	unsigned int nr, room;
	const struct sim_ring *ring;	/* sock's rings, or NULL */
};

extern struct lm_dir dir;
/* Thread-local: liburcu's call_rcu thread runs library code too. */
extern _Thread_local int sim_cpu;	/* CPU being played, -1: none */
extern struct lm_queue *pending;	/* time replay: queue, not apply */

struct lm_line *dir_find(struct lm_dir *d, uintptr_t tag);
unsigned int dir_access(struct lm_dir *d, unsigned int cpu, uintptr_t addr,
			bool write, struct lm_line **lp);
bool dir_waits(const struct lm_line *l, unsigned int cpu, bool write);
void dir_zero(struct lm_dir *d);
void dir_clear(struct lm_dir *d);
unsigned int dir_hottest(const struct lm_dir *d, struct lm_line *out,
			 unsigned int n);
void trace_access(enum pcs_atomic_op op, const void *obj);
void owner_add(const struct pcstock_counter *c, const char *label, void *arg);
void line_name(const struct lm_owners *ow, const struct lm_line *l,
	       unsigned int nr_cpus, char *buf, size_t len);
void topo_string(const char *user, unsigned int n, char *buf, size_t len);
int topo_place(const char *desc, unsigned int n, int *pkg);

/* ---- replay.c: the stepped workloads and their replays ------------------ */

/* A series is one workload shape, at any CPU count. */
struct series {
	const char *name;
	const char *workload;		/* its name for --workload */
	const struct workload *wl;	/* the timed twin, NULL: none */
	bool sock;
	bool folio;			/* uncharge_direct() the burst */
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
	unsigned long stores, locked;	/* time replay: traced plain stores
					   and locked ops applied */
	bool folio;			/* the burst goes back in one batch */
	/* The time replay (sim_timed()). */
	struct lm_queue *q;		/* each CPU's pending accesses */
	double *clock;			/* each CPU's simulated seconds */
	unsigned int *heap;		/* the CPUs, earliest clock first */
	double *asked;			/* hold: waiting since, -1: not, -2: done */
	double *miss;			/* hold: its last transfer ends then */
	double *sb;			/* its buffered stores are done then */
	double *shadow;			/* work done under a locked op's wait */
	uintptr_t *last_lock;		/* the line of each CPU's last locked op */
	double lock_ends;		/* a locked op on another line ends */
	uint64_t hold_rng;		/* draws lock_ends */
	uintptr_t *miss_tag;		/* hold: of which line */
	double t_access;		/* local cost per access, seconds */
	double t_xfer;			/* cost of a same-package transfer */
	double remote_factor;		/* a cross-package one against it */
	double t_hold;			/* hold: a taken line stays this long */
	double t_req;			/* hold: a request's way to the holder */
	double t_work;			/* sock: other work per message */
	double sb_serial;		/* stores drain: serial share */
	double runahead;		/* a locked op's transfer: hidden share */
	double sb_under_load;		/* stores drain under a load's wait */
	unsigned int sb_cap;		/* stores it buffers at most, 0: no end */
	double *sb_ring;		/* each CPU's last sb_cap stores' drains */
	unsigned int *sb_at;		/* and where its next goes */
	bool hold;			/* --pricing hold */
	/* Simulated seconds spent, all CPUs (time replay). */
	double spent_local, spent_xfer, spent_wait;
	unsigned long settle;		/* sock: passes before counting */
	bool settled;			/* sock: the rings settled in them */
};

/* all_series[]'s length: a table of another length does not compile. */
#define NR_SERIES 5U
extern const struct series all_series[NR_SERIES];

struct lm_calib;

void sim_count_from_here(struct sim *m);
int sim_init(struct sim *m, const struct strategy *s, void *inst,
	     const struct config *cfg, uint64_t seed);
int sim_fini(struct sim *m);
int sim_store_buffer(struct sim *m, unsigned int cap);
int sim_rounds(struct sim *m, bool sock, unsigned long rounds, unsigned int q,
	       bool trace);
int sim_timed(struct sim *m, bool sock, unsigned long steps);
void pp_model(struct lm_calib *c, uint64_t seed);
void sb_model(struct lm_calib *c, uint64_t seed);
void ra_model(struct lm_calib *c, uint64_t seed);
void ws_model(struct lm_calib *c, uint64_t seed);

/* ---- calib.c: the ping-pong loop the readings share ------------------------ */

int pp_trial(const struct opts *o, unsigned int chunks, unsigned int lines,
	     unsigned int loads, unsigned int locks, double *shared,
	     double *priv, double *per_add);

/* ---- stores.c: the store reading ---------------------------------------- */

int sb_trial(const struct opts *o, double sb[LM_SB_K], double sbl[LM_SBL]);
void sb_derive(struct lm_calib *c);
void sb_read(const char *rec, struct lm_calib *c);

/* ---- runahead.c: the run-ahead reading ---------------------------------- */

void ra_derive(struct lm_calib *c);
void ra_read(const char *rec, struct lm_calib *c);

/* ---- sbsize.c: the store buffer's size ----------------------------------- */

struct lm_sbs {
	unsigned int entries;		/* the size read, 0: none */
	double base_s;			/* a round at the smallest k */
	double step;			/* the first round past it, over base */
	const char *why;		/* why none, or NULL */
};

struct lm_run;

int sbs_trial(const struct opts *o, struct lm_sbs *r);
void sbs_derive(struct lm_run *x);
void sbs_read(const char *rec, struct lm_calib *c);
unsigned int sbs_design_bound(const struct lm_calib *c, const char *design,
			      double traced, double *every);

/* ---- worksweep.c: the work reading ---------------------------------------- */

void ws_trial(const struct opts *o, double ws[3][LM_WS],
	      double wl[3][LM_WL]);
void ws_derive(struct lm_run *x);
void ws_read(const char *rec, struct lm_calib *c);
void ws_emit(FILE *f, const struct lm_calib *c);
void ws_text(const struct lm_calib *c, char *buf, size_t len);

void config_for(const struct opts *o, const struct series *se, unsigned int n,
		enum pcstock_cpu_mode mode, struct config *c);
bool series_wanted(const struct opts *o, const struct series *se);

/* ---- what a run holds --------------------------------------------------- */

/* The two-line reading's lines, each CPU's adds in turn (calib.c). */
#define LM_PP_LINES 2U

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
	double fetch_s;			/* an idle fetch, beyond a local add */
	double request_s;		/* its request's way: fetch - latency */
	bool fetch_assumed;		/* not measured: twice the latency */
	double model_per_add;		/* the hold replay of the same loop */
	double model_shared_s;
	/* The two-line reading (calib.c), NAN if not measured. */
	double two_shared_s, two_private_s, two_per_add;
	double model_two_per_add;	/* and its hold replay */
	double model_two_shared_s;
	/* The store reading (stores.c), NAN if not measured. */
	double sb_s[LM_SB_K];		/* seconds per round of k stores */
	double store_s;			/* one store's: sb_s[1] - sb_s[0] */
	double sb_serial;		/* a second store's unhidden share */
	bool sb_serial_assumed;		/* no reading: 1 */
	double model_sb_s[LM_SB_K];	/* and the replay of the same loop */
	/* The drain reading (stores.c), NAN if not measured. */
	double sbl_s[LM_SBL];		/* seconds per round, by its bits */
	double drain_store_s;		/* the store's cost: sbl_s[1] - [0] */
	double drain_load_s;		/* the load's: sbl_s[2] - sbl_s[0] */
	double sb_under_load;		/* the share drained under the load */
	bool sb_under_load_assumed;	/* no reading: 1 */
	unsigned int sb_cap;		/* --lines-store-buffer, 0: no end */
	/* The store buffer's size (sbsize.c), NAN if not measured. */
	double sb_entries;		/* median over the repetitions */
	double sb_base_s;		/* a round at its smallest k */
	double sb_step;			/* its first round past, over base */
	unsigned int sb_read_in, sb_tried;	/* repetitions: read, all */
	char sb_why[64];		/* why NAN */
	double model_sbl_s[LM_SBL];	/* and the replay of the same loop */
	/* The run-ahead reading (runahead.c), NAN if not measured. */
	double ra_shared_s, ra_private_s;	/* seconds per add and loads */
	double ra_per_add;		/* transfers per shared add */
	double ra_visible_s;		/* what a transfer costs behind them */
	double runahead;		/* the share of it hidden */
	bool runahead_assumed;		/* no reading: 0 */
	double model_ra_shared_s;	/* and the replay of the same loop */
	double model_ra_per_add;	/* its transfers per add */
	/*
	 * The work reading (worksweep.c), NAN if not measured: per entry of
	 * lm_ws_loads[], seconds per shared add with its loads, per private
	 * one, transfers per shared add; and the replay of the same loop.
	 */
	double ws_shared_s[LM_WS], ws_private_s[LM_WS], ws_per_add[LM_WS];
	double model_ws_shared_s[LM_WS], model_ws_per_add[LM_WS];
	/* The same with lm_wl_locks[] locked adds between, and its replay. */
	double wl_shared_s[LM_WL], wl_private_s[LM_WL], wl_per_add[LM_WL];
	double model_wl_shared_s[LM_WL], model_wl_per_add[LM_WL];
	double lock_ends;		/* a locked op on another line ends */
	bool lock_ends_set;		/* by hand (--lines-lock-ends), else 0 */
	double lock_ends_fit;		/* the reading's fit, NAN: none */
	char cpu[128];			/* the CPU it was taken on */
	char from[160];			/* "measured" or the file */
};

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
	double local_raw_s;	/* the stepped loop's, before the harness */
	double harness_s;	/* stepped harness less the pinned one */
	bool local_from_file;	/* the local cost is --lines-calib's */
	double measured_best;		/* the best placed sample */
	double measured_any;		/* any placement (as before) */
	unsigned int nr_ran, nr_placed;	/* samples: ran, and placed */
	double near_move[2];		/* the measured sample's readings */
	/* Time replay: simulated seconds per op, local, transfers, waits. */
	double t_local, t_xfer, t_wait;
	double rx_batch;		/* sock: messages per receiving pass */
	double sent_per_op;		/* sock: sent per delivered */
	double stores_per_op;		/* time replay: traced plain stores */
	double locked_per_op;		/* and locked ops */
	unsigned int sb_cap;		/* its store buffer bound, 0: none */
	const char *sb_from;		/* "hand", "design" or "none" */
	double sb_every;		/* design: every store per op */
	double settle;			/* sock: passes per CPU not counted */
	bool settled;			/* sock: and the rings settled */
	bool done;
};

/* A short ping-pong reading beside a measured sample. */
struct lm_near {
	double move_s;			/* the line's time per move */
	double per_add;			/* transfers per shared add */
};

struct lm_cell {
	double local[BENCH_MAX_REPS];	/* the stepped loop's, harness in */
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
	double tfetch[BENCH_MAX_REPS];	/* idle fetch, beyond a local add */
	double t2shared[BENCH_MAX_REPS];	/* the two-line reading, */
	double t2priv[BENCH_MAX_REPS];		/* NAN where it failed */
	double t2moved[BENCH_MAX_REPS];
	double tsb[LM_SB_K][BENCH_MAX_REPS];	/* the store reading */
	double tsbl[LM_SBL][BENCH_MAX_REPS];	/* the drain reading */
	double tra[3][BENCH_MAX_REPS];	/* the run-ahead reading */
	struct lm_sbs tsbs[BENCH_MAX_REPS];	/* the store buffer's size */
	double tws[3][LM_WS][BENCH_MAX_REPS];	/* the work reading */
	double twl[3][LM_WL][BENCH_MAX_REPS];
	unsigned int nr_tcost;
	unsigned int rep;		/* repetitions started */
	bool measure;			/* --cpus has LM_CALIB_CPUS */
	struct lm_calib cal;
	bool hold;			/* --pricing measured or hold, time */
	bool request;			/* --pricing measured: request's way */
	double transfer_s;		/* the replay's price per transfer */
	double move_s;			/* --pricing move: the cap's price */
	double remote_factor;
	/* --lines-calib: the file's 2-CPU local costs, NAN: none. */
	double file_local[NR_SERIES][LM_STRATS];
	/*
	 * The harnesses' own cost per operation, timed with calls that do
	 * nothing (calib.c, "the harnesses"): the stepped loop's and the
	 * pinned workload's, per repetition, per series (not sock).
	 */
	double harness_stepped[NR_SERIES][BENCH_MAX_REPS];
	double harness_pinned[NR_SERIES][BENCH_MAX_REPS];
	unsigned int nr_harness[NR_SERIES];
	struct lm_cell cell[NR_SERIES][LM_STRATS];
	FILE *jsonl;
};

struct drain_cost {
	double xfer, remote, inval;	/* per drain_all, beyond the charger */
};

/* ---- report.c: records, tables and plots -------------------------------- */

int strat_index(const struct lm_run *x, const char *name);
void json_s(FILE *f, const char *k, const char *v, bool first);
void json_d(FILE *f, const char *k, double v);
void emit_sample(const struct lm_run *x, const struct series *se,
		 const struct strategy *s, const struct sample *smp, double ran,
		 const struct lm_near *near);
void emit_calib(FILE *f, const struct lm_run *x);
void emit_result(const struct lm_run *x, const struct series *se,
		 const struct strategy *s, const char *topo,
		 const struct lm_result *r);
void print_header(const struct series *se);
void print_result(const struct strategy *s, const struct lm_result *r);
void emit_drain(const struct lm_run *x, const struct strategy *s,
		unsigned int n, const char *drainer, const char *which,
		const struct drain_cost *d);
void compare_lkp(const struct lm_run *x);
void emit_plots(const struct lm_run *x);

/* ---- calib.c: the costs, measured here or read from a file -------------- */

void calib_derive(struct lm_calib *c);
double median(double *v, unsigned int n);
double median_finite(double *v, unsigned int n);
double best(double *v, unsigned int n, bool rate);
double harness_cost(struct lm_run *x, unsigned int si);
int calibrate_rep(struct lm_run *x, struct opts *pinned);
int calib_read(struct lm_run *x, const char *path);
bool json_num(const char *rec, const char *key, double *v);

/* ---- drain.c: drain_all beside a charger -------------------------------- */

int model_drain(struct lm_run *x);

#endif /* BENCH_LINES_H */
