/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hierarchy_helpers.h - group fixtures shared by the hierarchy tests
 * (include after <cmocka.h>).
 */
#ifndef PCSTOCK_TESTS_HIERARCHY_HELPERS_H
#define PCSTOCK_TESTS_HIERARCHY_HELPERS_H

#include <pcstock/hierarchy.h>

static inline struct pcstock_group *mkgroup(struct pcstock_group *parent,
					    const char *name)
{
	struct pcstock_group *g = NULL;

	assert_int_equal(pcstock_group_create(parent, name, &g), 0);
	return g;
}

/* Destroy and drop the creator's reference. */
static inline void rmgroup(struct pcstock_group *g)
{
	assert_int_equal(pcstock_group_destroy(g), 0);
	pcstock_group_put(g);
}

/* Move the calling thread to @cpu of @d. */
static inline void move_to_cpu(struct pcstock_domain *d, unsigned int cpu)
{
	pcstock_cpu_exit(d);
	assert_int_equal(pcstock_cpu_enter(d, cpu), 0);
}

#endif /* PCSTOCK_TESTS_HIERARCHY_HELPERS_H */
