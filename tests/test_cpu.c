// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_cpu.c - domains: topology, the four CPU modes, CPU states, offline
 * hooks, bad input and allocation failure.
 *
 * Usage: test_cpu [unit|taskset|stress].  "taskset" expects to run under
 * `taskset -c 0` (ctest does that) and checks that a domain sees only the
 * process's CPUs; "stress" races hook registration against offlining.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/cpu.h>

#include "domain.h"
#include "internal.h"

#define SYNTH "node:2 core:8 pu:2"

static struct pcstock_domain *domain_new(unsigned int nr_cpus,
					 enum pcstock_cpu_mode mode,
					 const char *topology)
{
	struct pcstock_domain_attr attr = { nr_cpus, mode, topology };
	struct pcstock_domain *d = NULL;

	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	assert_non_null(d);
	return d;
}

/* Fault injection: fail the fault_nth hit of a site matching fault_site. */
static unsigned long fault_nth, fault_hits;
static const char *fault_site;

static bool fail_nth(const char *site)
{
	if (fault_site && strcmp(site, fault_site))
		return false;
	return ++fault_hits == fault_nth;
}

static void fault_arm(unsigned long nth, const char *site)
{
	fault_nth = nth;
	fault_hits = 0;
	fault_site = site;
	pcstock_fault_hook = fail_nth;
}

static void fault_disarm(void)
{
	pcstock_fault_hook = NULL;
}

