// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm_recover.c - a shared tree after a death: pauses, the structure
 * lock's repair, the recount, and the reaping of a dead process's figures.
 *
 * The invariant (pcstock/shared.h): at every group, outside every window,
 *   usage = sum over records of their figure + sum over CPUs of the slot
 *           + sum over children of their usage.
 * Each operation keeps it across its window.  A process killed inside a
 * window leaves it broken by at most its one operation; a pause (no live
 * window open, none opening) makes the figures and slots the truth, from
 * which every usage is derived again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pcstock/shared.h>

#include "shm.h"

/* ---- pauses ------------------------------------------------------------------- */

static void futex_wait(atomic_uint *w, unsigned int val)
{
	if (shm_simulated())
		pcs_spin_yield();
	else
		/* Shared (no FUTEX_PRIVATE_FLAG): waiters are elsewhere. */
		syscall(SYS_futex, w, FUTEX_WAIT, val, NULL, NULL, 0);
}

static void futex_wake_all(atomic_uint *w)
{
	if (!shm_simulated())
		syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void shm_enter_slow(struct pcstock_shm *s)
{
	for (;;) {
		/* Out of the window while the pause lasts. */
		pcs_store(&s->me->active, 0, PCS_RELEASE);
		while (pcs_load(&s->h->frozen, PCS_ACQUIRE))
			futex_wait(&s->h->frozen, 1);
		pcs_store(&s->me->active, 1, PCS_RELAXED);
		if (s->fence)
			pcs_fence(PCS_SEQ_CST);
		else
			atomic_signal_fence(memory_order_seq_cst);
		if (!pcs_load(&s->h->frozen, PCS_RELAXED))
			return;
	}
}

/*
 * Make every attached process's next load of a word the pauser just
 * stored see it, or make its window mark visible here: membarrier's
 * global expedited command runs a full barrier on every CPU running a
 * registered process (a process not running passed one when it was
 * switched out).  Processes that could not register fence each window.
 */
static void barrier_all(struct pcstock_shm *s)
{
	(void)s;
	pcs_fence(PCS_SEQ_CST);
	if (shm_simulated())
		return;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0))
		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

/* Wait until record @p's window is closed (or its process is gone). */
static bool wait_closed(struct pcstock_shm *s, unsigned int p)
{
	struct shm_proc *r = shm_proc(s, p);

	for (unsigned long spins = 0;; spins++) {
		if (!pcs_load(&r->active, PCS_ACQUIRE))
			return true;
		if (pcs_load(&r->state, PCS_ACQUIRE) != PROC_LIVE)
			return true;
		if (spins % 64 == 63 && shm_proc_gone(s, p))
			return false;
		pcs_spin_yield();
	}
}

/*
 * Mark every group's key with the pause (@on), or clear the mark, under
 * the structure lock (the only other writer of keys).  The fast paths
 * load the key, not the frozen flag: the membarrier that follows the
 * marking pairs with their window mark as it does for the flag.  The
 * slow paths still wait on the flag.  Cleared after the recount, with
 * release, before the flag.
 */
static void freeze_keys(struct pcstock_shm *s, bool on)
{
	for (uint32_t i = 0; i < s->max_groups; i++) {
		atomic_ulong *k = shm_key_of(s, i);
		uint64_t v = pcs_load(k, PCS_RELAXED);

		pcs_store(k, on ? v | SHM_KEY_FROZEN : v & ~SHM_KEY_FROZEN,
			  on ? PCS_RELAXED : PCS_RELEASE);
	}
}

void shm_synchronize(struct pcstock_shm *s)
{
	barrier_all(s);
	for (unsigned int p = 0; p < s->max_procs; p++)
		if (p != s->self &&
		    pcs_load(&shm_proc(s, p)->state, PCS_ACQUIRE) == PROC_LIVE)
			wait_closed(s, p);
}

/* ---- the structure lock ------------------------------------------------------------ */

/*
 * A robust mutex's waiter can sleep on through the lock's release.  The
 * unlock wakes one waiter; if that one is killed before it takes the
 * lock, the kernel passes the wake-up on at its exit (robust list,
 * list_op_pending) only if the lock is still free then, and a third
 * process that took it meanwhile on the fast path (no FUTEX_WAITERS)
 * wakes nobody when it unlocks.  The kill soak (tests/test_shm_soak.c)
 * found a recoverer asleep on a free structure lock with the recovery
 * lock held, and every other process queued behind it, for good.  So no
 * wait is unbounded: it is retried every LOCK_RETRY_NS, and a lost
 * wake-up costs that, not the tree.
 */
