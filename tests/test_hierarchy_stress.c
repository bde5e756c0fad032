// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_hierarchy_stress.c - group lifecycle under load, every registered
 * policy, on 64 SIM CPUs (more threads than cores: threads share and
 * change CPUs), again on 64 COOP CPUs, where each CPU has one owner
 * (memcg7's owner-exclusive variant, drains queued to the owners), and on
 * the RSEQ domain pcstock_domain_create(NULL) gives, one CPU per OS CPU,
 * where threads are where the scheduler puts them (plain's restartable
 * sequences run there as machine code, preempted and restarted; a policy
 * that cannot run there, -ENOSYS, is skipped).
 *
 * Chargers look groups up by path, charge and keep pages with a reference,
 * give some back, and hop between CPUs; meanwhile a manager creates and
 * destroys groups and rewrites limits from strings, a drainer runs
 * drain_all on random subtrees, and a hotplug thread takes CPUs offline and
 * back.  Then, with everything still held, every online group must satisfy
 *   usage == pages held through its subtree + stock of its subtree
 *            (+ what offline groups still held in it have in their stock),
 * and once everything is given back and destroyed, the root must be at 0
 * and the tree must free every group.  Runs under ASan and TSan in CI.
 *
 * Argument: iterations per charger (default 40000).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu-bp.h>

#include <pcstock/hierarchy.h>

#define NR_CPUS 64U
#define NR_CHARGERS 4
#define NR_HOLD 24
#define NR_PATHS 8

static const char *const paths[NR_PATHS] = {
	"t0", "t1", "t2", "t3", "t0/c", "t1/c", "t2/c", "t3/c",
};

struct holding {
	struct pcstock_group *g;
	unsigned long pages;
};

struct charger {
	pthread_t thread;
	unsigned int id;
	struct holding hold[NR_HOLD];
};

static struct {
	struct pcstock_domain *sim, *coop, *rseq;
	struct pcstock_domain *d;	/* the one in use */
	struct pcstock_tree *t;
	unsigned long iterations;
	atomic_bool stop;
	atomic_ulong errors;
	atomic_ulong charged_ok;
	struct charger chargers[NR_CHARGERS];
} st;

static unsigned int rnd(unsigned int *seed)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 17;
	*seed ^= *seed << 5;
	return *seed;
}

static void report(const char *what)
{
	atomic_fetch_add(&st.errors, 1);
	fprintf(stderr, "stress: %s\n", what);
}

static struct pcstock_group *lookup(unsigned int *seed)
{
	struct pcstock_group *g = NULL;
	int err = pcstock_group_lookup(pcstock_tree_root(st.t),
				       paths[rnd(seed) % NR_PATHS], &g);

	if (err && err != -ENOENT)
		report("lookup");
	return err ? NULL : g;
}

static unsigned int nr_cpus(void)
{
	return pcstock_domain_nr_cpus(st.d);
}

/* Enter @cpu, or (COOP) the next CPU nobody owns; RSEQ: nothing to do. */
static void enter(unsigned int cpu, unsigned int *seed)
{
	int err;

	if (st.d == st.rseq)
		return;
	while ((err = pcstock_cpu_enter(st.d, cpu)) == -EBUSY &&
	       st.d == st.coop)
		cpu = rnd(seed) % nr_cpus();
	if (err)
		report("enter");
}

static void give_back(struct holding *h)
{
	if (!h->g)
		return;
	if (pcstock_group_uncharge(h->g, h->pages))
		report("uncharge");
	pcstock_group_put(h->g);
	h->g = NULL;
}