static void run_threads(unsigned int n, void *(*fn)(void *), void *args,
			size_t arg_size)
{
	pthread_t *tid = calloc(n, sizeof(*tid));
	unsigned int i;

	assert_non_null(tid);
	for (i = 0; i < n; i++)
		assert_int_equal(pthread_create(&tid[i], NULL, fn,
				 (char *)args + i * arg_size), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(pthread_join(tid[i], NULL), 0);
	free(tid);
}

static int allowed_cpus(cpu_set_t *set)
{
	assert_int_equal(sched_getaffinity(0, sizeof(*set), set), 0);
	return CPU_COUNT(set);
}

/* ---- creation and topology ---------------------------------------------- */

static void test_create_rejects_bad_input(void **state)
{
	static const char *const bad_topologies[] = {
		"", "foo:2", "node:2 core:x pu:2", "node:2 core:8 pu:2 junk",
	};
	struct pcstock_domain_attr attr = { 4, PCSTOCK_CPU_SIM, NULL };
	struct pcstock_domain *d = (struct pcstock_domain *)&attr;
	size_t i;

	assert_int_equal(pcstock_domain_create(&attr, NULL), -EINVAL);
	attr.mode = (enum pcstock_cpu_mode)(PCSTOCK_CPU_COOP + 1);
	assert_int_equal(pcstock_domain_create(&attr, &d), -EINVAL);
	attr.mode = PCSTOCK_CPU_SIM;
	attr.nr_cpus = PCSTOCK_MAX_CPUS + 1;
	assert_int_equal(pcstock_domain_create(&attr, &d), -EINVAL);
	attr.nr_cpus = 4;
	for (i = 0; i < sizeof(bad_topologies) / sizeof(*bad_topologies); i++) {
		attr.topology = bad_topologies[i];
		assert_int_equal(pcstock_domain_create(&attr, &d), -EINVAL);
	}
	/* Every failure left @out alone. */
	assert_ptr_equal(d, (struct pcstock_domain *)&attr);
}

/* Topologies hwloc would take minutes to build are refused at once. */
static void test_create_refuses_huge_topologies(void **state)
{
	static const char *const huge[] = {
		"core:1024 pu:2",
		"node:100000 core:100000 pu:100000",
		"pack:4 [numa] core:512 pu:1",
		"99999999999999999999999 2",
	};
	struct pcstock_domain_attr attr = { 4, PCSTOCK_CPU_SIM, NULL };
	struct pcstock_domain *d = NULL;
	char *longest = malloc(PCSTOCK_MAX_TOPOLOGY_LEN + 2);

	for (size_t i = 0; i < sizeof(huge) / sizeof(*huge); i++) {
		attr.topology = huge[i];
		assert_int_equal(pcstock_domain_create(&attr, &d), -E2BIG);
	}
	assert_non_null(longest);
	memset(longest, ' ', PCSTOCK_MAX_TOPOLOGY_LEN + 1);
	memcpy(longest, "pu:2", 4);
	longest[PCSTOCK_MAX_TOPOLOGY_LEN + 1] = '\0';
	attr.topology = longest;
	assert_int_equal(pcstock_domain_create(&attr, &d), -E2BIG);
	assert_null(d);
	longest[PCSTOCK_MAX_TOPOLOGY_LEN] = '\0';	/* at the limit: fine */
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	pcstock_domain_destroy(d);
	free(longest);
	/* the limit itself, attributes and memory children are accepted */
	attr.topology = "pack:2 [numa] core:256 pu:2";
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	assert_int_equal(pcstock_domain_nr_cpus(d), 4);
	pcstock_domain_destroy(d);
	attr.topology = "pack:2 [numa(memory=1GB)] core:2 pu:2";
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	pcstock_domain_destroy(d);
}

static void test_create_defaults_to_rseq_on_allowed_pus(void **state)
{
	struct pcstock_domain *d = NULL;
	cpu_set_t set;
	unsigned int cpu;

	assert_int_equal(pcstock_domain_create(NULL, &d), 0);
	assert_int_equal(pcstock_domain_mode(d), PCSTOCK_CPU_RSEQ);
	/* a thread that never entered is a CPU of it, so it has a stock */
	assert_true(pcstock_this_cpu(d) >= 0);
	assert_int_equal(pcstock_domain_nr_cpus(d), allowed_cpus(&set));
	for (cpu = 0; cpu < pcstock_domain_nr_cpus(d); cpu++) {
		int os = pcstock_cpu_os_index(d, cpu);

		assert_true(os >= 0 && CPU_ISSET(os, &set));
		assert_int_equal(pcstock_cpu_numa_node(d, cpu), 0);
		assert_true(pcstock_cpu_core(d, cpu) >= 0);
	}
	pcstock_domain_destroy(d);
	pcstock_domain_destroy(NULL);
	assert_int_equal(pcstock_domain_nr_cpus(NULL), 0);
	assert_int_equal(pcstock_domain_mode(NULL), PCSTOCK_CPU_SIM);
	assert_int_equal(pcstock_cpu_core(NULL, 0), -ERANGE);
}

static void test_synthetic_topology_maps_cores_and_nodes(void **state)
{
	struct pcstock_domain *d = domain_new(0, PCSTOCK_CPU_SIM, SYNTH);
	unsigned int cpu;

	assert_int_equal(pcstock_domain_nr_cpus(d), 32);
	for (cpu = 0; cpu < 32; cpu++) {
		assert_int_equal(pcstock_cpu_core(d, cpu), cpu / 2);
		assert_int_equal(pcstock_cpu_numa_node(d, cpu), cpu / 16);
		assert_int_equal(pcstock_cpu_os_index(d, cpu), cpu);
	}
	assert_int_equal(pcstock_cpu_core(d, 32), -ERANGE);
	assert_int_equal(pcstock_cpu_numa_node(d, 32), -ERANGE);
	assert_int_equal(pcstock_cpu_os_index(d, 32), -ERANGE);
	pcstock_domain_destroy(d);

	/* More CPUs than PUs wrap round-robin: CPU 35 is PU 3. */
	d = domain_new(40, PCSTOCK_CPU_SIM, SYNTH);
	assert_int_equal(pcstock_domain_nr_cpus(d), 40);
	assert_int_equal(pcstock_cpu_core(d, 35), 1);
	assert_int_equal(pcstock_cpu_numa_node(d, 35), 0);
	assert_int_equal(pcstock_cpu_os_index(d, 35), 3);
	assert_int_equal(pcstock_cpu_numa_node(d, 39), 0);
	assert_int_equal(pcstock_cpu_numa_node(d, 31), 1);
	pcstock_domain_destroy(d);

	/* Without cores each PU is its own core. */
	d = domain_new(0, PCSTOCK_CPU_SIM, "pu:1024");
	assert_int_equal(pcstock_domain_nr_cpus(d), 1024);
	assert_int_equal(pcstock_cpu_core(d, 1023), 1023);
	assert_int_equal(pcstock_cpu_numa_node(d, 1023), 0);
	pcstock_domain_destroy(d);
}

/* Run under `taskset -c 0`: the domain sees exactly that CPU. */
static void test_real_topology_respects_cpuset(void **state)
{
	struct pcstock_domain *d = domain_new(0, PCSTOCK_CPU_RSEQ, NULL);
	cpu_set_t set;

	assert_int_equal(allowed_cpus(&set), 1);
	assert_true(CPU_ISSET(0, &set));
	assert_int_equal(pcstock_domain_nr_cpus(d), 1);
	assert_int_equal(pcstock_cpu_os_index(d, 0), 0);
	assert_int_equal(pcstock_this_cpu(d), 0);
	pcstock_domain_destroy(d);
}

/* ---- SIM ---------------------------------------------------------------- */

static void test_sim_enter_exit(void **state)
{
	struct pcstock_domain *d = domain_new(8, PCSTOCK_CPU_SIM, NULL);
	struct pcstock_domain *e = domain_new(8, PCSTOCK_CPU_SIM, NULL);

	assert_int_equal(pcstock_this_cpu(d), -1);
	assert_int_equal(pcstock_this_cpu(NULL), -1);
	assert_int_equal(pcstock_cpu_exit(d), -EINVAL);
	assert_int_equal(pcstock_cpu_enter(NULL, 0), -EINVAL);
	assert_int_equal(pcstock_cpu_enter(d, 8), -ERANGE);
	assert_int_equal(pcstock_this_cpu(d), -1);

	assert_int_equal(pcstock_cpu_enter(d, 3), 0);
	assert_int_equal(pcstock_this_cpu(d), 3);
	assert_int_equal(pcs_this_cpu(d), 3);
	assert_int_equal(pcstock_this_cpu(e), -1);
	/* A second CPU, here or elsewhere, needs an exit first. */
	assert_int_equal(pcstock_cpu_enter(d, 5), -EBUSY);
	assert_int_equal(pcstock_cpu_enter(e, 5), -EBUSY);
	assert_int_equal(pcstock_cpu_exit(e), -EINVAL);
	assert_int_equal(pcstock_this_cpu(d), 3);

	assert_int_equal(pcstock_cpu_exit(d), 0);
	assert_int_equal(pcstock_this_cpu(d), -1);
	assert_int_equal(pcstock_cpu_exit(d), -EINVAL);

	/* Then a CPU of the other domain. */
	assert_int_equal(pcstock_cpu_enter(e, 7), 0);
	assert_int_equal(pcstock_this_cpu(e), 7);
	assert_int_equal(pcstock_this_cpu(d), -1);
	assert_int_equal(pcstock_cpu_exit(e), 0);
	pcstock_domain_destroy(e);
	pcstock_domain_destroy(d);
}

static void test_destroyed_domain_releases_its_threads(void **state)
{
	static const enum pcstock_cpu_mode modes[] = {
		PCSTOCK_CPU_SIM, PCSTOCK_CPU_PINNED,
	};
	size_t i;

	for (i = 0; i < 2; i++) {
		struct pcstock_domain *d = domain_new(2, modes[i], NULL);
		struct pcstock_domain *e;

		assert_int_equal(pcstock_cpu_enter(d, 1), 0);
		pcstock_domain_destroy(d);
		/* Often at the same address: the old record must not match. */
		e = domain_new(2, modes[i], NULL);
		assert_int_equal(pcstock_this_cpu(e), -1);
		assert_int_equal(pcstock_cpu_exit(e), -EINVAL);
		assert_int_equal(pcstock_cpu_enter(e, 0), 0);
		assert_int_equal(pcstock_this_cpu(e), 0);
		assert_int_equal(pcstock_cpu_exit(e), 0);
		pcstock_domain_destroy(e);
	}
}

struct owner_try {
	struct pcstock_domain *d;
	int taken;		/* enter() on the CPU the main thread owns */
	int other;		/* enter() on a free CPU */
	int idle;
};

static void *owner_try(void *p)
{
	struct owner_try *t = p;

	t->taken = pcstock_cpu_enter(t->d, 0);
	t->other = pcstock_cpu_enter(t->d, 1);
	t->idle = pcstock_cpu_idle(t->d);
	pcstock_cpu_exit(t->d);
	return NULL;
}

/*
 * PINNED and COOP CPUs have one owner at a time; SIM CPUs may be shared.
 * Exiting gives the CPU up.
 */
static void test_exclusive_modes_one_owner(void **state)
{
	static const enum pcstock_cpu_mode modes[] = {
		PCSTOCK_CPU_SIM, PCSTOCK_CPU_PINNED, PCSTOCK_CPU_COOP,
	};

	for (size_t i = 0; i < 3; i++) {
		struct owner_try t = { .d = domain_new(2, modes[i], NULL) };

		assert_int_equal(pcstock_cpu_idle(t.d), -EINVAL);
		assert_int_equal(pcstock_cpu_idle(NULL), -EINVAL);
		assert_int_equal(pcstock_cpu_enter(t.d, 0), 0);
		assert_int_equal(pcstock_cpu_idle(t.d), 0);
		run_threads(1, owner_try, &t, sizeof(t));
		assert_int_equal(t.taken, modes[i] == PCSTOCK_CPU_SIM ?
						  0 : -EBUSY);
		if (modes[i] != PCSTOCK_CPU_SIM) {
			assert_int_equal(t.other, 0);
			assert_int_equal(t.idle, 0);
		}
		assert_int_equal(pcstock_cpu_exit(t.d), 0);
		t.taken = -1;
		run_threads(1, owner_try, &t, sizeof(t));
		assert_int_equal(t.taken, 0);
		pcstock_domain_destroy(t.d);
	}
}

#define SIM_CPUS 4096U
#define SIM_THREADS 32U
#define SHARED_CPU 4095U

struct sim_thread {
	struct pcstock_domain *d;
	pthread_barrier_t *barrier;
	unsigned int index;
	unsigned int errors;
	int shared_seen;
};

static void *sim_thread(void *p)
{
	struct sim_thread *t = p;
	unsigned int cpu;

	/* Distinct CPUs: thread i is i, i + 32, ... in turn. */
	for (cpu = t->index; cpu < SIM_CPUS; cpu += SIM_THREADS) {
		t->errors += pcstock_cpu_enter(t->d, cpu) != 0;
		t->errors += pcstock_this_cpu(t->d) != (int)cpu;
		t->errors += pcstock_cpu_exit(t->d) != 0;
	}
	/* One CPU shared by every thread at once. */
	t->errors += pcstock_cpu_enter(t->d, SHARED_CPU) != 0;
	pthread_barrier_wait(t->barrier);
	t->shared_seen = pcstock_this_cpu(t->d);
	pthread_barrier_wait(t->barrier);
	t->errors += pcstock_cpu_exit(t->d) != 0;
	t->errors += pcstock_this_cpu(t->d) != -1;
	return NULL;
}

static void test_sim_4096_cpus_on_2_cores(void **state)
{
	struct pcstock_domain *d = domain_new(SIM_CPUS, PCSTOCK_CPU_SIM,
					      "core:2 pu:1");
	struct sim_thread t[SIM_THREADS];
	pthread_barrier_t barrier;
	unsigned int i;

	assert_int_equal(pcstock_cpu_core(d, SIM_CPUS - 1), 1);
	assert_int_equal(pcstock_cpu_core(d, SIM_CPUS - 2), 0);
	pthread_barrier_init(&barrier, NULL, SIM_THREADS);
	for (i = 0; i < SIM_THREADS; i++)
		t[i] = (struct sim_thread){ d, &barrier, i, 0, -2 };
	run_threads(SIM_THREADS, sim_thread, t, sizeof(*t));
	for (i = 0; i < SIM_THREADS; i++) {
		assert_int_equal(t[i].errors, 0);
		assert_int_equal(t[i].shared_seen, SHARED_CPU);
	}
	pthread_barrier_destroy(&barrier);
	assert_int_equal(pcstock_this_cpu(d), -1);
	pcstock_domain_destroy(d);
}

/* ---- PINNED ------------------------------------------------------------- */

static void affinity(cpu_set_t *set)
{
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(*set),
						set), 0);
}

