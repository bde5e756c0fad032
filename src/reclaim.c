// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * reclaim.c - pressure on a group: its events, the reclaim and OOM
 * callbacks (and the thread's callback depth), the margin, drain_all.
 */
#include <pthread.h>
#include <time.h>

#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "counter_read.h"
#include "group.h"
#include "internal.h"
#include "policy.h"
#include "rcu.h"

/* ---- events and callbacks ------------------------------------------------ */

/* memcg_memory_event(): local count, then every non-root level upward. */
void pcs_group_event(struct pcstock_group *g, enum pcstock_event ev)
{
	pcs_fetch_add(&g->events_local[ev], 1, PCS_RELAXED);
	for (; g && !group_is_root(g); g = g->parent)
		pcs_fetch_add(&g->events[ev], 1, PCS_RELAXED);
}

/*
 * Depth of callbacks on this thread: charges inside them are forced, and
 * group uncharges inside them skip the stock.
 */
_Thread_local unsigned int pcs_in_callback PCS_TLS;

/*
 * Around a reclaim or OOM callback.  The kernel's reclaimed folios leave
 * through uncharge_batch(), straight to the counters, so its callers see
 * the progress at once; here pages the callback gives back with
 * pcstock_group_uncharge() would land in the stock and usage would not
 * drop.  Emptying the thread's CPU cache (domain.h) sends every uncharge
 * of the callback to a slow path that sends the pages up:
 * group_uncharge_slow() for memcg7, the stock's uncached uncharge for the
 * per-counter stocks.  The fast paths outside callbacks test nothing more.
 */
void pcs_callback_enter(void)
{
	pcs_in_callback++;
	pcs_fast_suspend();
}

void pcs_callback_exit(void)
{
	pcs_fast_resume();
	pcs_in_callback--;
}

unsigned long pcs_call_reclaim(struct pcstock_group *g,
			       unsigned long nr_pages)
{
	struct pcstock_tree *t = g->tree;
	long freed;

	if (!t->attr.reclaim || !nr_pages)
		return 0;
	pcs_callback_enter();
	freed = t->attr.reclaim(g, nr_pages, t->attr.cb_arg);
	pcs_callback_exit();
	if (freed >= 0 && (unsigned long)freed <= nr_pages)
		return (unsigned long)freed;
	pcs_fetch_add(&t->callback_clamped, 1, PCS_RELAXED);
	return freed < 0 ? 0 : nr_pages;
}

/* ---- drain --------------------------------------------------------------- */

void pcstock_group_drain_all(struct pcstock_group *g)
{
	struct pcstock_tree *t;
	bool done;

	if (!g)
		return;
	t = g->tree;
	if (!t->ops->drain_all)
		return;
	rcu_lock();
	done = t->ops->drain_all(g);
	rcu_unlock();
	pcs_fetch_add(done ? &t->drain_all : &t->drain_all_busy, 1,
		      PCS_RELAXED);
}

/* mem_cgroup_margin(). */
unsigned long pcs_group_margin(struct pcstock_group *g)
{
	unsigned long count = pcs_counter_usage(&g->memory);
	unsigned long limit = pcs_counter_max(&g->memory);
	unsigned long margin = count < limit ? limit - count : 0;

	if (g->tree->attr.memsw) {
		count = pcs_counter_usage(&g->memsw);
		limit = pcs_counter_max(&g->memsw);
		margin = count <= limit ? PCS_MIN(margin, limit - count) : 0;
	}
	return margin;
}

/* Room for @need more pages, or (@need = 0) usage at or below max. */
static bool has_room(struct pcstock_group *g, unsigned long need)
{
	if (need)
		return pcs_group_margin(g) >= need;
	return pcs_counter_usage(&g->memory) <=
	       pcs_counter_max(&g->memory);
}

/*
 * An asynchronous victim: poll for its pages (see enum pcstock_oom_result).
 * The thread that frees them may do so with pcstock_group_uncharge(), the
 * natural call, which leaves them in its CPU's stock of the victim, where
 * the counters do not see them: a poll that finds no room drains the
 * stocks of @g's subtree and looks again, so that room sitting in any
 * stock is room.
 */
static void oom_wait(struct pcstock_group *g, unsigned long need)
{
	const struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < PCSTOCK_OOM_WAIT_MS; i++) {
		if (has_room(g, need))
			return;
		pcstock_group_drain_all(g);
		if (has_room(g, need))
			return;
		nanosleep(&ms, NULL);
	}
}

/*
 * mem_cgroup_oom() and mem_cgroup_out_of_memory(): the OOM event, then
 * under the OOM lock no callback if another thread's OOM made room, else
 * the callback, and the wait for an asynchronous victim with the lock
 * still held, so that other chargers wait instead of killing again.
 * "Room" under the lock is the kernel's: a margin of 1 << order pages,
 * order = get_order(@need * PAGE_SIZE) for a charge of @need pages, and 0
 * for the memory.max writer (@need = 0), whose wait is for usage at or
 * below max.
 * Return: true if the caller should retry.
 */
bool pcs_group_oom(struct pcstock_group *g, unsigned long need,
		   unsigned int *calls)
{
	struct pcstock_tree *t = g->tree;
	int res = PCSTOCK_OOM_NONE;

	if ((*calls)++ >= PCSTOCK_MAX_OOM_CALLS)
		return false;
	pcs_group_event(g, PCSTOCK_EVENT_OOM);
	pthread_mutex_lock(&t->oom_lock);
	if (pcs_group_margin(g) >= 1UL << pages_order(need)) {
		pthread_mutex_unlock(&t->oom_lock);
		return true;
	}
	if (t->attr.oom) {
		pcs_callback_enter();
		res = t->attr.oom(g, t->attr.cb_arg);
		pcs_callback_exit();
	}
	switch (res) {
	case PCSTOCK_OOM_NONE:
		break;
	case PCSTOCK_OOM_KILLED:
		pcs_group_event(g, PCSTOCK_EVENT_OOM_KILL);
		break;
	case PCSTOCK_OOM_KILLED_ASYNC:
		pcs_group_event(g, PCSTOCK_EVENT_OOM_KILL);
		oom_wait(g, need);
		break;
	case PCSTOCK_OOM_WAIT:
		oom_wait(g, need);
		break;
	default:
		pcs_fetch_add(&t->callback_clamped, 1, PCS_RELAXED);
		res = PCSTOCK_OOM_NONE;
	}
	pthread_mutex_unlock(&t->oom_lock);
	return res != PCSTOCK_OOM_NONE;
}
