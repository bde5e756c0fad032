// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm_charge.c - a shared tree's charges, uncharges, drains, limits and
 * readers.
 *
 * The counters are the kernel's page_counter walks of counter_walk.h over
 * self-relative parent links.  Every step that moves pages between a
 * slot, the counters and the caller's figure runs inside a window
 * (shm.h); callbacks and waits run outside.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>
#include <time.h>

#include <pcstock/shared.h>

#include "counter_read.h"
#include "internal.h"
#include "shm.h"

/* ---- the counters' walks, over offsets ----------------------------------------- */

static inline struct pcstock_counter *shm_parent(const struct pcstock_counter *c)
{
	const struct shm_group *g = (const struct shm_group *)c;

	return g->parent_rel ?
		       (struct pcstock_counter *)(void *)((char *)c +
							  g->parent_rel) :
		       NULL;
}

#define PCW_PARENT(c) shm_parent(c)
#define PCW_NAME(x) shm_walk_##x
#define PCW_WARN(c, value, nr_pages) pcs_counter_warn_underflow((c), (value), (nr_pages))
#include "counter_walk.h"

void shm_counter_uncharge(struct pcstock_shm *s, uint32_t i, unsigned long n)
{
	shm_walk_uncharge(&shm_group(s, i)->memory, n);
}

void shm_counter_clear_protection(struct pcstock_shm *s, uint32_t i)
{
	struct pcstock_counter *c = &shm_group(s, i)->memory;

	shm_walk_set_protection(c, &c->min, 0);
	shm_walk_set_protection(c, &c->low, 0);
}

/* ---- small helpers --------------------------------------------------------------- */

unsigned int shm_cpu_slow(const struct pcstock_shm *s)
{
	int cpu = -1;

#ifdef PCSTOCK_EXPLORE
	if (pcstock_shm_sim.cpu)
		return (unsigned int)pcstock_shm_sim.cpu() % s->nr_cpus;
#endif
	if (s->rseq) {
		const struct rseq *r = (const struct rseq *)(const void *)
			((char *)__builtin_thread_pointer() + __rseq_offset);

		cpu = (int)__atomic_load_n(&r->cpu_id, __ATOMIC_RELAXED);
	}
	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	return (unsigned int)cpu % s->nr_cpus;
}

static void figure_add(struct pcstock_shm *s, uint32_t i, long n)
{
	atomic_long *f = &s->figures[i];

	/* Only this record's owner writes it: no RMW needed. */
	pcs_store(f, pcs_load(f, PCS_RELAXED) + n, PCS_RELAXED);
}

/* ---- drains ------------------------------------------------------------------------ */

unsigned long shm_drain_index(struct pcstock_shm *s, uint32_t i)
{
	unsigned long total = 0;

	if (!s->batch)
		return 0;
	for (unsigned int c = 0; c < s->nr_cpus; c++) {
		atomic_uint *slot = shm_slot(s, c, i);
		unsigned int v;

		if (!pcs_load(slot, PCS_RELAXED))
			continue;
		shm_enter(s);
		/* The kernel's drain: take the whole slot, give it back. */
		v = pcs_xchg(slot, 0, PCS_ACQ_REL);
		if (v)
			shm_counter_uncharge(s, i, v);
		shm_exit(s);
		total += v;
	}
	return total;
}

static void drain_one(struct pcstock_shm *s, uint32_t i, void *total)
{
	*(unsigned long *)total += shm_drain_index(s, i);
}

/* Drain @i and every group below it. */
static unsigned long drain_subtree(struct pcstock_shm *s, uint32_t i)
{
	unsigned long total = 0;

	shm_walk_subtree(s, i, drain_one, &total);
	return total;
}

void shm_calc_protection(struct pcstock_counter *root,
			 struct pcstock_counter *c, bool recursive)
{
	shm_walk_calculate_protection(root, c, recursive);
}

/* ---- charging --------------------------------------------------------------------- */

/*
 * Pages into this CPU's slot of group @i, in a window: as mainline's
 * refill_stock() and the private default policy (docs/deviations.md), an
 * addition that would take the slot above the batch empties the whole
 * slot up the hierarchy with the new pages.
 */
static void refill(struct pcstock_shm *s, struct shm_group *g, uint32_t i,
		   unsigned long n)
{
	atomic_uint *slot = shm_slot(s, shm_cpu(s), i);
	unsigned int v = pcs_load(slot, PCS_RELAXED);

	while (v + n <= s->batch) {
		if (pcs_cas(slot, &v, v + (unsigned int)n, PCS_ACQ_REL,
			    PCS_RELAXED))
			return;
	}
	v = pcs_xchg(slot, 0, PCS_ACQ_REL);
	shm_walk_uncharge(&g->memory, n + v);
}

