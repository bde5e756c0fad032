/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * shm.h - the shared region's layout and the handle (private to
 * shm_region.c, shm.c and shm_recover.c).
 *
 * Everything in the region is found by an offset from its start: the
 * header (page 0), the process records, the groups, the name index, the
 * figures (records x groups) and the slots (CPUs x groups, one page-
 * aligned row per CPU so that no two CPUs' slots share a line).
 */
#ifndef PCSTOCK_SHM_INTERNAL_H
#define PCSTOCK_SHM_INTERNAL_H

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/rseq.h>
#include <sys/types.h>

#include <pcstock/counter.h>
#include <pcstock/shared.h>

#include "atomic.h"

#define SHM_MAGIC "PCSTKSHM"
#define SHM_MAX_GROUPS (1U << 20)
#define SHM_MAX_PROCS 4096U
#define SHM_MAX_CPUS 4096U
#define SHM_NO_INDEX UINT32_MAX

/*
 * Where the arrays a hit touches start in their page (plan()): each a different
 * line, so that a record's window mark, a group's key, its figure in the
 * record's row and its slot in a CPU's row fall in different sets of a
 * 64-set L1 cache, for the first groups at least (keys and figures step
 * a line per 8 groups, slots per 16).  Page-aligned, the four were in one
 * set for every group.  On an AMD EPYC of family 25 model 17 a process
 * then sometimes ran the shared hit pair at twice a private tree's time,
 * fixed for the process's life (the region maps at a random address; the
 * L1's way predictor tags lines by a hash of the address): 40 processes
 * of each, alternated, page-aligned 6.5-17.3 ns with 11 above 12 ns,
 * spread 6.4-11.6 ns with none.
 */
#define SHM_PROCS_COLOR (57 * 64UL)
#define SHM_KEYS_COLOR (9 * 64UL)
#define SHM_FIGURES_COLOR (25 * 64UL)
#define SHM_SLOTS_COLOR (41 * 64UL)

/* The immutable part of the header, under its checksum. */
struct shm_layout {
	char magic[8];
	uint32_t abi;
	uint32_t page_shift;
	uint64_t size;			/* the region, bytes */
	uint32_t max_groups;
	uint32_t max_procs;		/* records; one more row: the orphan */
	uint32_t nr_cpus;
	uint32_t batch;			/* 0: no stock */
	uint32_t name_mask;		/* name buckets - 1 (a power of 2) */
	uint32_t exact;			/* drain before any failure */
	uint32_t track_failcnt;		/* memory.failcnt counts */
	uint32_t reserved;		/* 0: no implicit padding */
	uint64_t off_procs, off_groups, off_names, off_charged, off_slots;
	uint64_t off_keys;		/* the fast paths' word per group */
	uint64_t slot_stride;		/* bytes between two CPUs' rows */
	uint64_t figure_stride;		/* bytes between two records' rows */
	uint64_t sum;			/* FNV-1a of every byte above */
};

/*
 * Compared with memcmp() and summed byte by byte: every byte is a field's,
 * none the compiler's padding.
 */
static_assert(sizeof(struct shm_layout) == 128,
	      "the shared layout has no padding: 16 words of 8 bytes");

enum shm_state { SHM_BUILDING = 0, SHM_READY = 1, SHM_CLOSED = 2 };

struct shm_hdr {
	struct shm_layout l;
	/* Mutable. */
	_Alignas(64) atomic_uint state;		/* enum shm_state */
	int32_t creator_pid;
	uint64_t creator_start;
	atomic_uint needs_repair;	/* a structure-lock holder died */
	atomic_uint fenced;		/* someone could not register membarrier */
	atomic_ulong recoveries;
	uint32_t next_free;		/* group allocation hint (tree_lock) */
	/*
	 * The group a reap is at (recover_lock): record + 1 (0: none), the
	 * group, and the figure and orphan balance it found, so that the
	 * next holder of the lock finishes a reap killed between its stores.
	 */
	atomic_uint reap_proc;
	uint32_t reap_group;
	long reap_figure, reap_orphan;
	_Alignas(64) pthread_mutex_t tree_lock;		/* robust, pshared */
	_Alignas(64) pthread_mutex_t recover_lock;	/* robust, pshared */
	_Alignas(64) atomic_uint frozen;	/* a pause: windows wait (futex) */
};

enum shm_proc_state {
	PROC_FREE = PCSTOCK_SHM_PROC_FREE,
	PROC_LIVE = PCSTOCK_SHM_PROC_LIVE,
	PROC_DEAD = PCSTOCK_SHM_PROC_DEAD,
	PROC_LEFT = PCSTOCK_SHM_PROC_LEFT,
};

struct shm_proc {
	/* The owner's line: its window mark. */
	_Alignas(64) atomic_uint active;
	uint32_t fenced;		/* the owner fences its windows */
	/* Everyone's: who it is (records are claimed under tree_lock). */
	_Alignas(64) atomic_uint state;	/* enum shm_proc_state */
	int32_t pid;
	uint64_t start;			/* /proc/<pid>/stat's starttime */
};

enum shm_group_state {
	GROUP_FREE = 0,
	GROUP_ONLINE,
	GROUP_OFFLINE,
};

struct shm_group {
	/* First: its address is the group's, for the walks' links. */
	struct pcstock_counter memory;
	_Alignas(64) int64_t parent_rel;	/* to the parent's, 0 for root */
	uint32_t parent;			/* index, SHM_NO_INDEX for root */
	atomic_uint state;			/* enum shm_group_state */
	atomic_uint gen;			/* the gid's high half */
	atomic_uint first_child;		/* child list (tree_lock) */
	atomic_uint next_sibling;
	uint32_t name_len;
	/* Written by failing charges: off the line the hit reads (gen). */
	_Alignas(64) atomic_ulong events[PCSTOCK_NR_EVENTS];	/* subtree */
	atomic_ulong events_local[PCSTOCK_NR_EVENTS];		/* own */
	char name[PCSTOCK_SHM_NAME_MAX + 1];
};

enum shm_handle_state { HANDLE_LIVE = 0x5348u, HANDLE_DETACHED = 0xdeadu };

struct pcstock_shm {
	/*
	 * The fast paths' line: everything a hit or an uncharge loads.  They
	 * take group indexes 1..fast_lim: max_groups - 1 on a live handle
	 * with an rseq area and no fence, else 0 (none).
	 */
	_Alignas(64) uint32_t fast_lim;
	unsigned int slot_shift;	/* log2 of the words between two rows */
	uint32_t nr_cpus, batch;
	ptrdiff_t rseq_off;		/* glibc's __rseq_offset */
	atomic_uint *active;		/* &me->active */
	atomic_uint *frozen;		/* &h->frozen (shm_enter()) */
	atomic_ulong *keys;		/* shm_key() of each group */
	atomic_uint *slots;		/* CPU 0's row */
	atomic_long *figures;		/* this record's row */
	/* The rest. */
	uint32_t max_groups;
	/*
	 * The recount's two stacks (2 x max_groups words), allocated by the
	 * handle's first pcstock_shm_recover() before it changes anything,
	 * so that a pause cannot fail for memory; freed by the detach.
	 */
	uint32_t *recount_buf;
	unsigned int state;		/* enum shm_handle_state */
	bool forked;			/* a fork()'s copy: -ECHILD */
	bool fence;			/* this record fences its windows */
	bool creator;
	bool exact;
	bool ok;			/* LIVE, and not a fork()'s copy */
	bool rseq;			/* glibc registered an rseq area */
	int fd;
	char *base;
	size_t size;
	struct shm_hdr *h;
	unsigned int self;		/* record index */
	uint32_t max_procs;
	struct shm_proc *me;
	struct shm_group *groups;
	struct pcstock_shm_callbacks cb;
	struct pcstock_shm *next_handle;	/* every handle, for fork */
};

_Static_assert(offsetof(struct pcstock_shm, max_groups) == 64,
	       "the fast paths' fields fill exactly one cache line");

/* ---- addressing ------------------------------------------------------------ */

/*
 * The layout aligns every area for its type (shm_layout()); the casts go
 * through void * so that clang's -Wcast-align, which cannot know that,
 * stays quiet.
 */

static inline struct shm_proc *shm_proc(const struct pcstock_shm *s,
					unsigned int i)
{
	return (struct shm_proc *)(void *)(s->base + s->h->l.off_procs) + i;
}

static inline struct shm_group *shm_group(const struct pcstock_shm *s,
					  uint32_t i)
{
	return (struct shm_group *)(void *)(s->base + s->h->l.off_groups) + i;
}

static inline atomic_ulong *shm_names(const struct pcstock_shm *s)
{
	return (atomic_ulong *)(void *)(s->base + s->h->l.off_names);
}

/* Record @p's figure for group @i (p == max_procs: the orphan row). */
static inline atomic_long *shm_figure(const struct pcstock_shm *s,
				      unsigned int p, uint32_t i)
{
	return (atomic_long *)(void *)(s->base + s->h->l.off_charged +
				       (size_t)p * s->h->l.figure_stride) + i;
}

static inline atomic_uint *shm_slot(const struct pcstock_shm *s,
				    unsigned int cpu, uint32_t i)
{
	return (atomic_uint *)(void *)(s->base + s->h->l.off_slots +
				       cpu * s->h->l.slot_stride) + i;
}

static inline uint32_t shm_gid_index(pcstock_shm_gid g)
{
	return (uint32_t)g;
}

static inline uint32_t shm_gid_gen(pcstock_shm_gid g)
{
	return (uint32_t)(g >> 32);
}

static inline pcstock_shm_gid shm_make_gid(uint32_t gen, uint32_t i)
{
	return ((pcstock_shm_gid)gen << 32) | i;
}

/*
 * The fast paths' one load per group, in a dense array (the group's own
 * lines are written by every miss): while the group is online its gid
 * itself, so that a hit compares the gid it was given with no
 * arithmetic; offline, the gid's complement (whose index half is not
 * the index: no gid of this group matches).  Stored after the state
 * when a group goes online, before it when it goes offline; derived
 * again by a repair.  A recovery's pause marks every key with
 * SHM_KEY_FROZEN (shm_recover.c), so that the fast paths find the pause
 * in the same load: the index half's top bit, which no gid has
 * (SHM_MAX_GROUPS is less).
 */
#define SHM_KEY_FROZEN (1ULL << 31)

static inline uint64_t shm_key(uint32_t gen, uint32_t i, bool online)
{
	pcstock_shm_gid g = shm_make_gid(gen, i);

	return online ? g : ~g;
}

/* The key a gid's group has while online. */
static inline uint64_t shm_gid_key(pcstock_shm_gid g)
{
	return g;
}

static inline atomic_ulong *shm_key_of(const struct pcstock_shm *s,
				       uint32_t i)
{
	return (atomic_ulong *)(void *)(s->base + s->h->l.off_keys) + i;
}

/*
 * Under the explorer (a test build with its hook set) the processes are
 * simulated threads of one process, scheduled one at a time: no
 * membarrier(2), no futex(2) (a wait is a scheduling point).  A test
 * build without the hook set (the fork tests) makes the real calls.
 */
static inline bool shm_simulated(void)
{
#ifdef PCSTOCK_EXPLORE
	return pcs_explore_hooked();
#else
	return false;
#endif
}

#ifdef PCSTOCK_EXPLORE
/*
 * What an explorer scenario's simulated processes (threads of one
 * process) cannot show the library: which of them died, which CPU each
 * runs on (so that a seed replays the same slots), and whether the last
 * holder of a robust lock just taken died holding it (the scenario
 * released it for the dead, as the kernel's robust list does, but a
 * plain unlock cannot say EOWNERDEAD; asked once per lock taken).  NULL
 * members: the real answers.  Test builds only (shm_region.c).
 */
struct pcstock_shm_sim {
	bool (*gone)(unsigned int proc);
	int (*cpu)(void);
	bool (*owner_died)(pthread_mutex_t *m);
};
extern struct pcstock_shm_sim pcstock_shm_sim;
#endif

/* ---- windows (shm_recover.c) ------------------------------------------------- */

void shm_enter_slow(struct pcstock_shm *s);

/*
 * An operation's window: every step that moves pages between a slot, the
 * counters and a figure happens between shm_enter() and shm_exit().  The
 * mark is a plain store; the pauser's membarrier(2) makes the Dekker pair
 * (our mark then its frozen flag; its flag then our mark) hold without a
 * fence here (pcstock_shm_recover()).  A record that could not register
 * fences instead.
 */
static inline void shm_enter(struct pcstock_shm *s)
{
	pcs_store(s->active, 1, PCS_RELAXED);
	if (__builtin_expect(s->fence, 0))
		pcs_fence(PCS_SEQ_CST);
	else
		atomic_signal_fence(memory_order_seq_cst);
	if (__builtin_expect(pcs_load(s->frozen, PCS_RELAXED), 0))
		shm_enter_slow(s);
}

static inline void shm_exit(struct pcstock_shm *s)
{
	/* Release: the window's accesses before the pauser sees it closed. */
	pcs_store(s->active, 0, PCS_RELEASE);
}

/* The CPU's slot index when rseq cannot tell (shm_charge.c). */
unsigned int shm_cpu_slow(const struct pcstock_shm *s);

/*
 * The slot index of the CPU this thread runs on: glibc's rseq area's
 * cpu_id, one load (a CPU numbered beyond the slots, or no rseq area:
 * the slow way).
 */
static inline unsigned int shm_cpu(const struct pcstock_shm *s)
{
#ifdef PCSTOCK_EXPLORE
	if (pcstock_shm_sim.cpu)
		return shm_cpu_slow(s);
#endif
	if (__builtin_expect(s->rseq, 1)) {
		const struct rseq *r = (const struct rseq *)(const void *)
			((char *)__builtin_thread_pointer() + __rseq_offset);
		unsigned int cpu = __atomic_load_n(&r->cpu_id,
						   __ATOMIC_RELAXED);

		if (__builtin_expect(cpu < s->nr_cpus, 1))
			return cpu;
	}
	return shm_cpu_slow(s);
}

/* Every live record's window closed once since the call (shm_recover.c). */
void shm_synchronize(struct pcstock_shm *s);

/* ---- the structure lock (shm_recover.c) ------------------------------------------ */

int shm_tree_lock(struct pcstock_shm *s);
/* The same for an attach (no record yet): the repair waits for one. */
int shm_tree_lock_unrepaired(struct pcstock_shm *s);
void shm_tree_unlock(struct pcstock_shm *s);

/* ---- shared helpers (shm.c) --------------------------------------------------- */

/* Drain group @i's slots on every CPU, each in its own window. */
unsigned long shm_drain_index(struct pcstock_shm *s, uint32_t i);

/* Uncharge @n pages from group @i's counters (inside a window). */
void shm_counter_uncharge(struct pcstock_shm *s, uint32_t i, unsigned long n);

/* A new handle, zeroed and detached, on the process's list (or NULL). */
struct pcstock_shm *shm_handle_new(void);
/*
 * Free a handle that a failed create or attach made and never gave out:
 * no caller can hold it, so unlike a detached one it need not stay.
 */
void shm_handle_discard(struct pcstock_shm *s);
/* The handles this process holds, detached ones included (test_shm). */
size_t shm_handles(void);

/* Set group @i's min and low to 0, its ancestors' children sums with them. */
void shm_counter_clear_protection(struct pcstock_shm *s, uint32_t i);

/*
 * Call @fn on group @top and every group below it, parents first (a
 * lock-free walk: groups created or destroyed meanwhile may be missed).
 */
void shm_walk_subtree(struct pcstock_shm *s, uint32_t top,
		      void (*fn)(struct pcstock_shm *s, uint32_t i, void *arg),
		      void *arg);

/* The kernel's effective protection of @c under @root (shm_charge.c). */
void shm_calc_protection(struct pcstock_counter *root,
			 struct pcstock_counter *c, bool recursive);

/* Rebuild the child lists and the name index from the group table. */
void shm_rebuild_structure(struct pcstock_shm *s);

/* The checksum of a layout (FNV-1a of the bytes before its sum). */
uint64_t shm_layout_sum(const struct shm_layout *l);

/* /proc/<pid>/stat's starttime of a live (not zombie) @pid, else 0. */
uint64_t shm_pid_start(pid_t pid);

/* Is record @p's process gone (dead, zombie, or its pid reused)? */
bool shm_proc_gone(const struct pcstock_shm *s, unsigned int p);

/*
 * The group behind @g if its generation matches and its state is allowed
 * (@offline_ok: ONLINE or OFFLINE, else ONLINE only); NULL otherwise.
 * Called inside a window, so a recycle waits for us (shm_synchronize()).
 */
static inline struct shm_group *group_of(struct pcstock_shm *s, pcstock_shm_gid g,
				  bool offline_ok)
{
	uint32_t i = shm_gid_index(g);
	struct shm_group *grp;
	unsigned int st;

	if (i >= s->max_groups)
		return NULL;
	grp = shm_group(s, i);
	st = pcs_load(&grp->state, PCS_ACQUIRE);
	if (st == GROUP_FREE || (st == GROUP_OFFLINE && !offline_ok))
		return NULL;
	if (pcs_load(&grp->gen, PCS_RELAXED) != shm_gid_gen(g))
		return NULL;
	return grp;
}


/* Validate a handle for an operation: 0, -EBADF or -ECHILD. */
static inline int shm_check(const struct pcstock_shm *s)
{
	if (!s || s->state != HANDLE_LIVE)
		return -EBADF;
	if (s->forked)
		return -ECHILD;
	return 0;
}

#endif /* PCSTOCK_SHM_INTERNAL_H */
