// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * runahead.c - the run-ahead reading of the calibration (lines.h): how
 * much of a locked operation's transfer its core hides behind the plain
 * work after it.
 *
 * A locked add whose line is at another core need not stop its core: an
 * out-of-order core can go on past it with the loads and arithmetic that
 * follow (the branches on its result are predicted), and only the next
 * locked operation, which must wait for the one before it, waits for the
 * line.  Whether it does, and how far, is the machine's.  A charge walk
 * is this case: the root's add is followed by the limit, watermark and
 * high loads and the uncharge's first plain loads before the next
 * locked add, on the leaf.
 *
 * The reading is the calibration's ping-pong loop (calib.c) with
 * LM_RA_LOADS dependent loads of a thread's own lines before each add:
 * the median round on the shared line against the median round on a
 * private one, over the transfers per shared add counted, is what a
 * transfer costs behind the loads.  They take long enough (about 60 ns
 * on the machines we have) that the other core has moved on when a
 * thread asks again, so the line sits idle at the other core and, with
 * nothing hidden, the transfer would cost the idle fetch.  The hidden
 * share is one less the visible cost over the fetch, clamped to 0 to 1.
 */
#include <math.h>

#include "lines.h"
#include "strategy.h"

/* Fewer transfers per shared add: the line hardly moved, nothing read. */
#define RA_MIN_MOVES 0.25

/*
 * The reading's derived figures: a transfer's visible cost behind the
 * loads and the share of the fetch hidden.  A record without the reading
 * (before it), one whose line hardly moved, or one without a measured
 * fetch hides nothing: the replay before the reading (a locked op that
 * waits for its line stops its core), and it says so.
 */
void ra_derive(struct lm_calib *c)
{
	c->ra_visible_s = (c->ra_shared_s - c->ra_private_s) / c->ra_per_add;
	c->runahead_assumed = !(c->ra_per_add >= RA_MIN_MOVES) ||
			      !isfinite(c->ra_visible_s) ||
			      c->fetch_assumed || !(c->fetch_s > 0);
	c->runahead = c->runahead_assumed ? 0 :
		      fmin(1, fmax(0, 1 - c->ra_visible_s / c->fetch_s));
}

/* The run-ahead reading of a record, NAN where it has none (before it). */
void ra_read(const char *rec, struct lm_calib *c)
{
	c->ra_shared_s = c->ra_private_s = c->ra_per_add = NAN;
	if (!json_num(rec, "runahead_round_ns", &c->ra_shared_s) ||
	    !json_num(rec, "runahead_private_round_ns", &c->ra_private_s) ||
	    !json_num(rec, "runahead_transfers_per_add", &c->ra_per_add)) {
		c->ra_shared_s = c->ra_private_s = c->ra_per_add = NAN;
		return;
	}
	c->ra_shared_s *= 1e-9;
	c->ra_private_s *= 1e-9;
}
