// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_plain.c - the "plain" policy's own behaviour (src/policy_plain.c),
 * which is why these cases name it: its restartable sequences abort and
 * restart against a remote drain, and its hits follow the OS CPU on an
 * RSEQ domain.  Every per-policy harness runs it too, by its properties.
 *
 *  - On a SIM domain the test library runs the model of the sequences
 *    (src/policy_plain.h).  A drain run exactly between a hit's load of
 *    its slot and its commit (from the explorer hook, at the commit's
 *    scheduling point) must make the hit restart, find the slot taken and
 *    miss: one restart, every page where the books say.  With the drain's
 *    membarrier left out (tests/mutants/plain_no_membarrier.patch) the
 *    commit stores the stale value and the pages are counted twice: the
 *    case fails, every time ("abort" as the argument runs it alone, for
 *    the mutant's WILL_FAIL test, tests/hierarchy.cmake).
 *  - On an RSEQ domain the machine code runs: a thread pinned to one OS
 *    CPU hits that CPU's slot, and after it moves, the other's; threads
 *    outnumbering the CPUs, preempted inside their sequences, charge and
 *    uncharge against drain_all and a group's destroy, and every page is
 *    accounted for at the end.  Skipped where the policy cannot run
 *    (-ENOSYS: another architecture, no rseq area).
 */
#define _GNU_SOURCE		/* CPU affinity */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include <pcstock/hierarchy.h>
#include <pcstock/percpu.h>

#include "affinity_helpers.h"
#include "atomic.h"
#include "group.h"
#include "hierarchy_helpers.h"
#include "policy.h"
#include "policy_plain.h"

#define BATCH 64U

/* @g's slot on domain CPU @cpu. */
static int slot(struct pcstock_domain *d, struct pcstock_group *g,
		unsigned int cpu)
{
	const struct plain_slot *p = pcs_group_state(g);

	return atomic_load((atomic_int *)pcstock_percpu_ptr(d, p->handle,
							    cpu));
}

/* ---- the model: a restart against a drain ------------------------------- */

static struct pcstock_group *victim;
static const void *commit_at;	/* the slot whose commit runs the drain */
static bool drained;

static void drain_at_commit(enum pcs_atomic_op op, const void *obj)
{
	if (drained || op != PCS_OP_STORE || obj != commit_at)
		return;
	drained = true;
	pcstock_group_drain_all(victim);
}

static void test_model_restart_against_drain(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_PLAIN,
					  .batch = BATCH };
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	unsigned long restarts;

	(void)state;
	assert_int_equal(sim_tree_open(2, &attr, &d, &t), 0);
	victim = mkgroup(pcstock_tree_root(t), "g");
	/* A miss: a batch charged, the surplus in CPU 0's slot. */
	assert_int_equal(pcstock_group_charge(victim, 1, 0), 0);
	assert_int_equal(slot(d, victim, 0), BATCH - 1);
	assert_int_equal(pcstock_group_usage(victim), BATCH);

	/* A hit whose commit is preceded by a drain of every slot. */
	commit_at = pcstock_percpu_ptr(d, ((struct plain_slot *)
					   pcs_group_state(victim))->handle,
				       0);
	drained = false;
	restarts = pcs_plain_restarts;
	pcstock_explore_hook = drain_at_commit;
	assert_int_equal(pcstock_group_charge(victim, 1, 0), 0);
	pcstock_explore_hook = NULL;
	assert_true(drained);
	/* Restarted once, found the slot empty, missed: a new batch. */
	assert_int_equal(pcs_plain_restarts - restarts, 1);
	assert_int_equal(slot(d, victim, 0), BATCH - 1);
	assert_int_equal(pcstock_group_usage(victim),
			 2 + pcstock_group_stock_pages(victim));
	assert_int_equal(pcstock_group_usage(victim), 2 + BATCH - 1);

	assert_int_equal(pcstock_group_uncharge(victim, 2), 0);
	pcstock_group_drain_all(victim);
	assert_int_equal(pcstock_group_usage(victim), 0);
	rmgroup(victim);
	assert_int_equal(sim_tree_close(d, t), 0);
}

/* ---- RSEQ: the machine code --------------------------------------------- */

/* A tree of plain on an RSEQ domain, or a skip where it cannot run. */
static void rseq_tree(struct pcstock_domain **d, struct pcstock_tree **t)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_PLAIN,
					  .batch = BATCH };
	int err;

	assert_int_equal(pcstock_domain_create(NULL, d), 0);
	err = pcstock_tree_create(*d, &attr, t);
	if (err == -ENOSYS) {
		pcstock_domain_destroy(*d);
		skip();
	}
	assert_int_equal(err, 0);
}