static void *charger_fn(void *arg)
{
	struct charger *c = arg;
	unsigned int seed = 0x9e3779b9U * (c->id + 1);

	enter(c->id * (nr_cpus() / NR_CHARGERS), &seed);
	for (unsigned long i = 0; i < st.iterations; i++) {
		struct holding *h = &c->hold[rnd(&seed) % NR_HOLD];
		unsigned long pages = 1 + rnd(&seed) % 100;
		unsigned int flags = rnd(&seed) % 8 ? PCSTOCK_CHARGE_NOWAIT : 0;
		struct pcstock_group *g;
		int err;

		if (rnd(&seed) % 64 == 0 && st.d != st.rseq) {
			pcstock_cpu_exit(st.d);
			enter(rnd(&seed) % nr_cpus(), &seed);
		}
		if (rnd(&seed) % 32 == 0 && st.d != st.rseq &&
		    pcstock_cpu_idle(st.d))
			report("idle");
		give_back(h);
		g = lookup(&seed);
		if (!g)
			continue;
		err = pcstock_group_charge(g, pages, flags);
		if (!err) {
			h->g = g;
			h->pages = pages;
			atomic_fetch_add(&st.charged_ok, 1);
			continue;
		}
		if (err != -ENOMEM && err != -ENOENT)
			report("charge");
		pcstock_group_put(g);
		if (rnd(&seed) % 16 == 0)
			pcstock_handle_over_high();
	}
	pcstock_handle_over_high();
	if (st.d != st.rseq && pcstock_cpu_exit(st.d))
		report("exit");
	return NULL;
}

static void manage(unsigned int *seed)
{
	static const char *const limits[] = { "max", "2M", "1M", "600K" };
	const char *path = paths[rnd(seed) % NR_PATHS];
	struct pcstock_group *g = NULL, *parent = pcstock_tree_root(st.t);
	const char *name = path;
	char dir[4] = "";
	int err;

	if (strchr(path, '/')) {
		memcpy(dir, path, 2);
		name = "c";
		if (pcstock_group_lookup(parent, dir, &parent))
			return;
	} else {
		pcstock_group_get(parent);
	}
	switch (rnd(seed) % 3) {
	case 0:
		err = pcstock_group_create(parent, name, &g);
		if (err && err != -EEXIST && err != -ENOENT)
			report("create");
		break;
	case 1:
		if (!pcstock_group_lookup(pcstock_tree_root(st.t), path, &g)) {
			err = pcstock_group_destroy(g);
			if (err && err != -EBUSY && err != -ENOENT)
				report("destroy");
		}
		break;
	default:
		if (!pcstock_group_lookup(pcstock_tree_root(st.t), path, &g) &&
		    pcstock_group_write_limit(g, rnd(seed) % 2 ?
							PCSTOCK_LIMIT_MAX :
							PCSTOCK_LIMIT_HIGH,
					      limits[rnd(seed) % 4]))
			report("limit");
		break;
	}
	pcstock_group_put(g);
	pcstock_group_put(parent);
}

static void *helper_fn(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 2654435761U + 1;
	unsigned int role = (unsigned int)(uintptr_t)arg;

	while (!atomic_load(&st.stop)) {
		struct pcstock_group *g;
		unsigned int cpu;

		switch (role) {
		case 0:
			manage(&seed);
			break;
		case 1:
			g = lookup(&seed);
			pcstock_group_drain_all(g ? g : pcstock_tree_root(st.t));
			pcstock_group_put(g);
			break;
		default:
			cpu = rnd(&seed) % nr_cpus();
			pcstock_cpu_set_online(st.d, cpu, false);
			pcstock_cpu_set_online(st.d, cpu, true);
			break;
		}
		sched_yield();
	}
	return NULL;
}

static bool below(struct pcstock_group *g, struct pcstock_group *root)
{
	for (; g; g = pcstock_group_parent(g))
		if (g == root)
			return true;
	return false;
}

/* Offline held groups are out of the walk: add their leftover stock. */
static unsigned long expected_usage(struct pcstock_group *root)
{
	unsigned long sum = pcstock_group_stock_pages(root);

	for (int c = 0; c < NR_CHARGERS; c++) {
		for (int i = 0; i < NR_HOLD; i++) {
			struct holding *h = &st.chargers[c].hold[i];

			if (h->g && below(h->g, root))
				sum += h->pages;
		}
	}
	return sum;
}

