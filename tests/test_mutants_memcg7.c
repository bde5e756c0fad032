// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mutants_memcg7.c - a case of memcg7's owner protocol that a
 * mutation study found no test for (docs/mutation.md): it fails on the
 * mutant named in its comment.
 *
 * The owner-exclusive variant on a COOP domain of two CPUs, with fake
 * keys whose uncharges and references are recorded.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>

#include <pcstock/cpu.h>

#include "memcg7.h"

#define BATCH 8U

struct fake {
	unsigned long uncharged;
	long refs;
};

static struct {
	struct pcstock_domain *d;
	struct memcg7 *m;
	struct fake f, g;
	struct memcg7_dead g_dead;
	bool g_dying;
} S;

/* f's first uncharge destroys g: memcg7_drain_key() from inside a drain. */
static void fake_uncharge(void *key, unsigned long nr_pages)
{
	((struct fake *)key)->uncharged += nr_pages;
	if (key == &S.f && !S.g_dying) {
		S.g_dying = true;
		memcg7_drain_key(S.m, &S.g, &S.g_dead);
	}
}

static void fake_get(void *key)
{
	((struct fake *)key)->refs++;
}

static void fake_put(void *key)
{
	((struct fake *)key)->refs--;
}

static bool fake_online(void *key)
{
	(void)key;
	return true;
}

static bool fake_in_subtree(void *key, void *root)
{
	return key == root;
}

static const struct memcg7_ops fake_ops = {
	.uncharge = fake_uncharge,
	.get = fake_get,
	.put = fake_put,
	.online = fake_online,
	.in_subtree = fake_in_subtree,
};

/* Enter CPU 1, cache 3 pages of f and 2 of g, leave. */
static void *fill_cpu1(void *arg)
{
	(void)arg;
	if (pcstock_cpu_enter(S.d, 1))
		return S.d;
	memcg7_refill(S.m, &S.f, 3);
	memcg7_refill(S.m, &S.g, 2);
	pcstock_cpu_exit(S.d);
	return NULL;
}

/*
 * A drain queued on a CPU while a requester has it borrowed (here by a
 * key dying in the middle of the borrower's drain) is run by the borrower
 * when it gives the CPU back: it looks for work again.  Otherwise the
 * dead key's deferred reference stays until the CPU is next entered.
 * Mutant: kick() testing the work bit once (if, not while).
 */
static void test_work_queued_while_borrowed_is_run(void **state)
{
	struct pcstock_domain_attr attr = { 2, PCSTOCK_CPU_COOP, NULL };
	pthread_t th;
	void *ret;

	(void)state;
	assert_int_equal(pcstock_domain_create(&attr, &S.d), 0);
	assert_int_equal(memcg7_create(S.d, BATCH, false, &fake_ops, &S.m), 0);
	assert_true(memcg7_owned(S.m));
	assert_int_equal(pthread_create(&th, NULL, fill_cpu1, NULL), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	assert_int_equal(memcg7_pages(S.m, &S.f), 3);

	/* Nobody owns CPU 1: drain_all borrows it and drains it now. */
	assert_true(memcg7_drain_all(S.m, &S.f));
	assert_true(S.g_dying);
	assert_int_equal(S.f.uncharged, 3);
	assert_int_equal(S.g.uncharged, 2);
	assert_false(memcg7_flushing(S.m, 1));
	/* Every CPU ran the drain queued for g: its reference is dropped. */
	assert_int_equal(S.g.refs, 0);
	memcg7_destroy(S.m);
	assert_int_equal(S.g.refs, 0);
	assert_int_equal(pcstock_domain_destroy(S.d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_work_queued_while_borrowed_is_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