static void test_rseq_hit_follows_the_os_cpu(void **state)
{
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *g;
	cpu_set_t all;
	int a, b, ca, cb;

	(void)state;
	two_cpus_or_skip(&all, &a, &b);
	rseq_tree(&d, &t);
	g = mkgroup(pcstock_tree_root(t), "g");

	pin_to(a);
	ca = pcstock_this_cpu(d);
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);	/* miss */
	assert_int_equal(pcstock_group_charge(g, 2, 0), 0);	/* hit */
	assert_int_equal(slot(d, g, (unsigned int)ca), BATCH - 3);
	assert_int_equal(pcstock_group_usage(g), BATCH);

	pin_to(b);
	cb = pcstock_this_cpu(d);
	assert_true(cb >= 0 && cb != ca);
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);	/* miss */
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);	/* hit */
	assert_int_equal(slot(d, g, (unsigned int)cb), BATCH - 2);
	assert_int_equal(slot(d, g, (unsigned int)ca), BATCH - 3);
	/* An uncharge goes into this CPU's slot, up to the batch. */
	assert_int_equal(pcstock_group_uncharge(g, 2), 0);
	assert_int_equal(slot(d, g, (unsigned int)cb), BATCH);
	assert_int_equal(pcstock_group_uncharge(g, 1), 0);	/* no room */
	assert_int_equal(slot(d, g, (unsigned int)cb), BATCH);
	assert_int_equal(pcstock_group_usage(g),
			 2 + pcstock_group_stock_pages(g));

	pcstock_group_drain_all(g);
	assert_int_equal(slot(d, g, (unsigned int)ca), 0);
	assert_int_equal(slot(d, g, (unsigned int)cb), 0);
	assert_int_equal(pcstock_group_usage(g), 2);
	assert_int_equal(pcstock_group_uncharge(g, 2), 0);
	rmgroup(g);
	assert_int_equal(pcstock_tree_destroy(t), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
	unpin(&all);
}

#define RACERS 4
#define ROUNDS 200000

static struct {
	struct pcstock_tree *t;
	struct pcstock_group *g[2];
	atomic_bool stop;
	long held[RACERS][2];
} R;

static void *racer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, seed = id + 1;

	for (int i = 0; i < ROUNDS; i++) {
		int k = i & 1;
		unsigned long n = 1 + (seed = seed * 1103515245 + 12345) % 7;

		if (!pcstock_group_charge(R.g[k], n, 0))
			R.held[id][k] += (long)n;
		if (R.held[id][k] >= 3) {
			pcstock_group_uncharge(R.g[k], 3);
			R.held[id][k] -= 3;
		}
	}
	return NULL;
}

static void *drainer(void *arg)
{
	(void)arg;
	while (!atomic_load(&R.stop))
		pcstock_group_drain_all(pcstock_tree_root(R.t));
	return NULL;
}

/*
 * More threads than CPUs: sequences are preempted (and restarted) while
 * drain_all closes and takes the slots.  At rest every page is in a
 * caller's hands or a slot; the stock then drains to nothing.
 */
static void test_rseq_race_conserves(void **state)
{
	pthread_t th[RACERS], dr;
	struct pcstock_domain *d;
	long held[2] = { 0, 0 };

	(void)state;
	rseq_tree(&d, &R.t);
	R.g[0] = mkgroup(pcstock_tree_root(R.t), "a");
	R.g[1] = mkgroup(R.g[0], "b");
	memset(R.held, 0, sizeof(R.held));
	atomic_store(&R.stop, false);
	assert_int_equal(pthread_create(&dr, NULL, drainer, NULL), 0);
	for (uintptr_t i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, racer,
						(void *)i), 0);
	for (int i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&R.stop, true);
	pthread_join(dr, NULL);
	for (int i = 0; i < RACERS; i++) {
		held[0] += R.held[i][0];
		held[1] += R.held[i][1];
	}
	assert_int_equal(pcstock_group_usage(R.g[1]),
			 held[1] + pcstock_group_stock_pages(R.g[1]));
	assert_int_equal(pcstock_group_usage(R.g[0]),
			 held[0] + held[1] + pcstock_group_stock_pages(R.g[0]));
	/* b's destroy takes its slots: they go up to a. */
	pcstock_group_uncharge(R.g[1], (unsigned long)held[1]);
	rmgroup(R.g[1]);
	pcstock_group_drain_all(R.g[0]);
	assert_int_equal(pcstock_group_usage(R.g[0]), held[0]);
	pcstock_group_uncharge(R.g[0], (unsigned long)held[0]);
	rmgroup(R.g[0]);
	assert_int_equal(pcstock_group_usage(pcstock_tree_root(R.t)), 0);
	print_message("plain: %lu sequences restarted so far\n",
		      pcs_plain_restarts);
	assert_int_equal(pcstock_tree_destroy(R.t), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_model_restart_against_drain),
		cmocka_unit_test(test_rseq_hit_follows_the_os_cpu),
		cmocka_unit_test(test_rseq_race_conserves),
	};

	/* "abort": the model's case alone (its mutant's test). */
	if (argc > 1 && !strcmp(argv[1], "abort"))
		return _cmocka_run_group_tests("test_plain_abort", all, 1,
					       NULL, NULL);
	return cmocka_run_group_tests(all, NULL, NULL);
}
