// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * replay.c - the stepped workloads (lines.h): each series' library calls
 * one simulated CPU at a time, replayed by rounds in a shuffled order
 * (sim_rounds()) or in simulated time (sim_timed()), the traced accesses
 * going to the directory (model.c); and the calibration's own loop
 * replayed the same way (pp_model()).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "strategy.h"

#define LM_TICK 1e-12		/* time replay: a waiter asks again after */

/* ---- the stepped workloads ---------------------------------------------- */

/* Count from here on: forget the traffic, operations and time so far. */
void sim_count_from_here(struct sim *m)
{
	dir_zero(&dir);
	m->ops = 0;
	m->rx_passes = m->rx_msgs = m->sent = 0;
	m->spent_local = m->spent_xfer = m->spent_wait = 0;
	m->stores = m->locked = 0;
}

/*
 * One library call of pair_body()'s loop for @cpu (workload.c): the
 * burst's charges one per step, then the uncharges of what they got, one
 * per step, or all at once for fault (its folio uncharge_batch()).  One
 * operation per charge attempt, as the timed workload counts.
 */
static void pair_step(struct sim *m, unsigned int cpu)
{
	const struct config *c = m->cfg;
	unsigned int leaf = m->pos[cpu];

	if (m->phase[cpu] < c->arg[2]) {
		if (m->s->charge(m->inst, cpu, leaf, 1)) {
			m->got[cpu]++;
			m->held[leaf]++;
		}
		m->phase[cpu]++;
		m->ops++;
	} else if (m->got[cpu] && m->folio) {
		m->held[leaf] -= m->got[cpu];
		m->s->uncharge_direct(m->inst, cpu, leaf, m->got[cpu]);
		m->got[cpu] = 0;
	} else if (m->got[cpu]) {
		m->s->uncharge(m->inst, cpu, leaf, 1);
		m->got[cpu]--;
		m->held[leaf]--;
	}
	if (m->phase[cpu] < c->arg[2] || m->got[cpu])
		return;
	m->phase[cpu] = 0;
	if (c->arg[0] > 1)
		m->pos[cpu] = leaf + 1 == c->arg[0] ? 0 : leaf + 1;
}

/*
 * One pass of sock_body()'s loop for @cpu, rr: pairs (2p, 2p + 1).  The
 * ring accesses ring_pop() and ring_push() make are traced too: they are
 * the workload's own line traffic.  The operation is a message
 * delivered (received and uncharged), not one sent: the two rates agree
 * once the rings have settled, but a replay is short against a ring of
 * SOCK_RING messages, and where the receivers are the slower side (v4
 * at 224 CPUs: every uncharge walks to the root) the senders fill their
 * rings for the whole replay, so counting sends would count messages
 * whose uncharge, the expensive half, is never made.
 */
static bool sock_step(struct sim *m, unsigned int cpu)
{
	unsigned int pair = cpu / 2, i;
	struct sim_ring *tx = &m->ring[cpu], *rx = &m->ring[cpu ^ 1];
	unsigned long pages;
	int got;

	if (pair >= m->cfg->tree.nr_leaves)
		return false;
	for (i = 0; i < 8; i++) {
		trace_access(PCS_OP_LOAD, &rx->head);
		if (rx->tail == rx->head)
			break;
		m->rx_passes += !i;
		m->rx_msgs++;
		m->ops++;
		trace_access(PCS_OP_LOAD, &rx->pages[rx->tail % SOCK_RING]);
		got = rx->pages[rx->tail++ % SOCK_RING];
		trace_access(PCS_OP_STORE, &rx->tail);
		m->s->uncharge(m->inst, cpu, pair, (unsigned long)got);
		m->held[pair] -= got;
	}
	trace_access(PCS_OP_LOAD, &tx->tail);
	if (tx->head - tx->tail == SOCK_RING)
		return i > 0;
	pages = 1 + rng_next(&m->rng[cpu]) % 4;
	if (m->s->charge(m->inst, cpu, pair, pages)) {
		m->held[pair] += (long)pages;
		trace_access(PCS_OP_STORE, &tx->pages[tx->head % SOCK_RING]);
		tx->pages[tx->head++ % SOCK_RING] = (unsigned char)pages;
		trace_access(PCS_OP_STORE, &tx->head);
		m->sent++;
		return true;
	}
	return i > 0;
}

/* One step of @cpu; false: an idle pass of sock (nothing in, no room). */
static bool sim_step(struct sim *m, bool sock, unsigned int cpu)
{
	if (sock)
		return sock_step(m, cpu);
	pair_step(m, cpu);
	return true;
}

