// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lines.c - pcstock-bench --lines (lines.h says what it models): one run
 * of the model per series, CPU count and strategy, the prediction and the
 * measurement beside it, and lines_main(), which calibrates, models and
 * reports.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lines.h"
#include "strategy.h"

#define LM_PLACE_TOL 1.5	/* measured: a line move within this factor */

/* ---- one run of the model ----------------------------------------------- */

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
 * operation, @x the run's pricing: its transfer cost, and with the hold
 * (x->hold; not --pricing move) how long a core keeps a line it took, a
 * request's way (x->request) and how buffered stores drain (the store
 * reading), all calibrated already.  The
 * warm-up interleaves whole steps whatever --interleave says: it fills the
 * stocks, places the lines and gives the accesses per operation that the
 * time replay spreads the local cost over.
 */
static int model_run(const struct lm_run *x, const struct series *se,
		     const struct strategy *s, unsigned int n,
		     const char *topo, struct lm_result *r)
{
	const struct opts *o = x->o;
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
	m.folio = se->folio && s->uncharge_direct;
	ow.ring = se->sock ? m.ring : NULL;
	pcstock_trace_hook = trace_access;
	if (!ret)
		ret = sim_rounds(&m, se->sock, rounds / 4 + 1, 1, true);
	if (m.ops && dir.accesses && isfinite(r->local_s))
		m.t_access = r->local_s * (double)m.ops /
			     (double)dir.accesses;
	m.t_xfer = x->transfer_s;
	m.hold = x->hold;
	m.t_hold = m.hold ? x->cal.hold_s : 0;
	m.t_req = m.hold && x->request ? x->cal.request_s : 0;
	m.sb_serial = x->cal.sb_serial;
	m.runahead = m.hold ? x->cal.runahead : 0;
	m.lock_ends = m.hold ? x->cal.lock_ends : 0;
	m.sb_under_load = x->cal.sb_under_load;
	/*
	 * The store buffer's bound: the one given by hand, else, for sock
	 * under held lines, the design's own from the buffer's size read
	 * by the calibration (sbsize.c, the warm-up's traced stores per
	 * op), else none.
	 */
	r->sb_cap = x->cal.sb_cap;
	r->sb_from = o->lines_store_buffer_set ?
		     (r->sb_cap ? "hand" : "none") : "none";
	r->sb_every = (double)NAN;
	if (!o->lines_store_buffer_set && se->sock && m.hold && m.ops) {
		r->sb_cap = sbs_design_bound(&x->cal, s->name,
					     (double)dir.stores /
					     (double)m.ops, &r->sb_every);
		r->sb_from = r->sb_cap ? "design" : "none";
	}
	if (!ret)	/* lines_main() allows a bound with held lines only */
		ret = sim_store_buffer(&m, r->sb_cap);
	m.t_work = se->sock ? o->sock_work_ns * 1e-9 : 0;
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
		r->stores_per_op = o->interleave_op ? (double)NAN :
				   (double)m.stores / (double)m.ops;
		r->locked_per_op = o->interleave_op ? (double)NAN :
				   (double)m.locked / (double)m.ops;
		r->done = true;
	}
	i = sim_fini(&m) ? 1 : 0;
	s->destroy(inst);
	free(ow.v);
	return ret ? ret : i ? -EIO : 0;
}

/* ---- the run ------------------------------------------------------------ */

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
 * The measurement beside the model at @n CPUs: the median of the samples
 * whose threads both ran (calibrate_rep()) and that were taken under the
 * calibration's placement (placed()), as the calibration's readings are
 * medians; the near readings are those beside the placed sample nearest
 * it.  measured_best is the best of those samples (the figure before
 * fb02b9a), measured_any the best of all that ran, the figure before the
 * placement check.
 */
