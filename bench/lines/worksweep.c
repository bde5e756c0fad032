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
 * The same loop with lm_wl_locks[] locked adds to a line of the thread's
 * own in place of the loads reads what the loads cannot: a core that
 * took a line with a locked op and turns to a locked op on another line
 * may let the first go (the hold ends) or keep it.  With
 * --lines-lock-ends F the replay ends the hold on such an op with
 * probability F (0, every hold kept, by default); ws_model() (replay.c)
 * reports the F whose replay of the one-lock loop comes closest to the
 * machine's, the fit, without applying it (docs/lines-model.md, "The
 * work reading", says why).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "lines.h"
#include "strategy.h"

/* Chunks of 200 adds per thread and k: 0.1 to 0.4 s for the sweep. */
#define WS_CHUNKS 1000U

const unsigned int lm_ws_loads[LM_WS] = { 0, 4, 8, 16, 24, 48 };
const unsigned int lm_wl_locks[LM_WL] = { 1, 2, 4 };

/*
 * One sweep: @ws[0][j] seconds per shared add with its loads, [1][j] per
 * private add, [2][j] transfers per shared add, for lm_ws_loads[j]; @wl
 * the same for lm_wl_locks[j] locked adds; NAN where a trial kept no
 * chunk of a kind (or ran out of memory).
 */
void ws_trial(const struct opts *o, double ws[3][LM_WS],
	      double wl[3][LM_WL])
{
	unsigned int j;

	for (j = 0; j < LM_WS; j++)
		if (pp_trial(o, WS_CHUNKS, 1, lm_ws_loads[j], 0, &ws[0][j],
			     &ws[1][j], &ws[2][j]))
			ws[0][j] = ws[1][j] = ws[2][j] = NAN;
	for (j = 0; j < LM_WL; j++)
		if (pp_trial(o, WS_CHUNKS, 1, 0, lm_wl_locks[j], &wl[0][j],
			     &wl[1][j], &wl[2][j]))
			wl[0][j] = wl[1][j] = wl[2][j] = NAN;
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
	for (j = 0; j < LM_WL; j++) {
		c->wl_shared_s[j] = median_finite(x->twl[0][j], x->nr_tcost);
		c->wl_private_s[j] = median_finite(x->twl[1][j], x->nr_tcost);
		c->wl_per_add[j] = median_finite(x->twl[2][j], x->nr_tcost);
	}
}

/* The stem of a key of the work reading: "work_<k>" or "work_lock_<k>". */
static void ws_stem(char *stem, size_t len, bool lock, unsigned int k)
{
	if (lock)
		snprintf(stem, len, "work_lock_%u", k);
	else
		snprintf(stem, len, "work_%u", k);
}

/*
 * One family of a record's work reading (the loads' or, @lock, the
 * locked adds', over @n counts @k), count by count: NAN for a count the
 * record has not all three figures of, because it was taken before the
 * reading (2026-12-05) or because that count's trial kept no chunk (a
 * busy machine: null in the record), while the other counts keep
 * theirs.
 */
static void ws_read_one(const char *rec, bool lock, const unsigned int *k,
			unsigned int n, double *shared, double *priv,
			double *per_add)
{
	char stem[24], key[64];
	unsigned int j;
	bool all;

	for (j = 0; j < n; j++) {
		shared[j] = priv[j] = per_add[j] = NAN;
		ws_stem(stem, sizeof(stem), lock, k[j]);
		snprintf(key, sizeof(key), "%s_round_ns", stem);
		all = json_num(rec, key, &shared[j]);
		snprintf(key, sizeof(key), "%s_private_round_ns", stem);
		all = json_num(rec, key, &priv[j]) && all;
		snprintf(key, sizeof(key), "%s_transfers_per_add", stem);
		all = json_num(rec, key, &per_add[j]) && all;
		if (!all)
			shared[j] = priv[j] = per_add[j] = NAN;
		shared[j] *= 1e-9;
		priv[j] *= 1e-9;
	}
}