#define LOCK_RETRY_NS 10000000L

static int lock_retrying(pthread_mutex_t *m)
{
	struct timespec until;
	int err = pthread_mutex_trylock(m);

	/* The explorer's processes wait at a scheduling point, not asleep. */
	while (shm_simulated() && err == EBUSY) {
		pcs_spin_yield();
		err = pthread_mutex_trylock(m);
	}
	while (err == EBUSY || err == ETIMEDOUT) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += LOCK_RETRY_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		err = pthread_mutex_timedlock(m, &until);
	}
	return err;
}

static int robust_lock(pthread_mutex_t *m, bool *owner_died)
{
	int err = lock_retrying(m);

#ifdef PCSTOCK_EXPLORE
	if (!err && pcstock_shm_sim.owner_died && pcstock_shm_sim.owner_died(m))
		err = EOWNERDEAD;
#endif
	if (err == EOWNERDEAD) {
		pthread_mutex_consistent(m);
		*owner_died = true;
		return 0;
	}
	return -err;
}

/*
 * A reap killed between its stores (the orphan balance first, the figure
 * after) is finished here: if the balance moved, the figure's store is
 * made again.  Its uncharge, if any, was partial or not made: a recount
 * puts the counters right, which the caller asks for (needs_repair).
 */
static void finish_reap(struct pcstock_shm *s)
{
	unsigned int p = pcs_load(&s->h->reap_proc, PCS_ACQUIRE);
	uint32_t i = s->h->reap_group;

	if (!p || p > s->max_procs || i >= s->max_groups)
		return;
	if (pcs_load(shm_figure(s, s->max_procs, i), PCS_RELAXED) !=
	    s->h->reap_orphan)
		pcs_store(shm_figure(s, p - 1, i), 0, PCS_RELAXED);
	pcs_store(&s->h->reap_proc, 0, PCS_RELEASE);
}

/* The recovery lock; *@died if its holder died (then finished, above). */
static int recover_lock(struct pcstock_shm *s, bool *died)
{
	int err = robust_lock(&s->h->recover_lock, died);

	if (!err && *died) {
		finish_reap(s);
		pcs_store(&s->h->needs_repair, 1, PCS_RELEASE);
	}
	return err;
}

/*
 * The structure lock with a dead holder noted (needs_repair), not
 * repaired: for an attach.  Its handle has no record yet, so it cannot
 * pause the tree (pcstock_shm_recover() refuses a handle that is not
 * live, and would skip record 0's window as its own), and the claim of a
 * record reads nothing the repair rebuilds.  The attach repairs once it
 * has its record.
 */
int shm_tree_lock_unrepaired(struct pcstock_shm *s)
{
	bool died = false;
	int err = robust_lock(&s->h->tree_lock, &died);

	if (!err && died)
		pcs_store(&s->h->needs_repair, 1, PCS_RELEASE);
	return err;
}

int shm_tree_lock(struct pcstock_shm *s)
{
	int err = shm_tree_lock_unrepaired(s);

	if (err)
		return err;
	if (pcs_load(&s->h->needs_repair, PCS_ACQUIRE)) {
		/*
		 * A holder died midway through a create or destroy.  The
		 * group table is consistent at every step; what it derives
		 * (child lists, the name index) is rebuilt in a pause.
		 */
		pthread_mutex_unlock(&s->h->tree_lock);
		err = pcstock_shm_recover(s, NULL);
		if (err)
			return err;
		return shm_tree_lock(s);
	}
	return 0;
}

void shm_tree_unlock(struct pcstock_shm *s)
{
	pthread_mutex_unlock(&s->h->tree_lock);
}

/* ---- the recount ------------------------------------------------------------------- */

static long local_pages(struct pcstock_shm *s, uint32_t i)
{
	long sum = 0;

	for (unsigned int p = 0; p <= s->max_procs; p++) {
		if (p < s->max_procs &&
		    pcs_load(&shm_proc(s, p)->state, PCS_RELAXED) == PROC_FREE)
			continue;
		sum += pcs_load(shm_figure(s, p, i), PCS_RELAXED);
	}
	for (unsigned int c = 0; c < s->nr_cpus; c++)
		sum += (long)pcs_load(shm_slot(s, c, i), PCS_RELAXED);
	return sum;
}

