// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * policy_plain.c - "plain": a per-group per-CPU stock whose hit, refill
 * and uncharge into the stock take no locked instruction, the userspace
 * counterpart of the kernel's this_cpu_*() operations.
 *
 * Each group has one slot per CPU (an int in the domain's arena, at most
 * a batch): the pages of a batch charged to its counters (memory, and
 * memsw on a memsw tree: one stock for both, as memcg7's) and not yet
 * handed out.  The hit (@consume) takes a charge from the slot of the CPU
 * the thread runs on, a miss charges a batch and leaves the surplus there
 * (@refill, group_batch), an uncharge of up to a batch goes back into it
 * (@uncharge).  Each of these is a restartable sequence, rseq(2): load,
 * compare and a plain store, with no lock prefix (policy_plain.h has the
 * code and why it is atomic with respect to every other sequence of the
 * CPU).  What does not fit goes straight to the counters.
 *
 * The price is paid by a drain, any thread taking a slot's pages back
 * from another CPU (drain_all; the destroy of a group; a CPU's offline).
 * A store by a sequence that loaded the slot before the drain would
 * overwrite what the drain did, so a drain closes the slots first (the
 * tree's @open for drain_all and an offline; for a destroy, the group's
 * key, which pcstock_group_destroy() clears for good), then calls
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ): an
 * inter-processor interrupt to every CPU that runs a thread of the
 * process at that moment, which restarts the sequence it was in.  A
 * sequence reads both after its start and serves nothing while either
 * is closed.  So when the membarrier returns, every sequence that
 * read the slots open has committed before it or has restarted and found
 * them closed, and the drain's exchanges of the slots with 0 race no
 * store: every page is taken once.  One drain_all of any subtree, one
 * group destroy and one CPU offline (its slots go up, as in
 * memcg_hotplug_cpu_dead()) each cost one membarrier: a system call of
 * some microseconds that interrupts every CPU running a thread of the
 * process, on top of the exchange per non-empty slot the other policies
 * pay too; the sequences saved a locked instruction per charge and per
 * uncharge.  While a drain_all or an offline runs, the whole tree's
 * slots are closed and its hits charge the counters.
 *
 * Memory ordering.  A page in a slot was charged by the thread that put
 * it there before its commit, a store: on x86-64 a store is a release and
 * the drain's exchange (acquire) reads it, so the charge happens before
 * the drain's uncharge.  Closing is a sequentially consistent RMW before
 * the membarrier, which is a full barrier on every CPU it interrupts and
 * on the caller: a sequence that starts after it reads the flag closed.
 * Sequences of one CPU follow each other in its program order (a context
 * switch is a full barrier): each reads the slot as the last left it.
 *
 * Where it runs.  Only on RSEQ domains (pcstock_domain_create(NULL)),
 * where a thread's CPU is the OS CPU the kernel reports in the rseq area,
 * and only on x86-64 with glibc's rseq registration (2.35 and later) and
 * membarrier's RSEQ commands (Linux 5.10 and later).
 * pcstock_tree_create() of this policy returns -EOPNOTSUPP on a domain of
 * another mode, and -ENOSYS where the sequences cannot run: another
 * architecture, glibc registered no rseq area (its glibc.pthread.rseq=0
 * tunable, or valgrind) or the kernel refuses the membarrier
 * registration.  A thread whose rseq area is not registered misses every
 * time and charges the counters.  The test library and the explorer's run
 * it on every domain mode through the model of the sequences
 * (policy_plain.h).
 *
 * Its hit is one call from pcstock_group_charge(), after the group hit's
 * failed key compares (the key a group publishes is never one of the
 * group hit's, policy_plain.h): tree_init puts it in front of the tree's
 * miss (policy.h, @consume), and @consume serves the flow's retries.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>
#include <pcstock/percpu.h>

#include "atomic.h"
#include "group.h"
#include "internal.h"
#include "policy.h"
#include "policy_plain.h"
#include "rcu.h"

unsigned long pcs_plain_restarts;

static struct plain_seq *tree_seq(const struct pcstock_tree *t)
{
	return pcs_tree_state(t);
}

static struct plain_slot *group_slot(const struct pcstock_group *g)
{
	return pcs_group_state(g);
}

/* @g's slot on domain CPU @cpu. */
static atomic_int *slot_on(const struct pcstock_group *g, unsigned int cpu)
{
	return pcstock_percpu_ptr(g->tree->domain, group_slot(g)->handle, cpu);
}

/* ---- the membarrier -------------------------------------------------- */

/*
 * membarrier(2)'s RSEQ commands (Linux 5.10), by value: they are members
 * of an enum in <linux/membarrier.h>, which an older header lacks and the
 * preprocessor cannot test for.
 */
#define PLAIN_MB_RSEQ (1 << 7)		/* _PRIVATE_EXPEDITED_RSEQ */
#define PLAIN_MB_REGISTER_RSEQ (1 << 8)	/* _REGISTER_PRIVATE_EXPEDITED_RSEQ */

/*
 * The system call (a macro: the explorer's runs, on the model, never make
 * it, and scripts/check-policy-coverage wants every function reached).
 */
#ifdef __NR_membarrier
#define sys_membarrier(cmd) syscall(__NR_membarrier, (cmd), 0U, 0)
#else
#define sys_membarrier(cmd) (errno = ENOSYS, -1L)
#endif

/*
 * Every sequence that could have read a slot before the caller closed it
 * has committed or restarted when this returns.  A failure after the
 * registration succeeded (tree_init) cannot happen; if it did, taking the
 * pages could count them twice, so it is a documented abort.
 */
static void plain_membarrier(struct plain_seq *s)
{
#if PLAIN_MODEL
	if (s->model) {
		plain_model_membarrier(s);
		return;
	}
#endif
	if (sys_membarrier(PLAIN_MB_RSEQ))
		pcs_die("plain: membarrier(PRIVATE_EXPEDITED_RSEQ) failed "
			"(errno %d): a drain cannot take the slots", errno);
}

/* ---- the tree ---------------------------------------------------------- */

static int plain_miss(struct pcstock_group *g, unsigned long nr_pages,
		      unsigned int flags, struct pcstock_tree *t);
static int plain_unmiss(struct pcstock_group *g, unsigned long nr_pages,
			struct pcstock_tree *t);
static void plain_cpu_dead(struct pcstock_domain *d, unsigned int cpu,
			   void *arg);

/* The sequences can run for @d, or why not. */
static int plain_usable(struct pcstock_domain *d)
{
	if (pcstock_domain_mode(d) != PCSTOCK_CPU_RSEQ)
		return -EOPNOTSUPP;
	if (!PLAIN_HAVE_RSEQ || !d->use_rseq || (int)__rseq_size <= 0)
		return -ENOSYS;
	if (sys_membarrier(PLAIN_MB_REGISTER_RSEQ))
		return -ENOSYS;
	return 0;
}

static int plain_tree_init(struct pcstock_tree *t)
{
	struct pcstock_domain *d = t->domain;
	unsigned int nr_os = 0, i;
	struct plain_seq *s;
	int err = plain_usable(d);

#if PLAIN_MODEL
	if (err == -EOPNOTSUPP)
		err = 0;	/* the model, below */
#endif
	if (err)
		return err;
	if (pcstock_domain_mode(d) == PCSTOCK_CPU_RSEQ)
		nr_os = d->os_map_len;
	s = pcs_calloc(1, sizeof(*s) + nr_os * sizeof(s->region[0]),
		       "plain-tree");
	if (!s)
		return -ENOMEM;
	s->batch = t->attr.batch;
	s->nr_os = nr_os;
	/* The model's CPU numbers are the domain's. */
	pcs_store(&s->open, nr_os ? (long)nr_os : (long)pcs_nr_cpus(d),
		  PCS_RELAXED);
	s->domain = d;
	for (i = 0; i < nr_os; i++)
		s->region[i] = d->os_map[i] < 0 ? PLAIN_OUTSIDE :
			(uintptr_t)pcs_percpu_ptr(d, 0,
						  (unsigned int)d->os_map[i]) -
			PLAIN_KEY;
#if PLAIN_MODEL
	if (!nr_os) {
		s->model = pcs_aligned_alloc(_Alignof(struct plain_model_cpu),
					     pcs_nr_cpus(d) *
						     sizeof(*s->model),
					     "plain-model");
		if (!s->model) {
			free(s);
			return -ENOMEM;
		}
		for (i = 0; i < pcs_nr_cpus(d); i++) {
			atomic_flag_clear(&s->model[i].lock);
			atomic_init(&s->model[i].gen, 0);
		}
	}
#endif
	/* Before the hook, which an offline may call at once. */
	pcs_tree_set_state(t, s);
	err = pcstock_cpu_hook_add(d, plain_cpu_dead, t, &s->hook);
	if (err) {
		pcs_tree_set_state(t, NULL);
		free(s->model);
		free(s);
		return err;
	}
	/* The hit in front of the miss (policy.h, @consume). */
	s->next_miss = t->miss;
	t->miss = plain_miss;
	/* The uncharge into the slot in front of the uncharge miss (@uncharge). */
	s->next_unmiss = t->unmiss;
	t->unmiss = plain_unmiss;
	return 0;
}

static void plain_tree_fini(struct pcstock_tree *t)
{
	struct plain_seq *s = tree_seq(t);

	pcstock_cpu_hook_remove(t->domain, s->hook);
	free(s->model);
	free(s);
}

/* ---- groups ------------------------------------------------------------- */

/*
 * A slot of zeroes on every CPU, and the key that opens it to the
 * sequences (policy_plain.h); without one, the group charges plain.
 */
static void plain_group_init(struct pcstock_group *g)
{
	struct pcstock_domain *d = g->tree->domain;
	struct plain_slot *p = group_slot(g);
	unsigned int cpu;

	if (pcstock_percpu_alloc(d, sizeof(int), sizeof(int), &p->handle))
		return;
	for (cpu = 0; cpu < pcs_nr_cpus(d); cpu++)
		atomic_init(slot_on(g, cpu), 0);
	/* Published with the group (link_child()'s release). */
	pcs_store(&p->state, PLAIN_OPEN, PCS_RELAXED);
	pcs_store(&g->hit_key, PLAIN_KEY + p->handle, PCS_RELAXED);
}

/*
 * Take every page of @g's slots on CPUs @first..@last, which a drain
 * closed and then membarrier'd: nothing stores to them any more but other
 * drains, hence the exchanges.  acquire: pairs with the sequences'
 * commits (x86-64 stores; the model's release), so the charges of the
 * pages happen before the uncharge.
 */
static unsigned long take_slots(struct pcstock_group *g, unsigned int first,
				unsigned int last)
{
	unsigned long sum = 0;
	unsigned int cpu;

	for (cpu = first; cpu <= last; cpu++) {
		atomic_int *slot = slot_on(g, cpu);

		/* Read first: an empty slot costs no exclusive line. */
		if (pcs_load(slot, PCS_RELAXED))
			sum += (unsigned long)pcs_xchg(
				slot, 0, PCS_ORDER(PLAIN_TAKE, PCS_ACQUIRE));
	}
	if (sum)
		pcs_group_uncharge_counters(g, sum);
	return sum;
}

static unsigned long take_all_slots(struct pcstock_group *g)
{
	return take_slots(g, 0, pcs_nr_cpus(g->tree->domain) - 1);
}

static bool has_slots(const struct pcstock_group *g)
{
	return pcs_load(&group_slot(g)->state, PCS_RELAXED) == PLAIN_OPEN;
}

/*
 * Close every slot of @t, wait out the sequences, take the slots of CPUs
 * @first..@last of every group of @root's subtree (under RCU), reopen.  A
 * hit anywhere in the tree meanwhile charges its counters: one word (@open
 * below every CPU number) and one membarrier, whatever the size of the
 * subtree, and groups created meanwhile are closed too.
 */
static void drain_subtree(struct pcstock_tree *t, struct pcstock_group *root,
			  unsigned int first, unsigned int last)
{
	struct plain_seq *s = tree_seq(t);
	struct pcstock_group *pos;

	/* seq_cst: before the membarrier, as the sequences read it. */
	pcs_fetch_sub(&s->open, PLAIN_DRAINING,
		      PCS_ORDER(PLAIN_CLOSE, PCS_SEQ_CST));
	plain_membarrier(s);
	for_each_in_subtree(pos, root)
		if (has_slots(pos))
			take_slots(pos, first, last);
	/* release: a sequence that reads it open sees the slots taken. */
	pcs_fetch_add(&s->open, PLAIN_DRAINING,
		      PCS_ORDER(PLAIN_REOPEN, PCS_RELEASE));
}

/* A CPU went offline (memcg_hotplug_cpu_dead()): its slots go up. */
static void plain_cpu_dead(struct pcstock_domain *d, unsigned int cpu,
			   void *arg)
{
	struct pcstock_tree *t = arg;

	(void)d;
	rcu_lock();
	drain_subtree(t, t->root, cpu, cpu);
	rcu_unlock();
}

/*
 * A destroyed group's slots are closed for good, and their pages go up.
 * Its destroy cleared its key (the sequences' only test of the group)
 * before it cleared online, so a caller that saw it offline is served no
 * more, and before this membarrier, which is a full barrier: every
 * sequence that read the key before has committed or restarts and reads
 * it 0.
 */
static void plain_group_offline(struct pcstock_group *g)
{
	if (!has_slots(g))
		return;
	plain_membarrier(tree_seq(g->tree));
	take_all_slots(g);
}

static void plain_group_free(struct pcstock_group *g)
{
	if (has_slots(g))
		pcstock_percpu_free(g->tree->domain, group_slot(g)->handle);
}

/* ---- the charge and the uncharge --------------------------------------- */

/*
 * The hit.  An offline group is never served: its destroy cleared its key
 * before online (release), so a caller that saw it offline (acquire)
 * reads the key 0.
 */
static inline __attribute__((always_inline)) bool
plain_hit(struct pcstock_tree *t, struct pcstock_group *g,
	  unsigned long nr_pages)
{
	return plain_take(tree_seq(t), &g->hit_key, nr_pages);
}

/* @consume: the flow's retries (try_charge_group()). */
static bool plain_consume(struct pcstock_tree *t, struct pcstock_group *g,
			  unsigned long nr_pages)
{
	return plain_hit(t, g, nr_pages);
}

/*
 * The first attempt of a charge the group hit did not serve: the tree's
 * miss (tree_init), so that a hit is one call from pcstock_group_charge().
 * Otherwise the miss it replaced, which asks plain_consume() again (the
 * slot may have been refilled meanwhile) and goes on to the counters.
 */
static int plain_miss(struct pcstock_group *g, unsigned long nr_pages,
		      unsigned int flags, struct pcstock_tree *t)
{
	if (plain_hit(t, g, nr_pages))
		return 0;
	return tree_seq(t)->next_miss(g, nr_pages, flags, t);
}

/* done_restock(): the surplus of a batch charged by a miss. */
static void plain_refill(struct pcstock_group *g, unsigned long nr_pages)
{
	if (!plain_give(tree_seq(g->tree), &g->hit_key, nr_pages))
		pcs_group_uncharge_counters(g, nr_pages);
}

/*
 * Every uncharge, as pcstock_group_uncharge()'s uncharge miss (tree_init):
 * into the slot, so that it is one call from there, else the miss it
 * replaced, which checks the request and sends the pages to the counters
 * (the policy's @uncharge is the default's).  Any request reaches it: a
 * root's or a destroyed group's key is 0, and a request of more than a
 * batch (an invalid one too) does not fit; 0 pages are an open slot's
 * no-op, as the miss's.  Inside a reclaim or OOM callback the pages go
 * straight up (reclaim.c).
 */
static int plain_unmiss(struct pcstock_group *g, unsigned long nr_pages,
			struct pcstock_tree *t)
{
	struct plain_seq *s = tree_seq(t);

	if (!pcs_in_callback && plain_give(s, &g->hit_key, nr_pages))
		return 0;
	return s->next_unmiss(g, nr_pages, t);
}

/* ---- drains and readers ------------------------------------------------ */

/* percpu_charge_mutex: one drain_all of the tree at a time, else skip. */
static bool plain_drain_all(struct pcstock_group *g)
{
	struct pcstock_tree *t = g->tree;

	if (pthread_mutex_trylock(&t->drain_lock))
		return false;
	drain_subtree(t, g, 0, pcs_nr_cpus(t->domain) - 1);
	pthread_mutex_unlock(&t->drain_lock);
	return true;
}

static unsigned long plain_stock_pages(struct pcstock_group *g)
{
	unsigned int cpu, nr = pcs_nr_cpus(g->tree->domain);
	struct pcstock_group *pos;
	unsigned long sum = 0;

	for_each_in_subtree(pos, g) {
		if (!has_slots(pos))
			continue;
		for (cpu = 0; cpu < nr; cpu++)
			sum += (unsigned long)pcs_load(slot_on(pos, cpu),
						       PCS_RELAXED);
	}
	return sum;
}

/* A batch per CPU for each group of the subtree that has slots. */
static unsigned long plain_stock_bound(struct pcstock_group *g)
{
	struct pcstock_tree *t = g->tree;
	struct pcstock_group *pos;
	unsigned long groups = 0;

	for_each_in_subtree(pos, g)
		groups += has_slots(pos);
	return groups * pcs_nr_cpus(t->domain) * t->attr.batch;
}

const struct pcs_policy_ops pcs_policy_plain = {
	.name = "plain",
	.stocks = true,
	.group_batch = true,
	.uncharges_refill = true,
	.group_state_size = sizeof(struct plain_slot),
	.tree_init = plain_tree_init,
	.tree_fini = plain_tree_fini,
	.group_init = plain_group_init,
	.group_offline = plain_group_offline,
	.group_free = plain_group_free,
	.consume = plain_consume,
	.refill = plain_refill,
	.drain_all = plain_drain_all,
	.stock_pages = plain_stock_pages,
	.stock_bound = plain_stock_bound,
};
