/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/cpu.h - domains: the userspace stand-in for "the machine's CPUs".
 *
 * A domain is a set of nr_cpus "CPUs" numbered 0..nr_cpus-1, each owning a
 * region of the domain's per-CPU arena (pcstock/percpu.h).  Which CPU a
 * thread is depends on the domain's mode:
 *
 *  PCSTOCK_CPU_SIM     simulated CPUs: a thread becomes CPU n with
 *                      pcstock_cpu_enter(); any number of CPUs, several
 *                      threads may share one (that models preemption).
 *  PCSTOCK_CPU_PINNED  as SIM, and entering also binds the thread to the
 *                      CPU's processing unit with hwloc (CPUs beyond the
 *                      PUs wrap round-robin): the will-it-scale model.
 *                      With a synthetic topology, which has no real PUs,
 *                      CPU n binds to the real machine's PU n modulo the
 *                      PUs the process may use.
 *  PCSTOCK_CPU_RSEQ    no entering: the CPU is the OS CPU the thread runs
 *                      on (glibc's rseq area, sched_getcpu() as fallback),
 *                      mapped to a dense index; -1 for an OS CPU outside
 *                      the domain.  The first min(nr_cpus, PUs) CPUs each
 *                      stand for their PU's OS CPU (for a synthetic
 *                      topology, OS CPU n is its PU P#n).
 *                      A CPU admits one entered thread at a time (the
 *                      will-it-scale model: one task per CPU).
 *  PCSTOCK_CPU_THREAD  each thread gets its own CPU on first use, wrapping
 *                      modulo nr_cpus.  A thread remembers its CPUs in a
 *                      four-entry cache indexed by the domain's creation
 *                      number: alternating between two THREAD domains
 *                      that collide there gives it a new CPU at each
 *                      switch (still correct, only less local); its stock
 *                      hits and refills both move to the new CPU.
 *  PCSTOCK_CPU_COOP    cooperative: as SIM, but a CPU admits one entered
 *                      thread at a time, its owner, which runs the CPU's
 *                      tasks one after the other and switches between them
 *                      only outside library calls, as the kernel never
 *                      preempts a task inside a per-CPU stock operation.
 *                      The owner may bind itself; entering does not.
 *
 * Exclusive CPUs (PINNED, COOP).  Per-CPU data of such a CPU is written by
 * its owner alone, as the kernel's is under preempt_disable(), so layers
 * may use plain accesses on it; work another thread wants done there (a
 * remote drain) is queued and run by the owner at its next operation, when
 * it calls pcstock_cpu_idle() (the kernel's workqueue running when the CPU
 * schedules) or when it exits.  A CPU nobody entered has its work run at
 * once by the requester.  An owner must exit before its thread ends.
 *
 * A thread that is no CPU of the domain (pcstock_this_cpu() == -1) is a
 * supported case: the stock layer charges the hierarchy directly for it.
 * Correctness never depends on the CPU being current: the per-CPU data is
 * only touched with atomic read-modify-writes, so a migrated thread only
 * loses locality.
 */
#ifndef PCSTOCK_CPU_H
#define PCSTOCK_CPU_H

#include <stdbool.h>
#include <stddef.h>

#include <pcstock/common.h>

PCSTOCK_EXTERN_C_BEGIN

struct pcstock_domain;
struct pcstock_cpu_hook;

enum pcstock_cpu_mode {
	PCSTOCK_CPU_SIM = 0,
	PCSTOCK_CPU_PINNED,
	PCSTOCK_CPU_RSEQ,
	PCSTOCK_CPU_THREAD,
	PCSTOCK_CPU_COOP,
};

/* The largest nr_cpus a domain accepts. */
#define PCSTOCK_MAX_CPUS 65536U
/*
 * Limits on a synthetic topology (hwloc's load time grows much faster than
 * the topology): its length in bytes, and the processing units it may
 * describe (more CPUs than PUs wrap round-robin, so nr_cpus may exceed it).
 */
#define PCSTOCK_MAX_TOPOLOGY_LEN 1024U
#define PCSTOCK_MAX_SYNTHETIC_PUS 1024UL

/**
 * struct pcstock_domain_attr - how to build a domain
 * @nr_cpus: number of CPUs; 0 means one per processing unit this process
 *           may run on (its cpuset), or per PU of @topology if given
 * @mode: enum pcstock_cpu_mode
 * @topology: NULL for the real machine (restricted to the process's CPU
 *            binding), or an hwloc synthetic description such as
 *            "node:2 core:8 pu:2" that decides cores and NUMA nodes
 */
struct pcstock_domain_attr {
	unsigned int nr_cpus;
	enum pcstock_cpu_mode mode;
	const char *topology;
};

/**
 * struct pcstock_domain_memory - footprint of a domain's per-CPU arena
 * @reserved: bytes of memory committed for per-CPU regions (all CPUs)
 * @in_use: bytes handed out by live allocations (all CPUs)
 */
struct pcstock_domain_memory {
	size_t reserved;
	size_t in_use;
};

/**
 * pcstock_domain_create() - create a domain
 * @attr: the description; NULL means { 0, PCSTOCK_CPU_RSEQ, NULL }: one
 *	CPU per usable PU, and every thread is the CPU it runs on, without
 *	calling pcstock_cpu_enter(), so a daemon's threads charge through
 *	the stock (in SIM mode a thread that never enters has no stock)
 * @out: receives the domain on success; untouched on failure
 *
 * Loads the topology once (without changing the caller's CPU binding):
 * the real machine restricted to the process's CPU binding (so under
 * `taskset -c 0` nr_cpus = 0 gives one CPU), or the synthetic description
 * (plus, for PINNED, the real machine to bind to).  Also reserves the
 * per-CPU arena's address range (see pcstock/percpu.h).  On Linux the
 * process's binding is the union of its threads' bindings at the call
 * (hwloc's process binding): a thread that pinned itself to one CPU
 * restricts the domain to that CPU only if no other thread of the process
 * (liburcu's call_rcu thread included) may run elsewhere.  To get every
 * CPU the process may use, create the domain before pinning.
 *
 * Context: any thread.
 *
 * Return: 0; -EINVAL for a NULL @out, an unknown mode, nr_cpus above
 * PCSTOCK_MAX_CPUS or a malformed topology; -E2BIG for a topology longer
 * than PCSTOCK_MAX_TOPOLOGY_LEN bytes or of more than
 * PCSTOCK_MAX_SYNTHETIC_PUS processing units; -ENOMEM; -ENODEV when no
 * processing unit is usable; -EOVERFLOW once the process has created
 * 2^32 - 1 domains (a domain's hit key is never reused); the errno hwloc
 * reports if it cannot load the real machine's topology.
 */
PCSTOCK_API int pcstock_domain_create(const struct pcstock_domain_attr *attr,
				      struct pcstock_domain **out);

/**
 * pcstock_domain_destroy() - free a domain and its arena
 * @d: the domain, or NULL
 *
 * Refuses while the domain is in use: a tree (pcstock/hierarchy.h) not yet
 * destroyed or a counter whose stock (pcstock/stock.h) is not yet freed.
 * Per-CPU allocations of the caller's own (pcstock/percpu.h) and offline
 * hooks still registered are freed with the domain; threads still entered
 * in it simply stop being CPUs of it.
 *
 * Context: nothing may use @d concurrently.
 *
 * Return: 0 (also for NULL); -EBUSY if @d is in use (it is left intact).
 */
PCSTOCK_API int pcstock_domain_destroy(struct pcstock_domain *d);

/** pcstock_domain_nr_cpus() - number of CPUs of @d (0 for NULL) */
PCSTOCK_API unsigned int
pcstock_domain_nr_cpus(const struct pcstock_domain *d);

/** pcstock_domain_mode() - the mode @d was created with (SIM for NULL) */
PCSTOCK_API enum pcstock_cpu_mode
pcstock_domain_mode(const struct pcstock_domain *d);

/**
 * pcstock_domain_memory() - footprint of the per-CPU arena
 * @d: the domain (NULL reads as an empty arena)
 * @m: receives the figures (NULL is ignored)
 *
 * Context: any thread; each figure is exact at some instant.
 */
PCSTOCK_API void pcstock_domain_memory(const struct pcstock_domain *d,
				       struct pcstock_domain_memory *m);

/**
 * pcstock_cpu_enter() - make the calling thread CPU @cpu of @d
 * @d: a SIM, PINNED or COOP domain
 * @cpu: 0..nr_cpus-1
 *
 * PINNED also binds the thread to the CPU's processing unit, saving the
 * binding it had for pcstock_cpu_exit().  PINNED and COOP make the thread
 * the CPU's owner (waiting while another thread runs work queued there).
 *
 * Context: a thread is a CPU of at most one domain at a time.  A domain
 * destroyed while the thread is entered releases it: the thread may then
 * enter another domain (a PINNED thread stays bound where it was).
 *
 * Return: 0; -EINVAL for a NULL domain; -EOPNOTSUPP in RSEQ and THREAD modes;
 * -ERANGE for @cpu out of range; -EBUSY if the thread is already a CPU of a
 * domain (exit first) or, PINNED and COOP, @cpu has an owner; -ENOMEM (PINNED:
 * saving the binding); the binding error (e.g. -EPERM, -EINVAL) if the OS
 * refuses the binding.  On any error the thread is no CPU and keeps its
 * binding; a PINNED enter that fails after owning @cpu (saving or setting the
 * binding) gives it up as pcstock_cpu_exit() does, running the work queued
 * there meanwhile.
 */
PCSTOCK_API int pcstock_cpu_enter(struct pcstock_domain *d, unsigned int cpu);

/**
 * pcstock_cpu_exit() - stop being a CPU of @d
 * @d: the domain entered
 *
 * PINNED restores the binding the thread had before entering (if the OS
 * refuses it now, say after a cpuset change, the thread stays bound to its
 * PU).  PINNED and COOP first run the work queued on the CPU.
 *
 * Return: 0; -EINVAL if the thread is not a CPU of @d (or @d is NULL).
 */
PCSTOCK_API int pcstock_cpu_exit(struct pcstock_domain *d);

/**
 * pcstock_cpu_idle() - run the work queued on the calling thread's CPU
 * @d: the domain entered
 *
 * The owner of an exclusive CPU (PINNED, COOP) calls this where the kernel
 * would schedule, e.g. between two tasks: remote drains queued by
 * drain_all, a group's destroy or an offline run here.  Nothing is ever
 * queued on SIM CPUs (their drains are synchronous).
 *
 * Context: the thread entered @d; not from a callback.
 *
 * Return: 0; -EINVAL if the thread is not a CPU of @d (or @d is NULL).
 */
PCSTOCK_API int pcstock_cpu_idle(struct pcstock_domain *d);

/**
 * pcstock_this_cpu() - the calling thread's CPU in @d
 * @d: the domain
 *
 * A thread-local read in SIM, PINNED and THREAD modes (THREAD assigns a CPU
 * on the first call); the OS CPU mapped through a table in RSEQ mode.  In
 * RSEQ mode the answer may be stale by the time it is used (the thread may
 * migrate): use it as a locality hint only.
 *
 * Context: any thread; a thread that never entered @d (SIM, PINNED), or
 * runs on an OS CPU outside it (RSEQ), is no CPU of @d.
 *
 * Return: 0..nr_cpus-1, or -1 if the thread is no CPU of @d (or @d is
 * NULL).
 */
PCSTOCK_API int pcstock_this_cpu(struct pcstock_domain *d);

/**
 * pcstock_cpu_set_online() - bring a CPU up or take it down
 * @d: the domain
 * @cpu: the CPU
 * @online: the new state
 *
 * Taking a CPU offline is the kernel's hotplug "dead" step: every offline
 * hook registered on @d is called for @cpu (the stock layer drains that
 * CPU's slots).  Threads may still be entered on an offline CPU; what that
 * means is up to the layers above (stock treats it like any CPU).
 *
 * Hooks run only when @cpu goes from online to offline, in the calling
 * thread, one after the other, with the domain's hotplug lock held.
 *
 * Context: serialised internally with hook registration; not from a hook.
 *
 * Return: 0 (also when the state does not change); -EINVAL for a NULL
 * domain; -ERANGE.
 */
PCSTOCK_API int pcstock_cpu_set_online(struct pcstock_domain *d,
				       unsigned int cpu, bool online);

/** pcstock_cpu_online() - whether @cpu is online (false if out of range) */
PCSTOCK_API bool pcstock_cpu_online(const struct pcstock_domain *d,
				    unsigned int cpu);

/**
 * pcstock_cpu_set_isolated() - mark a CPU isolated (nohz_full-like)
 * @d: the domain
 * @cpu: the CPU
 * @isolated: the new state
 *
 * Only a flag: the legacy memcg7 policy skips isolated CPUs when draining.
 *
 * Context: any thread; lock-free.
 *
 * Return: 0; -EINVAL for a NULL domain; -ERANGE.
 */
PCSTOCK_API int pcstock_cpu_set_isolated(struct pcstock_domain *d,
					 unsigned int cpu, bool isolated);

/** pcstock_cpu_isolated() - whether @cpu is isolated (false if out of range) */
PCSTOCK_API bool pcstock_cpu_isolated(const struct pcstock_domain *d,
				      unsigned int cpu);

/**
 * pcstock_cpu_numa_node() - NUMA node of a CPU's processing unit
 *
 * Return: the node's logical index, 0 without NUMA information, -ERANGE.
 */
PCSTOCK_API int pcstock_cpu_numa_node(const struct pcstock_domain *d,
				      unsigned int cpu);

/**
 * pcstock_cpu_core() - core of a CPU's processing unit
 *
 * Return: the core's logical index, -ERANGE.
 */
PCSTOCK_API int pcstock_cpu_core(const struct pcstock_domain *d,
				 unsigned int cpu);

/**
 * pcstock_cpu_os_index() - OS index of the processing unit behind @cpu
 *
 * CPUs beyond the PUs wrap round-robin, so several CPUs may share a PU.
 *
 * Return: the PU's OS index (for synthetic topologies, the synthetic
 * index), -ERANGE.
 */
PCSTOCK_API int pcstock_cpu_os_index(const struct pcstock_domain *d,
				     unsigned int cpu);

/**
 * typedef pcstock_cpu_hook_fn - called when a CPU goes offline
 * @d: the domain
 * @cpu: the CPU going offline
 * @arg: the hook's argument
 */
typedef void (*pcstock_cpu_hook_fn)(struct pcstock_domain *d,
				    unsigned int cpu, void *arg);

/**
 * pcstock_cpu_hook_add() - register an offline hook
 * @d: the domain
 * @fn: the function
 * @arg: its argument
 * @out: receives the registration, for pcstock_cpu_hook_remove()
 *
 * Context: may run concurrently with pcstock_cpu_set_online(); a hook
 * added during an offline may or may not be called for it.  A hook must
 * not add or remove hooks or change CPU states of @d.  Hooks run under
 * the domain's hotplug lock, which pcstock_cpu_hook_add() and
 * pcstock_cpu_hook_remove() also take: do not call them while holding a
 * lock your hook takes.
 *
 * Return: 0; -EINVAL; -ENOMEM.
 */
PCSTOCK_API int pcstock_cpu_hook_add(struct pcstock_domain *d,
				     pcstock_cpu_hook_fn fn, void *arg,
				     struct pcstock_cpu_hook **out);

/**
 * pcstock_cpu_hook_remove() - unregister an offline hook
 * @d: the domain
 * @h: the registration (NULL is ignored)
 *
 * Context: when it returns, @h's function is not running and will not be
 * called again, so its argument may be freed.  Blocks while an offline is
 * running hooks.  Hooks still registered when the domain is destroyed are
 * freed with it.
 */
PCSTOCK_API void pcstock_cpu_hook_remove(struct pcstock_domain *d,
					 struct pcstock_cpu_hook *h);

PCSTOCK_EXTERN_C_END

#endif /* PCSTOCK_CPU_H */