static unsigned long min_ul(unsigned long a, unsigned long b)
{
	return a < b ? a : b;
}

/*
 * Post-order over the child lists with an explicit stack (a chain may be
 * as deep as the table): every level's usage, then its published
 * protected usage and its children's sums, as a quiescent tree has them.
 */
static void recount(struct pcstock_shm *s)
{
	uint32_t *stack = s->recount_buf, *cursor = stack + s->max_groups;
	uint32_t depth = 0;

	stack[0] = 0;
	cursor[0] = pcs_load(&shm_group(s, 0)->first_child, PCS_RELAXED);
	for (;;) {
		uint32_t top = stack[depth], next = cursor[depth];

		if (next != SHM_NO_INDEX && depth + 1 < s->max_groups) {
			struct shm_group *c = shm_group(s, next);

			cursor[depth] = pcs_load(&c->next_sibling, PCS_RELAXED);
			if (pcs_load(&c->state, PCS_RELAXED) == GROUP_FREE)
				continue;
			stack[++depth] = next;
			cursor[depth] = pcs_load(&c->first_child, PCS_RELAXED);
			continue;
		}
		/* All of @top's children are done: sum them. */
		{
			struct shm_group *g = shm_group(s, top);
			struct pcstock_counter *m = &g->memory;
			long usage = local_pages(s, top), cmin = 0, clow = 0;

			for (uint32_t k = pcs_load(&g->first_child, PCS_RELAXED);
			     k != SHM_NO_INDEX;
			     k = pcs_load(&shm_group(s, k)->next_sibling,
					  PCS_RELAXED)) {
				struct shm_group *c = shm_group(s, k);

				if (pcs_load(&c->state, PCS_RELAXED) ==
				    GROUP_FREE)
					continue;
				usage += pcs_load(&c->memory.usage, PCS_RELAXED);
				cmin += pcs_load(&c->memory.min_usage,
						 PCS_RELAXED);
				clow += pcs_load(&c->memory.low_usage,
						 PCS_RELAXED);
			}
			if (usage < 0)
				usage = 0;
			pcs_store(&m->usage, usage, PCS_RELAXED);
			pcs_store(&m->children_min_usage, cmin, PCS_RELAXED);
			pcs_store(&m->children_low_usage, clow, PCS_RELAXED);
			if (top) {
				pcs_store(&m->min_usage,
					  (long)min_ul((unsigned long)usage,
						       pcs_load(&m->min,
								PCS_RELAXED)),
					  PCS_RELAXED);
				pcs_store(&m->low_usage,
					  (long)min_ul((unsigned long)usage,
						       pcs_load(&m->low,
								PCS_RELAXED)),
					  PCS_RELAXED);
			}
		}
		if (!depth)
			break;
		depth--;
	}
}

/* ---- recovery ----------------------------------------------------------------------- */

