/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy_plain.h - the "plain" policy's per-CPU sequences (private; only
 * policy_plain.c includes it): take pages from the slot of the CPU the
 * caller runs on, or put pages in it, with no locked instruction.
 *
 * On x86-64 each is a restartable sequence, rseq(2), registered through
 * the rseq area glibc (2.35 and later) registers for every thread: the
 * sequence stores the address of its descriptor (struct rseq_cs: version,
 * flags, start, length, abort address) in the area's rseq_cs word, then
 * reads the thread's OS CPU (the area's cpu_id), finds that CPU's slot of
 * the group, loads it, compares, and stores the new value.  That store is
 * the commit, the last instruction of the sequence.  The kernel moves a
 * thread that is preempted, migrated or signalled between the start and
 * the commit to the abort address instead of letting it resume there; the
 * abort handler, whose four preceding bytes are the signature glibc
 * registered the area with (RSEQ_SIG, 0x53053053 on x86), starts the
 * sequence again.  So between its load and its commit no other thread ran
 * on that CPU: the load-compare-store is atomic with respect to every
 * other sequence, as the kernel's this_cpu_*() operations are to other
 * code of the same CPU, without a lock prefix.
 *
 * What is not a sequence is a remote writer: a drain on another CPU.  A
 * drain therefore never races a commit (policy_plain.c): it first closes
 * the slots, a flag every sequence reads after its start, then asks the
 * kernel for membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ), which
 * interrupts every CPU running a thread of the process and restarts the
 * sequences they were in.  When it returns, every sequence that read the
 * slots open has either committed (and the drain sees its store) or
 * restarted (and reads them closed, and does not store).  Only then does
 * the drain take the pages.
 *
 * In an instrumented build of the library (the tests' and the explorer's,
 * PCSTOCK_EXPLORE; the line model's, PCSTOCK_TRACE) a tree on a domain of
 * any other mode runs a model of the sequences instead, in plain C on the
 * domain's CPUs (simulated, entered by the thread): each CPU has a
 * generation, which a sequence's start advances (whoever starts a
 * sequence on a CPU preempts the one running there) and the modelled
 * membarrier advances on every CPU; a commit stores only if its CPU's
 * generation is still the one its start saw, else the sequence restarts.
 * A short per-CPU spinlock makes a start and a commit atomic for real
 * threads sharing a simulated CPU; under the explorer one thread runs at a
 * time and the lock is never contended.  What the model does not have:
 * the kernel's code (abort addresses, signatures, the rseq_cs word), real
 * preemption at any instruction (only at the explorer's scheduling
 * points), and interrupts arriving at each CPU at different times within
 * one membarrier (each CPU's generation is one step of the explorer).
 */
#ifndef PCSTOCK_POLICY_PLAIN_H
#define PCSTOCK_POLICY_PLAIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "atomic.h"
#include "domain.h"

/* The machine code: x86-64 with glibc's rseq area, else none. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(RSEQ_SIG)
#define PLAIN_HAVE_RSEQ 1
#else
#define PLAIN_HAVE_RSEQ 0
#endif

/* The model of the sequences, in the instrumented builds only. */
#if defined(PCSTOCK_EXPLORE) || defined(PCSTOCK_TRACE)
#define PLAIN_MODEL 1
#else
#define PLAIN_MODEL 0
#endif

/* One CPU of the model (PLAIN_MODEL): its lock and generation. */
struct plain_model_cpu {
	_Alignas(64) atomic_flag lock;
	_Atomic unsigned long gen;
};

/*
 * What a sequence reads of its tree: which OS CPUs it may serve (none
 * while a drain of the whole tree's slots runs), where each OS CPU's slots
 * are, and the batch.
 * @open: the OS CPUs 0..@open-1 are served, less PLAIN_DRAINING for each
 *	drain of the whole tree's slots running (drain_all, a CPU's
 *	offline), so a sequence finds every CPU number at or above it
 *	while one runs: the CPU's range check and the drains' closing in
 *	one compare.  @nr_os while none runs (the model's: the domain's
 *	CPUs).
 * @batch: the tree's; a slot never holds more
 * @nr_os: entries of @region
 * @domain: the tree's domain
 * @model: PLAIN_MODEL builds, a domain of another mode than RSEQ: one
 *	entry per domain CPU, and the sequences are the model's; else NULL
 * @next_miss: the tree's miss before the policy put its hit in front
 * @next_unmiss: the tree's uncharge miss before the policy put its
 *	uncharge in front
 * @hook: the CPU offline hook's registration
 * @region: by OS CPU number, the address of the arena region of the domain
 *	CPU that OS CPU is, less PLAIN_KEY, so that adding a group's key
 *	gives its slot; PLAIN_OUTSIDE for an OS CPU outside the domain
 */
struct pcstock_group;
struct pcstock_tree;

struct plain_seq {
	_Atomic long open;
	long batch;
	unsigned int nr_os;
	struct pcstock_domain *domain;
	struct plain_model_cpu *model;
	int (*next_miss)(struct pcstock_group *g, unsigned long nr_pages,
			 unsigned int flags, struct pcstock_tree *t);
	int (*next_unmiss)(struct pcstock_group *g, unsigned long nr_pages,
			   struct pcstock_tree *t);
	struct pcstock_cpu_hook *hook;
	uintptr_t region[];
};

/* What a drain subtracts from @open: more than any OS CPU number. */
#define PLAIN_DRAINING (1L << 32)

/*
 * A group's key, which it publishes as its hit_key (struct pcstock_group)
 * while its sequences may serve it: its slot's handle plus PLAIN_KEY.
 * 0 (the root, a group without a slot, a destroyed one: pcstock_group_
 * destroy() clears it before the group goes offline) serves nothing, so
 * the sequences need no other test of the group.
 *
 * The group hit paths (charge.c) never take it for a key of their own:
 * they compare a group's hit_key with the thread's cached domain key (a
 * domain's, below 2^32, or PCS_NO_HIT_KEY, all ones), and the thread's
 * RSEQ tag with the key xor the first word of the area the tag goes
 * with.  A key has bit 63 set and bit 62 clear; that word has both clear
 * or both set (cpu_id at least 0, or -1 and -2), so the xor has exactly
 * one of them set, while a tag has neither, or is the empty one, 2^63,
 * whose word is 0: the xor is then the key, which is not 2^63.
 *
 * The region table makes "region + key" the slot: for a CPU of the
 * domain, its region less PLAIN_KEY; for one outside, PLAIN_OUTSIDE.  A
 * slot's address is a user address (below 2^56, even with 5-level
 * paging): its sign bit is clear.  A key of 0 on a region leaves the
 * region less 2^63 + 1, and PLAIN_OUTSIDE plus 0 or plus a key is all
 * ones or 2^63 + handle: each has the sign bit set, so the add's sign
 * rejects a closed group and a CPU outside the domain, with no compare.
 */
#define PLAIN_KEY ((1ULL << 63) + 1)
#define PLAIN_OUTSIDE UINTPTR_MAX

/*
 * A group's slot.  @state: PLAIN_OPEN for a group with slots, else 0 (the
 * root, a failed allocation); it never changes after the group is
 * published.  @handle: the slot's offset in each CPU's region (an int,
 * the pages).
 */
struct plain_slot {
	_Atomic int state;
	size_t handle;
};

#define PLAIN_OPEN 1

/*
 * Sequences restarted after an abort, machine code's and model's: a
 * statistic for the tests, bumped by the abort handler with a plain
 * increment (racy: it may lose counts, never invent them).
 */
extern unsigned long pcs_plain_restarts __attribute__((visibility("hidden")));

#if PLAIN_HAVE_RSEQ
/*
 * The sequence.  ADD is the instruction that makes the new value from the
 * old one in %rax (sub or add of %[n]); TEST the branch to %l[miss] after
 * it, on its flags or on a compare of its own.  Every input a register or
 * memory the sequence only reads; %rax and %r11 are scratch (no argument
 * register: the caller's miss passes its own on).  Local labels
 * (numbers) only, so that every inlined copy has its own descriptor and
 * abort handler:
 *  3: the descriptor, in section __rseq_cs (32-byte aligned, as the
 *     kernel's ABI asks): version 0, flags 0, start 1f, post-commit
 *     offset 2f - 1f, abort 4f;
 *  0: the restart: the descriptor's address into the area's rseq_cs
 *     (offset 8 of struct rseq), which the kernel clears on an abort;
 *  1: start: cpu_id (offset 4) read inside the sequence, so that it is
 *     the CPU the commit runs on;
 *  2: right after the commit (the movl);
 * The slot is loaded zero-extended (movl): it is never negative (0 to
 * the batch: no sequence commits a value outside, a drain stores 0), so
 * the 64-bit sum with %[n] is the same as from a sign-extended load, and
 * a movl load takes the previous sequence's movl store straight from the
 * store queue where a movslq may not (an AMD EPYC of family 25 model 17:
 * a chain of movl store and movslq load costs 2.4 ns per link, of movl
 * and movl 1.2 ns, a locked add 2.4 ns; the pair's take and give are one
 * such chain through the slot).
 *  4: the abort handler, in section __rseq_failure, after the signature
 *     as the 4-byte operand of a ud1 (0f b9 3d), so that falling into it
 *     traps: it counts the restart (pcs_plain_restarts) and restarts.
 */
#define PLAIN_RSEQ(ADD, TEST)                                                \
	"0:\n\t"                                                             \
	".pushsection __rseq_cs, \"aw\"\n\t"                                 \
	".balign 32\n\t"                                                     \
	"3:\n\t"                                                             \
	".long 0, 0\n\t"                                                     \
	".quad 1f, 2f - 1f, 4f\n\t"                                          \
	".popsection\n\t"                                                    \
	"leaq 3b(%%rip), %%rax\n\t"                                          \
	"movq %%rax, %%fs:8(%[off])\n\t"                                     \
	"1:\n\t"                                                             \
	"movl %%fs:4(%[off]), %%r11d\n\t"                                    \
	"cmpq %[open], %%r11\n\t"                                            \
	"jge %l[miss]\n\t"                                                   \
	"movq %c[region](%[s],%%r11,8), %%r11\n\t"                           \
	"addq %[key], %%r11\n\t"                                             \
	"js %l[miss]\n\t"                                                    \
	"movl (%%r11), %%eax\n\t"                                            \
	ADD "\n\t"                                                           \
	TEST "\n\t"                                                          \
	"movl %%eax, (%%r11)\n\t"                                            \
	"2:\n\t"                                                             \
	".pushsection __rseq_failure, \"ax\"\n\t"                            \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                         \
	".long 0x53053053\n\t"                                               \
	"4:\n\t"                                                             \
	"incq %[restarts]\n\t"                                               \
	"jmp 0b\n\t"                                                         \
	".popsection\n\t"

/*
 * The sequences' operands: the tree's fields, the group's key, and the
 * area's offset from the thread pointer, glibc's __rseq_offset itself
 * (a load through the GOT that depends on nothing of the call's): the
 * read of cpu_id, which the rest of the sequence waits for, then need not
 * wait for the tree's state to be loaded first.  Taken from the tree's
 * state, that offset made the chain of dependent loads from the tree to
 * the slot one longer: on an AMD EPYC of family 26 model 2 the bench's
 * `scale` hit pair cost 0.77-0.87x the floor's two locked adds with it,
 * 0.62-0.69x without it, except while the host slowed the vCPU
 * (0.75-0.91x; docs/bench/figures.md).  cpu_id is zero-extended, so its
 * -1 and -2 (no rseq registered) are above @open as any CPU is while a
 * drain runs (@open at most 0): one signed compare.
 */
#define PLAIN_RSEQ_IN(s, key)                                                \
	[s] "r"(s), [off] "r"(__rseq_offset),                                \
	[open] "m"(*(const long *)&(s)->open),                               \
	[key] "m"(*(const unsigned long long *)(key)),                       \
	[region] "i"(offsetof(struct plain_seq, region)),                    \
	[restarts] "m"(pcs_plain_restarts)

_Static_assert(RSEQ_SIG == 0x53053053, "the signature the handlers carry");
_Static_assert(offsetof(struct rseq, cpu_id) == 4 &&
		       offsetof(struct rseq, rseq_cs) == 8,
	       "the offsets the sequences use");

/*
 * Take @n pages from the slot of the group whose key is at @key on the
 * CPU the thread runs on: true if it held them (and the group and the
 * tree's slots are open), else nothing changed.  The memory clobber keeps
 * the compiler from moving accesses across it (a miss's charge before a
 * refill's commit, the pages' use after a take).
 */
static inline __attribute__((always_inline)) bool
plain_rseq_take(struct plain_seq *s, const _Atomic unsigned long long *key,
		unsigned long n)
{
	__asm__ goto(PLAIN_RSEQ("subq %[n], %%rax", "jl %l[miss]")
		     :
		     : PLAIN_RSEQ_IN(s, key), [n] "r"(n)
		     : "rax", "r11", "cc", "memory"
		     : miss);
	return true;
miss:
	return false;
}

/*
 * Add @n pages to that slot if it stays at most @s's batch: true if it
 * did, else nothing changed.
 */
static inline __attribute__((always_inline)) bool
plain_rseq_give(struct plain_seq *s, const _Atomic unsigned long long *key,
		unsigned long n)
{
	__asm__ goto(PLAIN_RSEQ("addq %[n], %%rax",
				"cmpq %[batch], %%rax\n\tjg %l[miss]")
		     :
		     : PLAIN_RSEQ_IN(s, key), [n] "r"(n),
		       [batch] "m"((s)->batch)
		     : "rax", "r11", "cc", "memory"
		     : miss);
	return true;
miss:
	return false;
}
#endif /* PLAIN_HAVE_RSEQ */

#if PLAIN_MODEL
/*
 * The model's accesses that are not scheduling points: a start's
 * generation, a commit's check and store.  Under the explorer's weak
 * memory they go through its model, so that what a membarrier orders is
 * modelled too: the restart of an aborted sequence reads its CPU's
 * generation with an RMW, which reads the membarrier's and so sees what
 * came before it (the closing of the slots).  Elsewhere, atomics without
 * a hook: the line model then traces what the machine code touches (the
 * flags, the slot, the commit's store) and nothing of the model's own.
 */
#ifdef PCSTOCK_EXPLORE_WMM
#define plain_model_rmw(p, v, mo)                                            \
	pcstock_explore_wmm(PCS_OP_ADD, (void *)(p), sizeof(*(p)), (v), NULL, \
			    (mo), (mo))
#define plain_model_store(p, v, mo)                                          \
	((void)pcstock_explore_wmm(PCS_OP_STORE, (void *)(p), sizeof(*(p)),  \
				   (uint64_t)(uint32_t)(v), NULL, (mo), (mo)))
#else
#define plain_model_rmw(p, v, mo) atomic_fetch_add_explicit((p), (v), (mo))
#define plain_model_store(p, v, mo)                                          \
	(PCS_TRACE(PCS_OP_STORE, (p)), atomic_store_explicit((p), (v), (mo)))
#endif

#ifdef PCSTOCK_EXPLORE
/* A scheduling point of the explorer that the line model does not see. */
#define plain_model_point(op, p) pcs_explore_point((op), (p))
#else
#define plain_model_point(op, p) ((void)0)
#endif

static inline void plain_model_lock(struct plain_model_cpu *m)
{
	while (atomic_flag_test_and_set_explicit(&m->lock,
						 memory_order_acquire))
		sched_yield();
}

static inline void plain_model_unlock(struct plain_model_cpu *m)
{
	atomic_flag_clear_explicit(&m->lock, memory_order_release);
}

/*
 * A sequence starts on @m's CPU: whatever sequence ran there is
 * preempted.  acq_rel: the RMW reads the newest generation, a
 * membarrier's too, and acquires what preceded that.
 */
static inline unsigned long plain_model_start(struct plain_model_cpu *m)
{
	unsigned long gen;

	plain_model_point(PCS_OP_ADD, &m->gen);
	plain_model_lock(m);
	gen = plain_model_rmw(&m->gen, 1UL, memory_order_acq_rel) + 1;
	plain_model_unlock(m);
	return gen;
}

/*
 * The commit: store @v in @slot if nothing preempted the sequence that
 * started at generation @gen, as one step.  release: the store publishes
 * the charge of the pages it adds, as the machine code's (a store on
 * x86-64) does to the drain's exchange.  The generation's RMW after it
 * hands the store on to the next sequence started on the CPU, whose
 * start reads it: on a real CPU the next thread runs after a context
 * switch, a full barrier, and sees the store.
 */
static inline bool plain_model_commit(struct plain_model_cpu *m,
				      unsigned long gen, atomic_int *slot,
				      int v)
{
	bool ok;

	plain_model_point(PCS_OP_STORE, slot);
	plain_model_lock(m);
	ok = plain_model_rmw(&m->gen, 0UL, memory_order_acq_rel) == gen;
	if (ok) {
		plain_model_store(slot, v, memory_order_release);
		(void)plain_model_rmw(&m->gen, 0UL, memory_order_release);
	}
	plain_model_unlock(m);
	return ok;
}

/* The membarrier: every CPU's running sequence is restarted. */
static inline void plain_model_membarrier(struct plain_seq *s)
{
	unsigned int cpu, nr = pcs_nr_cpus(s->domain);

	pcs_fence(PCS_SEQ_CST);
	for (cpu = 0; cpu < nr; cpu++) {
		struct plain_model_cpu *m = &s->model[cpu];

		plain_model_point(PCS_OP_ADD, &m->gen);
		plain_model_lock(m);
		(void)plain_model_rmw(&m->gen, 1UL, memory_order_seq_cst);
		plain_model_unlock(m);
	}
}

/*
 * The model of both sequences: @delta is -n (take) or +n (give); the new
 * value must stay within 0..batch.  Loads in the order of the machine
 * code, each a scheduling point; acquire, as x86-64's loads are.
 */
static inline bool plain_model_seq(struct plain_seq *s,
				   const _Atomic unsigned long long *key,
				   long delta)
{
	int cpu = pcs_this_cpu(s->domain);
	struct plain_model_cpu *m;
	unsigned long long k;
	atomic_int *slot;
	unsigned long gen;
	long v;

	if (cpu < 0)
		return false;
	m = &s->model[cpu];
	for (;;) {
		gen = plain_model_start(m);
		if (cpu >= pcs_load(&s->open, PCS_ACQUIRE))
			return false;
		k = pcs_load((_Atomic unsigned long long *)key, PCS_ACQUIRE);
		if (!k)
			return false;
		slot = pcs_percpu_ptr(s->domain, (size_t)(k - PLAIN_KEY),
				      (unsigned int)cpu);
		v = pcs_load(slot, PCS_ACQUIRE) + delta;
		if (v < 0 || v > s->batch)
			return false;
		if (plain_model_commit(m, gen, slot, (int)v))
			return true;
		/* Aborted: restart, as the abort handler does. */
		__atomic_fetch_add(&pcs_plain_restarts, 1, __ATOMIC_RELAXED);
	}
}
#endif /* PLAIN_MODEL */

/* The sequences, as the tree runs them, on the group whose key is @key. */
static inline __attribute__((always_inline)) bool
plain_take(struct plain_seq *s, const _Atomic unsigned long long *key,
	   unsigned long n)
{
#if PLAIN_MODEL
	if (s->model)
		return n <= (unsigned long)s->batch &&
		       plain_model_seq(s, key, -(long)n);
#endif
#if PLAIN_HAVE_RSEQ
	return plain_rseq_take(s, key, n);
#else
	return false;
#endif
}

static inline __attribute__((always_inline)) bool
plain_give(struct plain_seq *s, const _Atomic unsigned long long *key,
	   unsigned long n)
{
#if PLAIN_MODEL
	if (s->model)
		return n <= (unsigned long)s->batch &&
		       plain_model_seq(s, key, (long)n);
#endif
#if PLAIN_HAVE_RSEQ
	return plain_rseq_give(s, key, n);
#else
	return false;
#endif
}

#endif /* PCSTOCK_POLICY_PLAIN_H */