int sim_init(struct sim *m, const struct strategy *s, void *inst,
	     const struct config *cfg, uint64_t seed)
{
	unsigned int i, n = cfg->threads;

	memset(m, 0, sizeof(*m));
	m->s = s;
	m->inst = inst;
	m->cfg = cfg;
	m->n = n;
	m->pos = calloc(n, sizeof(*m->pos));
	m->phase = calloc(n, sizeof(*m->phase));
	m->got = calloc(n, sizeof(*m->got));
	m->order = calloc(n, sizeof(*m->order));
	m->order_rng = seed * 0xD1B54A32D192ED03ULL + n;
	m->rng = calloc(n, sizeof(*m->rng));
	m->ring = zalloc_lines(n * sizeof(*m->ring));
	m->held = calloc(cfg->tree.nr_leaves, sizeof(*m->held));
	m->q = calloc(n, sizeof(*m->q));
	m->clock = calloc(n, sizeof(*m->clock));
	m->heap = calloc(n, sizeof(*m->heap));
	m->asked = calloc(n, sizeof(*m->asked));
	m->miss = calloc(n, sizeof(*m->miss));
	m->sb = calloc(n, sizeof(*m->sb));
	m->shadow = calloc(n, sizeof(*m->shadow));
	m->miss_tag = calloc(n, sizeof(*m->miss_tag));
	m->last_lock = calloc(n, sizeof(*m->last_lock));
	m->hold_rng = seed * 0xA0761D6478BD642FULL + n;
	if (!m->pos || !m->phase || !m->got || !m->order || !m->rng ||
	    !m->ring || !m->held || !m->q || !m->clock || !m->heap ||
	    !m->asked || !m->miss || !m->sb || !m->shadow ||
	    !m->miss_tag || !m->last_lock)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->order[i] = i;
		m->pos[i] = cfg->arg[1] ? i : i * cfg->arg[0] / n;
		m->rng[i] = seed * 0x9E3779B97F4A7C15ULL + i + 1;
	}
	return 0;
}

/*
 * Bound each CPU's store buffer at @cap of its traced stores (0: no
 * bound, the default); sim_init() first.  Return 0 or -ENOMEM.
 */
int sim_store_buffer(struct sim *m, unsigned int cap)
{
	m->sb_cap = cap;
	if (!cap)
		return 0;
	m->sb_ring = calloc((size_t)m->n * cap, sizeof(*m->sb_ring));
	m->sb_at = calloc(m->n, sizeof(*m->sb_at));
	return m->sb_ring && m->sb_at ? 0 : -ENOMEM;
}

/* Give back what the messages in flight hold, drain, check conservation. */
int sim_fini(struct sim *m)
{
	char why[160];
	unsigned int i;
	int ret = 0;

	if (m->held && release_and_check(m->s, m->inst, &m->cfg->tree,
					 m->held, why, sizeof(why))) {
		fprintf(stderr, "\nlines: conservation violated: %s %s: %s\n",
			m->cfg->label, m->s->name, why);
		ret = -EIO;
	}
	free(m->pos);
	free(m->phase);
	free(m->got);
	free(m->order);
	free(m->rng);
	free(m->ring);
	free(m->held);
	for (i = 0; m->q && i < m->n; i++)
		free(m->q[i].v);
	free(m->q);
	free(m->clock);
	free(m->heap);
	free(m->asked);
	free(m->miss);
	free(m->sb);
	free(m->sb_ring);
	free(m->sb_at);
	free(m->shadow);
	free(m->last_lock);
	free(m->miss_tag);
	return ret;
}

/*
 * @rounds rounds, each giving every CPU @q consecutive steps, the CPUs in
 * an order shuffled afresh each round from a seeded generator: so that a
 * contended line comes from a CPU picked at random (as under real
 * contention) rather than from the previous CPU by number, which a fixed
 * round-robin would make a same-package neighbour almost always.  @trace:
 * feed the accesses to the directory.
 */
int sim_rounds(struct sim *m, bool sock, unsigned long rounds, unsigned int q,
	       bool trace)
{
	unsigned int cpu, k, i, j, t;
	unsigned long r;
	int ret;

	for (r = 0; r < rounds; r++) {
		for (i = m->n; i > 1; i--) {
			j = (unsigned int)(rng_next(&m->order_rng) % i);
			t = m->order[i - 1];
			m->order[i - 1] = m->order[j];
			m->order[j] = t;
		}
		for (i = 0; i < m->n; i++) {
			cpu = m->order[i];
			ret = m->s->enter(m->inst, cpu);
			if (ret)
				return ret;
			/* Entering and leaving are the bench's: untraced. */
			sim_cpu = trace ? (int)cpu : -1;
			for (k = 0; k < q; k++)
				sim_step(m, sock, cpu);
			sim_cpu = -1;
			m->s->exit(m->inst);
		}
	}
	return 0;
}

/* ---- the time replay ---------------------------------------------------- */

/*
 * Does @a come before @b: the earlier clock; on a tie the one waiting for
 * a held line the longest (so that waiters are served in order), then
 * the lower number.
 */
