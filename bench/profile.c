// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * profile.c - the callgrind mode (--profile WHAT --ops N).
 *
 * Runs N operations of one kind, each inside a noinline function whose
 * name starts with bench_mark_, on a 3-level counter tree (top, middle,
 * leaf; the leaf stocked with batch 64) on one simulated CPU.  Everything
 * that puts the slot in the state the operation needs happens outside the
 * marked functions, so `valgrind --tool=callgrind
 * --toggle-collect='bench_mark_*'` counts exactly the N operations (plus the
 * call's own ret, measured by WHAT = null and subtracted by
 * scripts/callgrind-fastpath).
 *
 *   null        an empty marked function
 *   floor       one relaxed fetch_add on a private atomic
 *   hit         try_charge_stock(1) served from the slot
 *   uncharge    uncharge_stock(1) with room in the slot
 *   trim        uncharge_stock(1) into a full slot (DEFAULT sends the
 *               slot and the page up)
 *   miss        try_charge_stock(1) on an empty slot (batch up 3 levels)
 *   plain       counter try_charge(1) up 3 levels, no stock
 *   unplain     counter uncharge(1) up 3 levels, no stock
 *   inline-hit, inline-uncharge, inline-miss
 *               hit, uncharge and miss through the opt-in inline fast
 *               paths (PCSTOCK_INLINE: the marks are in inline.c)
 *   g-hit       pcstock_group_charge(1) served from the stock
 *   g-uncharge  pcstock_group_uncharge(1) with room in the stock
 *   g-miss      pcstock_group_charge(1) with the stock drained
 *   g-drain     pcstock_group_drain_all() of the root over 66 groups x 16
 *               CPUs, every slot empty (divide by 1056 for a slot)
 *   tenants-N   one operation of the tenants loop, N groups round-robin
 *               on 2 CPUs (a charge of one page and its uncharge through
 *               the group strategy, marked bench_mark_op), as --opcount
 *               steps it (opcount.c)
 *   scale-own   the same on one CPU and its own leaf
 * The g- kinds run on a group tree (root, middle, leaf: the root's counter
 * is charged too, so 3 counters again).  Prefix NAME- for any registered
 * policy (pcstock_tree_policy_name(): v4-, memcg7-, none-, exact-, ...;
 * none: the default policy): the g- kinds for every policy, the others
 * for a per-counter one (its stock kind on the leaf counter); memcg7x-
 * runs memcg7 on a COOP domain (its owner-exclusive variant, the kernel's
 * lock-free hit) where memcg7- runs on SIM CPUs (the locked variant).
 * rseq- runs the default policy on an RSEQ domain (what
 * pcstock_domain_create(NULL) gives), where the thread's CPU is the OS CPU
 * its rseq area names.  valgrind does not let glibc register the area
 * (its cpu_id then reads -2 and the library asks sched_getcpu()): the
 * rseq- kinds then write the area themselves, standing in for the kernel,
 * so that the count is a registered thread's.
 *
 *   shm-hit, shm-uncharge, shm-getcpu
 *               a shared tree's hit and uncharge into the slot, and the
 *               sched_getcpu() in both under valgrind (shm.c)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>

#include "bench.h"

#define PROF_BATCH 64U
#define PROF_CPUS 16U		/* the operations run on CPU 0 */
#define PROF_GROUPS 64U		/* extra empty groups for g-drain */

struct prof {
	struct pcstock_domain *d;
	struct pcstock_counter c[3];	/* top, middle, leaf */
	struct pcstock_tree *t;
	struct pcstock_group *mid, *leaf;
	atomic_long floor;
};

#define MARK BENCH_MARK

MARK static void bench_mark_null(struct prof *p)
{
	__asm__ volatile("" ::"r"(p) : "memory");
}

MARK static void bench_mark_floor(struct prof *p)
{
	atomic_fetch_add_explicit(&p->floor, 1, memory_order_relaxed);
}

MARK static bool bench_mark_charge_stock(struct prof *p)
{
	return pcstock_counter_try_charge_stock(&p->c[2], 1, NULL, NULL);
}

MARK static void bench_mark_uncharge_stock(struct prof *p)
{
	pcstock_counter_uncharge_stock(&p->c[2], 1);
}

MARK static int bench_mark_group_charge(struct prof *p)
{
	return pcstock_group_charge(p->leaf, 1, 0);
}