/*
 * One attempt at the counters, in a window: a batch (the surplus to this
 * CPU's slot), then @n alone; the pages to the figure on success.
 * Returns 0, -ENOENT, or -ENOMEM with *fail the over-limit level's index.
 */
static int try_counters(struct pcstock_shm *s, pcstock_shm_gid gid,
			unsigned long n, bool force, uint32_t *fail)
{
	uint32_t i = shm_gid_index(gid);
	unsigned long batch = s->batch > n ? s->batch : n;
	struct pcstock_counter *over = NULL;
	struct shm_group *g;
	int err = 0;

	shm_enter(s);
	g = group_of(s, gid, false);
	if (!g) {
		err = -ENOENT;
		goto out;
	}
	if (force) {
		shm_walk_charge(&g->memory, n);
	} else if (shm_walk_try_charge(&g->memory, batch, &over)) {
		if (batch > n)
			refill(s, g, i, batch - n);
	} else if (batch > n && shm_walk_try_charge(&g->memory, n, &over)) {
		/* The batch failed, the pages alone fit. */
	} else {
		*fail = (uint32_t)(((struct shm_group *)over) - shm_group(s, 0));
		err = -ENOMEM;
		goto out;
	}
	figure_add(s, i, (long)n);
out:
	shm_exit(s);
	return err;
}

static unsigned long margin(struct pcstock_shm *s, uint32_t i)
{
	struct pcstock_counter *m = &shm_group(s, i)->memory;
	unsigned long usage = pcs_counter_usage(m), max = pcs_counter_max(m);

	return usage < max ? max - usage : 0;
}

/*
 * memcg_memory_event(), as a private tree's pcs_group_event(): @i's own
 * count (memory.events.local), and the subtree count of @i and of every
 * ancestor below the root (memory.events).
 */
static void event(struct pcstock_shm *s, uint32_t i, enum pcstock_event ev)
{
	pcs_fetch_add(&shm_group(s, i)->events_local[ev], 1, PCS_RELAXED);
	for (uint32_t k = i; k && k < s->max_groups;
	     k = shm_group(s, k)->parent)
		pcs_fetch_add(&shm_group(s, k)->events[ev], 1, PCS_RELAXED);
}

static pcstock_shm_gid gid_of_index(struct pcstock_shm *s, uint32_t i)
{
	return shm_make_gid(pcs_load(&shm_group(s, i)->gen, PCS_RELAXED), i);
}

static void sleep_ms(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * The failure half of the kernel's try_charge_memcg(), for a process's
 * own callbacks, step for step as a private tree's (charge.c): a MAX
 * event and reclaim per round; a retry when the margin fits, once after a
 * drain of the over-limit subtree's slots on every CPU (neither uses up a
 * retry); NORETRY stops after that; reclaim that claims progress retries
 * a charge of at most 8 pages, PCSTOCK_MAX_PROGRESS_ROUNDS times; then
 * PCSTOCK_MAX_RECLAIM_RETRIES retries and the OOM step, whose event
 * counts with or without a callback.  Every wait for room (an OOM victim
 * in another process) drains the slots again before each look: freed
 * pages may sit in any CPU's slot.
 */