static bool heap_before(const struct sim *m, unsigned int a, unsigned int b)
{
	double ka = m->asked[a] >= 0 ? m->asked[a] : m->clock[a];
	double kb = m->asked[b] >= 0 ? m->asked[b] : m->clock[b];

	if (m->clock[a] != m->clock[b])
		return m->clock[a] < m->clock[b];
	return ka < kb || (ka == kb && a < b);
}

/* Sift heap entry @i of @nr down to its place. */
static void heap_down(struct sim *m, unsigned int i, unsigned int nr)
{
	unsigned int c, t;

	while ((c = 2 * i + 1) < nr) {
		if (c + 1 < nr && heap_before(m, m->heap[c + 1], m->heap[c]))
			c++;
		if (!heap_before(m, m->heap[c], m->heap[i]))
			break;
		t = m->heap[i];
		m->heap[i] = m->heap[c];
		m->heap[c] = t;
		i = c;
	}
}

/*
 * Is @h, which holds @l, still working on at @t (--pricing hold)?  Not
 * while it waits for a line (or has nothing left to do), nor while
 * another line is in flight to it: a core lets go of a line it holds
 * as soon as it stalls.
 */
static bool hold_working(const struct sim *m, int h, const struct lm_line *l,
			 double t)
{
	return m->asked[h] == -1 &&
	       !(m->miss[h] > t && m->miss_tag[h] != l->tag);
}

/*
 * When can @cpu's transaction on @l start (--pricing hold)?  Its clock,
 * unless the line is busy: in flight to the CPU that asked for it before
 * (it leaves only once it has arrived), or held by a core that took it
 * with a locked op or a plain store, which keeps it for m->t_hold after it
 * arrived while it works on (it lets go at once when it stalls).  Then
 * the line's free_at, or, while the holder may stall first, just after the
 * holder's next access, when the CPU asks again.  Requests are served in
 * the order they were made (heap_before()), and the line changes hands
 * when its transfer starts: what the holder does after that misses.
 */
static double line_start(const struct sim *m, const struct lm_line *l,
			 unsigned int cpu)
{
	double t = m->clock[cpu];
	int h = l->owner;

	if (l->free_at <= t)
		return t;
	if (h < 0)
		return l->free_at;	/* in flight to a reader: not held */
	if (t >= l->arrive && !hold_working(m, h, l, t))
		return t;
	return fmin(l->free_at, fmax(l->arrive, m->clock[h] + LM_TICK));
}

/*
 * @cpu's locked op on *@l (--pricing hold): if its last locked op was on
 * another line, which it took and still holds, that hold ends now with
 * probability lock_ends (--lines-lock-ends, worksweep.c): the core turned
 * to other locked work.  Called only where lock_ends is above 0 (by
 * default every hold is kept).  *@l is found again: the directory may
 * have grown.
 */
static void lock_turns(struct sim *m, unsigned int cpu, struct lm_line **l)
{
	uintptr_t tag = (*l)->tag;
	struct lm_line *o;

	if (m->last_lock[cpu] && m->last_lock[cpu] != tag &&
	    0x1p-53 * (double)(rng_next(&m->hold_rng) >> 11) < m->lock_ends) {
		o = dir_find(&dir, m->last_lock[cpu]);
		if (o->owner == (int)cpu && o->free_at > m->clock[cpu])
			o->free_at = fmax(o->arrive, m->clock[cpu]);
		*l = dir_find(&dir, tag);
	}
	m->last_lock[cpu] = tag;
}

/* The stores @cpu buffered that were not drained at @since drain @by later. */
static void sb_hold_up(struct sim *m, unsigned int cpu, double since,
		       double by)
{
	double *v = m->sb_cap ? &m->sb_ring[(size_t)cpu * m->sb_cap] : NULL;
	unsigned int i;

	m->sb[cpu] += by;
	for (i = 0; v && i < m->sb_cap; i++)
		if (v[i] > since)
			v[i] += by;
}

/*
 * Apply @cpu's access @a (address, | 1 if a write, | 2 if a plain store)
 * at its clock.  With --pricing hold the access first waits until the
 * line can move (line_start(): the access stays pending, return false);
 * a locked op waits for the CPU's buffered stores, and a plain store
 * does not stop the CPU (x86's store buffer: the line's latency is paid
 * by the next locked op, if any is still waiting for it; with
 * --lines-store-buffer N, by a store that finds N still buffered), and a load
 * that waits for its line holds the buffer's drain up for the share of
 * its wait the drain reading does not drain through.  Otherwise the
 * clock advances by the local cost per access, plus the transfer cost if
 * it waited for another core (a cross-package one times the remote
 * factor).  Return: true once applied.
 */