MARK static int bench_mark_group_uncharge(struct prof *p)
{
	return pcstock_group_uncharge(p->leaf, 1);
}

MARK static void bench_mark_drain_all(struct prof *p)
{
	pcstock_group_drain_all(pcstock_tree_root(p->t));
}

MARK static bool bench_mark_try_charge(struct prof *p)
{
	return pcstock_counter_try_charge(&p->c[2], 1, NULL);
}

MARK static void bench_mark_uncharge(struct prof *p)
{
	pcstock_counter_uncharge(&p->c[2], 1);
}

static struct rseq *rseq_area(void)
{
	return (struct rseq *)(void *)((char *)__builtin_thread_pointer() +
				       __rseq_offset);
}

/*
 * Without a registered rseq area, say the thread runs on CPU 0's PU.  Put
 * back before any thread is created: glibc registers a new thread's area
 * only if its creator's looks registered, and aborts if that then fails.
 */
static unsigned int rseq_saved[2];
static bool rseq_faked;

static void rseq_stand_in(struct pcstock_domain *d)
{
	struct rseq *rs = rseq_area();
	int os = pcstock_cpu_os_index(d, 0);

	if (__rseq_size || os < 0)
		return;
	rseq_saved[0] = rs->cpu_id_start;
	rseq_saved[1] = rs->cpu_id;
	rs->cpu_id_start = (unsigned int)os;
	rs->cpu_id = (unsigned int)os;
	rseq_faked = true;
}

static void rseq_stand_down(void)
{
	struct rseq *rs = rseq_area();

	if (!rseq_faked)
		return;
	rs->cpu_id_start = rseq_saved[0];
	rs->cpu_id = rseq_saved[1];
	rseq_faked = false;
}

static int prof_setup(struct prof *p, enum pcstock_tree_policy policy,
		      enum pcstock_cpu_mode mode)
{
	struct pcstock_domain_attr attr = { .nr_cpus = PROF_CPUS,
					    .mode = mode };
	struct pcstock_tree_attr tattr = {
		.policy = policy, .batch = PROF_BATCH,
	};

	struct pcstock_policy_info in;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = pcstock_tree_policy_info(policy, &in);
	if (!ret)
		ret = pcstock_domain_create(&attr, &p->d);
	if (ret)
		return ret;
	pcstock_counter_init(&p->c[0], NULL, false);
	pcstock_counter_init(&p->c[1], &p->c[0], false);
	pcstock_counter_init(&p->c[2], &p->c[1], false);
	/* A per-counter policy's stock kind, for the counter kinds. */
	if (in.per_counter)
		ret = pcstock_counter_alloc_stock(&p->c[2], p->d, PROF_BATCH,
						  in.counter_stock);
	if (!ret)
		ret = pcstock_tree_create(p->d, &tattr, &p->t);
	if (!ret)
		ret = pcstock_group_create(pcstock_tree_root(p->t), "mid",
					   &p->mid);
	if (!ret)
		ret = pcstock_group_create(p->mid, "leaf", &p->leaf);
	if (!ret && mode == PCSTOCK_CPU_RSEQ)
		rseq_stand_in(p->d);
	else if (!ret)
		ret = pcstock_cpu_enter(p->d, 0);
	return ret;
}

static void prof_teardown(struct prof *p)
{
	rseq_stand_down();
	if (pcstock_domain_mode(p->d) != PCSTOCK_CPU_RSEQ)
		pcstock_cpu_exit(p->d);
	if (p->leaf) {
		pcstock_group_destroy(p->leaf);
		pcstock_group_put(p->leaf);
	}
	if (p->mid) {
		pcstock_group_destroy(p->mid);
		pcstock_group_put(p->mid);
	}
	pcstock_tree_destroy(p->t);
	pcstock_counter_free_stock(&p->c[2]);
	pcstock_domain_destroy(p->d);
}

/* drain_all over empty slots: 64 more groups under mid, then drains. */
static int run_drain(struct prof *p, unsigned long n)
{
	struct pcstock_group *g[PROF_GROUPS];
	unsigned int i, made = 0;
	char name[16];
	int ret = 0;

	for (i = 0; i < PROF_GROUPS && !ret; i++) {
		snprintf(name, sizeof(name), "e%u", i);
		ret = pcstock_group_create(p->mid, name, &g[i]);
		made += !ret;
	}
	pcstock_group_drain_all(pcstock_tree_root(p->t));
	while (!ret && n--)
		bench_mark_drain_all(p);
	for (i = 0; i < made; i++) {
		pcstock_group_destroy(g[i]);
		pcstock_group_put(g[i]);
	}
	return ret;
}