int pcstock_shm_recover(struct pcstock_shm *s, unsigned int *nr_dead)
{
	unsigned int dead = 0;
	bool died = false, repair = false;
	int err = shm_check(s);

	if (nr_dead)
		*nr_dead = 0;
	if (err)
		return err;
	/* Before anything changes: a pause must not fail for memory. */
	if (!s->recount_buf) {
		s->recount_buf = malloc(2 * sizeof(uint32_t) * s->max_groups);
		if (!s->recount_buf)
			return -ENOMEM;
	}
	err = recover_lock(s, &died);
	if (err)
		return err;
	/* Not shm_tree_lock(): its repair is this function. */
	err = robust_lock(&s->h->tree_lock, &repair);
	if (err) {
		pthread_mutex_unlock(&s->h->recover_lock);
		return err;
	}
	if (repair)
		pcs_store(&s->h->needs_repair, 1, PCS_RELAXED);
	repair = pcs_load(&s->h->needs_repair, PCS_ACQUIRE);

	for (unsigned int p = 0; p < s->max_procs; p++)
		if (p != s->self &&
		    pcs_load(&shm_proc(s, p)->state, PCS_ACQUIRE) == PROC_LIVE &&
		    shm_proc_gone(s, p))
			dead++;
	/* A recoverer killed midway left the tree frozen: finish its work. */
	if (!dead && !repair && !pcs_load(&s->h->frozen, PCS_RELAXED))
		goto out;

	pcs_store(&s->h->frozen, 1, PCS_SEQ_CST);
	freeze_keys(s, true);
	barrier_all(s);
	for (unsigned int p = 0; p < s->max_procs; p++) {
		struct shm_proc *r = shm_proc(s, p);

		if (p == s->self ||
		    pcs_load(&r->state, PCS_ACQUIRE) != PROC_LIVE)
			continue;
		if (!wait_closed(s, p) || shm_proc_gone(s, p)) {
			/* Dead: its window (if open) never continues. */
			pcs_store(&r->active, 0, PCS_RELAXED);
			pcs_store(&r->state, PROC_DEAD, PCS_RELEASE);
		}
	}
	if (repair)
		shm_rebuild_structure(s);
	recount(s);
	pcs_store(&s->h->needs_repair, 0, PCS_RELAXED);
	pcs_fetch_add(&s->h->recoveries, 1, PCS_RELAXED);
	freeze_keys(s, false);
	pcs_store(&s->h->frozen, 0, PCS_RELEASE);
	futex_wake_all(&s->h->frozen);
out:
	pthread_mutex_unlock(&s->h->tree_lock);
	pthread_mutex_unlock(&s->h->recover_lock);
	if (nr_dead)
		*nr_dead = dead;
	return err;
}

int pcstock_shm_reap(struct pcstock_shm *s, unsigned int proc,
		     unsigned long *pages)
{
	unsigned long total = 0;
	struct shm_proc *r;
	bool died = false;
	int err = shm_check(s), st;

	if (pages)
		*pages = 0;
	if (err)
		return err;
	if (proc >= s->max_procs)
		return -EINVAL;
	r = shm_proc(s, proc);
	err = recover_lock(s, &died);
	if (err)
		return err;
	if (died) {
		/* A reaper or recoverer died: its pause first. */
		pthread_mutex_unlock(&s->h->recover_lock);
		err = pcstock_shm_recover(s, NULL);
		if (err)
			return err;
		return pcstock_shm_reap(s, proc, pages);
	}
	st = (int)pcs_load(&r->state, PCS_ACQUIRE);
	if (st == PROC_LIVE) {
		err = -EBUSY;
		goto out;
	}
	if (st == PROC_FREE) {
		err = -EINVAL;
		goto out;
	}
	for (uint32_t i = 0; i < s->max_groups; i++) {
		atomic_long *f = shm_figure(s, proc, i);
		atomic_long *o = shm_figure(s, s->max_procs, i);
		long v = pcs_load(f, PCS_RELAXED);
		long bal = pcs_load(o, PCS_RELAXED), both;

		if (!v)
			continue;
		/*
		 * A negative balance is pages that reaped processes freed for
		 * others: they left the counters then, and are still in the
		 * figures of the processes that charged them.  Such a figure
		 * cancels against the balance first; uncharging it all would
		 * take them from the counters twice.
		 */
		both = v > 0 && bal < 0 ? (v < -bal ? v : -bal) : 0;
		v -= both;
		bal += both;
		/*
		 * One window per group: the figure and the counters move
		 * together, or a recount (ours is serialised by the lock, a
		 * later one after our death) puts them right.
		 */
		if (v <= 0)
			bal += v;
		s->h->reap_group = i;
		s->h->reap_figure = v + both;
		s->h->reap_orphan = pcs_load(o, PCS_RELAXED);
		pcs_store(&s->h->reap_proc, proc + 1, PCS_RELEASE);
		shm_enter(s);
		pcs_store(o, bal, PCS_RELAXED);
		pcs_store(f, 0, PCS_RELAXED);
		if (v > 0) {
			shm_counter_uncharge(s, i, (unsigned long)v);
			total += (unsigned long)v;
		}
		shm_exit(s);
		pcs_store(&s->h->reap_proc, 0, PCS_RELEASE);
	}
	pcs_store(&r->state, PROC_FREE, PCS_RELEASE);
out:
	pthread_mutex_unlock(&s->h->recover_lock);
	if (pages)
		*pages = total;
	return err;
}