static unsigned long offline_stock(struct pcstock_group *root)
{
	struct pcstock_group *seen[NR_CHARGERS * NR_HOLD];
	unsigned long sum = 0;
	int n = 0;

	for (int c = 0; c < NR_CHARGERS; c++) {
		for (int i = 0; i < NR_HOLD; i++) {
			struct pcstock_group *g = st.chargers[c].hold[i].g;
			bool dup = false;

			if (!g || pcstock_group_online(g) || !below(g, root))
				continue;
			for (int k = 0; k < n; k++)
				dup |= seen[k] == g;
			if (dup)
				continue;
			seen[n++] = g;
			sum += pcstock_counter_stock_pages(
				pcstock_group_memory(g));
		}
	}
	return sum;
}

struct check {
	unsigned long bad;
	unsigned long groups;
};

static int check_group(struct pcstock_group *g, void *arg)
{
	struct check *ck = arg;
	unsigned long want = expected_usage(g) + offline_stock(g);

	ck->groups++;
	if (pcstock_group_usage(g) != want) {
		fprintf(stderr, "group '%s': usage %lu, expected %lu\n",
			pcstock_group_name(g), pcstock_group_usage(g), want);
		ck->bad++;
	}
	/* stock_bound: at least what stock_pages reads. */
	if (pcstock_group_stock_pages(g) > pcstock_group_stock_bound(g)) {
		fprintf(stderr, "group '%s': stock %lu above its bound %lu\n",
			pcstock_group_name(g), pcstock_group_stock_pages(g),
			pcstock_group_stock_bound(g));
		ck->bad++;
	}
	return 0;
}

static int destroy_leaf(struct pcstock_group *g, void *arg)
{
	struct pcstock_group **out = arg;

	if (pcstock_group_parent(g) && pcstock_group_online(g)) {
		pcstock_group_put(*out);
		*out = g;
		pcstock_group_get(g);
	}
	return 0;
}

enum mode { MODE_SIM, MODE_COOP, MODE_RSEQ, NR_MODES };

