/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * domain.h - the private layout of a domain and the hot-path accessors the
 * stock layer inlines: which CPU the caller is, and where an object of the
 * per-CPU arena lives on a CPU.
 *
 * The domain embeds its arena (percpu_arena.h), which knows nothing of
 * domains: the CPU layer hands it the number of CPUs and their NUMA nodes.
 * The public functions of cpu.c (pcstock_percpu_*() included) are thin
 * wrappers over these and the arena's (plus range checks), so there is
 * one copy of each operation.
 *
 * Which thread is which CPU lives in thread-locals tagged with the domain's
 * hit key, a process-wide serial number never reused (the one value every
 * hit compares: the thread's CPU cache, each stocked counter and each
 * group that can hit carry it too): a record left behind by a
 * destroyed domain can never match a new domain, even one allocated at the
 * same address.  The thread-locals use the initial-exec TLS model so that
 * reading them is one %fs-relative load, also from the shared library.
 */
#ifndef PCSTOCK_DOMAIN_H
#define PCSTOCK_DOMAIN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/rseq.h>

#include <hwloc.h>

#include <pcstock/cpu.h>
#include <pcstock/cpu_cache.h>
#include <pcstock/percpu.h>

#include "atomic.h"
#include "percpu_arena.h"

/* Which CPU of which domain a thread is: hit key 0 matches no domain. */
struct pcs_cpu_tls {
	uint64_t hit_key;
	int cpu;
};

#define PCS_TLS __attribute__((tls_model("initial-exec")))

/* The domain the thread entered (SIM, PINNED), at most one at a time. */
extern _Thread_local struct pcs_cpu_tls pcs_tls_entered PCS_TLS;

/*
 * THREAD mode: the CPUs a thread was given, cached direct-mapped by the
 * domain's hit key, so a thread using up to PCS_THREAD_CACHE domains with
 * consecutive keys keeps its CPU in each.  A thread alternating between two
 * THREAD domains whose keys collide is given a new CPU at each switch
 * (still correct: the CPU is only a locality hint).  The hit cache below
 * never outlives the entry it was taken from: pcs_thread_cpu_assign()
 * drops it when it replaces that entry.
 */
#define PCS_THREAD_CACHE 4
extern _Thread_local struct pcs_cpu_tls
	pcs_tls_thread[PCS_THREAD_CACHE] PCS_TLS;

/*
 * The hit paths' per-thread cache, pcstock_cpu_cache_ (pcstock/cpu_cache.h),
 * the counterpart of the kernel's per-CPU offset: the region of the arena
 * that belongs to the CPU the thread is of the domain whose hit key is
 * @hit_key, so
 * a slot's address is one add (region + handle).  One entry per thread,
 * for the domain whose CPU it looked up last.
 *
 * Set by pcstock_cpu_enter() and by the stock's slow paths (SIM, PINNED,
 * THREAD: a CPU that stays the thread's until it exits the domain, or until
 * a THREAD cache collision gives it another, which drops this cache too);
 * never for RSEQ, whose CPU changes under the thread: RSEQ has its own
 * entry, keyed by the OS CPU too (pcs_rseq_cpu_cache()).  Reset by
 * pcstock_cpu_exit().  A destroyed domain's hit key is never reused, so a
 * stale entry matches no live counter: the stock layer gives each counter
 * its domain's hit key while its stock exists.  Every
 * slot operation is an atomic RMW, so a region that is no longer the
 * thread's CPU costs locality, never pages.
 */

/* Matches no domain and no counter (counters without a stock have key 0). */
#define PCS_NO_HIT_KEY UINT64_MAX

/* Who may touch an exclusive CPU's data (PINNED, COOP): domain.owner[]. */
enum pcs_cpu_owner {
	PCS_CPU_FREE = 0,	/* nobody: a requester may borrow it */
	PCS_CPU_OWNED,		/* an entered thread */
	PCS_CPU_BORROWED,	/* a requester running the CPU's work */
};

/* What hwloc says about one processing unit of the domain's topology. */
struct pcs_pu {
	int os_index;
	int core;
	int node;
};