static int charge_slow(struct pcstock_shm *s, pcstock_shm_gid gid,
		       unsigned long n, unsigned int flags, uint32_t fail)
{
	int retries = PCSTOCK_MAX_RECLAIM_RETRIES, ooms = 0, err;
	unsigned int progress_rounds = 0, order = pages_order(n);
	bool drained = false, raised = false;
	unsigned long progress;

	if (s->exact && drain_subtree(s, fail)) {
		/* Exact at the limit: no failure while stock holds pages. */
		drained = true;
		err = try_counters(s, gid, n, false, &fail);
		if (err != -ENOMEM)
			return err;
	}
	if (flags & PCSTOCK_CHARGE_NOWAIT)
		goto nomem;
	for (;;) {
		event(s, fail, PCSTOCK_EVENT_MAX);
		raised = true;
		progress = 0;
		if (s->cb.reclaim) {
			pcs_callback_enter();
			progress = s->cb.reclaim(s, gid_of_index(s, fail), n,
						 s->cb.arg);
			pcs_callback_exit();
		}
		if (margin(s, fail) >= n)
			goto retry;
		if (!drained) {
			drain_subtree(s, fail);
			drained = true;
			goto retry;
		}
		if (flags & PCSTOCK_CHARGE_NORETRY)
			break;
		if (n <= COSTLY_PAGES && progress &&
		    progress_rounds++ < PCSTOCK_MAX_PROGRESS_ROUNDS)
			goto retry;
		if (retries-- > 0)
			goto retry;
		/* mem_cgroup_oom(), for at most 8 pages (costly order 3). */
		if (order > COSTLY_ORDER || ooms++ >= PCSTOCK_MAX_OOM_CALLS)
			break;
		event(s, fail, PCSTOCK_EVENT_OOM);
		/* Room made meanwhile: no victim (no lock across processes). */
		if (margin(s, fail) < 1UL << order) {
			if (!s->cb.oom)
				break;
			pcs_callback_enter();
			err = s->cb.oom(s, gid_of_index(s, fail), s->cb.arg);
			pcs_callback_exit();
			/* As the private tree's pcs_group_oom(). */
			if (err != PCSTOCK_OOM_KILLED &&
			    err != PCSTOCK_OOM_KILLED_ASYNC &&
			    err != PCSTOCK_OOM_WAIT)
				break;
			if (err != PCSTOCK_OOM_WAIT)
				event(s, fail, PCSTOCK_EVENT_OOM_KILL);
			if (err != PCSTOCK_OOM_KILLED)
				for (int w = 0; w < PCSTOCK_OOM_WAIT_MS; w++) {
					drain_subtree(s, fail);
					if (margin(s, fail) >= n)
						break;
					sleep_ms();
				}
		}
		retries = PCSTOCK_MAX_RECLAIM_RETRIES;
retry:
		err = try_counters(s, gid, n, false, &fail);
		if (err != -ENOMEM)
			return err;
	}
nomem:
	if (!(flags & PCSTOCK_CHARGE_NOFAIL))
		return -ENOMEM;
	if (!raised)			/* the event a force raises */
		event(s, fail, PCSTOCK_EVENT_MAX);
	return try_counters(s, gid, n, true, &fail);
}

#define CHARGE_FLAGS                                                          \
	(PCSTOCK_CHARGE_NOWAIT | PCSTOCK_CHARGE_NOFAIL | PCSTOCK_CHARGE_NORETRY)

/*
 * The hit, inside a window: @n pages from @slot to this record's figure
 * for @gid's group, if it is online with @gid's generation (its key; a
 * stale gid or an offline group goes to the miss path's -ENOENT).
 */
static inline bool take(struct pcstock_shm *s, atomic_uint *slot,
			pcstock_shm_gid gid, unsigned long n)
{
	uint32_t i = shm_gid_index(gid);
	unsigned int v = 0;

	/* In a window: a pause's mark on the key waits for us (shm.h). */
	if (__builtin_expect((pcs_load(&s->keys[i], PCS_RELAXED) &
			      ~SHM_KEY_FROZEN) == shm_gid_key(gid), 1))
		v = pcs_load(slot, PCS_RELAXED);
	while (v >= n) {
		if (pcs_cas(slot, &v, v - (unsigned int)n, PCS_ACQ_REL,
			    PCS_RELAXED)) {
			figure_add(s, i, (long)n);
			return true;
		}
	}
	return false;
}

/*
 * A hit with everything the fast paths leave out: a CPU the rseq area
 * does not give, a fenced record, a pause to wait for (shm_enter()).
 * Returns 0 (a hit), 1 (no hit: the counters' turn) or -ENOENT.
 */
static int slot_charge(struct pcstock_shm *s, pcstock_shm_gid gid,
		       unsigned long n)
{
	uint32_t i = shm_gid_index(gid);
	atomic_uint *slot = shm_slot(s, shm_cpu(s), i);
	bool hit;

	shm_enter(s);
	hit = take(s, slot, gid, n);
	shm_exit(s);
	return hit ? 0 : 1;
}

/* Everything but a plain hit: the checks' errors, misses, failures. */
__attribute__((noinline)) static int
charge_miss(struct pcstock_shm *s, pcstock_shm_gid gid, unsigned long n,
	    unsigned int flags)
{
	uint32_t i = shm_gid_index(gid), fail = 0;
	int err = shm_check(s);

	if (err)
		return err;
	if (n > PCSTOCK_COUNTER_MAX || (flags & ~CHARGE_FLAGS))
		return -EINVAL;
	/* As a private tree's: no pages, or the root, charge nothing. */
	if (!n || gid == PCSTOCK_SHM_ROOT)
		return 0;
	if (i >= s->max_groups || !i)
		return i ? -ENOENT : -EINVAL;
	if (n <= s->batch && !slot_charge(s, gid, n))
		return 0;
	err = try_counters(s, gid, n, false, &fail);
	if (err != -ENOMEM)
		return err;
	/*
	 * Inside a callback (of any tree) the charge is forced, after the
	 * attempt's failures and with the MAX event a force raises, as a
	 * private tree's.
	 */
	if (pcs_in_callback) {
		event(s, fail, PCSTOCK_EVENT_MAX);
		return try_counters(s, gid, n, true, &fail);
	}
	return charge_slow(s, gid, n, flags, fail);
}