/* Enter @cpu and check the thread runs on @os alone; exit restores. */
static void check_pinned(struct pcstock_domain *d, unsigned int cpu, int os)
{
	cpu_set_t before, during, after;

	affinity(&before);
	assert_int_equal(pcstock_cpu_enter(d, cpu), 0);
	assert_int_equal(pcstock_this_cpu(d), cpu);
	affinity(&during);
	assert_int_equal(CPU_COUNT(&during), 1);
	assert_true(CPU_ISSET(os, &during));
	assert_int_equal(sched_getcpu(), os);
	assert_int_equal(pcstock_cpu_exit(d), 0);
	affinity(&after);
	assert_true(CPU_EQUAL(&before, &after));
}

static void test_pinned_binds_thread_to_the_cpus_pu(void **state)
{
	cpu_set_t set;
	unsigned int npu = (unsigned int)allowed_cpus(&set), cpu;
	/* Twice as many CPUs as PUs: the second half wraps round-robin. */
	struct pcstock_domain *d = domain_new(2 * npu, PCSTOCK_CPU_PINNED,
					      NULL);

	for (cpu = 0; cpu < 2 * npu; cpu++) {
		int os = pcstock_cpu_os_index(d, cpu);

		assert_int_equal(os, pcstock_cpu_os_index(d, cpu % npu));
		check_pinned(d, cpu, os);
	}
	assert_int_equal(pcstock_cpu_enter(d, 2 * npu), -ERANGE);
	pcstock_domain_destroy(d);
}

