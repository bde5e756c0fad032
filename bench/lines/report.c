// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * report.c - what the model says (lines.h): the records of lines.jsonl,
 * the tables on stdout, the comparison with the LKP report and the plots.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"

/* ---- records and tables ------------------------------------------------- */

void json_s(FILE *f, const char *k, const char *v, bool first)
{
	fprintf(f, "%s\"%s\":\"%s\"", first ? "{" : ",", k, v);
}

void json_d(FILE *f, const char *k, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"%s\":%.6g", k, v);
	else
		fprintf(f, ",\"%s\":null", k);
}

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
 * One measured sample, kept or not, with the readings taken just before
 * and after it and the load: the lines_sample record, so that every
 * measurement can be read against the calibration taken next to it.
 */
void emit_sample(const struct lm_run *x, const struct series *se,
		 const struct strategy *s, const struct sample *smp, double ran,
		 const struct lm_near *near)
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
	if (se->sock) {
		/* the machine's batch, beside the replay's in the lines row */
		json_d(f, "messages_per_receiving_pass", smp->aux[0]);
		json_d(f, "passes_per_message", smp->aux[1]);
	}
	json_d(f, "move_before_ns", near[0].move_s * 1e9);
	json_d(f, "move_after_ns", near[1].move_s * 1e9);
	json_d(f, "transfers_per_shared_add_before", near[0].per_add);
	json_d(f, "transfers_per_shared_add_after", near[1].per_add);
	json_d(f, "load1", load1());
	fprintf(f, "}\n");
}

/*
 * The calibration's fields, in the lines_calibration record and in every
 * lines record (so that each figure names the CPU it was priced for).
 */
void emit_calib(FILE *f, const struct lm_run *x)
{
	const struct lm_calib *c = &x->cal;

	json_s(f, "pricing", x->request ? "measured" : x->hold ? "hold" :
	       "move", false);
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
	json_d(f, "fetch_ns", c->fetch_s * 1e9);
	fprintf(f, ",\"fetch_assumed\":%s", c->fetch_assumed ? "true" : "false");
	json_d(f, "request_ns", c->request_s * 1e9);
	json_d(f, "model_transfers_per_shared_add", c->model_per_add);
	json_d(f, "model_shared_add_ns", c->model_shared_s * 1e9);
	json_d(f, "model_over_measured_transfers",
	       c->model_per_add / c->per_add);
	json_d(f, "two_lines", LM_PP_LINES);
	json_d(f, "two_lines_shared_add_ns", c->two_shared_s * 1e9);
	json_d(f, "two_lines_private_add_ns", c->two_private_s * 1e9);
	json_d(f, "two_lines_transfers_per_shared_add", c->two_per_add);
	json_d(f, "model_two_lines_transfers_per_shared_add",
	       c->model_two_per_add);
	json_d(f, "model_two_lines_shared_add_ns", c->model_two_shared_s * 1e9);
	json_d(f, "model_over_measured_two_lines_add",
	       c->model_two_shared_s / c->two_shared_s);
	json_d(f, "stores_0_round_ns", c->sb_s[0] * 1e9);
	json_d(f, "stores_1_round_ns", c->sb_s[1] * 1e9);
	json_d(f, "stores_2_round_ns", c->sb_s[2] * 1e9);
	json_d(f, "store_ns", c->store_s * 1e9);
	json_d(f, "store_drain_serial", c->sb_serial);
	fprintf(f, ",\"store_drain_assumed\":%s",
		c->sb_serial_assumed ? "true" : "false");
	json_d(f, "model_stores_1_round_ns", c->model_sb_s[1] * 1e9);
	json_d(f, "model_stores_2_round_ns", c->model_sb_s[2] * 1e9);
	json_d(f, "model_over_measured_stores_2",
	       c->model_sb_s[2] / c->sb_s[2]);
	json_d(f, "drain_lock_round_ns", c->sbl_s[0] * 1e9);
	json_d(f, "drain_store_round_ns", c->sbl_s[1] * 1e9);
	json_d(f, "drain_load_round_ns", c->sbl_s[2] * 1e9);
	json_d(f, "drain_both_round_ns", c->sbl_s[3] * 1e9);
	json_d(f, "drain_store_ns", c->drain_store_s * 1e9);
	json_d(f, "drain_load_ns", c->drain_load_s * 1e9);
	json_d(f, "drain_under_load", c->sb_under_load);
	fprintf(f, ",\"drain_under_load_assumed\":%s",
		c->sb_under_load_assumed ? "true" : "false");
	json_d(f, "store_buffer_stores", c->sb_cap);
	json_d(f, "store_buffer_entries", c->sb_entries);
	json_d(f, "store_buffer_base_round_ns", c->sb_base_s * 1e9);
	json_d(f, "store_buffer_step", c->sb_step);
	json_d(f, "store_buffer_read_in", c->sb_read_in);
	json_d(f, "store_buffer_tried", c->sb_tried);
	json_d(f, "model_drain_store_round_ns", c->model_sbl_s[1] * 1e9);
	json_d(f, "model_drain_load_round_ns", c->model_sbl_s[2] * 1e9);
	json_d(f, "model_drain_both_round_ns", c->model_sbl_s[3] * 1e9);
	json_d(f, "runahead_loads", LM_RA_LOADS);
	json_d(f, "runahead_round_ns", c->ra_shared_s * 1e9);
	json_d(f, "runahead_private_round_ns", c->ra_private_s * 1e9);
	json_d(f, "runahead_transfers_per_add", c->ra_per_add);
	json_d(f, "runahead_visible_ns", c->ra_visible_s * 1e9);
	json_d(f, "runahead_share", c->runahead);
	fprintf(f, ",\"runahead_assumed\":%s",
		c->runahead_assumed ? "true" : "false");
	json_d(f, "model_runahead_round_ns", c->model_ra_shared_s * 1e9);
	json_d(f, "model_runahead_transfers_per_add", c->model_ra_per_add);
	ws_emit(f, c);		/* worksweep.c */
}

