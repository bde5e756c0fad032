// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cpu.c - domains: which thread is which CPU, topology, enter and exit.
 *
 * The topology is loaded once per domain.  For the real machine it is
 * restricted to the process's CPU binding (so a taskset-restricted process
 * never escapes its set) and hwloc is told not to rebind the loading thread.
 * A synthetic topology only describes cores and NUMA nodes; a PINNED domain
 * on one binds to the real machine's PUs round-robin.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "domain.h"
#include "internal.h"

_Thread_local struct pcs_cpu_tls pcs_tls_entered PCS_TLS;
_Thread_local struct pcs_cpu_tls pcs_tls_thread[PCS_THREAD_CACHE] PCS_TLS;
_Thread_local unsigned int pcs_tls_uncached PCS_TLS;
PCSTOCK_API _Thread_local struct pcstock_cpu_cache_
	pcstock_cpu_cache_ PCS_TLS = {
	.hit_key = PCS_NO_HIT_KEY, .region = NULL, .rseq_tag = PCS_RSEQ_NO_TAG,
	.rseq_area = &pcs_rseq_none
};
const pcs_rseq_word pcs_rseq_none;

/*
 * Live domains, to tell whether the domain a thread entered still exists
 * (a destroyed one no longer holds the thread) and to hand out ids.
 */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pcstock_domain *live_domains;
static uint64_t last_hit_key;

/*
 * PINNED: the binding a thread had before entering, restored on exit.  A
 * pthread key rather than a plain thread-local so that it is freed if the
 * thread ends (or its domain is destroyed) without exiting.
 */
static pthread_once_t saved_once = PTHREAD_ONCE_INIT;
static pthread_key_t saved_key;
static int saved_key_err;

static void saved_free(void *set)
{
	hwloc_bitmap_free(set);
}

static void saved_key_create(void)
{
	saved_key_err = pthread_key_create(&saved_key, saved_free);
}

static int saved_key_get(void)
{
	int err = pthread_once(&saved_once, saved_key_create);

	return err ? err : saved_key_err;
}

/* Take the calling thread's saved binding (NULL if none). */
static hwloc_bitmap_t saved_take(void)
{
	hwloc_bitmap_t set;

	if (saved_key_get())
		return NULL;
	set = pthread_getspecific(saved_key);
	if (set)
		pthread_setspecific(saved_key, NULL);
	return set;
}

int pcs_getcpu(void)
{
	return sched_getcpu();
}

/*
 * The entry replaced may be the one the hit cache names (another domain
 * sharing the entry, whose CPU is now forgotten): the cache is dropped
 * with it, so that no hit path keeps serving a CPU the table no longer
 * gives the thread while its misses refill the new one.  The thread's next
 * stock operation finds the CPU through the table and caches it again.
 */
int pcs_thread_cpu_assign(struct pcstock_domain *d)
{
	struct pcs_cpu_tls *t = &pcs_tls_thread[d->hit_key % PCS_THREAD_CACHE];
	/* Relaxed: only the RMW's atomicity matters (distinct CPUs). */
	unsigned int n = pcs_fetch_add(&d->next_thread, 1, PCS_RELAXED);

	if (pcstock_cpu_cache_.hit_key == t->hit_key ||
	    pcstock_cpu_cache_.hit_key == d->hit_key)
		pcs_fast_drop();
	t->cpu = (int)(n % d->nr_cpus);
	t->hit_key = d->hit_key;
	return t->cpu;
}

/*
 * hwloc builds a synthetic topology in a time that grows much faster than
 * its size (1,024 PUs load in 0.05 s, 4,096 in 2 s, 16,384 in minutes), so
 * a description is refused before hwloc sees it when it is longer than
 * PCSTOCK_MAX_TOPOLOGY_LEN or its levels' arities multiply to more than
 * PCSTOCK_MAX_SYNTHETIC_PUS leaves.  Arities are the numbers that start a
 * word or follow a ':' outside attributes "(...)" and memory children
 * "[...]"; anything else is left to hwloc's parser.
 */
