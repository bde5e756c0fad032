// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cpu_hotplug.c - CPU states, owners of exclusive CPUs, offline and work
 * hooks.
 *
 * Offline hooks run with hotplug_lock held, the way the kernel runs hotplug
 * callbacks under cpus_write_lock(): registration takes the same lock, so
 * once pcstock_cpu_hook_remove() holds it no hook can be running, and the
 * unlinked hook cannot be found again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "domain.h"
#include "internal.h"

struct pcstock_cpu_hook {
	pcstock_cpu_hook_fn fn;
	pcstock_cpu_hook_fn kick;	/* work hooks: see pcs_work_hook_add() */
	void *arg;
	struct pcstock_cpu_hook *next;
	struct pcstock_cpu_hook *prev;
};

/* Free whatever domain_create() got to; also the destroy path. */
void pcs_cpu_hooks_free(struct pcstock_cpu_hook *h)
{
	struct pcstock_cpu_hook *next;

	for (; h; h = next) {
		next = h->next;
		free(h);
	}
}

/*
 * Exclusive CPUs: become @cpu's owner, waiting while a requester borrows
 * it.  Acquire pairs with the release in cpu_release() and
 * pcs_cpu_unborrow(): the new owner sees the CPU's data as the last one
 * left it.
 */
int pcs_cpu_own(struct pcstock_domain *d, unsigned int cpu)
{
	int state = PCS_CPU_FREE;

	while (!pcs_cas(&d->owner[cpu], &state, PCS_CPU_OWNED,
			PCS_ORDER(CPU_OWN, PCS_ACQUIRE), PCS_RELAXED)) {
		if (state == PCS_CPU_OWNED)
			return -EBUSY;
		state = PCS_CPU_FREE;
		pcs_spin_yield();
	}
	return 0;
}

/*
 * Release pairs with the acquire in cpu_own() and pcs_cpu_borrow(); the
 * fence orders it before the caller's look for work queued meanwhile,
 * against the requester's fence between queueing and pcs_cpu_borrow().
 */
static void cpu_release(struct pcstock_domain *d, unsigned int cpu)
{
	pcs_store(&d->owner[cpu], PCS_CPU_FREE,
		  PCS_ORDER(CPU_RELEASE, PCS_RELEASE));
	pcs_fence(PCS_ORDER(CPU_RELEASE_FENCE, PCS_SEQ_CST));
}

bool pcs_cpu_borrow(struct pcstock_domain *d, unsigned int cpu)
{
	int state = PCS_CPU_FREE;

	/* Acquire: as cpu_own(). */
	return pcs_cas(&d->owner[cpu], &state, PCS_CPU_BORROWED,
		       PCS_ORDER(CPU_BORROW, PCS_ACQUIRE), PCS_RELAXED);
}

void pcs_cpu_unborrow(struct pcstock_domain *d, unsigned int cpu)
{
	cpu_release(d, cpu);
}

/*
 * hotplug_lock, as work hooks and pcs_work_lock() take it.  While the
 * schedule explorer runs, a thread blocked on it would hang the explorer,
 * so it is tried and backed off from at a scheduling point instead.
 */
static void work_lock(struct pcstock_domain *d)
{
#ifdef PCSTOCK_EXPLORE
	if (pcs_explore_hooked()) {
		while (pthread_mutex_trylock(&d->hotplug_lock))
			pcs_spin_yield();
		return;
	}
#endif
	pthread_mutex_lock(&d->hotplug_lock);
}

/* The owner runs the work (@kick false), or anyone kicks a freed CPU. */
static void run_work_hooks(struct pcstock_domain *d, unsigned int cpu,
			   bool kick)
{
	struct pcstock_cpu_hook *h;

	work_lock(d);
	for (h = d->work_hooks; h; h = h->next)
		(kick ? h->kick : h->fn)(d, cpu, h->arg);
	pthread_mutex_unlock(&d->hotplug_lock);
}

int pcstock_cpu_idle(struct pcstock_domain *d)
{
	if (!d || pcs_tls_entered.hit_key != d->hit_key)
		return -EINVAL;
	if (pcs_cpu_exclusive(d))
		run_work_hooks(d, (unsigned int)pcs_tls_entered.cpu, false);
	return 0;
}

