// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stores.c - the store reading of the calibration (lines.h): how a core's
 * buffered stores to lines another core reads hold up its next locked
 * operation.
 *
 * x86 lets a plain store retire into the store buffer and go on; a locked
 * operation then waits until every store before it has reached the cache,
 * and a store to a line another core has a copy of reaches it only once
 * that copy is invalidated.  Stores leave the buffer in program order, but
 * the core may ask for the lines of later stores while an earlier one
 * still waits: whether two such stores cost one invalidation's time or
 * two is the machine's.  sock's rings are this case (a sender stores a
 * message and the ring's head, the receiver reads them, and the sender's
 * next charge is a locked operation), so the replay prices it from this
 * reading (timed_apply()).
 *
 * Thread 0 makes rounds of k plain stores, each to a line of its own that
 * thread 1 keeps reading, then one locked add to a private line, for k =
 * 0, 1, ..., LM_SB_K - 1 in turn by chunks; thread 1 reads the lines in a
 * loop meanwhile.  The median chunk of each k, seconds per round.  One
 * store's cost is sb[1] - sb[0]; the share of a second store's cost that
 * the first does not hide, (sb[2] - sb[1]) / (sb[1] - sb[0]), is the
 * drain's serial share: 1 when the lines are fetched one after another, 0
 * when both are fetched at once.
 *
 * The drain reading follows, on the same threads: does the buffer drain
 * while its core waits for a load that misses?  A sock pass is this case:
 * a sender's stores of a message and the ring's head, then, before its
 * next locked operation, its loads of the partner's ring, which the
 * partner has just stored.  Thread 1 now stores to LM_SBL_LINES lines in
 * turn, reading line 0 between; thread 0 makes rounds of a store to line
 * 0 (bit 0 of the round's kind), a load of one of thread 1's lines, in
 * turn (bit 1), both or neither, then the locked add,
 * the four kinds in turn by chunks.  With s the store's cost, l the
 * load's (each over the kind with neither) and b both's, the share of
 * the shorter that the two overlap, (s + l - b) / min(s, l), is the
 * share of a load's wait that the buffer drains through: 1 when a core
 * drains its stores while it waits for a load, 0 when the costs add up
 * (the family 25 model 17 AMD EPYC: docs/lines-model.md).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "lines.h"
#include "strategy.h"

#define SB_ROUNDS 200U		/* rounds per chunk */
#define SB_CHUNKS 600U		/* chunks per k */

struct sb_line {
	_Alignas(BENCH_LINE) atomic_long v;
};

struct sb {
	struct sb_line line[LM_SB_K];	/* stored by 0, read by 1 */
	struct sb_line theirs[LM_SBL_LINES];	/* drain: stored by 1 */
	struct sb_line own;		/* thread 0's locked add */
	_Alignas(BENCH_LINE) atomic_int stop;
	atomic_int drain;		/* 1: the drain reading's turn */
	atomic_int ready;
	int os_cpu[2];
	double chunk[LM_SB_K][SB_CHUNKS];
	double dchunk[LM_SBL][SB_CHUNKS];
};

static void *sb_reader(void *arg)
{
	struct sb *p = arg;
	unsigned long i = 0;
	unsigned int k;
	long sum = 0;

	bind_self(p->os_cpu[1]);
	atomic_fetch_add(&p->ready, 1);
	while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
		if (!atomic_load_explicit(&p->drain, memory_order_relaxed)) {
			for (k = 1; k < LM_SB_K; k++)
				sum += atomic_load_explicit(
					&p->line[k - 1].v,
					memory_order_relaxed);
			continue;
		}
		i++;
		atomic_store_explicit(&p->theirs[i % LM_SBL_LINES].v, (long)i,
				      memory_order_relaxed);
		sum += atomic_load_explicit(&p->line[0].v,
					    memory_order_relaxed);
	}
	return (void *)sum;
}

/* One chunk of rounds of @k stores and a locked add: seconds per round. */
static double sb_chunk(struct sb *p, unsigned int k)
{
	double t0 = now_s();
	unsigned int r, j;

	for (r = 0; r < SB_ROUNDS; r++) {
		for (j = 0; j < k; j++)
			atomic_store_explicit(&p->line[j].v, (long)r,
					      memory_order_relaxed);
		atomic_fetch_add_explicit(&p->own.v, 1, memory_order_relaxed);
	}
	return (now_s() - t0) / SB_ROUNDS;
}

/*
 * One chunk of the drain reading's rounds of @kind (its bits: a store to
 * line 0, a load of one of thread 1's lines in turn; a branch on the
 * load, predicted, as sock's on its ring's head), then a locked add.
 */
static double sbl_chunk(struct sb *p, unsigned int kind)
{
	double t0 = now_s();
	unsigned int r;
	long seen = 0;

	for (r = 0; r < SB_ROUNDS; r++) {
		if (kind & 1)
			atomic_store_explicit(&p->line[0].v, (long)r,
					      memory_order_relaxed);
		if ((kind & 2) &&
		    atomic_load_explicit(&p->theirs[r % LM_SBL_LINES].v,
					 memory_order_relaxed) < 0)
			seen++;
		atomic_fetch_add_explicit(&p->own.v, 1, memory_order_relaxed);
	}
	t0 = (now_s() - t0) / SB_ROUNDS;
	return seen ? (double)NAN : t0;	/* never: its values are > 0 */
}

