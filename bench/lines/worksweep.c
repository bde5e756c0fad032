// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * worksweep.c - the work reading of the calibration (lines.h): how the
 * run of adds a core makes on a contended line changes as the core has
 * work to do between its adds, on this machine and in the replay.
 *
 * The replay keeps a line a core took with a locked op at that core for
 * the calibrated hold while the core works on, and the hold is read from
 * a loop with nothing between the adds (calib.c).  A workload has work
 * between its touches of a shared line: a charge walk adds to the leaf,
 * then the parent, then the root, with loads and branches between, and
 * sock's message handling lies between two charges.  Whether the machine
 * keeps a line through such work as the replay does is what this reading
 * shows: the calibration's ping-pong loop with k dependent loads of a
 * thread's own lines before each add, for each k of lm_ws_loads[], the
 * transfers per shared add counted as the main reading counts them, and
 * the replay of the same loop (ws_model(), replay.c) beside it, each
 * access of the replay taking the k's private round over its k + 1
 * accesses.
 *
 * It is a reading, not a parameter: nothing is priced from it.  Records
 * carry it so that a rule for how long a line stays through work can be
 * checked against every CPU kind's record (docs/lines-model.md, "The
 * work reading").
 */
#include <math.h>
#include <stdio.h>

#include "lines.h"
#include "strategy.h"

/* Chunks of 200 adds per thread and k: 0.1 to 0.4 s for the sweep. */
#define WS_CHUNKS 1000U

const unsigned int lm_ws_loads[LM_WS] = { 0, 4, 8, 16, 24, 48 };

/*
 * One sweep: @ws[0][j] seconds per shared add with its loads, [1][j] per
 * private add, [2][j] transfers per shared add, for lm_ws_loads[j]; NAN
 * where a trial kept no chunk of a kind (or ran out of memory).
 */
void ws_trial(const struct opts *o, double ws[3][LM_WS])
{
	unsigned int j;

	for (j = 0; j < LM_WS; j++)
		if (pp_trial(o, WS_CHUNKS, 1, lm_ws_loads[j], &ws[0][j],
			     &ws[1][j], &ws[2][j]))
			ws[0][j] = ws[1][j] = ws[2][j] = NAN;
}

/* The medians over the repetitions, into the run's calibration. */
void ws_derive(struct lm_run *x)
{
	struct lm_calib *c = &x->cal;
	unsigned int j;

	for (j = 0; j < LM_WS; j++) {
		c->ws_shared_s[j] = median_finite(x->tws[0][j], x->nr_tcost);
		c->ws_private_s[j] = median_finite(x->tws[1][j], x->nr_tcost);
		c->ws_per_add[j] = median_finite(x->tws[2][j], x->nr_tcost);
	}
}

/* The reading of a record, NAN where it has none (records before 2026-12-05). */
void ws_read(const char *rec, struct lm_calib *c)
{
	char key[48];
	unsigned int j;
	double v[3];
	bool all = true;

	for (j = 0; j < LM_WS; j++) {
		v[0] = v[1] = v[2] = NAN;
		snprintf(key, sizeof(key), "work_%u_round_ns", lm_ws_loads[j]);
		all = all && json_num(rec, key, &v[0]);
		snprintf(key, sizeof(key), "work_%u_private_round_ns",
			 lm_ws_loads[j]);
		all = all && json_num(rec, key, &v[1]);
		snprintf(key, sizeof(key), "work_%u_transfers_per_add",
			 lm_ws_loads[j]);
		all = all && json_num(rec, key, &v[2]);
		c->ws_shared_s[j] = v[0] * 1e-9;
		c->ws_private_s[j] = v[1] * 1e-9;
		c->ws_per_add[j] = v[2];
	}
	for (j = 0; !all && j < LM_WS; j++)
		c->ws_shared_s[j] = c->ws_private_s[j] = c->ws_per_add[j] =
			NAN;
}

/* The reading and its replay, into a calibration record. */
void ws_emit(FILE *f, const struct lm_calib *c)
{
	char key[56];
	unsigned int j, k;

	for (j = 0; j < LM_WS; j++) {
		k = lm_ws_loads[j];
		snprintf(key, sizeof(key), "work_%u_round_ns", k);
		json_d(f, key, c->ws_shared_s[j] * 1e9);
		snprintf(key, sizeof(key), "work_%u_private_round_ns", k);
		json_d(f, key, c->ws_private_s[j] * 1e9);
		snprintf(key, sizeof(key), "work_%u_transfers_per_add", k);
		json_d(f, key, c->ws_per_add[j]);
		snprintf(key, sizeof(key), "model_work_%u_round_ns", k);
		json_d(f, key, c->model_ws_shared_s[j] * 1e9);
		snprintf(key, sizeof(key), "model_work_%u_transfers_per_add",
			 k);
		json_d(f, key, c->model_ws_per_add[j]);
	}
}

/*
 * The reading for the printed calibration: per k, the machine's transfers
 * per add and round, and the replay's.  Return: snprintf()'s.
 */
int ws_text(const struct lm_calib *c, char *buf, size_t len)
{
	size_t at;
	unsigned int j;
	int n;

	if (!isfinite(c->ws_per_add[0]))
		return snprintf(buf, len, "not measured");
	n = snprintf(buf, len, "loads before each add, transfers per add "
		     "and ns a round, measured (the replay):");
	for (j = 0; j < LM_WS && n >= 0; j++) {
		at = (size_t)n < len ? (size_t)n : len;
		n += snprintf(buf + at, len - at, "%s %u: %.3f (%.3f), %.1f "
			      "(%.1f)", j ? ";" : "", lm_ws_loads[j],
			      c->ws_per_add[j], c->model_ws_per_add[j],
			      c->ws_shared_s[j] * 1e9,
			      c->model_ws_shared_s[j] * 1e9);
	}
	return n;
}