static int synthetic_check(const char *s)
{
	unsigned long leaves = 1;
	unsigned int depth = 0;

	if (strlen(s) > PCSTOCK_MAX_TOPOLOGY_LEN)
		return -E2BIG;
	for (const char *p = s; *p;) {
		char *end;
		unsigned long arity;

		if (*p == '(' || *p == '[') {
			depth++;
		} else if ((*p == ')' || *p == ']') && depth) {
			depth--;
		} else if (!depth && isdigit((unsigned char)*p) &&
			   (p == s || p[-1] == ':' ||
			    isspace((unsigned char)p[-1]))) {
			arity = strtoul(p, &end, 10);
			if (arity > PCSTOCK_MAX_SYNTHETIC_PUS / leaves)
				return -E2BIG;
			if (arity)
				leaves *= arity;
			p = end;
			continue;
		}
		p++;
	}
	return 0;
}

static int topology_load(hwloc_topology_t *out, const char *synthetic)
{
	hwloc_topology_t t;
	int err;

	if (PCS_FAULT("cpu-topology") || hwloc_topology_init(&t))
		return -ENOMEM;
	errno = 0;
	if (synthetic) {
		if (hwloc_topology_set_synthetic(t, synthetic)) {
			err = errno == ENOMEM ? -ENOMEM : -EINVAL;
			goto fail;
		}
	} else {
		hwloc_topology_set_flags(t,
			HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
			HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING |
			HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING);
	}
	if (PCS_FAULT("cpu-topology-load") || hwloc_topology_load(t)) {
		err = errno && errno != ENOMEM ? -errno : -ENOMEM;
		goto fail;
	}
	*out = t;
	return 0;
fail:
	hwloc_topology_destroy(t);
	return err;
}

static int node_of(hwloc_topology_t t, hwloc_obj_t pu)
{
	hwloc_obj_t node = NULL;

	while ((node = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE,
						  node)))
		if (hwloc_bitmap_isset(node->cpuset, pu->os_index))
			return (int)node->logical_index;
	return 0;
}

/* Record each PU's OS index, core and NUMA node. */
static int topology_scan(struct pcstock_domain *d)
{
	int n = hwloc_get_nbobjs_by_type(d->topo, HWLOC_OBJ_PU);
	unsigned int i;

	if (n <= 0)
		return -ENODEV;
	d->pus = pcs_calloc((size_t)n, sizeof(*d->pus), "cpu-pus");
	if (!d->pus)
		return -ENOMEM;
	d->nr_pus = (unsigned int)n;
	for (i = 0; i < d->nr_pus; i++) {
		hwloc_obj_t pu, core;

		pu = hwloc_get_obj_by_type(d->topo, HWLOC_OBJ_PU, i);

		if (!pu)
			return -ENODEV;
		core = hwloc_get_ancestor_obj_by_type(d->topo, HWLOC_OBJ_CORE,
						      pu);
		d->pus[i].os_index = (int)pu->os_index;
		/* Without cores in the topology each PU is its own core. */
		d->pus[i].core = core ? (int)core->logical_index : (int)i;
		d->pus[i].node = node_of(d->topo, pu);
	}
	return 0;
}

/*
 * PINNED binds to real PUs.  On a synthetic topology load the real machine
 * beside it; either way a CPU binds to PU (cpu % nr_bind_pus).
 */
static int bind_topology_load(struct pcstock_domain *d, const char *synthetic)
{
	int err, n;

	d->bind_topo = d->topo;
	if (synthetic) {
		err = topology_load(&d->bind_topo, NULL);
		if (err) {
			d->bind_topo = NULL;
			return err;
		}
	}
	n = hwloc_get_nbobjs_by_type(d->bind_topo, HWLOC_OBJ_PU);
	if (n <= 0)
		return -ENODEV;
	d->nr_bind_pus = (unsigned int)n;
	return 0;
}

/* RSEQ: the table from OS CPU number to the first CPU on that PU. */
static int rseq_map_build(struct pcstock_domain *d)
{
	unsigned int i, nr = PCS_MIN(d->nr_cpus, d->nr_pus), len = 0;
	int32_t *map;

	for (i = 0; i < nr; i++)
		len = PCS_MAX(len, (unsigned int)d->pus[i].os_index + 1);
	map = pcs_malloc(len * sizeof(*map), "cpu-rseq-map");
	if (!map)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		map[i] = -1;
	for (i = 0; i < nr; i++)
		map[d->pus[i].os_index] = (int32_t)i;
	d->os_map = map;
	d->os_map_len = len;
	/*
	 * glibc's area exists even where registration failed or was turned
	 * off (__rseq_size 0): its cpu_id then reads negative, and
	 * pcs_rseq_cpu_cache() asks sched_getcpu().
	 */
	d->use_rseq = true;
	d->rseq_offset = __rseq_offset;
	return 0;
}