static bool timed_apply(struct sim *m, unsigned int cpu, uintptr_t a)
{
	uintptr_t addr = a & ~(uintptr_t)3;
	struct lm_line *l = dir_find(&dir, addr / LM_LINE);
	bool store = a & 2, locked = (a & 1) && !store;
	int prev = l->owner;
	unsigned int moved;
	double cost, go, sent = m->clock[cpu], way, req = 0, at, local, done;
	double hid;
	double start = m->clock[cpu];
	/* Since when the access has been waiting, if it has. */
	double since = m->asked[cpu] >= 0 ? m->asked[cpu] : m->clock[cpu];
	double *oldest = NULL;

	if (m->hold && store && m->sb_cap) {
		/*
		 * A bounded buffer (--lines-store-buffer): a store finds no
		 * room until the one sb_cap stores before it has drained,
		 * and the CPU stops until then.
		 */
		oldest = &m->sb_ring[(size_t)cpu * m->sb_cap +
				     m->sb_at[cpu] % m->sb_cap];
		if (*oldest > m->clock[cpu]) {
			m->spent_xfer += *oldest - m->clock[cpu];
			m->clock[cpu] = *oldest;
			return false;
		}
	}

	if (m->hold && dir_waits(l, cpu, a & 1)) {
		/*
		 * The request left when the CPU first asked and reaches the
		 * holder @way later (remote to another package); the line
		 * cannot leave before.  A buffered store does not stop the
		 * core, neither for the way nor for a busy line: its transfer
		 * starts when the line can leave (@start) and what is left
		 * of the way is paid with it, in the store buffer (@req).
		 */
		if (m->asked[cpu] >= 0)
			sent = m->asked[cpu];
		way = m->t_req * (l->owner >= 0 &&
				  dir.pkg[l->owner] != dir.pkg[cpu] ?
				  m->remote_factor : 1);
		go = line_start(m, l, cpu);
		at = fmax(go, m->clock[cpu]);
		if (store) {
			start = at;
			req = fmax(0, sent + way - at);
		} else if (sent + way > at) {
			/* the line's own wait, then the way's rest */
			if (m->asked[cpu] < 0)
				m->asked[cpu] = m->clock[cpu];
			m->spent_wait += at - m->clock[cpu];
			m->spent_xfer += sent + way - at;
			m->clock[cpu] = sent + way;
			return false;
		} else if (go > m->clock[cpu]) {
			if (m->asked[cpu] < 0)
				m->asked[cpu] = m->clock[cpu];
			m->spent_wait += go - m->clock[cpu];
			m->clock[cpu] = go;
			return false;
		}
	}
	m->asked[cpu] = -1;
	done = m->clock[cpu];	/* its line's wait, before the stores' */
	/* A locked op waits for the stores before it (x86). */
	if (m->hold && locked && m->sb[cpu] > m->clock[cpu]) {
		m->spent_xfer += m->sb[cpu] - m->clock[cpu];
		m->clock[cpu] = m->sb[cpu];
	}
	if (m->hold && locked && m->lock_ends > 0)
		lock_turns(m, cpu, &l);
	moved = dir_access(&dir, cpu, addr, a & 1, &l);
	cost = moved ? m->t_xfer * (moved == 2 ? m->remote_factor : 1) + req :
		       0;
	if (m->hold && moved) {
		/*
		 * A locked op keeps the line while it runs; taken from a
		 * modified copy, for the hold after that.  A plain store
		 * keeps the line it took for the hold too, from any copy
		 * (an upgrade included): the store reading's loop, whose
		 * writer upgrades the line its reader shares every round,
		 * replays at 0.9-1.15x the machine's round with it and at
		 * 2.4-6.7x without (stores.c; docs/lines-model.md).  A
		 * hold ends when the access at that point would be half
		 * done, so the accesses that fit in it round to the
		 * nearest.
		 */
		l->arrive = start + cost;
		l->free_at = l->arrive +
			     (locked ? m->t_access / 2 : 0) +
			     (store || (locked && prev >= 0 &&
					prev != (int)cpu) ? m->t_hold : 0);
	}
	if (m->hold && store) {
		/*
		 * Buffered: the core goes on while the line comes.  The
		 * buffer drains in order, and the serial share of this
		 * store's transfer waits for the stores before it (the
		 * store reading: 1 where lines are fetched one at a time).
		 */
		m->sb[cpu] = fmax(start + cost,
				  fmax(m->sb[cpu], start) +
				  m->sb_serial * cost);
		if (oldest) {
			*oldest = m->sb[cpu];
			m->sb_at[cpu]++;
		}
		cost = 0;
	} else if (moved) {
		m->miss[cpu] = m->clock[cpu] + cost;
		m->miss_tag[cpu] = l->tag;
	}
	local = m->t_access;
	if (m->hold && locked) {
		/*
		 * Run-ahead (runahead.c): while a locked op waits for its
		 * line, the core goes on with the plain work after it, the
		 * reading's share of the wait's worth; its next locked op
		 * waits for it.  The wait is the op's own in the replay's
		 * time (the line moves when it moves, the holder keeps it
		 * as long as it does); the work done meanwhile is the
		 * shadow, which the plain accesses after it draw on until
		 * the next locked op.
		 */
		m->shadow[cpu] = m->runahead * (done + cost - since);
	} else if (m->shadow[cpu] > 0) {
		/* Done in a locked op's shadow already. */
		hid = fmin(m->shadow[cpu], local);
		local -= hid;
		m->shadow[cpu] -= hid;
		hid = fmin(m->shadow[cpu], cost);
		cost -= hid;
		m->shadow[cpu] -= hid;
	}
	if (m->hold && !(a & 1) && m->sb[cpu] > since)
		/*
		 * A load that waited for its line (stores.c, the drain
		 * reading): the buffered stores drained through only the
		 * reading's share of the wait, so the rest comes after.
		 */
		sb_hold_up(m, cpu, since, (1 - m->sb_under_load) *
				       (m->clock[cpu] + cost - since));
	m->clock[cpu] += local + cost;
	m->spent_local += local;
	m->spent_xfer += cost;
	m->stores += store;
	m->locked += locked;
	return true;
}