/* The reading of a record, NAN where it has none. */
void ws_read(const char *rec, struct lm_calib *c)
{
	ws_read_one(rec, false, lm_ws_loads, LM_WS, c->ws_shared_s,
		    c->ws_private_s, c->ws_per_add);
	ws_read_one(rec, true, lm_wl_locks, LM_WL, c->wl_shared_s,
		    c->wl_private_s, c->wl_per_add);
}

static void ws_emit_one(FILE *f, bool lock, const unsigned int *k,
			unsigned int n, const double *shared,
			const double *priv, const double *per_add,
			const double *model_shared, const double *model_per_add)
{
	char stem[24], key[72];
	unsigned int j;

	for (j = 0; j < n; j++) {
		ws_stem(stem, sizeof(stem), lock, k[j]);
		snprintf(key, sizeof(key), "%s_round_ns", stem);
		json_d(f, key, shared[j] * 1e9);
		snprintf(key, sizeof(key), "%s_private_round_ns", stem);
		json_d(f, key, priv[j] * 1e9);
		snprintf(key, sizeof(key), "%s_transfers_per_add", stem);
		json_d(f, key, per_add[j]);
		snprintf(key, sizeof(key), "model_%s_round_ns", stem);
		json_d(f, key, model_shared[j] * 1e9);
		snprintf(key, sizeof(key), "model_%s_transfers_per_add", stem);
		json_d(f, key, model_per_add[j]);
	}
}

/* The reading, its replay and the fit, into a calibration record. */
void ws_emit(FILE *f, const struct lm_calib *c)
{
	ws_emit_one(f, false, lm_ws_loads, LM_WS, c->ws_shared_s,
		    c->ws_private_s, c->ws_per_add, c->model_ws_shared_s,
		    c->model_ws_per_add);
	ws_emit_one(f, true, lm_wl_locks, LM_WL, c->wl_shared_s,
		    c->wl_private_s, c->wl_per_add, c->model_wl_shared_s,
		    c->model_wl_per_add);
	json_d(f, "lock_ends_hold", c->lock_ends);
	fprintf(f, ",\"lock_ends_hold_set\":%s",
		c->lock_ends_set ? "true" : "false");
	json_d(f, "lock_ends_hold_fit", c->lock_ends_fit);
}

/* Append to @buf (@*at used of @len) as snprintf() would. */
static void ws_cat(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void ws_cat(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

/*
 * The reading for the printed calibration: per count, the machine's
 * transfers per add and round, and the replay's; and the fit.
 */
void ws_text(const struct lm_calib *c, char *buf, size_t len)
{
	size_t at = 0;
	unsigned int j;

	buf[0] = 0;
	if (!isfinite(c->ws_per_add[0]))
		ws_cat(buf, len, &at, "not measured");
	else
		ws_cat(buf, len, &at, "loads before each add, transfers per "
		       "add and ns a round, measured (the replay):");
	for (j = 0; j < LM_WS && isfinite(c->ws_per_add[0]); j++)
		ws_cat(buf, len, &at, "%s %u: %.3f (%.3f), %.1f (%.1f)",
		       j ? ";" : "", lm_ws_loads[j], c->ws_per_add[j],
		       c->model_ws_per_add[j], c->ws_shared_s[j] * 1e9,
		       c->model_ws_shared_s[j] * 1e9);
	if (isfinite(c->wl_per_add[0]))
		ws_cat(buf, len, &at, "; locked adds to its own line instead:");
	for (j = 0; j < LM_WL && isfinite(c->wl_per_add[0]); j++)
		ws_cat(buf, len, &at, "%s %u: %.3f (%.3f), %.1f (%.1f)",
		       j ? ";" : "", lm_wl_locks[j], c->wl_per_add[j],
		       c->model_wl_per_add[j], c->wl_shared_s[j] * 1e9,
		       c->model_wl_shared_s[j] * 1e9);
	ws_cat(buf, len, &at, "; a locked op on another line ends the hold "
	       "with probability %.2f (%s", c->lock_ends,
	       c->lock_ends_set ? "set by hand" : "the default");
	if (isfinite(c->lock_ends_fit))
		ws_cat(buf, len, &at, "; the locked adds fit %.2f)",
		       c->lock_ends_fit);
	else
		ws_cat(buf, len, &at, ")");
}