static int states_alloc(struct pcstock_domain *d)
{
	unsigned int i;

	d->online = pcs_calloc(2 * (size_t)d->nr_cpus, sizeof(*d->online),
			       "cpu-states");
	if (!d->online)
		return -ENOMEM;
	d->isolated = d->online + d->nr_cpus;
	for (i = 0; i < d->nr_cpus; i++) {
		atomic_init(&d->online[i], true);
		atomic_init(&d->isolated[i], false);
	}
	if (!pcs_cpu_exclusive(d))
		return 0;
	d->owner = pcs_calloc(d->nr_cpus, sizeof(*d->owner), "cpu-owners");
	return d->owner ? 0 : -ENOMEM;
}

/*
 * The arena, each CPU's region bound to the NUMA node of its PU: only on
 * a @real topology with several nodes, where placement means something.
 */
static int arena_init(struct pcstock_domain *d, bool real)
{
	unsigned int i;

	if (!real || hwloc_get_nbobjs_by_type(d->topo, HWLOC_OBJ_NUMANODE) < 2)
		return pcs_arena_init(&d->arena, d->nr_cpus, NULL, NULL, 0);
	d->nodes = pcs_calloc(d->nr_pus, sizeof(*d->nodes), "cpu-nodes");
	if (!d->nodes)
		return -ENOMEM;
	for (i = 0; i < d->nr_pus; i++)
		d->nodes[i] = d->pus[i].node;
	return pcs_arena_init(&d->arena, d->nr_cpus, d->topo, d->nodes,
			      d->nr_pus);
}

/* Ids stay below 2^32, as the RSEQ hit's tags need (domain.h). */
static int live_add(struct pcstock_domain *d)
{
	int err = 0;

	pthread_mutex_lock(&live_lock);
	if (last_hit_key < PCS_MAX_HIT_KEY) {
		d->hit_key = ++last_hit_key;
		d->live_next = live_domains;
		live_domains = d;
	} else {
		err = -EOVERFLOW;
	}
	pthread_mutex_unlock(&live_lock);
	return err;
}