static void measured_of(const struct lm_run *x, const struct lm_cell *cell,
			unsigned int n, struct lm_result *r)
{
	double v[BENCH_MAX_REPS];
	unsigned int i, k, idx[BENCH_MAX_REPS], near;

	r->measured = r->measured_best = r->measured_any = NAN;
	r->near_move[0] = r->near_move[1] = NAN;
	r->nr_ran = r->nr_placed = 0;
	if (n != LM_CALIB_CPUS)
		return;
	r->nr_ran = cell->nr_meas;
	for (i = 0; i < cell->nr_meas; i++) {
		if (!(cell->meas[i] <= r->measured_any))
			r->measured_any = cell->meas[i];
		if (placed(x, cell->near[i])) {
			idx[r->nr_placed] = i;
			v[r->nr_placed++] = cell->meas[i];
		}
	}
	if (!r->nr_placed)
		return;
	r->measured = median(v, r->nr_placed);	/* sorts v */
	r->measured_best = v[r->nr_placed - 1];
	near = idx[0];
	for (k = 1; k < r->nr_placed; k++)
		if (fabs(cell->meas[idx[k]] - r->measured) <
		    fabs(cell->meas[near] - r->measured))
			near = idx[k];
	r->near_move[0] = cell->near[near][0].move_s;
	r->near_move[1] = cell->near[near][1].move_s;
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
			r->local_raw_s = isfinite(x->file_local[si][k]) ?
					 x->file_local[si][k] :
					 best(cell->local, cell->nr_local,
					      false);
			/*
			 * The harnesses' difference (calib.c); a record's
			 * local cost (--lines-calib) is used as it was.
			 */
			r->local_from_file = isfinite(x->file_local[si][k]);
			r->harness_s = r->local_from_file ?
				       (double)NAN : harness_cost(x, si);
			r->local_s = r->local_raw_s;
			if (r->local_raw_s - r->harness_s > 0)
				r->local_s = r->local_raw_s - r->harness_s;
			ret = model_run(x, se, x->st[k], x->cpus[j], topo,
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
		    !(bench_strategy(name)->flags & STRAT_DOMAIN ||
		      bench_strategy(name) == &strat_floor ||
		      bench_strategy(name) == &strat_local)) {
			fprintf(stderr, "pcstock-bench: --lines models the "
				"group strategies (%s), floor and local (at "
				"most %u), not '%s'\n",
				bench_policy_strategies(), LM_STRATS, name);
			return -EINVAL;
		}
		x->st[x->nr_st++] = bench_strategy(name);
	}
	return 0;
}

/* ---- lines_main --------------------------------------------------------- */

