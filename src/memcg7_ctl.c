// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * memcg7_ctl.c - the memcg7 cache's control: setup and teardown, the owner
 * variant's queued work and deferred references, and the drains
 * (drain_all_stock(), a key's drain).  memcg7.c describes both variants.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>

#include "atomic.h"
#include "domain.h"
#include "internal.h"
#include "memcg7.h"
#include "memcg7_pcp.h"

/* ---- owner variant: queued work and deferred references ------------------ */

/*
 * Drop the deferred reference of every dead key that each CPU has drained
 * since it died: a key's epoch is at most every CPU's done_epoch.
 */
static void reap(struct memcg7 *m)
{
	struct memcg7_dead **pos, *x;
	unsigned long min = ULONG_MAX;

	pthread_mutex_lock(&m->dead_lock);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		/*
		 * Acquire pairs with the release store in pcs_m7_run_work().
		 * One load: PCS_MIN() evaluates an argument twice, and an
		 * owner may advance its done_epoch between two loads, so the
		 * minimum could take a newer value than the one compared
		 * (memcg7-key-death: k reaped while a CPU still caches it).
		 */
		unsigned long done = pcs_load(&pcp_of(m, cpu)->done_epoch,
				PCS_ORDER(M7_REAP_DONE, PCS_ACQUIRE));

		min = PCS_MIN(min, done);
	}
	for (pos = &m->dead; (x = *pos);) {
		if (x->epoch <= min) {
			*pos = x->next;
			m->ops->put(x->key);
		} else {
			pos = &x->next;
		}
	}
	pthread_mutex_unlock(&m->dead_lock);
}

/*
 * drain_local_memcg_stock(), by the owner or a borrower of @p's CPU: if a
 * drain is queued, drain every slot.  The xchg's acquire pairs with the
 * release in queue_work(), so the epoch read after it covers every key
 * that died before the request.  The release store of flushing pairs with
 * the relaxed test in memcg7_drain_all() as in the locked variant.
 */
__attribute__((noinline)) void pcs_m7_run_work(struct memcg7 *m,
					       struct memcg7_pcp *p)
{
	unsigned long epoch;

	if (!pcs_xchg(&p->work, 0, PCS_ORDER(M7_WORK, PCS_ACQ_REL)))
		return;
	epoch = pcs_load(&m->epoch, PCS_RELAXED);
	pcs_m7_drain_pcp(m, p);
	pcs_store(&p->flushing, false,
		  PCS_ORDER(M7_WORK_FLUSHING, PCS_RELEASE));
	if (pcs_load(&p->done_epoch, PCS_RELAXED) == epoch)
		return;
	pcs_store(&p->done_epoch, epoch, PCS_ORDER(M7_DONE, PCS_RELEASE));
	reap(m);
}

static void work_hook(struct pcstock_domain *d, unsigned int cpu, void *arg)
{
	struct memcg7 *m = arg;

	pcs_m7_run_work(m, pcp_of(m, cpu));
}

/*
 * Run @cpu's queued drain if nobody holds the CPU, and look again after
 * giving it back: a requester that found it held (by us) left its drain
 * to us.  The loads follow the seq_cst fence of the requester's
 * queue_work() or of the giver's cpu_release() (see pcs_cpu_borrow()).
 */
static void kick(struct memcg7 *m, unsigned int cpu)
{
	struct memcg7_pcp *p = pcp_of(m, cpu);

	while (pcs_load(&p->work, PCS_RELAXED) && pcs_cpu_borrow(m->d, cpu)) {
		pcs_m7_run_work(m, p);
		pcs_cpu_unborrow(m->d, cpu);
	}
}

static void kick_hook(struct pcstock_domain *d, unsigned int cpu, void *arg)
{
	kick(arg, cpu);
}

/*
 * Queue a drain on @cpu without waiting (schedule_work_on()): its holder
 * runs it, or, if nobody holds the CPU, we borrow it and run it now.  The
 * release pairs with the acquire in pcs_m7_run_work().
 */