/* Every CPU's clock at a seeded random point within one access. */
static void clocks_start(struct sim *m)
{
	unsigned int i;

	for (i = 0; i < m->n; i++) {
		m->heap[i] = i;
		m->asked[i] = -1;
		m->clock[i] = m->t_access * 0x1p-53 *
			      (double)(rng_next(&m->order_rng) >> 11);
	}
	for (i = m->n / 2; i-- > 0;)
		heap_down(m, i, m->n);
}

/*
 * The time-ordered replay: @steps library calls (sock: passes of its
 * loop) in all, then every access still pending.  Each simulated CPU has
 * a clock, started at a seeded random point within one access's local
 * cost (so that no CPU number order is built in).  The CPU with the
 * earliest clock goes next: if none of its accesses is pending it makes
 * its next step, which runs whole (the library's semantics are untouched)
 * but whose traced accesses only queue up; then its oldest pending access
 * goes to timed_apply(): an upgrade waits for the other copies'
 * invalidations, the same round trip as a transfer.  With --pricing move
 * a line in flight is not held busy and a taken line leaves at the next
 * request: the formula's hottest-line bound serialises
 * (docs/lines-model.md says why); with --pricing hold the holds do.
 * A sock pass that finds nothing to receive and no room to send is idle:
 * only its partner can change that, so the CPU waits for the partner's
 * clock, and the pass does not count against @steps (spinning senders
 * would otherwise use the replay up while few messages arrive).  sock
 * counts nothing until its rings have settled (where the receivers are
 * the slower side, the senders fill their rings first), for at most
 * @steps passes.
 */
int sim_timed(struct sim *m, bool sock, unsigned long steps)
{
	unsigned int nr = m->n, cpu;
	unsigned long idle = 64 * steps;
	unsigned long chunk = 32UL * m->n, left = chunk, cap = steps;
	unsigned long sent = m->sent, got = m->ops, moved;
	bool settling = sock;
	struct lm_queue *q;
	unsigned int p;
	bool busy;
	int ret = 0;

	clocks_start(m);
	pending = m->q;
	while (nr && !ret) {
		if (settling && !left) {
			/*
			 * sock: settled once 32 passes per CPU that moved
			 * a message sent at most 10 % more than they
			 * delivered (give or take one per 8 CPUs): the
			 * rings no longer fill.  Count from there, and
			 * from @steps passes on in any case.
			 */
			m->settled = (m->sent - sent) * 10 <=
				     (m->ops - got) * 11 + m->n * 10 / 8;
			if (m->settled || m->settle >= cap) {
				settling = false;
				sim_count_from_here(m);
			}
			sent = m->sent;
			got = m->ops;
			left = chunk;
		}
		cpu = m->heap[0];
		q = &m->q[cpu];
		if (q->at == q->nr && steps) {
			q->at = q->nr = 0;
			ret = m->s->enter(m->inst, cpu);
			if (ret)
				break;
			sim_cpu = (int)cpu;
			moved = m->ops + m->sent;
			busy = sim_step(m, sock, cpu);
			sim_cpu = -1;
			/*
			 * --sock-work-ns: what else the CPU does for a
			 * message, half when it sends it, half when it
			 * delivers it (a sender that paid nothing would
			 * fill its ring long before the receivers settle).
			 */
			moved = m->ops + m->sent - moved;
			m->clock[cpu] += (double)moved * m->t_work / 2;
			m->spent_local += (double)moved * m->t_work / 2;
			m->s->exit(m->inst);
			p = cpu ^ 1;
			if (busy && settling) {
				m->settle++;
				left--;
			} else if (busy) {
				steps--;
			} else if (!--idle) {
				steps = 0;	/* nobody can go on */
			} else if (p < m->n && m->clock[p] > m->clock[cpu]) {
				/*
				 * sock: nothing to receive and no room to
				 * send.  Only the partner can change that,
				 * not before its clock: wait for it there.
				 */
				m->spent_wait += m->clock[p] - m->clock[cpu];
				m->clock[cpu] = m->clock[p];
			}
		}
		if (q->at < q->nr) {
			q->at += timed_apply(m, cpu, q->v[q->at]);
		} else if (steps) {
			/* A step with no shared access still takes time. */
			m->clock[cpu] += m->t_access;
			m->spent_local += m->t_access;
		} else {
			/* Done: out of the heap, its clock final. */
			m->asked[cpu] = -2;	/* holds nothing any more */
			m->heap[0] = m->heap[--nr];
		}
		heap_down(m, 0, nr);
	}
	pending = NULL;
	return ret;
}