int lines_main(const struct opts *o)
{
	static struct lm_run x;
	struct opts pinned = *o;
	unsigned int rep, i;
	char path[4096];
	char *mj, *mt, two[120], sbcap[48], sbsize[200], ws[1024];
	double t0 = now_s();
	int ret = 0;

	x.o = o;
	x.remote_factor = o->remote_factor;
	x.hold = o->pricing_hold && !o->interleave_op;
	x.request = x.hold && o->pricing_request;
	if (o->lines_store_buffer && !x.hold) {
		/* Only the held lines' replay has a store buffer. */
		fprintf(stderr, "pcstock-bench: --lines-store-buffer needs "
			"--pricing measured or hold and --interleave time\n");
		return 1;
	}
	for (i = 0; i < NR_SERIES; i++)
		for (rep = 0; rep < LM_STRATS; rep++)
			x.file_local[i][rep] = NAN;
	if (pick_strategies(&x, o->strategies ? o->strategies :
			    bench_policy_strategies()) ||
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
		x.cal.fetch_s = median_finite(x.tfetch, x.nr_tcost);
		x.cal.two_shared_s = median_finite(x.t2shared, x.nr_tcost);
		x.cal.two_private_s = median_finite(x.t2priv, x.nr_tcost);
		x.cal.two_per_add = median_finite(x.t2moved, x.nr_tcost);
		for (i = 0; i < LM_SB_K; i++)
			x.cal.sb_s[i] = median_finite(x.tsb[i], x.nr_tcost);
		for (i = 0; i < LM_SBL; i++)
			x.cal.sbl_s[i] = median_finite(x.tsbl[i], x.nr_tcost);
		x.cal.ra_shared_s = median_finite(x.tra[0], x.nr_tcost);
		x.cal.ra_private_s = median_finite(x.tra[1], x.nr_tcost);
		x.cal.ra_per_add = median_finite(x.tra[2], x.nr_tcost);
		sbs_derive(&x);
		ws_derive(&x);
		bench_cpu_model(x.cal.cpu, sizeof(x.cal.cpu));
		snprintf(x.cal.from, sizeof(x.cal.from), "measured");
	}
	if (isfinite(o->lines_fetch_ns))
		x.cal.fetch_s = o->lines_fetch_ns * 1e-9;
	calib_derive(&x.cal);
	sb_derive(&x.cal);
	if (isfinite(o->lines_store_serial)) {
		x.cal.sb_serial = o->lines_store_serial;
		x.cal.sb_serial_assumed = false;
	}
	if (isfinite(o->lines_under_load)) {
		x.cal.sb_under_load = o->lines_under_load;
		x.cal.sb_under_load_assumed = false;
	}
	x.cal.sb_cap = o->lines_store_buffer;
	ra_derive(&x.cal);
	if (isfinite(o->lines_runahead)) {
		x.cal.runahead = o->lines_runahead;
		x.cal.runahead_assumed = false;
	}
	if (!(x.cal.loss_s > 0) || !(x.cal.move_s > 0)) {
		fprintf(stderr, "pcstock-bench: no line transfer cost "
			"measurable (a shared add no slower than a private "
			"one): predicting with 0\n");
		x.cal.loss_s = x.cal.move_s = x.cal.latency_s = 0;
		x.cal.hold_s = 0;
	}
	if (!x.request)
		x.cal.request_s = 0;
	if (isfinite(o->lines_lock_ends)) {
		x.cal.lock_ends = o->lines_lock_ends;
		x.cal.lock_ends_set = true;
	}
	ws_model(&x.cal, o->seed);	/* first: the others replay with its fit */
	pp_model(&x.cal, o->seed);
	sb_model(&x.cal, o->seed);
	ra_model(&x.cal, o->seed);
	x.transfer_s = x.hold ? x.cal.latency_s : x.cal.loss_s;
	x.move_s = x.cal.move_s;
	if (isfinite(x.cal.two_shared_s))
		snprintf(two, sizeof(two), "shared add %.1f ns, private %.1f "
			 "ns, %.3f transfers per shared add",
			 x.cal.two_shared_s * 1e9, x.cal.two_private_s * 1e9,
			 x.cal.two_per_add);
	else
		snprintf(two, sizeof(two), "not measured (%s)",
			 o->lines_calib ? "the record has no reading" :
			 "no chunk kept");
	if (x.cal.sb_cap)
		snprintf(sbcap, sizeof(sbcap), "%u stores (set by hand)",
			 x.cal.sb_cap);
	else if (o->lines_store_buffer_set || !isfinite(x.cal.sb_entries))
		snprintf(sbcap, sizeof(sbcap), "without end");
	else
		snprintf(sbcap, sizeof(sbcap), "sock: each design's own");
	if (!isfinite(x.cal.sb_entries))
		snprintf(sbsize, sizeof(sbsize), "not read (%s)",
			 x.cal.sb_why);
	else if (o->lines_calib)
		snprintf(sbsize, sizeof(sbsize), "of %.0f entries (the "
			 "record's)", x.cal.sb_entries);
	else
		snprintf(sbsize, sizeof(sbsize), "of %.0f entries, read in %u "
			 "of %u repetitions (two missing loads overlap up to "
			 "that many stores between them: %.1f ns a round, "
			 "then %.2fx)", x.cal.sb_entries, x.cal.sb_read_in,
			 x.cal.sb_tried, x.cal.sb_base_s * 1e9,
			 x.cal.sb_step);
	ws_text(&x.cal, ws, sizeof(ws));
	mt = meta_text(o, now_s() - t0);
	printf("## pcstock-bench --lines\n\n%s\n"
	       "calibration (%s, %s): shared add %.1f ns, private %.1f ns, "
	       "%.3f transfers per shared add (medians): a core keeps the "
	       "line %.1f adds, %.1f ns; transfer latency %.1f ns, line "
	       "move %.1f ns, requester's loss %.1f ns; strict "
	       "alternation %.1f ns per move, so a run of %.1f adds; "
	       "idle fetch %.1f ns%s, so a request's way %.1f ns; "
	       "the hold replay of "
	       "the same loop: %.3f transfers per add, %.1f ns per add; "
	       "%u lines in turn: %s, the hold replay %.3f transfers per "
	       "add, %.1f ns; a locked add after 0, 1, 2 stores to lines "
	       "the other core reads: %.1f, %.1f, %.1f ns, so a store "
	       "%.1f ns, drained %.2f serially%s; the replay %.1f, %.1f ns; "
	       "a locked add after neither, a store, a load of a line the "
	       "other core stores, both: %.1f, %.1f, %.1f, %.1f ns, so the "
	       "buffer drains through %.2f of the load's wait%s; the replay "
	       "%.1f, %.1f, %.1f, %.1f ns; "
	       "%u loads before each add: %.1f ns a round, private %.1f ns, "
	       "%.3f transfers per add, so a transfer %.1f ns behind them, "
	       "%.2f of the fetch hidden%s; the replay %.1f ns, %.3f "
	       "transfers per add; work between adds: %s\n"
	       "pricing %s (%.1f ns per transfer%s), remote factor %g, "
	       "store buffer %s; the core's buffer %s; "
	       "local cost and measured at %u CPUs (best of %u "
	       "repetitions); interleave %s\n", mt ? mt : "",
	       x.cal.cpu, x.cal.from, x.cal.shared_s * 1e9,
	       x.cal.private_s * 1e9, x.cal.per_add, x.cal.run,
	       x.cal.hold_s * 1e9, x.cal.latency_s * 1e9,
	       x.cal.move_s * 1e9, x.cal.loss_s * 1e9,
	       x.cal.alternate_s * 1e9, x.cal.alt_run,
	       x.cal.fetch_s * 1e9,
	       x.cal.fetch_assumed ? " (not measured: twice the latency)" : "",
	       x.cal.request_s * 1e9,
	       x.cal.model_per_add,
	       x.cal.model_shared_s * 1e9, LM_PP_LINES, two,
	       x.cal.model_two_per_add,
	       x.cal.model_two_shared_s * 1e9,
	       x.cal.sb_s[0] * 1e9, x.cal.sb_s[1] * 1e9, x.cal.sb_s[2] * 1e9,
	       x.cal.store_s * 1e9, x.cal.sb_serial,
	       x.cal.sb_serial_assumed ? " (not measured: assumed)" : "",
	       x.cal.model_sb_s[1] * 1e9, x.cal.model_sb_s[2] * 1e9,
	       x.cal.sbl_s[0] * 1e9, x.cal.sbl_s[1] * 1e9,
	       x.cal.sbl_s[2] * 1e9, x.cal.sbl_s[3] * 1e9,
	       x.cal.sb_under_load,
	       x.cal.sb_under_load_assumed ? " (not measured: all assumed)" :
	       "",
	       x.cal.model_sbl_s[0] * 1e9, x.cal.model_sbl_s[1] * 1e9,
	       x.cal.model_sbl_s[2] * 1e9, x.cal.model_sbl_s[3] * 1e9,
	       LM_RA_LOADS, x.cal.ra_shared_s * 1e9, x.cal.ra_private_s * 1e9,
	       x.cal.ra_per_add, x.cal.ra_visible_s * 1e9, x.cal.runahead,
	       x.cal.runahead_assumed ? " (not measured: none assumed)" : "",
	       x.cal.model_ra_shared_s * 1e9, x.cal.model_ra_per_add, ws,
	       x.request ? "measured" : x.hold ? "hold" : "move",
	       x.transfer_s * 1e9,
	       x.hold ? ", lines held" : ", capped at the line move",
	       x.remote_factor, sbcap, sbsize, LM_CALIB_CPUS, o->reps,
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