static void queue_work(struct memcg7 *m, unsigned int cpu)
{
	pcs_store(&pcp_of(m, cpu)->work, 1, PCS_ORDER(M7_QUEUE, PCS_RELEASE));
	pcs_fence(PCS_ORDER(M7_QUEUE_FENCE, PCS_SEQ_CST));
	kick(m, cpu);
}

/* The caller's own CPU: run its queued work now. */
static void run_own_work(struct memcg7 *m)
{
	int cpu = pcs_this_cpu(m->d);

	if (cpu >= 0)
		owner_work(m, pcp_of(m, (unsigned int)cpu));
}

/* ---- setup -------------------------------------------------------------- */

static void hotplug_dead(struct pcstock_domain *d, unsigned int cpu,
			 void *arg)
{
	struct memcg7 *m = arg;
	struct memcg7_pcp *p = pcp_of(m, cpu);

	if (m->owned) {
		queue_work(m, cpu);
		return;
	}
	pcp_lock(p);
	pcs_m7_drain_pcp(m, p);
	pcp_unlock(p);
}

int memcg7_create(struct pcstock_domain *d, unsigned int batch,
		  bool isolated_fix, const struct memcg7_ops *ops,
		  struct memcg7 **out)
{
	struct memcg7 *m;
	int err;

	if (!batch || batch > MEMCG7_MAX_BATCH)
		return -EINVAL;
	m = pcs_calloc(1, sizeof(*m), "memcg7.cache");
	if (!m)
		return -ENOMEM;
	m->d = d;
	m->nr_cpus = pcstock_domain_nr_cpus(d);
	m->batch = batch;
	m->isolated_fix = isolated_fix;
	m->owned = pcs_cpu_exclusive(d);
	m->ops = ops;
	err = pcstock_percpu_alloc(d, sizeof(struct memcg7_pcp),
				   alignof(struct memcg7_pcp), &m->pcp);
	if (err)
		goto free;
	err = pthread_mutex_init(&m->drain_lock, NULL) ? -ENOMEM : 0;
	if (err)
		goto free_pcp;
	err = pthread_mutex_init(&m->dead_lock, NULL) ? -ENOMEM : 0;
	if (err)
		goto destroy_drain;
	err = pcstock_cpu_hook_add(d, hotplug_dead, m, &m->hook);
	if (err)
		goto destroy_dead;
	if (m->owned) {
		err = pcs_work_hook_add(d, work_hook, kick_hook, m,
					&m->work_hook);
		if (err)
			goto remove_hook;
	}
	*out = m;
	return 0;

remove_hook:
	pcstock_cpu_hook_remove(d, m->hook);
destroy_dead:
	pthread_mutex_destroy(&m->dead_lock);
destroy_drain:
	pthread_mutex_destroy(&m->drain_lock);
free_pcp:
	pcstock_percpu_free(d, m->pcp);
free:
	free(m);
	return err;
}

/*
 * Owner variant: an owner runs its CPU's queued drain when it idles or
 * exits, and an offline queues one, all under the domain's work lock,
 * which the flush holds: no slot is drained by both.  (Its charges are
 * the caller's to stop.)  The lock orders the owner's last writes to
 * its slots before the flush, and the flush before its next drain, which
 * finds no work.
 */
void memcg7_flush(struct memcg7 *m)
{
	pcs_work_lock(m->d);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		pcs_m7_drain_pcp(m, p);
		pcs_store(&p->work, 0, PCS_RELAXED);
		/*
		 * The queued drain is done: its flag goes too, or a tree
		 * whose destroy is refused (-EBUSY) keeps a CPU that every
		 * drain_all skips.  Release as in pcs_m7_run_work().
		 */
		pcs_store(&p->flushing, false,
			  PCS_ORDER(M7_FLUSH_FLUSHING, PCS_RELEASE));
		pcs_store(&p->done_epoch, pcs_load(&m->epoch, PCS_RELAXED),
			  PCS_RELAXED);
	}
	pcs_work_unlock(m->d);
	reap(m);
}

void memcg7_destroy(struct memcg7 *m)
{
	if (!m)
		return;
	pcs_work_hook_remove(m->d, m->work_hook);
	pcstock_cpu_hook_remove(m->d, m->hook);
	memcg7_flush(m);
	pthread_mutex_destroy(&m->dead_lock);
	pthread_mutex_destroy(&m->drain_lock);
	pcstock_percpu_free(m->d, m->pcp);
	free(m);
}