/*
 * Exclusive CPUs: run the queued work, give the CPU up, then kick it: work
 * a requester queued after the first look, seeing the CPU still owned, is
 * run now unless another holder took the CPU (who then kicks it in turn).
 * Also the way out of a PINNED enter whose binding failed: a requester
 * that found the CPU owned meanwhile left its work to us.
 */
void pcs_cpu_disown(struct pcstock_domain *d, unsigned int cpu)
{
	run_work_hooks(d, cpu, false);
	cpu_release(d, cpu);
	run_work_hooks(d, cpu, true);
}

int pcstock_cpu_set_online(struct pcstock_domain *d, unsigned int cpu,
			   bool online)
{
	struct pcstock_cpu_hook *h;
	bool was;

	if (!d)
		return -EINVAL;
	if (cpu >= d->nr_cpus)
		return -ERANGE;
	pthread_mutex_lock(&d->hotplug_lock);
	/* Relaxed: the flag is a hint to readers; the lock orders writers. */
	was = pcs_xchg(&d->online[cpu], online, PCS_RELAXED);
	if (was && !online)
		for (h = d->hooks; h; h = h->next)
			h->fn(d, cpu, h->arg);
	pthread_mutex_unlock(&d->hotplug_lock);
	return 0;
}

bool pcstock_cpu_online(const struct pcstock_domain *d, unsigned int cpu)
{
	return d && cpu < d->nr_cpus &&
	       pcs_load(&d->online[cpu], PCS_RELAXED);
}

int pcstock_cpu_set_isolated(struct pcstock_domain *d, unsigned int cpu,
			     bool isolated)
{
	if (!d)
		return -EINVAL;
	if (cpu >= d->nr_cpus)
		return -ERANGE;
	/* Relaxed: a policy hint; a racing drain may see either state. */
	pcs_store(&d->isolated[cpu], isolated, PCS_RELAXED);
	return 0;
}

bool pcstock_cpu_isolated(const struct pcstock_domain *d, unsigned int cpu)
{
	return d && cpu < d->nr_cpus &&
	       pcs_load(&d->isolated[cpu], PCS_RELAXED);
}

static int hook_add(struct pcstock_domain *d, struct pcstock_cpu_hook **list,
		    pcstock_cpu_hook_fn fn, pcstock_cpu_hook_fn kick,
		    void *arg, struct pcstock_cpu_hook **out)
{
	struct pcstock_cpu_hook *h;

	if (!d || !fn || !out)
		return -EINVAL;
	h = pcs_malloc(sizeof(*h), "cpu-hook");
	if (!h)
		return -ENOMEM;
	h->fn = fn;
	h->kick = kick;
	h->arg = arg;
	h->prev = NULL;
	pthread_mutex_lock(&d->hotplug_lock);
	h->next = *list;
	if (h->next)
		h->next->prev = h;
	*list = h;
	pthread_mutex_unlock(&d->hotplug_lock);
	*out = h;
	return 0;
}

static void hook_remove(struct pcstock_domain *d,
			struct pcstock_cpu_hook **list,
			struct pcstock_cpu_hook *h)
{
	if (!d || !h)
		return;
	/* Holding the lock means no hook of the list is running now. */
	pthread_mutex_lock(&d->hotplug_lock);
	if (h->prev)
		h->prev->next = h->next;
	else
		*list = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&d->hotplug_lock);
	free(h);
}

int pcstock_cpu_hook_add(struct pcstock_domain *d, pcstock_cpu_hook_fn fn,
			 void *arg, struct pcstock_cpu_hook **out)
{
	return hook_add(d, d ? &d->hooks : NULL, fn, NULL, arg, out);
}

void pcstock_cpu_hook_remove(struct pcstock_domain *d,
			     struct pcstock_cpu_hook *h)
{
	hook_remove(d, d ? &d->hooks : NULL, h);
}

int pcs_work_hook_add(struct pcstock_domain *d, pcstock_cpu_hook_fn fn,
		      pcstock_cpu_hook_fn kick, void *arg,
		      struct pcstock_cpu_hook **out)
{
	return hook_add(d, &d->work_hooks, fn, kick, arg, out);
}

void pcs_work_hook_remove(struct pcstock_domain *d,
			  struct pcstock_cpu_hook *h)
{
	hook_remove(d, &d->work_hooks, h);
}

void pcs_work_lock(struct pcstock_domain *d)
{
	work_lock(d);
}

void pcs_work_unlock(struct pcstock_domain *d)
{
	pthread_mutex_unlock(&d->hotplug_lock);
}