static void live_del(struct pcstock_domain *d)
{
	struct pcstock_domain **p;

	pthread_mutex_lock(&live_lock);
	for (p = &live_domains; *p; p = &(*p)->live_next) {
		if (*p == d) {
			*p = d->live_next;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
}

static bool live_find(uint64_t id)
{
	struct pcstock_domain *d;
	bool found = false;

	pthread_mutex_lock(&live_lock);
	for (d = live_domains; d && !found; d = d->live_next)
		found = d->hit_key == id;
	pthread_mutex_unlock(&live_lock);
	return found;
}

static void domain_free(struct pcstock_domain *d)
{
	pcs_cpu_hooks_free(d->hooks);
	pcs_cpu_hooks_free(d->work_hooks);
	pcs_arena_fini(&d->arena);
	free(d->nodes);
	free(d->owner);
	free(d->online);
	free((void *)d->os_map);
	free(d->pus);
	if (d->bind_topo && d->bind_topo != d->topo)
		hwloc_topology_destroy(d->bind_topo);
	if (d->topo)
		hwloc_topology_destroy(d->topo);
	pthread_mutex_destroy(&d->hotplug_lock);
	free(d);
}

int pcstock_domain_create(const struct pcstock_domain_attr *attr,
			  struct pcstock_domain **out)
{
	/*
	 * RSEQ: threads that never enter a CPU still get a stock, and threads
	 * share a slot only when they share an OS CPU (THREAD would wrap
	 * threads of different cores onto one slot).
	 */
	static const struct pcstock_domain_attr defaults = {
		0, PCSTOCK_CPU_RSEQ, NULL
	};
	struct pcstock_domain *d;
	int err;

	if (!attr)
		attr = &defaults;
	if (!out || (unsigned int)attr->mode > PCSTOCK_CPU_COOP ||
	    attr->nr_cpus > PCSTOCK_MAX_CPUS)
		return -EINVAL;
	d = pcs_calloc(1, sizeof(*d), "cpu-domain");
	if (!d)
		return -ENOMEM;
	d->mode = attr->mode;
	pthread_mutex_init(&d->hotplug_lock, NULL);
	err = attr->topology ? synthetic_check(attr->topology) : 0;
	if (!err)
		err = topology_load(&d->topo, attr->topology);
	if (err) {
		d->topo = NULL;
		goto fail;
	}
	err = topology_scan(d);
	if (err)
		goto fail;
	d->nr_cpus = attr->nr_cpus ? attr->nr_cpus :
				     PCS_MIN(d->nr_pus, PCSTOCK_MAX_CPUS);
	if (d->mode == PCSTOCK_CPU_PINNED)
		err = bind_topology_load(d, attr->topology);
	else if (d->mode == PCSTOCK_CPU_RSEQ)
		err = rseq_map_build(d);
	if (!err)
		err = states_alloc(d);
	if (!err)
		err = arena_init(d, !attr->topology);
	if (!err)
		err = live_add(d);
	if (err)
		goto fail;
	*out = d;
	return 0;
fail:
	domain_free(d);
	return err;
}

/*
 * Relaxed: a user's creation and destruction are ordered with the domain's
 * destruction by the caller (nothing may use a domain being destroyed);
 * the count only turns a use-after-free into -EBUSY.
 */
void pcs_domain_users_add(struct pcstock_domain *d, int delta)
{
	pcs_fetch_add(&d->users, delta, PCS_RELAXED);
}

int pcstock_domain_destroy(struct pcstock_domain *d)
{
	if (!d)
		return 0;
	if (pcs_load(&d->users, PCS_RELAXED))
		return -EBUSY;
	live_del(d);
	domain_free(d);
	return 0;
}

unsigned int pcstock_domain_nr_cpus(const struct pcstock_domain *d)
{
	return d ? pcs_nr_cpus(d) : 0;
}

enum pcstock_cpu_mode pcstock_domain_mode(const struct pcstock_domain *d)
{
	return d ? d->mode : PCSTOCK_CPU_SIM;
}

/*
 * Whether the calling thread is still a CPU of some domain.  A record
 * naming a destroyed domain is dropped here, with its saved binding.
 */
static bool entered_elsewhere(void)
{
	if (!pcs_tls_entered.hit_key)
		return false;
	if (live_find(pcs_tls_entered.hit_key))
		return true;
	pcs_tls_entered.hit_key = 0;
	hwloc_bitmap_free(saved_take());
	return false;
}

/* PINNED: save the thread's binding, then bind it to @cpu's PU. */
static int bind_thread(struct pcstock_domain *d, unsigned int cpu)
{
	hwloc_obj_t pu = hwloc_get_obj_by_type(d->bind_topo, HWLOC_OBJ_PU,
					       cpu % d->nr_bind_pus);
	hwloc_bitmap_t saved;
	int err = saved_key_get();

	if (err)
		return -err;
	if (PCS_FAULT("cpu-enter"))
		return -ENOMEM;
	saved = hwloc_bitmap_alloc();
	if (!saved)
		return -ENOMEM;
	if (hwloc_get_cpubind(d->bind_topo, saved, HWLOC_CPUBIND_THREAD)) {
		err = -errno;
		goto fail;
	}
	err = -pthread_setspecific(saved_key, saved);
	if (err)
		goto fail;
	/*
	 * "cpu-bind" lets tests play an OS that refuses the binding, which
	 * a root process on an unrestricted machine never sees.
	 */
	if (PCS_FAULT("cpu-bind"))
		err = -EPERM;
	else if (hwloc_set_cpubind(d->bind_topo, pu->cpuset,
				   HWLOC_CPUBIND_THREAD | HWLOC_CPUBIND_STRICT))
		err = -errno;
	if (!err)
		return 0;
	pthread_setspecific(saved_key, NULL);
fail:
	hwloc_bitmap_free(saved);
	return err;
}

int pcstock_cpu_enter(struct pcstock_domain *d, unsigned int cpu)
{
	int err;

	if (!d)
		return -EINVAL;
	if (d->mode == PCSTOCK_CPU_RSEQ || d->mode == PCSTOCK_CPU_THREAD)
		return -EOPNOTSUPP;
	if (cpu >= d->nr_cpus)
		return -ERANGE;
	if (entered_elsewhere())
		return -EBUSY;
	if (pcs_cpu_exclusive(d)) {
		err = pcs_cpu_own(d, cpu);
		if (err)
			return err;
	}
	if (d->mode == PCSTOCK_CPU_PINNED) {
		err = bind_thread(d, cpu);
		if (err) {
			/* Owned a moment: work queued meanwhile is ours. */
			pcs_cpu_disown(d, cpu);
			return err;
		}
	}
	pcs_tls_entered.cpu = (int)cpu;
	pcs_tls_entered.hit_key = d->hit_key;
	pcs_fast_set(d, cpu);
	return 0;
}

int pcstock_cpu_exit(struct pcstock_domain *d)
{
	hwloc_bitmap_t saved;

	if (!d || pcs_tls_entered.hit_key != d->hit_key)
		return -EINVAL;
	if (pcs_cpu_exclusive(d))
		pcs_cpu_disown(d, (unsigned int)pcs_tls_entered.cpu);
	if (d->mode == PCSTOCK_CPU_PINNED) {
		saved = saved_take();
		/*
		 * Best effort: the old binding was accepted when we saved it;
		 * if a cpuset change since makes the OS refuse it, the thread
		 * stays on its PU, which is still a valid binding.
		 */
		if (saved)
			hwloc_set_cpubind(d->bind_topo, saved,
					  HWLOC_CPUBIND_THREAD);
		hwloc_bitmap_free(saved);
	}
	pcs_tls_entered.hit_key = 0;
	pcs_tls_entered.cpu = -1;
	/* The cached region may be another domain's: dropping it is cheap. */
	pcs_fast_drop();
	return 0;
}

int pcstock_this_cpu(struct pcstock_domain *d)
{
	return d ? pcs_this_cpu(d) : -1;
}

/* The PU behind @cpu, or NULL if @cpu is out of range. */
static const struct pcs_pu *cpu_pu(const struct pcstock_domain *d,
				   unsigned int cpu)
{
	return d && cpu < d->nr_cpus ? &d->pus[cpu % d->nr_pus] : NULL;
}

int pcstock_cpu_numa_node(const struct pcstock_domain *d, unsigned int cpu)
{
	const struct pcs_pu *pu = cpu_pu(d, cpu);

	return pu ? pu->node : -ERANGE;
}

int pcstock_cpu_core(const struct pcstock_domain *d, unsigned int cpu)
{
	const struct pcs_pu *pu = cpu_pu(d, cpu);

	return pu ? pu->core : -ERANGE;
}

int pcstock_cpu_os_index(const struct pcstock_domain *d, unsigned int cpu)
{
	const struct pcs_pu *pu = cpu_pu(d, cpu);

	return pu ? pu->os_index : -ERANGE;
}

/* ---- the per-CPU arena of a domain (pcstock/percpu.h) ------------------- */

int pcstock_percpu_alloc(struct pcstock_domain *d, size_t size, size_t align,
			 size_t *handle)
{
	return d ? pcs_arena_alloc(&d->arena, size, align, handle) : -EINVAL;
}

void *pcstock_percpu_ptr(struct pcstock_domain *d, size_t handle,
			 unsigned int cpu)
{
	return d && cpu < d->nr_cpus ? pcs_percpu_ptr(d, handle, cpu) : NULL;
}

void pcstock_percpu_free(struct pcstock_domain *d, size_t handle)
{
	if (d)
		pcs_arena_free(&d->arena, handle);
}

void pcstock_domain_memory(const struct pcstock_domain *d,
			   struct pcstock_domain_memory *m)
{
	if (!m)
		return;
	if (!d) {
		m->reserved = m->in_use = 0;
		return;
	}
	pcs_arena_memory(&d->arena, &m->reserved, &m->in_use);
}
