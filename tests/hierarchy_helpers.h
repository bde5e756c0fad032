/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hierarchy_helpers.h - group fixtures shared by the hierarchy tests
 * (include after <cmocka.h>): the tree on a SIM domain, and the making,
 * removing and moving that their cases repeat.
 */
#ifndef PCSTOCK_TESTS_HIERARCHY_HELPERS_H
#define PCSTOCK_TESTS_HIERARCHY_HELPERS_H

#include <pcstock/hierarchy.h>

/*
 * The hierarchy tests' tree fixture: a domain of @nr_cpus SIM CPUs with
 * the calling thread on CPU 0, and a tree of @attr on it.  *@t is NULL
 * unless the tree was made.  Return: 0, or -1 if a step failed.
 */
static inline int sim_tree_open(unsigned int nr_cpus,
				const struct pcstock_tree_attr *attr,
				struct pcstock_domain **d,
				struct pcstock_tree **t)
{
	struct pcstock_domain_attr dattr = { nr_cpus, PCSTOCK_CPU_SIM, NULL };

	*t = NULL;
	if (pcstock_domain_create(&dattr, d) || pcstock_cpu_enter(*d, 0) ||
	    pcstock_tree_create(*d, attr, t))
		return -1;
	return 0;
}

/* Undo sim_tree_open().  Return: the tree's destroy's (0 or -EBUSY). */
static inline int sim_tree_close(struct pcstock_domain *d,
				 struct pcstock_tree *t)
{
	int err = pcstock_tree_destroy(t);

	pcstock_cpu_exit(d);
	pcstock_domain_destroy(d);
	return err;
}

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