/*
 * The fast paths' CPU: glibc's rseq area's cpu_id, or UINT_MAX (then the
 * slow paths ask shm_cpu()).  No call, so the fast paths save no
 * register.  Only where s->fast_lim: a live handle, an rseq area, no
 * fence.
 */
static inline unsigned int fast_cpu(const struct pcstock_shm *s)
{
#ifdef PCSTOCK_EXPLORE
	/* The explorer's processes run the fast paths on their own CPUs. */
	if (pcstock_shm_sim.cpu)
		return (unsigned int)pcstock_shm_sim.cpu();
#endif
	const struct rseq *r = (const struct rseq *)(const void *)
		((char *)__builtin_thread_pointer() + s->rseq_off);

	return __atomic_load_n(&r->cpu_id, __ATOMIC_RELAXED);
}

/*
 * A fast path's window, opened on @s's record as soon as the handle is
 * known live: the mark is a store of a constant, so that it leaves the store
 * buffer long before the slot's locked instruction, which waits for it
 * (a mark stored just before the CAS cost the hit pair 3 points of the
 * 1.1x goal on an AMD EPYC).  The window is shut again on every path.
 */
static inline atomic_uint *fast_mark(struct pcstock_shm *s)
{
	atomic_uint *active = s->active;

	pcs_store(active, 1, PCS_RELAXED);
	/* Our mark, then the pause's mark on the key (freeze_keys()). */
	atomic_signal_fence(memory_order_seq_cst);
	return active;
}

/*
 * True if @gid's group is online with @gid's generation and no pause is
 * on: one load, the key (which a pause marks, SHM_KEY_FROZEN).
 */
static inline bool fast_valid(const struct pcstock_shm *s,
			      pcstock_shm_gid gid)
{
	return __builtin_expect(pcs_load(&s->keys[shm_gid_index(gid)],
					 PCS_RELAXED) == shm_gid_key(gid), 1);
}

/*
 * @gid's figure in this process's record, its address computed after the
 * slot's CAS from the gid (which the slow path's tail call keeps in its
 * register anyway): the empty asm hides that it is the index the loop
 * had, so that the compiler does not keep a register for it across the
 * loop.  One more register there is a callee-saved one's push, a store
 * that the locked instruction must wait for.
 */
static inline atomic_long *fast_figure(const struct pcstock_shm *s,
				       pcstock_shm_gid gid)
{
	__asm__("" : "+r"(gid));
	return s->figures + shm_gid_index(gid);
}

int pcstock_shm_charge(struct pcstock_shm *s, pcstock_shm_gid gid,
		       unsigned long n, unsigned int flags)
{
	uint32_t i = shm_gid_index(gid);
	atomic_uint *active, *slot;
	unsigned int cpu, v;

	/*
	 * The hit, in as few loads as the private tree's: a live handle, a
	 * group index in range, 1..batch pages, known flags, this CPU's slot
	 * (whoever filled it).  Anything else is charge_miss()'s.  Every
	 * field is read once, from the handle's first line (the CAS is a
	 * compiler barrier: nothing is read again).
	 */
	if (__builtin_expect(!s || i - 1 >= s->fast_lim, 0))
		return charge_miss(s, gid, n, flags);
	active = fast_mark(s);
	if (__builtin_expect(n - 1 < s->batch && !(flags & ~CHARGE_FLAGS), 1) &&
	    (cpu = fast_cpu(s)) < s->nr_cpus && fast_valid(s, gid)) {
		slot = s->slots + ((size_t)cpu << s->slot_shift) + i;
		v = pcs_load(slot, PCS_RELAXED);
		while (v >= n) {
			if (pcs_cas(slot, &v, v - (unsigned int)n, PCS_ACQ_REL,
				    PCS_RELAXED)) {
				atomic_long *figure = fast_figure(s, gid);

				/* One writer: a load and a store. */
				pcs_store(figure, pcs_load(figure, PCS_RELAXED) +
						  (long)n, PCS_RELAXED);
				pcs_store(active, 0, PCS_RELEASE);
				return 0;
			}
		}
	}
	pcs_store(active, 0, PCS_RELEASE);
	return charge_miss(s, gid, n, flags);
}