/* Group kinds: the drains and setup charges happen outside the marks. */
static int run_group(struct prof *p, const char *what, unsigned long n)
{
	struct pcstock_group *root = pcstock_tree_root(p->t);
	unsigned long i, k;

	if (!strcmp(what, "g-drain"))
		return run_drain(p, n);
	for (i = 0; i < n;) {
		pcstock_group_drain_all(root);
		if (!strcmp(what, "g-miss")) {
			bench_mark_group_charge(p);
			pcstock_group_uncharge(p->leaf, 1);
			i++;
		} else if (!strcmp(what, "g-hit")) {
			/* A miss parks batch - 1 pages: that many hits. */
			pcstock_group_charge(p->leaf, 1, 0);
			for (k = 1; k < PROF_BATCH && i < n; k++, i++)
				bench_mark_group_charge(p);
			pcstock_group_uncharge(p->leaf, k);
		} else if (!strcmp(what, "g-uncharge")) {
			/* Leaves 1 page in the stock: batch - 1 fit. */
			pcstock_group_charge(p->leaf, PROF_BATCH - 1, 0);
			for (k = 0; k < PROF_BATCH - 1 && i < n; k++, i++)
				bench_mark_group_uncharge(p);
			pcstock_group_uncharge(p->leaf, PROF_BATCH - 1 - k);
		} else {
			return -EINVAL;
		}
	}
	pcstock_group_drain_all(root);
	return pcstock_group_usage(root) ? -EPROTO : 0;
}

static void empty_slot(struct prof *p)
{
	pcstock_counter_drain_stock(&p->c[2], 0);
}

/* Slot exactly full: @batch pages charged plainly, pushed into the slot. */
static void full_slot(struct prof *p)
{
	empty_slot(p);
	pcstock_counter_charge(&p->c[2], PROF_BATCH);
	if (pcstock_counter_stock_pages(&p->c[2]) == 0)
		pcstock_counter_uncharge_stock(&p->c[2], PROF_BATCH);
	/* V4 never refills on uncharge: fill through a miss instead. */
	if (pcstock_counter_stock_pages(&p->c[2]) == 0 &&
	    pcstock_counter_try_charge_stock(&p->c[2], 1, NULL, NULL))
		pcstock_counter_uncharge(&p->c[2], 1);
}

/* The charge and uncharge marks, exported or inline (@inl). */
static bool mark_charge(struct prof *p, bool inl)
{
	return inl ? bench_mark_inline_charge_stock(p->c) :
		     bench_mark_charge_stock(p);
}

static void mark_uncharge(struct prof *p, bool inl)
{
	if (inl)
		bench_mark_inline_uncharge_stock(p->c);
	else
		bench_mark_uncharge_stock(p);
}

static int run(struct prof *p, const char *what, unsigned long n)
{
	bool inl = !strncmp(what, "inline-", 7);
	unsigned long i, k;

	if (inl)
		what += 7;
	if (inl && strcmp(what, "hit") && strcmp(what, "uncharge") &&
	    strcmp(what, "miss"))
		return -EINVAL;

	if (!strcmp(what, "null") || !strcmp(what, "floor")) {
		for (i = 0; i < n; i++)
			if (what[0] == 'n')
				bench_mark_null(p);
			else
				bench_mark_floor(p);
	} else if (!strcmp(what, "hit")) {
		/* Runs of slot-sized hits between unmarked refills. */
		for (i = 0; i < n;) {
			full_slot(p);
			k = pcstock_counter_stock_pages(&p->c[2]);
			for (; k && i < n; k--, i++)
				mark_charge(p, inl);
			pcstock_counter_uncharge(&p->c[2],
						 pcstock_counter_read(&p->c[2]) -
						 pcstock_counter_stock_pages(
							 &p->c[2]));
		}
	} else if (!strcmp(what, "uncharge")) {
		for (i = 0; i < n;) {
			empty_slot(p);
			pcstock_counter_charge(&p->c[2], PROF_BATCH - 1);
			for (k = 0; k < PROF_BATCH - 1 && i < n; k++, i++)
				mark_uncharge(p, inl);
			pcstock_counter_uncharge(&p->c[2],
						 PROF_BATCH - 1 - k);
		}
	} else if (!strcmp(what, "trim")) {
		for (i = 0; i < n; i++) {
			full_slot(p);
			pcstock_counter_charge(&p->c[2], 1);
			bench_mark_uncharge_stock(p);
		}
	} else if (!strcmp(what, "miss")) {
		for (i = 0; i < n; i++) {
			empty_slot(p);
			if (mark_charge(p, inl))
				pcstock_counter_uncharge(&p->c[2], 1);
		}
	} else if (!strcmp(what, "plain")) {
		for (i = 0; i < n; i++)
			if (bench_mark_try_charge(p))
				pcstock_counter_uncharge(&p->c[2], 1);
	} else if (!strcmp(what, "unplain")) {
		for (i = 0; i < n; i++) {
			pcstock_counter_charge(&p->c[2], 1);
			bench_mark_uncharge(p);
		}
	} else {
		return -EINVAL;
	}
	empty_slot(p);
	return 0;
}