struct pcstock_domain {
	/* Read-mostly, used on every hot-path call. */
	enum pcstock_cpu_mode mode;
	unsigned int nr_cpus;
	uint64_t hit_key;
	const int32_t *os_map;	/* RSEQ: OS CPU number -> CPU, or -1 */
	unsigned int os_map_len;
	bool use_rseq;		/* RSEQ: read the rseq area (tests clear it) */
	ptrdiff_t rseq_offset;	/* RSEQ: its offset from the thread ptr */
	_Atomic unsigned int next_thread;	/* THREAD: next CPU to give */
	_Atomic int users;	/* trees and counters' stocks over it */
	/* Its first words, base and stride, end the hot line. */
	struct pcs_arena arena;

	/* Topology: CPU c runs on pus[c % nr_pus]. */
	hwloc_topology_t topo;	/* describes the CPUs (maybe synthetic) */
	hwloc_topology_t bind_topo;	/* PINNED: the real machine */
	struct pcs_pu *pus;
	unsigned int nr_pus;
	unsigned int nr_bind_pus;
	int *nodes;		/* the arena's: each PU's NUMA node, or NULL */

	/* Hotplug: hotplug_lock serialises state changes and hooks. */
	pthread_mutex_t hotplug_lock;
	_Atomic bool *online;
	_Atomic bool *isolated;
	_Atomic int *owner;		/* PINNED, COOP: enum pcs_cpu_owner */
	struct pcstock_cpu_hook *hooks;
	struct pcstock_cpu_hook *work_hooks;	/* run by a CPU's owner */
	struct pcstock_domain *live_next;	/* registry of live domains */
};

/* PINNED and COOP: a CPU has one owner at a time. */
static inline bool pcs_cpu_exclusive(const struct pcstock_domain *d)
{
	return d->mode == PCSTOCK_CPU_PINNED || d->mode == PCSTOCK_CPU_COOP;
}

/*
 * Exclusive CPUs: take @cpu for the calling thread if nobody holds it
 * (true), so it may run the CPU's queued work; give it back with
 * pcs_cpu_unborrow(), then look for work again.  The protocol: a requester
 * marks its work, then (seq_cst fence) tries to borrow; whoever gives a
 * CPU up (exit, unborrow) does so, then (fence) looks for marked work and
 * tries to borrow.  So a request is never left on a CPU nobody holds.
 */
bool pcs_cpu_borrow(struct pcstock_domain *d, unsigned int cpu);
void pcs_cpu_unborrow(struct pcstock_domain *d, unsigned int cpu);

/*
 * Work hooks, called under hotplug_lock: @fn(d, cpu, arg) runs the work a
 * layer queued on @cpu, by its owner (pcstock_cpu_idle(), and
 * pcstock_cpu_exit() before it gives the CPU up); @kick(d, cpu, arg), by
 * pcstock_cpu_exit() once the CPU is free, borrows it to run work queued
 * meanwhile (looking again after each unborrow).  Registration as for
 * offline hooks.
 */
int pcs_work_hook_add(struct pcstock_domain *d, pcstock_cpu_hook_fn fn,
		      pcstock_cpu_hook_fn kick, void *arg,
		      struct pcstock_cpu_hook **out);
void pcs_work_hook_remove(struct pcstock_domain *d,
			  struct pcstock_cpu_hook *h);
/*
 * Hold off every work hook (and offline hook): they run under hotplug_lock.
 * For a layer that drains CPUs' caches itself while their owners may idle,
 * exit or go offline.  Not from a hook.
 */
void pcs_work_lock(struct pcstock_domain *d);
void pcs_work_unlock(struct pcstock_domain *d);

/*
 * cpu_hotplug.c, for cpu.c: become an exclusive CPU's owner (-EBUSY if
 * another thread is), give it up running its work, free a hook list.
 */
int pcs_cpu_own(struct pcstock_domain *d, unsigned int cpu);
void pcs_cpu_disown(struct pcstock_domain *d, unsigned int cpu);
void pcs_cpu_hooks_free(struct pcstock_cpu_hook *h);