/* Two simulated CPUs of one package, priced with calibration @c. */
struct two_cpus {
	struct sim m;
	double clock[2], asked[2], miss[2], sb[2], shadow[2];
	double sb_ring[2 * LM_SB_CAP_MAX];
	uintptr_t miss_tag[2], last_lock[2];
	unsigned int heap[2], sb_at[2];
};

static void two_cpus_start(struct two_cpus *t, const struct lm_calib *c,
			   uint64_t seed)
{
	struct sim *m = &t->m;

	memset(t, 0, sizeof(*t));
	dir_clear(&dir);
	dir.nr_cpus = 2;
	dir.pkg[0] = dir.pkg[1] = 0;
	m->n = 2;
	m->clock = t->clock;
	m->asked = t->asked;
	m->miss = t->miss;
	m->miss_tag = t->miss_tag;
	m->sb = t->sb;
	m->sb_cap = c->sb_cap;
	m->sb_ring = t->sb_ring;
	m->sb_at = t->sb_at;
	m->shadow = t->shadow;
	m->last_lock = t->last_lock;
	m->heap = t->heap;
	m->order_rng = seed;
	m->hold_rng = seed * 0xA0761D6478BD642FULL + 2;
	m->lock_ends = c->lock_ends;
	m->t_access = c->private_s;
	m->t_xfer = c->latency_s;
	m->t_hold = c->hold_s;
	m->t_req = c->request_s;
	m->sb_serial = c->sb_serial;
	m->runahead = c->runahead;
	m->sb_under_load = c->sb_under_load;
	m->hold = true;
	m->remote_factor = 1;
	clocks_start(m);
}

/*
 * The calibration's loop replayed with the hold: two CPUs adding to one
 * line, an add taking the private time, a transfer the latency, a taken
 * line kept for the hold.  Its transfers per add and time per add should
 * give back the measured ones (calib_derive()'s equations, up to the
 * whole number of adds that fit in a hold): a check that the replay
 * counts the transfers the calibration counted.  The two-line reading's
 * loop too (each CPU's adds go to line 0, 1, 0, ...), which nothing was
 * fitted to: the replay's own prediction of it.
 */
static void pp_replay(const struct lm_calib *c, uint64_t seed,
		      unsigned int lines, double *per_add, double *shared_s)
{
	struct two_cpus t;
	struct sim *m = &t.m;
	unsigned int adds = 0, next[2] = { 0, 0 }, cpu;

	two_cpus_start(&t, c, seed);
	while (adds < 100000) {
		/* Any line addresses will do: the directory keys on them. */
		cpu = m->heap[0];
		if (timed_apply(m, cpu, LM_LINE * (1 + next[cpu]) | 1)) {
			next[cpu] = next[cpu] + 1 == lines ? 0 : next[cpu] + 1;
			adds++;
		}
		heap_down(m, 0, 2);
	}
	*per_add = (double)dir.xfer / adds;
	*shared_s = (t.clock[0] + t.clock[1]) / adds;
	dir_clear(&dir);
}

void pp_model(struct lm_calib *c, uint64_t seed)
{
	pp_replay(c, seed, 1, &c->model_per_add, &c->model_shared_s);
	pp_replay(c, seed, LM_PP_LINES, &c->model_two_per_add,
		  &c->model_two_shared_s);
}

/*
 * The store reading's loop replayed (stores.c): CPU 0 makes rounds of @k
 * plain stores, each to a line of its own, and a locked add to a private
 * line; CPU 1 reads the @k lines in turn.  Seconds per round of CPU 0,
 * each access taking the private time, a transfer the latency, the
 * stores' drain serial by the calibration's share.
 */