/* ---- drains ------------------------------------------------------------- */

/* is_memcg_drain_needed(): lockless snapshot, under the caller's RCU. */
static bool drain_needed(const struct memcg7 *m, struct memcg7_pcp *p,
			 void *root)
{
	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++) {
		/* Acquire pairs with the release install in memcg7_refill(). */
		void *key = pcs_load(&p->cached[i],
				     PCS_ORDER(M7_NEEDED_KEY, PCS_ACQUIRE));

		if (key && pcs_load(&p->nr_pages[i], PCS_RELAXED) &&
		    m->ops->in_subtree(key, root))
			return true;
	}
	return false;
}

/*
 * Locked variant: drain_local_memcg_stock(), run by the drainer.  Release
 * pairs with the relaxed test in memcg7_drain_all(): a drainer that sees
 * the flag clear also sees the emptied slots (a stale read only costs a
 * redundant drain).
 */
static void drain_locked(const struct memcg7 *m, struct memcg7_pcp *p)
{
	pcp_lock(p);
	pcs_m7_drain_pcp(m, p);
	pcs_store(&p->flushing, false,
		  PCS_ORDER(M7_LOCKED_FLUSHING, PCS_RELEASE));
	pcp_unlock(p);
}

/*
 * schedule_drain_work(): isolated CPUs are skipped, the flag left set;
 * the owner variant queues the work (the caller's own CPU runs it now).
 */
static void schedule_drain(struct memcg7 *m, unsigned int cpu,
			   struct memcg7_pcp *p, bool local)
{
	if (!local && pcstock_cpu_isolated(m->d, cpu)) {
		pcs_fetch_add(&p->st[ST_ISOLATED_SKIPS], 1, PCS_RELAXED);
		if (m->isolated_fix)
			pcs_store(&p->flushing, false, PCS_RELAXED);
		return;
	}
	if (!m->owned) {
		drain_locked(m, p);
		return;
	}
	queue_work(m, cpu);
	if (local)
		pcs_m7_run_work(m, p);
}

bool memcg7_drain_all(struct memcg7 *m, void *root)
{
	int curcpu;

	if (pthread_mutex_trylock(&m->drain_lock))
		return false;
	curcpu = pcs_this_cpu(m->d);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		if (!pcstock_cpu_online(m->d, cpu))
			continue;
		if (pcs_load(&p->flushing, PCS_RELAXED)) {
			pcs_fetch_add(&p->st[ST_FLUSHING_SKIPS], 1,
				      PCS_RELAXED);
			continue;
		}
		if (!drain_needed(m, p, root))
			continue;
		/* test_and_set_bit(): the xchg orders like the kernel's. */
		if (pcs_xchg(&p->flushing, true,
			     PCS_ORDER(M7_DRAIN_ALL, PCS_ACQ_REL)))
			continue;
		schedule_drain(m, cpu, p, (int)cpu == curcpu);
	}
	pthread_mutex_unlock(&m->drain_lock);
	return true;
}

void memcg7_drain_key(struct memcg7 *m, void *key,
		      struct memcg7_dead *dead)
{
	if (m->owned) {
		/*
		 * The epoch's release pairs with the acquire in
		 * pcs_m7_run_work().
		 */
		pthread_mutex_lock(&m->dead_lock);
		m->ops->get(key);
		dead->key = key;
		dead->epoch = pcs_load(&m->epoch, PCS_RELAXED) + 1;
		dead->next = m->dead;
		m->dead = dead;
		pcs_store(&m->epoch, dead->epoch,
			  PCS_ORDER(M7_EPOCH, PCS_RELEASE));
		pthread_mutex_unlock(&m->dead_lock);
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
			queue_work(m, cpu);
		run_own_work(m);
		reap(m);
		return;
	}
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		pcp_lock(p);
		for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++)
			if (pcs_load(&p->cached[i], PCS_RELAXED) == key)
				pcs_m7_drain_slot(m, p, i);
		pcp_unlock(p);
	}
}