static void *sb_writer(void *arg)
{
	struct sb *p = arg;
	unsigned int c, k;

	bind_self(p->os_cpu[0]);
	while (atomic_load(&p->ready) < 1)
		cpu_relax();
	for (c = 0; c < SB_CHUNKS; c++)
		for (k = 0; k < LM_SB_K; k++)
			p->chunk[k][c] = sb_chunk(p, k);
	atomic_store(&p->drain, 1);
	for (k = 0; k < LM_SBL; k++)
		sbl_chunk(p, k);	/* untimed: thread 1 turns to it */
	for (c = 0; c < SB_CHUNKS; c++)
		for (k = 0; k < LM_SBL; k++)
			p->dchunk[k][c] = sbl_chunk(p, k);
	atomic_store(&p->stop, 1);
	return NULL;
}

int sb_trial(const struct opts *o, double sb[LM_SB_K], double sbl[LM_SBL])
{
	struct sb *p = zalloc_lines(sizeof(*p));
	pthread_t tid[2];
	unsigned int k;

	if (!p)
		return -ENOMEM;
	p->os_cpu[0] = o->os_cpus[0];
	p->os_cpu[1] = o->os_cpus[1];
	if (pthread_create(&tid[1], NULL, sb_reader, p)) {
		free(p);
		return -ENOMEM;
	}
	if (pthread_create(&tid[0], NULL, sb_writer, p)) {
		atomic_store(&p->stop, 1);
		pthread_join(tid[1], NULL);
		free(p);
		return -ENOMEM;
	}
	pthread_join(tid[0], NULL);
	pthread_join(tid[1], NULL);
	for (k = 0; k < LM_SB_K; k++)
		sb[k] = median(p->chunk[k], SB_CHUNKS);
	for (k = 0; k < LM_SBL; k++)
		sbl[k] = median_finite(p->dchunk[k], SB_CHUNKS);
	free(p);
	return 0;
}

/*
 * The reading's derived figures: one store's cost and the drain's serial
 * share, a second store's cost over the first's; the drain's share of a
 * load's wait.  Each formula takes a part's cost as fixed, the same in a
 * round with other work as alone, which holds only where the part moved
 * its line in every round: a line moved every round costs about a
 * latency a round.  A part that cost less than half a latency kept its
 * line through most rounds (the other core's reads came later), and then
 * the longer rounds of the loop with more work give those reads more
 * chances to take it, so the part costs more there than alone and the
 * formula reads a share that is not there: the AMD EPYC of family 26
 * model 2 under its far placement, a store 28-31 ns against a latency of
 * 95-124 ns, reads a store and a load 50 ns dearer together than apart
 * (a share of -1.8, clamped to 0).  So where a part cost under half a
 * latency, and where a record has no reading, the share is assumed, and
 * the record says so: the serial share 1, as the AMD EPYC of family 25
 * model 17, the first machine to take the reading, reads it; the drain
 * under a load 1, the replay before that reading (docs/lines-model.md).
 */
void sb_derive(struct lm_calib *c)
{
	double one = c->sb_s[1] - c->sb_s[0];
	double s = c->sbl_s[1] - c->sbl_s[0], l = c->sbl_s[2] - c->sbl_s[0];

	c->store_s = one;
	c->sb_serial_assumed = !(one > c->latency_s / 2) ||
			       !isfinite(c->sb_s[2]);
	c->sb_serial = c->sb_serial_assumed ? 1 :
		       fmin(1, fmax(0, (c->sb_s[2] - c->sb_s[1]) / one));
	c->drain_store_s = s;
	c->drain_load_s = l;
	c->sb_under_load_assumed = !(s > c->latency_s / 2) ||
				   !(l > c->latency_s / 2) ||
				   !isfinite(c->sbl_s[3]);
	c->sb_under_load = c->sb_under_load_assumed ? 1 :
			   fmin(1, fmax(0, (s + l - (c->sbl_s[3] -
						     c->sbl_s[0])) /
					   fmin(s, l)));
}

/* The store and drain readings of a record, NAN where it has none. */
void sb_read(const char *rec, struct lm_calib *c)
{
	static const char *const key[LM_SB_K] = {
		"stores_0_round_ns", "stores_1_round_ns", "stores_2_round_ns"
	};
	static const char *const dkey[LM_SBL] = {
		"drain_lock_round_ns", "drain_store_round_ns",
		"drain_load_round_ns", "drain_both_round_ns"
	};
	unsigned int k;

	for (k = 0; k < LM_SB_K; k++) {
		c->sb_s[k] = NAN;
		if (json_num(rec, key[k], &c->sb_s[k]))
			c->sb_s[k] *= 1e-9;
	}
	for (k = 0; k < LM_SBL; k++) {
		c->sbl_s[k] = NAN;
		if (json_num(rec, dkey[k], &c->sbl_s[k]))
			c->sbl_s[k] *= 1e-9;
	}
}