static double sb_replay(const struct lm_calib *c, uint64_t seed,
			unsigned int k)
{
	struct two_cpus t;
	struct sim *m = &t.m;
	unsigned int at[2] = { 0, 0 }, rounds = 0, cpu;
	uintptr_t a;

	two_cpus_start(&t, c, seed);
	while (rounds < 20000) {
		cpu = m->heap[0];
		if (cpu == 1 && !k) {
			t.clock[1] += m->t_access;	/* nothing to read */
		} else if (cpu == 1) {
			if (timed_apply(m, 1, LM_LINE * (1 + at[1])))
				at[1] = at[1] + 1 == k ? 0 : at[1] + 1;
		} else {
			a = at[0] < k ? LM_LINE * (1 + at[0]) | 3 :
				       LM_LINE * (1 + LM_SB_K) | 1;
			if (timed_apply(m, 0, a) && ++at[0] > k) {
				at[0] = 0;
				rounds++;
			}
		}
		heap_down(m, 0, 2);
	}
	dir_clear(&dir);
	return fmax(t.clock[0], t.sb[0]) / rounds;
}

/*
 * The drain reading's loop replayed (stores.c): CPU 0 makes rounds of a
 * store to line 1 (bit 0 of @kind), a load of one of CPU 1's lines in
 * turn (bit 1), then a locked add to a private line; CPU 1
 * stores to its LM_SBL_LINES lines in turn, loading line 1 between.  Seconds per
 * round of CPU 0.
 */
static double sbl_replay(const struct lm_calib *c, uint64_t seed,
			 unsigned int kind)
{
	struct two_cpus t;
	struct sim *m = &t.m;
	unsigned int at[2] = { 0, 0 }, rounds = 0, cpu, next = 0;
	uintptr_t a, own = LM_LINE * (2 + LM_SBL_LINES) | 1;

	two_cpus_start(&t, c, seed);
	while (rounds < 20000) {
		cpu = m->heap[0];
		if (cpu == 1) {
			a = at[1] & 1 ? LM_LINE :
			    LM_LINE * (2 + at[1] / 2 % LM_SBL_LINES) | 3;
			at[1] += timed_apply(m, 1, a);
		} else {
			/* the round's accesses its kind has, then the add */
			while (at[0] < 2 && !(kind & 1U << at[0]))
				at[0]++;
			a = at[0] == 0 ? LM_LINE | 3 :
			    at[0] == 1 ? LM_LINE * (2 + next % LM_SBL_LINES) :
			    own;
			if (timed_apply(m, 0, a) && ++at[0] > 2) {
				at[0] = 0;
				next++;
				rounds++;
			}
		}
		heap_down(m, 0, 2);
	}
	dir_clear(&dir);
	return fmax(t.clock[0], t.sb[0]) / rounds;
}

void sb_model(struct lm_calib *c, uint64_t seed)
{
	unsigned int k;

	for (k = 0; k < LM_SB_K; k++)
		c->model_sb_s[k] = sb_replay(c, seed, k);
	for (k = 0; k < LM_SBL; k++)
		c->model_sbl_s[k] = sbl_replay(c, seed, k);
}

/*
 * The loop of the run-ahead and work readings replayed (runahead.c,
 * worksweep.c): two CPUs, each adding to one line and then making @work
 * accesses to a line of its own (loads, or with @locked locked adds),
 * every access taking @access, a locked op on another line ending a hold
 * with probability @ends.  Seconds per round (*@round_s) and transfers
 * per add (*@per_add).
 */
static void work_replay(const struct lm_calib *c, uint64_t seed,
			unsigned int work, bool locked, double access,
			double ends, double *round_s, double *per_add)
{
	struct two_cpus t;
	struct sim *m = &t.m;
	unsigned int at[2] = { 0, 0 }, rounds = 0, cpu;
	uintptr_t a;

	two_cpus_start(&t, c, seed);
	m->t_access = access;
	m->lock_ends = ends;
	while (rounds < 20000) {
		cpu = m->heap[0];
		a = at[cpu] ? LM_LINE * (2 + cpu) | locked : LM_LINE | 1;
		if (timed_apply(m, cpu, a) && ++at[cpu] > work) {
			at[cpu] = 0;
			rounds++;
		}
		heap_down(m, 0, 2);
	}
	*round_s = (t.clock[0] + t.clock[1]) / rounds;
	*per_add = (double)dir.xfer / rounds;
	dir_clear(&dir);
}

/* The run-ahead reading's loop, LM_RA_LOADS loads before each add. */
void ra_model(struct lm_calib *c, uint64_t seed)
{
	c->model_ra_shared_s = c->model_ra_per_add = NAN;
	if (c->ra_private_s > 0)
		work_replay(c, seed, LM_RA_LOADS, false,
			    c->ra_private_s / (LM_RA_LOADS + 1), c->lock_ends,
			    &c->model_ra_shared_s, &c->model_ra_per_add);
}