static void run_policy(enum pcstock_tree_policy policy, enum mode mode)
{
	struct pcstock_tree_attr attr = { .policy = policy, .memsw = true };
	pthread_t helpers[3];
	struct check ck = { 0 };
	struct pcstock_group *g;
	struct pcstock_tree_stats ts;
	int err;

	st.d = mode == MODE_COOP ? st.coop :
	       mode == MODE_RSEQ ? st.rseq : st.sim;
	memset(st.chargers, 0, sizeof(st.chargers));
	atomic_store(&st.stop, false);
	err = pcstock_tree_create(st.d, &attr, &st.t);
	if (err == -ENOSYS && mode == MODE_RSEQ)
		skip();		/* plain without rseq here */
	assert_int_equal(err, 0);
	for (int i = 0; i < NR_PATHS; i++) {
		struct pcstock_group *parent = pcstock_tree_root(st.t);

		if (i >= NR_PATHS / 2)
			assert_int_equal(pcstock_group_lookup(parent,
							      paths[i - 4],
							      &parent),
					 0);
		assert_int_equal(pcstock_group_create(parent, i < 4 ? paths[i] :
								      "c",
						      &g),
				 0);
		if (i >= NR_PATHS / 2)
			pcstock_group_put(parent);
		pcstock_group_put(g);
	}
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&helpers[i], NULL, helper_fn,
						(void *)(uintptr_t)i),
				 0);
	for (unsigned int i = 0; i < NR_CHARGERS; i++) {
		st.chargers[i].id = i;
		assert_int_equal(pthread_create(&st.chargers[i].thread, NULL,
						charger_fn, &st.chargers[i]),
				 0);
	}
	for (unsigned int i = 0; i < NR_CHARGERS; i++)
		pthread_join(st.chargers[i].thread, NULL);
	atomic_store(&st.stop, true);
	for (unsigned int i = 0; i < 3; i++)
		pthread_join(helpers[i], NULL);

	/* quiescent, pages still held: the conservation invariant */
	pcstock_group_walk(pcstock_tree_root(st.t), check_group, &ck);
	assert_int_equal(ck.bad, 0);
	assert_true(ck.groups >= 1);

	/* give everything back, destroy every group, wait for the frees */
	for (int c = 0; c < NR_CHARGERS; c++)
		for (int i = 0; i < NR_HOLD; i++)
			give_back(&st.chargers[c].hold[i]);
	do {
		g = NULL;
		pcstock_group_walk(pcstock_tree_root(st.t), destroy_leaf, &g);
		if (g) {
			/* the walk's last online group is a leaf (pre-order) */
			assert_int_equal(pcstock_group_destroy(g), 0);
			pcstock_group_put(g);
		}
	} while (g);
	for (int i = 0; i < 64; i++) {
		pcstock_tree_stats(st.t, &ts);
		if (ts.nr_groups == 1)
			break;
		urcu_bp_barrier();
	}
	/* destroyed groups' stock came back up: nothing is left anywhere */
	assert_int_equal(ts.nr_groups, 1);
	assert_int_equal(pcstock_group_usage(pcstock_tree_root(st.t)), 0);
	assert_int_equal(
		pcstock_counter_read(pcstock_group_memsw(pcstock_tree_root(st.t))),
		0);
	assert_int_equal(atomic_load(&st.errors), 0);
	assert_true(atomic_load(&st.charged_ok) > 0);
	assert_int_equal(pcstock_tree_destroy(st.t), 0);
	for (unsigned int cpu = 0; cpu < nr_cpus(); cpu++)
		pcstock_cpu_set_online(st.d, cpu, true);
}

/* One registered policy on one CPU mode: *state is its struct run. */
struct run {
	enum pcstock_tree_policy policy;
	enum mode mode;
};

static void test_lifecycle(void **state)
{
	const struct run *r = *state;

	run_policy(r->policy, r->mode);
}

int main(int argc, char **argv)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };
	/*
	 * Every registered policy, on SIM, COOP and RSEQ CPUs, from the
	 * registry: a new policy is stressed with its conservation checked
	 * without an edit here.
	 */
	static const char *const suffix[NR_MODES] = { "", "_coop", "_rseq" };
	static struct run runs[NR_MODES * PCSTOCK_TREE_NR_POLICIES];
	static struct CMUnitTest tests[NR_MODES * PCSTOCK_TREE_NR_POLICIES];
	static char names[NR_MODES * PCSTOCK_TREE_NR_POLICIES][64];
	size_t n = 0;
	int ret;

	for (int mode = 0; mode < NR_MODES; mode++) {
		for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
			runs[n] = (struct run){ (enum pcstock_tree_policy)p,
						(enum mode)mode };
			snprintf(names[n], sizeof(names[n]), "test_lifecycle/%s%s",
				 pcstock_tree_policy_name(runs[n].policy),
				 suffix[mode]);
			tests[n] = (struct CMUnitTest){ names[n], test_lifecycle,
							NULL, NULL, &runs[n] };
			n++;
		}
	}
	st.iterations = argc > 1 ? strtoul(argv[1], NULL, 0) : 40000;
	if (pcstock_domain_create(&attr, &st.sim))
		return 1;
	attr.mode = PCSTOCK_CPU_COOP;
	if (pcstock_domain_create(&attr, &st.coop) ||
	    pcstock_domain_create(NULL, &st.rseq))
		return 1;
	ret = _cmocka_run_group_tests("test_hierarchy_stress", tests, n, NULL,
				      NULL);
	pcstock_domain_destroy(st.rseq);
	pcstock_domain_destroy(st.coop);
	pcstock_domain_destroy(st.sim);
	return ret;
}