/* A synthetic PINNED domain binds to the real PUs round-robin. */
static void test_pinned_synthetic_binds_real_pus(void **state)
{
	struct pcstock_domain *d = domain_new(0, PCSTOCK_CPU_PINNED, SYNTH);
	struct pcstock_domain *real = domain_new(0, PCSTOCK_CPU_SIM, NULL);
	unsigned int npu = pcstock_domain_nr_cpus(real), cpu;

	for (cpu = 0; cpu < pcstock_domain_nr_cpus(d); cpu += 7)
		check_pinned(d, cpu, pcstock_cpu_os_index(real, cpu % npu));
	/* What the domain reports is still the synthetic machine. */
	assert_int_equal(pcstock_cpu_os_index(d, 21), 21);
	assert_int_equal(pcstock_cpu_numa_node(d, 21), 1);
	pcstock_domain_destroy(real);
	pcstock_domain_destroy(d);
}

static void test_pinned_refused_binding_changes_nothing(void **state)
{
	struct pcstock_domain *d = domain_new(0, PCSTOCK_CPU_PINNED, NULL);
	cpu_set_t before, after;

	affinity(&before);
	fault_arm(1, "cpu-bind");
	assert_int_equal(pcstock_cpu_enter(d, 0), -EPERM);
	fault_arm(1, "cpu-enter");
	assert_int_equal(pcstock_cpu_enter(d, 0), -ENOMEM);
	fault_disarm();
	affinity(&after);
	assert_true(CPU_EQUAL(&before, &after));
	assert_int_equal(pcstock_this_cpu(d), -1);
	assert_int_equal(pcstock_cpu_exit(d), -EINVAL);
	/* And the thread can still enter. */
	check_pinned(d, 0, pcstock_cpu_os_index(d, 0));
	pcstock_domain_destroy(d);
}