/* Everything but an uncharge that fits in this CPU's slot. */
__attribute__((noinline)) static int
uncharge_slow(struct pcstock_shm *s, pcstock_shm_gid gid, unsigned long n)
{
	uint32_t i = shm_gid_index(gid);
	struct shm_group *g;
	int err = shm_check(s);

	if (err)
		return err;
	if (n > PCSTOCK_COUNTER_MAX)
		return -EINVAL;
	if (!n || gid == PCSTOCK_SHM_ROOT)
		return 0;
	if (!i)
		return -EINVAL;
	shm_enter(s);
	g = group_of(s, gid, true);
	if (!g) {
		shm_exit(s);
		return -ENOENT;
	}
	figure_add(s, i, -(long)n);
	/* More than a batch goes straight up, the slot kept (as private). */
	if (s->batch && n <= s->batch && !pcs_in_callback &&
	    pcs_load(&g->state, PCS_RELAXED) == GROUP_ONLINE)
		refill(s, g, i, n);
	else
		shm_walk_uncharge(&g->memory, n);
	shm_exit(s);
	return 0;
}

int pcstock_shm_uncharge(struct pcstock_shm *s, pcstock_shm_gid gid,
			 unsigned long n)
{
	uint32_t i = shm_gid_index(gid);
	atomic_uint *active, *slot;
	unsigned int cpu, v, room;

	/* Into this CPU's slot while it stays within the batch (as above). */
	if (__builtin_expect(!s || i - 1 >= s->fast_lim, 0))
		return uncharge_slow(s, gid, n);
	active = fast_mark(s);
	if (__builtin_expect(n - 1 < s->batch && !pcs_in_callback, 1) &&
	    (cpu = fast_cpu(s)) < s->nr_cpus && fast_valid(s, gid)) {
		room = s->batch - (unsigned int)n;
		slot = s->slots + ((size_t)cpu << s->slot_shift) + i;
		v = pcs_load(slot, PCS_RELAXED);
		while (v <= room) {
			if (pcs_cas(slot, &v, v + (unsigned int)n, PCS_ACQ_REL,
				    PCS_RELAXED)) {
				atomic_long *figure = fast_figure(s, gid);

				pcs_store(figure, pcs_load(figure, PCS_RELAXED) -
						  (long)n, PCS_RELAXED);
				pcs_store(active, 0, PCS_RELEASE);
				return 0;
			}
		}
	}
	pcs_store(active, 0, PCS_RELEASE);
	return uncharge_slow(s, gid, n);
}

long pcstock_shm_drain(struct pcstock_shm *s, pcstock_shm_gid gid)
{
	int err = shm_check(s);

	if (err)
		return err;
	shm_enter(s);
	if (!group_of(s, gid, true)) {
		shm_exit(s);
		return -ENOENT;
	}
	shm_exit(s);
	return (long)shm_drain_index(s, shm_gid_index(gid));
}

/* ---- limits ------------------------------------------------------------- */

int pcstock_shm_set_limit(struct pcstock_shm *s, pcstock_shm_gid gid,
			  enum pcstock_limit which, unsigned long n)
{
	struct shm_group *g;
	int err = shm_check(s);

	if (err)
		return err;
	/* The root has no limits (a private tree's: -EINVAL; no files). */
	if (n > PCSTOCK_COUNTER_MAX || !shm_gid_index(gid))
		return -EINVAL;
	if (which != PCSTOCK_LIMIT_MAX && which != PCSTOCK_LIMIT_HIGH &&
	    which != PCSTOCK_LIMIT_MIN && which != PCSTOCK_LIMIT_LOW)
		return -EOPNOTSUPP;
	/*
	 * Every write inside a window that found the gid online: after it,
	 * the index may hold another group, whose limit this must not set.
	 */
	for (bool drained = false;; drained = true) {
		shm_enter(s);
		g = group_of(s, gid, false);
		if (!g)
			err = -ENOENT;
		else if (which == PCSTOCK_LIMIT_HIGH)
			pcstock_counter_set_high(&g->memory, n);
		else if (which == PCSTOCK_LIMIT_MIN)
			shm_walk_set_protection(&g->memory, &g->memory.min, n);
		else if (which == PCSTOCK_LIMIT_LOW)
			shm_walk_set_protection(&g->memory, &g->memory.low, n);
		else
			err = pcstock_counter_set_max(&g->memory, n);
		shm_exit(s);
		if (err != -EBUSY || drained)
			return err;
		/* Pages parked in slots are not in use: return them, once. */
		drain_subtree(s, shm_gid_index(gid));
	}
}
