// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_plain_modes.c - where the "plain" policy runs, against the library
 * as installed (no model of its sequences, which only the instrumented
 * builds carry): a tree of it is refused on every domain mode but RSEQ
 * (-EOPNOTSUPP), and on an RSEQ domain it is made, unless the sequences
 * cannot run here (-ENOSYS: not x86-64, or glibc registered no rseq area,
 * __rseq_size 0, as under valgrind).  Names the policy: its own contract.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sys/rseq.h>

#include <pcstock/hierarchy.h>

static void test_only_rseq_domains(void **state)
{
	static const enum pcstock_cpu_mode others[] = {
		PCSTOCK_CPU_SIM, PCSTOCK_CPU_THREAD, PCSTOCK_CPU_COOP,
	};
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_PLAIN };
	struct pcstock_domain *d;
	struct pcstock_tree *t = NULL;
	int err;

	(void)state;
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct pcstock_domain_attr da = { .nr_cpus = 2,
						  .mode = others[i] };

		assert_int_equal(pcstock_domain_create(&da, &d), 0);
		assert_int_equal(pcstock_tree_create(d, &attr, &t),
				 -EOPNOTSUPP);
		assert_null(t);
		assert_int_equal(pcstock_domain_destroy(d), 0);
	}
	assert_int_equal(pcstock_domain_create(NULL, &d), 0);
	err = pcstock_tree_create(d, &attr, &t);
#if defined(__x86_64__)
	if ((int)__rseq_size > 0)
		assert_int_equal(err, 0);
	else
#endif
		assert_int_equal(err, -ENOSYS);
	if (!err)
		assert_int_equal(pcstock_tree_destroy(t), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_rseq_domains),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