/* ---- RSEQ --------------------------------------------------------------- */

/* The CPU of @d on OS CPU @os, or -1. */
static int dense_index(struct pcstock_domain *d, int os)
{
	unsigned int cpu;

	for (cpu = 0; cpu < pcstock_domain_nr_cpus(d); cpu++)
		if (pcstock_cpu_os_index(d, cpu) == os)
			return (int)cpu;
	return -1;
}

/* Move the thread onto each allowed CPU and compare with the mapping. */
static void check_rseq_mapping(struct pcstock_domain *d)
{
	cpu_set_t all, one;
	int os;

	allowed_cpus(&all);
	for (os = 0; os < CPU_SETSIZE; os++) {
		if (!CPU_ISSET(os, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(os, &one);
		assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
		assert_int_equal(sched_getcpu(), os);
		assert_int_equal(pcstock_this_cpu(d), dense_index(d, os));
	}
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
}

static void test_rseq_maps_os_cpu_to_dense_index(void **state)
{
	struct pcstock_domain *d = domain_new(0, PCSTOCK_CPU_RSEQ, NULL);
	cpu_set_t set;
	int npu = allowed_cpus(&set);

	assert_int_equal(pcstock_domain_nr_cpus(d), npu);
	assert_int_equal(pcstock_cpu_enter(d, 0), -EOPNOTSUPP);
	assert_int_equal(pcstock_cpu_exit(d), -EINVAL);
	check_rseq_mapping(d);
	/* The sched_getcpu() path, used when glibc has no rseq area. */
	d->use_rseq = false;
	check_rseq_mapping(d);
	pcstock_domain_destroy(d);

	/* One CPU on several PUs: the other PUs are no CPU of the domain. */
	d = domain_new(1, PCSTOCK_CPU_RSEQ, NULL);
	check_rseq_mapping(d);
	if (npu > 1)
		assert_int_equal(dense_index(d, pcstock_cpu_os_index(d, 0) + 1),
				 -1);
	pcstock_domain_destroy(d);
}

/* ---- THREAD ------------------------------------------------------------- */

struct thread_mode {
	struct pcstock_domain *d;
	struct pcstock_domain *e;
	pthread_barrier_t *barrier;
	int cpu;
	int cpu_e;
	unsigned int errors;
};

static void *thread_mode_thread(void *p)
{
	struct thread_mode *t = p;
	int i;

	if (t->barrier)
		pthread_barrier_wait(t->barrier);
	t->cpu = pcstock_this_cpu(t->d);
	t->cpu_e = t->e ? pcstock_this_cpu(t->e) : -1;
	/* Stable, also when alternating between two domains. */
	for (i = 0; i < 100; i++) {
		t->errors += pcstock_this_cpu(t->d) != t->cpu;
		t->errors += t->e && pcstock_this_cpu(t->e) != t->cpu_e;
	}
	t->errors += pcstock_cpu_enter(t->d, 0) != -EOPNOTSUPP;
	return NULL;
}

static void test_thread_mode_wraps_modulo_nr_cpus(void **state)
{
	struct pcstock_domain *d = domain_new(3, PCSTOCK_CPU_THREAD, NULL);
	struct pcstock_domain *e = domain_new(5, PCSTOCK_CPU_THREAD, NULL);
	struct thread_mode t[7];
	pthread_barrier_t barrier;
	unsigned int i, seen[3] = { 0 };

	/* One at a time: first users get 0, 1, 2, 0, ... */
	for (i = 0; i < 7; i++) {
		t[i] = (struct thread_mode){ d, e, NULL, -2, -2, 0 };
		run_threads(1, thread_mode_thread, &t[i], sizeof(t[i]));
		assert_int_equal(t[i].errors, 0);
		assert_int_equal(t[i].cpu, i % 3);
		assert_int_equal(t[i].cpu_e, i % 5);
	}
	pcstock_domain_destroy(d);

	/* At once: each CPU given to exactly two of six threads. */
	d = domain_new(3, PCSTOCK_CPU_THREAD, NULL);
	pthread_barrier_init(&barrier, NULL, 6);
	for (i = 0; i < 6; i++)
		t[i] = (struct thread_mode){ d, NULL, &barrier, -2, -2, 0 };
	run_threads(6, thread_mode_thread, t, sizeof(*t));
	for (i = 0; i < 6; i++) {
		assert_int_equal(t[i].errors, 0);
		assert_in_range(t[i].cpu, 0, 2);
		seen[t[i].cpu]++;
	}
	for (i = 0; i < 3; i++)
		assert_int_equal(seen[i], 2);
	pthread_barrier_destroy(&barrier);
	pcstock_domain_destroy(e);
	pcstock_domain_destroy(d);
}

/*
 * The assignment is one read-modify-write: another thread's first use
 * that lands between this thread's read of the next CPU to give and its
 * write still gets a CPU of its own.  Not left to timing: the explore hook
 * stops this thread just before each write it makes to the round-robin
 * counter and runs the other thread's first use there, whole.
 */
static struct pcstock_domain *rr_domain;
static pthread_t rr_first;
static bool rr_ran;
static int rr_other_cpu = -1;

static void *rr_other(void *p)
{
	(void)p;
	rr_other_cpu = pcstock_this_cpu(rr_domain);
	return NULL;
}

static void rr_hook(enum pcs_atomic_op op, const void *obj)
{
	pthread_t th;

	if (rr_ran || obj != &rr_domain->next_thread ||
	    !pthread_equal(pthread_self(), rr_first) || op == PCS_OP_LOAD)
		return;
	rr_ran = true;
	if (!pthread_create(&th, NULL, rr_other, NULL))
		pthread_join(th, NULL);
}

static void test_thread_mode_assignment_is_one_rmw(void **state)
{
	int cpu;

	(void)state;
	rr_domain = domain_new(3, PCSTOCK_CPU_THREAD, NULL);
	rr_first = pthread_self();
	pcstock_explore_hook = rr_hook;
	cpu = pcstock_this_cpu(rr_domain);
	pcstock_explore_hook = NULL;
	assert_true(rr_ran);
	/* The other thread's assignment came first: CPU 0, then 1. */
	assert_int_equal(rr_other_cpu, 0);
	assert_int_equal(cpu, 1);
	pcstock_domain_destroy(rr_domain);
}

/* ---- CPU states and offline hooks ---------------------------------------- */

static void test_online_and_isolated_flags(void **state)
{
	struct pcstock_domain *d = domain_new(4, PCSTOCK_CPU_SIM, NULL);

	assert_true(pcstock_cpu_online(d, 3));
	assert_false(pcstock_cpu_isolated(d, 3));
	assert_false(pcstock_cpu_online(d, 4));
	assert_false(pcstock_cpu_isolated(d, 4));
	assert_false(pcstock_cpu_online(NULL, 0));
	assert_int_equal(pcstock_cpu_set_online(d, 4, false), -ERANGE);
	assert_int_equal(pcstock_cpu_set_isolated(d, 4, true), -ERANGE);
	assert_int_equal(pcstock_cpu_set_online(NULL, 0, false), -EINVAL);
	assert_int_equal(pcstock_cpu_set_isolated(NULL, 0, true), -EINVAL);

	assert_int_equal(pcstock_cpu_set_online(d, 2, false), 0);
	assert_int_equal(pcstock_cpu_set_isolated(d, 1, true), 0);
	assert_false(pcstock_cpu_online(d, 2));
	assert_true(pcstock_cpu_online(d, 1));
	assert_true(pcstock_cpu_isolated(d, 1));
	assert_false(pcstock_cpu_isolated(d, 2));
	assert_int_equal(pcstock_cpu_set_online(d, 2, true), 0);
	assert_int_equal(pcstock_cpu_set_isolated(d, 1, false), 0);
	assert_true(pcstock_cpu_online(d, 2));
	assert_false(pcstock_cpu_isolated(d, 1));
	pcstock_domain_destroy(d);
}

struct hook_log {
	struct pcstock_domain *d;
	unsigned int calls[4];
	unsigned int wrong_domain;
};

static void hook_record(struct pcstock_domain *d, unsigned int cpu, void *arg)
{
	struct hook_log *log = arg;

	log->wrong_domain += d != log->d;
	log->calls[cpu]++;
}

static void test_offline_calls_every_hook_once(void **state)
{
	struct pcstock_domain *d = domain_new(4, PCSTOCK_CPU_SIM, NULL);
	struct hook_log log[3] = { { .d = d }, { .d = d }, { .d = d } };
	struct pcstock_cpu_hook *h[3];
	unsigned int i;

	assert_int_equal(pcstock_cpu_hook_add(NULL, hook_record, log, &h[0]),
			 -EINVAL);
	assert_int_equal(pcstock_cpu_hook_add(d, NULL, log, &h[0]), -EINVAL);
	assert_int_equal(pcstock_cpu_hook_add(d, hook_record, log, NULL),
			 -EINVAL);
	for (i = 0; i < 3; i++)
		assert_int_equal(pcstock_cpu_hook_add(d, hook_record, &log[i],
						      &h[i]), 0);

	assert_int_equal(pcstock_cpu_set_online(d, 2, false), 0);
	/* Already offline, then online: no more calls. */
	assert_int_equal(pcstock_cpu_set_online(d, 2, false), 0);
	assert_int_equal(pcstock_cpu_set_online(d, 2, true), 0);
	assert_int_equal(pcstock_cpu_set_online(d, 2, true), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(log[i].calls[2], 1);
		assert_int_equal(log[i].calls[0] + log[i].calls[1] +
				 log[i].calls[3], 0);
	}

	/* Removing the middle hook: only the others hear the next offline. */
	pcstock_cpu_hook_remove(d, h[1]);
	pcstock_cpu_hook_remove(d, NULL);
	assert_int_equal(pcstock_cpu_set_online(d, 0, false), 0);
	assert_int_equal(log[0].calls[0], 1);
	assert_int_equal(log[1].calls[0], 0);
	assert_int_equal(log[2].calls[0], 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(log[i].wrong_domain, 0);
	pcstock_cpu_hook_remove(d, h[0]);
	/* h[2] is left registered: destroy frees it. */
	pcstock_domain_destroy(d);
}

/* ---- allocation failure -------------------------------------------------- */

static void test_create_enomem_at_every_site(void **state)
{
	static const enum pcstock_cpu_mode modes[] = {
		PCSTOCK_CPU_SIM, PCSTOCK_CPU_PINNED, PCSTOCK_CPU_RSEQ,
		PCSTOCK_CPU_THREAD,
	};
	static const char *const topologies[] = { NULL, SYNTH };
	size_t m, t;

	for (m = 0; m < 4; m++) {
		for (t = 0; t < 2; t++) {
			struct pcstock_domain_attr attr = {
				8, modes[m], topologies[t]
			};
			struct pcstock_domain *d = NULL;
			unsigned long k;
			int err = -ENOMEM;

			for (k = 1; err; k++) {
				fault_arm(k, NULL);
				err = pcstock_domain_create(&attr, &d);
				fault_disarm();
				if (err) {
					assert_int_equal(err, -ENOMEM);
					assert_null(d);
				}
			}
			/* At least the domain, topology, load and arena. */
			assert_true(k > 5);
			assert_int_equal(pcstock_domain_nr_cpus(d), 8);
			pcstock_domain_destroy(d);
		}
	}
}

static void test_hook_add_enomem(void **state)
{
	struct pcstock_domain *d = domain_new(2, PCSTOCK_CPU_SIM, NULL);
	struct hook_log log = { .d = d };
	struct pcstock_cpu_hook *h = NULL;

	fault_arm(1, NULL);
	assert_int_equal(pcstock_cpu_hook_add(d, hook_record, &log, &h),
			 -ENOMEM);
	fault_disarm();
	assert_null(h);
	assert_int_equal(pcstock_cpu_set_online(d, 1, false), 0);
	assert_int_equal(log.calls[1], 0);
	assert_int_equal(pcstock_cpu_hook_add(d, hook_record, &log, &h), 0);
	assert_int_equal(pcstock_cpu_set_online(d, 1, true), 0);
	assert_int_equal(pcstock_cpu_set_online(d, 1, false), 0);
	assert_int_equal(log.calls[1], 1);
	pcstock_cpu_hook_remove(d, h);
	pcstock_domain_destroy(d);
}

/* ---- stress: hooks come and go while CPUs go offline --------------------- */

#define STRESS_CPUS 4U
#define STRESS_ROUNDS 2000U
#define STRESS_ADDERS 3U
#define HOOK_MAGIC 0x600dcafeU

struct stress {
	struct pcstock_domain *d;
	_Atomic unsigned int stop;
	_Atomic unsigned int bad_calls;
	_Atomic unsigned int offlines[STRESS_CPUS];
	_Atomic unsigned int heard[STRESS_CPUS];
};

struct stress_arg {
	struct stress *s;
	unsigned int magic;
};

static void stress_hook(struct pcstock_domain *d, unsigned int cpu, void *p)
{
	struct stress_arg *a = p;

	/* A removed hook would find freed memory here (ASan, TSan). */
	if (a->magic != HOOK_MAGIC || d != a->s->d || cpu >= STRESS_CPUS)
		atomic_fetch_add(&a->s->bad_calls, 1);
}

static void stress_count(struct pcstock_domain *d, unsigned int cpu, void *p)
{
	struct stress *s = p;

	atomic_fetch_add(&s->heard[cpu], 1);
}

static void *stress_adder(void *p)
{
	struct stress *s = *(struct stress **)p;
	unsigned int i;

	for (i = 0; i < STRESS_ROUNDS; i++) {
		struct stress_arg *a = malloc(sizeof(*a));
		struct pcstock_cpu_hook *h;

		if (a)
			*a = (struct stress_arg){ s, HOOK_MAGIC };
		if (!a || pcstock_cpu_hook_add(s->d, stress_hook, a, &h)) {
			atomic_fetch_add(&s->bad_calls, 1);
			free(a);
			break;
		}
		if (i % 3 == 0)
			sched_yield();
		pcstock_cpu_hook_remove(s->d, h);
		a->magic = 0;
		free(a);
	}
	atomic_fetch_add(&s->stop, 1);
	return NULL;
}

static void *stress_hotplug(void *p)
{
	struct stress *s = *(struct stress **)p;
	unsigned int cpu = 0;

	/* At least one sweep over every CPU, however the adders run. */
	do {
		pcstock_cpu_set_online(s->d, cpu, false);
		atomic_fetch_add(&s->offlines[cpu], 1);
		pcstock_cpu_set_online(s->d, cpu, true);
		cpu = (cpu + 1) % STRESS_CPUS;
	} while (cpu || atomic_load(&s->stop) < STRESS_ADDERS);
	return NULL;
}

static void test_hooks_race_with_offline(void **state)
{
	struct stress s = { .d = domain_new(STRESS_CPUS, PCSTOCK_CPU_SIM,
						 NULL) };
	struct stress *args[STRESS_ADDERS];
	struct pcstock_cpu_hook *counter;
	pthread_t hotplug;
	unsigned int i;

	for (i = 0; i < STRESS_ADDERS; i++)
		args[i] = &s;
	assert_int_equal(pcstock_cpu_hook_add(s.d, stress_count, &s, &counter),
			 0);
	assert_int_equal(pthread_create(&hotplug, NULL, stress_hotplug,
					&args[0]), 0);
	run_threads(STRESS_ADDERS, stress_adder, args, sizeof(*args));
	assert_int_equal(pthread_join(hotplug, NULL), 0);
	pcstock_cpu_hook_remove(s.d, counter);

	assert_int_equal(atomic_load(&s.bad_calls), 0);
	/* The hook registered throughout heard every offline exactly once. */
	for (i = 0; i < STRESS_CPUS; i++) {
		assert_true(atomic_load(&s.offlines[i]) > 0);
		assert_int_equal(atomic_load(&s.heard[i]),
				 atomic_load(&s.offlines[i]));
	}
	pcstock_domain_destroy(s.d);
}

int main(int argc, char **argv)
{
	const char *group = argc > 1 ? argv[1] : "unit";
	const struct CMUnitTest unit[] = {
		cmocka_unit_test(test_create_rejects_bad_input),
		cmocka_unit_test(test_create_defaults_to_rseq_on_allowed_pus),
		cmocka_unit_test(test_create_refuses_huge_topologies),
		cmocka_unit_test(test_synthetic_topology_maps_cores_and_nodes),
		cmocka_unit_test(test_sim_enter_exit),
		cmocka_unit_test(test_destroyed_domain_releases_its_threads),
		cmocka_unit_test(test_exclusive_modes_one_owner),
		cmocka_unit_test(test_sim_4096_cpus_on_2_cores),
		cmocka_unit_test(test_pinned_binds_thread_to_the_cpus_pu),
		cmocka_unit_test(test_pinned_synthetic_binds_real_pus),
		cmocka_unit_test(test_pinned_refused_binding_changes_nothing),
		cmocka_unit_test(test_rseq_maps_os_cpu_to_dense_index),
		cmocka_unit_test(test_thread_mode_wraps_modulo_nr_cpus),
		cmocka_unit_test(test_thread_mode_assignment_is_one_rmw),
		cmocka_unit_test(test_online_and_isolated_flags),
		cmocka_unit_test(test_offline_calls_every_hook_once),
		cmocka_unit_test(test_create_enomem_at_every_site),
		cmocka_unit_test(test_hook_add_enomem),
	};
	const struct CMUnitTest taskset[] = {
		cmocka_unit_test(test_real_topology_respects_cpuset),
	};
	const struct CMUnitTest stress[] = {
		cmocka_unit_test(test_hooks_race_with_offline),
	};

	if (!strcmp(group, "taskset"))
		return cmocka_run_group_tests_name("cpu-taskset", taskset,
						   NULL, NULL);
	if (!strcmp(group, "stress"))
		return cmocka_run_group_tests_name("cpu-stress", stress, NULL,
						   NULL);
	return cmocka_run_group_tests_name("cpu", unit, NULL, NULL);
}
