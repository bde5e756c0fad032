/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memcg7.h - the pre-series memcg charge cache (private).
 *
 * Kernel v6.16+ "multi-memcg percpu charge cache" (mm/memcontrol.c) with the
 * 2026 round-robin victim: every CPU of a domain has 7 slots, each caching
 * pages already charged to one key (a group).  The cache knows nothing of
 * groups: its owner passes the operations it needs.  Locked variant (SIM
 * domains): keys in slots are referenced (ops->get on install, ops->put on
 * drain). Owner-exclusive variant (PINNED and COOP domains): slots hold no
 * reference; memcg7_drain_key() takes one for the cache and drops it once
 * every CPU has drained.
 */
#ifndef PCSTOCK_MEMCG7_H
#define PCSTOCK_MEMCG7_H

#include <stdbool.h>

#include <pcstock/cpu.h>
#include <pcstock/memcg7_stats.h>

/* The kernel's NR_MEMCG_STOCK. */
#define MEMCG7_NR_SLOTS 7
/* Slot counts are u8 and a slot may hold 2 x batch before its drain. */
#define MEMCG7_MAX_BATCH 127U

/* A destroyed key's deferred reference (owner variant); embed in the key. */
struct memcg7_dead {
	struct memcg7_dead *next;
	void *key;
	unsigned long epoch;
};

struct memcg7;

/**
 * struct memcg7_ops - what the cache asks of its owner
 * @uncharge: return pages of @key to its counters (never to the cache)
 * @get: @put: reference the key held by a slot
 * @online: may the cache take pages for @key
 * @in_subtree: is @key @root or a descendant (called under RCU)
 */
struct memcg7_ops {
	void (*uncharge)(void *key, unsigned long nr_pages);
	void (*get)(void *key);
	void (*put)(void *key);
	bool (*online)(void *key);
	bool (*in_subtree)(void *key, void *root);
};

/*
 * Create a cache over @d's CPUs; @isolated_fix clears the flushing flag of
 * an isolated CPU that drain_all skips.  Registers an offline hook that
 * drains the CPU's slots (owner variant: queues the drain, and registers
 * the work hook that runs it).  Return: 0, -EINVAL (batch 0 or above
 * MEMCG7_MAX_BATCH), -ENOMEM.
 */
int memcg7_create(struct pcstock_domain *d, unsigned int batch,
		  bool isolated_fix, const struct memcg7_ops *ops,
		  struct memcg7 **out);
/* Drain every slot and free; no concurrent use. */
void memcg7_destroy(struct memcg7 *m);
/*
 * Drain every slot, drop every deferred reference.  No concurrent use of
 * the cache; the owners may idle, exit or go offline meanwhile.
 */
void memcg7_flush(struct memcg7 *m);

/* consume_stock(): take @nr_pages of @key from this CPU's slot. */
bool memcg7_consume(struct memcg7 *m, void *key, unsigned long nr_pages);
/*
 * The same for a cache known to be of the locked, or of the owner
 * variant (memcg7_is_owned()): a caller that picks one once skips the
 * variant test of every hit, which the kernel, with one variant, does not
 * pay.
 */
bool memcg7_consume_locked(struct memcg7 *m, void *key,
			   unsigned long nr_pages);
bool memcg7_consume_owned(struct memcg7 *m, void *key,
			  unsigned long nr_pages);
/* Whether the cache is the owner-exclusive variant. */
bool memcg7_is_owned(const struct memcg7 *m);
/* refill_stock(): put @nr_pages of @key in this CPU's cache. */
void memcg7_refill(struct memcg7 *m, void *key, unsigned long nr_pages);
/*
 * drain_all_stock(): caller holds the RCU read lock (keys are RCU-freed).
 * Owner variant: other owned CPUs' drains are queued, not waited for.
 * Return: false if another drain_all was running (nothing done).
 */
bool memcg7_drain_all(struct memcg7 *m, void *root);
/*
 * @key went offline: drain its slots on every CPU.  Owner variant: takes
 * a reference on @key, parked in @dead (which must live as long as @key),
 * and queues a drain on every CPU; the reference is dropped once every CPU
 * has run it.
 */
void memcg7_drain_key(struct memcg7 *m, void *key, struct memcg7_dead *dead);
/* Pages cached for keys in @root's subtree; caller holds the RCU lock. */
unsigned long memcg7_pages(struct memcg7 *m, void *root);
void memcg7_stats(const struct memcg7 *m, struct pcstock_memcg7_stats *st);

/* Introspection for tests: slot @idx of @cpu; false if out of range. */
bool memcg7_slot(struct memcg7 *m, unsigned int cpu, unsigned int idx,
		 void **key, unsigned int *nr_pages);
/* Whether @cpu's flushing flag is set. */
bool memcg7_flushing(struct memcg7 *m, unsigned int cpu);

#endif /* PCSTOCK_MEMCG7_H */