/*
 * The policy prefix of @what: the special rows first, then "NAME-" for
 * every registered tree policy, so that a new policy needs no edit here.
 * Returns the kind after the prefix (all of @what without one).
 */
static const char *parse_prefix(const char *what,
				enum pcstock_tree_policy *policy,
				enum pcstock_cpu_mode *mode)
{
	/*
	 * Named rows of scripts/callgrind-fastpath: memcg7 as the kernel
	 * runs it (the comparison's "before"), the library's default policy
	 * on the CPU numbering an application gets.
	 */
	static const struct {
		const char *prefix;
		enum pcstock_tree_policy policy;
		enum pcstock_cpu_mode mode;
	} special[] = {
		{ "memcg7x-", PCSTOCK_TREE_MEMCG7, PCSTOCK_CPU_COOP },
		{ "rseq-", PCSTOCK_TREE_DEFAULT, PCSTOCK_CPU_RSEQ },
	};
	const char *name;
	unsigned int i;
	size_t len;

	*policy = PCSTOCK_TREE_DEFAULT;
	*mode = PCSTOCK_CPU_SIM;
	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		len = strlen(special[i].prefix);
		if (!strncmp(what, special[i].prefix, len)) {
			*policy = special[i].policy;
			*mode = special[i].mode;
			return what + len;
		}
	}
	for (i = 0; i < PCSTOCK_TREE_NR_POLICIES; i++) {
		name = pcstock_tree_policy_name((enum pcstock_tree_policy)i);
		len = name ? strlen(name) : 0;
		if (len && !strncmp(what, name, len) && what[len] == '-') {
			*policy = (enum pcstock_tree_policy)i;
			return what + len + 1;
		}
	}
	return what;
}

int profile_main(const char *what, unsigned long n)
{
	enum pcstock_tree_policy policy;
	enum pcstock_cpu_mode mode;
	const char *kind = parse_prefix(what, &policy, &mode);
	struct prof p;
	int ret;

	/* The shared tree's (shm.c), on a region rather than a tree. */
	if (!strncmp(what, "shm-", 4))
		return shm_profile(what + 4, n);
	if (!strncmp(kind, "tenants-", 8) || !strcmp(kind, "scale-own")) {
		ret = opcount_profile(policy, mode, kind, n);
		if (ret)
			fprintf(stderr, "pcstock-bench: --profile %s: %s\n",
				what, strerror(-ret));
		else
			printf("profiled %s x %lu\n", what, n);
		return ret;
	}
	ret = prof_setup(&p, policy, mode);
	if (!ret && !strncmp(kind, "g-", 2))
		ret = run_group(&p, kind, n);
	else if (!ret && pcstock_counter_stock_batch(&p.c[2]))
		ret = run(&p, kind, n);
	else if (!ret)
		ret = -EINVAL;
	if (!ret && pcstock_counter_read(&p.c[0]) != 0)
		ret = -EPROTO;
	if (ret)
		fprintf(stderr, "pcstock-bench: --profile %s: %s\n", what,
			ret == -EINVAL ? "unknown kind" : strerror(-ret));
	else
		printf("profiled %s x %lu\n", what, n);
	prof_teardown(&p);
	return ret;
}