/* sched_getcpu(), out of line: it needs _GNU_SOURCE. */
int pcs_getcpu(void);
/* THREAD mode, first call of a thread: give it the next CPU. */
int pcs_thread_cpu_assign(struct pcstock_domain *d);

static inline unsigned int pcs_nr_cpus(const struct pcstock_domain *d)
{
	return d->nr_cpus;
}

/*
 * Non-zero while the thread runs a group's reclaim or OOM callback
 * (reclaim.c): both entries of the hit cache then stay empty, so every
 * stock operation of the thread takes a slow path, and the uncharges send
 * their pages straight to the counters (stock.c's uncharge_uncached(),
 * policy_memcg7.c for memcg7).  The hit and uncharge fast paths, inline ones
 * included, thus need no test of their own: their key comparison fails.
 */
extern _Thread_local unsigned int pcs_tls_uncached PCS_TLS;

/*
 * RSEQ hits.  The kernel keeps the first 8 bytes of a thread's rseq area,
 * cpu_id_start and cpu_id, at the OS CPU the thread runs on (rewriting
 * them whenever it migrates), so one 8-byte load tells whether the thread
 * still runs where it did.  The cache's RSEQ entry holds the region of
 * the CPU of the domain with hit key k for the OS CPU whose word is w,
 * tagged k ^ w, so a hit is that load, an XOR with the group's or
 * counter's hit key and one compare.  Hit keys are 0 or a domain's, below
 * 2^32 (PCS_MAX_HIT_KEY), so the high half of k ^ w is cpu_id: equal tags
 * have equal cpu_id, hence equal words and equal keys.  The empty tag has
 * 0x80000000 there, which no cpu_id is (a CPU, -1 before glibc registers
 * the area, -2 if it could not); a thread that never cached an RSEQ region
 * reads the word 0 (pcs_rseq_none), and no hit key is the empty tag.
 */
#define PCS_RSEQ_NO_TAG (1ULL << 63)
#define PCS_MAX_HIT_KEY 0xffffffffULL

typedef uint64_t __attribute__((may_alias)) pcs_rseq_word;

/* The word a thread without a cached RSEQ region reads. */
extern const pcs_rseq_word pcs_rseq_none;

/*
 * The calling thread's rseq area (glibc's), 32-byte aligned: the kernel
 * refuses to register one that is not, and glibc lays it out so.
 */
static inline const pcs_rseq_word *pcs_rseq_area(const struct pcstock_domain *d)
{
	return __builtin_assume_aligned((char *)__builtin_thread_pointer() +
					d->rseq_offset, 32);
}

/*
 * cpu_id_start and cpu_id.  Written by the kernel only; no ordering to
 * pair with.
 */
static inline uint64_t pcs_rseq_read(const void *area)
{
	return __atomic_load_n((const pcs_rseq_word *)area, __ATOMIC_RELAXED);
}

/*
 * @key ^ the word of @area, the RSEQ hit's test: on x86-64 one XOR from
 * memory (a single 8-byte load, as pcs_rseq_read()'s; volatile, so never
 * merged with another read of the area).
 */
static inline uint64_t pcs_rseq_xor(uint64_t key, const void *area)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__asm__ __volatile__("xorq %1, %0"
			     : "+r"(key)
			     : "m"(*(const pcs_rseq_word *)area));
	return key;
#else
	return key ^ pcs_rseq_read(area);
#endif
}

/* The cpu_id half of a word read by pcs_rseq_read(). */
static inline unsigned int pcs_rseq_word_cpu(uint64_t w)
{
	struct rseq rs;

	_Static_assert(offsetof(struct rseq, cpu_id) == sizeof(uint32_t),
		       "cpu_id follows cpu_id_start");
	memcpy(&rs, &w, sizeof(w));
	return rs.cpu_id;
}

/* Make @cpu, the OS CPU whose area word is @w, @d's cached RSEQ region. */
static inline void pcs_rseq_fast_set(const struct pcstock_domain *d,
				     const pcs_rseq_word *area, uint64_t w,
				     unsigned int cpu)
{
	if (pcs_tls_uncached)
		return;
	pcstock_cpu_cache_.rseq_region = pcs_arena_ptr(&d->arena, 0, cpu);
	pcstock_cpu_cache_.rseq_area = area;
	pcstock_cpu_cache_.rseq_tag = d->hit_key ^ w;
}