void emit_result(const struct lm_run *x, const struct series *se,
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
	json_d(f, "local_stepped_ns", r->local_raw_s * 1e9);
	json_d(f, "harness_ns", r->harness_s * 1e9);
	fprintf(f, ",\"local_from_record\":%s",
		r->local_from_file ? "true" : "false");
	if (se->sock)
		json_d(f, "sock_work_ns", x->o->sock_work_ns);
	json_d(f, "transfer_ns", x->transfer_s * 1e9);
	emit_calib(f, x);
	json_d(f, "replay_local_ns_per_op", r->t_local * 1e9);
	json_d(f, "replay_transfer_ns_per_op", r->t_xfer * 1e9);
	json_d(f, "replay_wait_ns_per_op", r->t_wait * 1e9);
	json_d(f, "messages_per_receiving_pass", r->rx_batch);
	json_d(f, "messages_sent_per_delivered", r->sent_per_op);
	json_d(f, "traced_stores_per_op", r->stores_per_op);
	json_d(f, "traced_locked_per_op", r->locked_per_op);
	json_d(f, "store_buffer_bound", r->sb_cap);
	fprintf(f, ",\"store_buffer_bound_from\":\"%s\"",
		r->sb_from ? r->sb_from : "none");
	json_d(f, "store_buffer_every_store_per_op", r->sb_every);
	json_d(f, "settle_passes_per_cpu", r->settle);
	fprintf(f, ",\"rings_settled\":%s", isnan(r->settle) ? "null" :
		   r->settled ? "true" : "false");
	json_d(f, "predicted_ops_per_s", r->pred);
	json_d(f, "predicted_cap_ops_per_s", r->cap);
	json_d(f, "measured_ops_per_s", r->measured);
	json_d(f, "measured_best_ops_per_s", r->measured_best);
	json_d(f, "measured_any_placement_ops_per_s", r->measured_any);
	json_d(f, "samples_both_ran", r->nr_ran);
	json_d(f, "samples_placed", r->nr_placed);
	json_d(f, "measured_move_before_ns", r->near_move[0] * 1e9);
	json_d(f, "measured_move_after_ns", r->near_move[1] * 1e9);
	fprintf(f, "}\n");
}

void print_header(const struct series *se)
{
	printf("\n### %s\n\n| cpus | strategy | xfer/op | remote/op | "
	       "inval/op | hottest line (share of transfers) | local ns | "
	       "predicted ops/s/CPU | measured | pred/meas |\n"
	       "|---:|---|---:|---:|---:|---|---:|---:|---:|---:|\n",
	       se->name);
}

void print_result(const struct strategy *s, const struct lm_result *r)
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

void emit_drain(const struct lm_run *x, const struct strategy *s,
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

/* ---- LKP comparison and plots ------------------------------------------- */

/* The index of strategy @name among the run's, -1 if it has none. */
int strat_index(const struct lm_run *x, const char *name)
{
	unsigned int k;

	for (k = 0; k < x->nr_st; k++)
		if (!strcmp(x->st[k]->name, name))
			return (int)k;
	return -1;
}

void compare_lkp(const struct lm_run *x)
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

void emit_plots(const struct lm_run *x)
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