/*
 * The work reading's loop with lm_wl_locks[@j] locked adds between the
 * shared ones, replayed with @ends, into the calibration's model fields.
 * Only the first (one locked add) is fitted to: from two locked adds on,
 * the replay's two CPUs lock in phase (every transfer serves two adds:
 * 0.50 per add) where the machine's drift apart.
 */
static void wl_replay(struct lm_calib *c, uint64_t seed, unsigned int j,
		      double ends)
{
	work_replay(c, seed, lm_wl_locks[j], true,
		    c->wl_private_s[j] / (lm_wl_locks[j] + 1), ends,
		    &c->model_wl_shared_s[j], &c->model_wl_per_add[j]);
}

/*
 * The work reading's loops, one per entry of lm_ws_loads[] and of
 * lm_wl_locks[], replayed with the lock_ends in force (0 unless set by
 * hand); and the fit, reported beside it, not applied: the lock_ends,
 * from 0 to 1 by LM_WL_STEP, whose replay of the first locked adds' loop
 * gives the transfers per add closest to the machine's (the smallest of
 * equals); NAN where the record has no reading of that loop or one whose
 * line did not move.  Each loop is replayed where the record has its
 * reading, whatever the other counts' (a trial may keep no chunk on a
 * busy machine).  Not applied because it does not hold still: three
 * calibrations of one machine fit 0.25, 0.50 and 0.95, the last because
 * no lock_ends brings that calibration's replay up to the machine's
 * rate (docs/lines-model.md, "The work reading").
 */
#define LM_WL_STEP 0.05

void ws_model(struct lm_calib *c, uint64_t seed)
{
	double best = INFINITY, e, f;
	unsigned int j;
	bool read = c->wl_per_add[0] > 0 && c->wl_private_s[0] > 0;

	c->lock_ends_fit = NAN;
	for (e = 0; read && e <= 1 + LM_WL_STEP / 2; e += LM_WL_STEP) {
		wl_replay(c, seed, 0, fmin(e, 1));
		f = fabs(log(c->model_wl_per_add[0] / c->wl_per_add[0]));
		if (f < best) {
			best = f;
			c->lock_ends_fit = fmin(e, 1);
		}
	}
	if (!c->lock_ends_set)
		c->lock_ends = 0;
	for (j = 0; j < LM_WL; j++) {
		c->model_wl_shared_s[j] = c->model_wl_per_add[j] = NAN;
		if (c->wl_private_s[j] > 0)
			wl_replay(c, seed, j, c->lock_ends);
	}
	for (j = 0; j < LM_WS; j++) {
		c->model_ws_shared_s[j] = c->model_ws_per_add[j] = NAN;
		if (c->ws_private_s[j] > 0)
			work_replay(c, seed, lm_ws_loads[j], false,
				    c->ws_private_s[j] / (lm_ws_loads[j] + 1),
				    c->lock_ends, &c->model_ws_shared_s[j],
				    &c->model_ws_per_add[j]);
	}
}

/* ---- the series --------------------------------------------------------- */

/*
 * cfg->arg as in workload.c.  sock: n / 2 request/response pairs, a leaf
 * each; scale: every CPU on one leaf, or each on its own; tenants at the
 * 7-slot cliff: every CPU round-robin over 8 groups; fault: the cover
 * letter's calls (512 single-page charges, one per fault, then one folio
 * uncharge of them all) with a group per CPU.  The timed fault runs its
 * tasks on one CPU with real faults: nothing to measure beside the model.
 */
const struct series all_series[] = {
	{ "sock", "sock", &wl_sock, true, false, 0, 3, { 1 } },
	{ "scale-shared", "scale", &wl_scale, false, false, 1, 2, { 1, 0, 1 } },
	{ "scale-own", "scale", &wl_scale, false, false, 0, 2, { 1, 1, 1 } },
	{ "tenants", "tenants", &wl_tenants, false, false, 8, 2, { 8, 0, 1 } },
	{ "fault", "fault", NULL, false, true, 0, 2, { 1, 1, 512 } },
};

void config_for(const struct opts *o, const struct series *se, unsigned int n,
		enum pcstock_cpu_mode mode, struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->wl = se->wl;
	c->tree.batch = o->batch;
	c->tree.mode = mode;
	c->threads = n;
	c->tree.nr_cpus = n;
	c->tree.nr_leaves = se->leaves ? se->leaves : se->sock ? n / 2 : n;
	c->tree.depth = se->depth;
	memcpy(c->arg, se->arg, sizeof(se->arg));
	snprintf(c->label, sizeof(c->label), "%s N=%u", se->name, n);
}

/* Is the run's --workload (or all) asking for series @se? */
bool series_wanted(const struct opts *o, const struct series *se)
{
	return !o->workloads || strstr(o->workloads, se->workload);
}
