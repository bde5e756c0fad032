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
	struct sb_line own;		/* thread 0's locked add */
	_Alignas(BENCH_LINE) atomic_int stop;
	atomic_int ready;
	int os_cpu[2];
	double chunk[LM_SB_K][SB_CHUNKS];
};

static void *sb_reader(void *arg)
{
	struct sb *p = arg;
	unsigned int k;
	long sum = 0;

	bind_self(p->os_cpu[1]);
	atomic_fetch_add(&p->ready, 1);
	while (!atomic_load_explicit(&p->stop, memory_order_relaxed))
		for (k = 1; k < LM_SB_K; k++)
			sum += atomic_load_explicit(&p->line[k - 1].v,
						    memory_order_relaxed);
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
	atomic_store(&p->stop, 1);
	return NULL;
}

int sb_trial(const struct opts *o, double sb[LM_SB_K])
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
	free(p);
	return 0;
}

/*
 * The reading's derived figures: one store's cost and the drain's serial
 * share, a second store's cost over the first's.  Where the
 * stores cost less than a quarter of a transfer's latency the other core
 * did not take their lines (its reads stayed behind), so there is no
 * share to read; then, and where a record has no reading, it is assumed
 * 1, and said so: the AMD EPYC of family 25 model 17, the first machine
 * to take the reading, drains its lines one after another
 * (docs/lines-model.md).
 */
void sb_derive(struct lm_calib *c)
{
	double one = c->sb_s[1] - c->sb_s[0];

	c->store_s = one;
	c->sb_serial_assumed = !(one > c->latency_s / 4) ||
			       !isfinite(c->sb_s[2]);
	c->sb_serial = c->sb_serial_assumed ? 1 :
		       fmin(1, fmax(0, (c->sb_s[2] - c->sb_s[1]) / one));
}