/*
 * RSEQ mode: the OS CPU from glibc's rseq area, mapped to the domain's
 * CPU.  A negative cpu_id (rseq not registered: glibc's tunable, valgrind)
 * or a cleared use_rseq asks sched_getcpu() instead.  A failed
 * sched_getcpu() is a huge unsigned value, so it maps to -1 like any OS
 * CPU outside the table.  With @cache, a CPU read from the area becomes
 * the thread's cached RSEQ region.
 */
static inline int pcs_rseq_cpu_cache(const struct pcstock_domain *d,
				     bool cache)
{
	const pcs_rseq_word *area = pcs_rseq_area(d);
	uint64_t w = d->use_rseq ? pcs_rseq_read(area) : UINT64_MAX;
	unsigned int os = pcs_rseq_word_cpu(w);
	bool from_area = (int)os >= 0;
	int cpu;

	if (!from_area)
		os = (unsigned int)pcs_getcpu();
	cpu = os < d->os_map_len ? d->os_map[os] : -1;
	if (cache && from_area && cpu >= 0)
		pcs_rseq_fast_set(d, area, w, (unsigned int)cpu);
	return cpu;
}

static inline int pcs_rseq_cpu(const struct pcstock_domain *d)
{
	return pcs_rseq_cpu_cache(d, false);
}

/* pcstock_this_cpu() without the NULL check: -1 or 0..nr_cpus-1. */
static inline int pcs_this_cpu(struct pcstock_domain *d)
{
	const struct pcs_cpu_tls *t;

	switch (d->mode) {
	case PCSTOCK_CPU_RSEQ:
		return pcs_rseq_cpu(d);
	case PCSTOCK_CPU_THREAD:
		t = &pcs_tls_thread[d->hit_key % PCS_THREAD_CACHE];
		if (t->hit_key == d->hit_key)
			return t->cpu;
		return pcs_thread_cpu_assign(d);
	default:
		t = &pcs_tls_entered;
		return t->hit_key == d->hit_key ? t->cpu : -1;
	}
}

/* pcstock_percpu_ptr() without the range check. */
static inline void *pcs_percpu_ptr(struct pcstock_domain *d, size_t handle,
				   unsigned int cpu)
{
	return pcs_arena_ptr(&d->arena, handle, cpu);
}

/* Make @cpu of @d the thread's cached region (never RSEQ: see above). */
static inline void pcs_fast_set(const struct pcstock_domain *d,
				unsigned int cpu)
{
	if (pcs_tls_uncached)
		return;
	pcstock_cpu_cache_.region = pcs_arena_ptr(&d->arena, 0, cpu);
	pcstock_cpu_cache_.hit_key = d->hit_key;
}

/* Forget the thread's cached region: its next stock call looks it up. */
static inline void pcs_fast_drop(void)
{
	pcstock_cpu_cache_.hit_key = PCS_NO_HIT_KEY;
	pcstock_cpu_cache_.region = NULL;
}

/*
 * Empty the cache and keep it empty until the matching pcs_fast_resume();
 * the first slow path after that fills it again.  Nests.
 */
static inline void pcs_fast_suspend(void)
{
	pcs_tls_uncached++;
	pcstock_cpu_cache_.hit_key = PCS_NO_HIT_KEY;
	/* The RSEQ entry too: no key matches the empty tag. */
	pcstock_cpu_cache_.rseq_area = &pcs_rseq_none;
	pcstock_cpu_cache_.rseq_tag = PCS_RSEQ_NO_TAG;
}

static inline void pcs_fast_resume(void)
{
	pcs_tls_uncached--;
}

/* The CPU whose arena region is @region. */
static inline unsigned int pcs_region_cpu(const struct pcstock_domain *d,
					  const char *region)
{
	return (unsigned int)((size_t)(region - d->arena.base) /
			      d->arena.stride);
}

#endif /* PCSTOCK_DOMAIN_H */
