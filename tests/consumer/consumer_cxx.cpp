// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A C++ program using the installed headers (built by run_cxx.sh with
 * -Wall -Wextra -pedantic -Werror): every public struct has the layout the
 * C library sees, and a group tree works end to end.
 */
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <pcstock/pcstock.h>

#include "layout.h"

static long reclaim(struct pcstock_group *g, unsigned long nr_pages,
		    void *arg)
{
	(void)g;
	(void)nr_pages;
	(void)arg;
	return 0;
}

static int oom(struct pcstock_group *g, void *arg)
{
	(void)g;
	(void)arg;
	return PCSTOCK_OOM_NONE;
}

static int fail(const char *what)
{
	std::fprintf(stderr, "consumer_cxx: %s\n", what);
	return 1;
}

int main()
{
	static const size_t cxx[] = CONSUMER_LAYOUT;
	struct pcstock_domain_attr dattr = { 2, PCSTOCK_CPU_SIM, nullptr };
	struct pcstock_tree_attr tattr;
	struct pcstock_domain *d = nullptr;
	struct pcstock_tree *t = nullptr;
	struct pcstock_group *g = nullptr;
	struct pcstock_group_stats st;

	if (consumer_layout_c_len != sizeof(cxx) / sizeof(cxx[0]))
		return fail("layout lists differ in length");
	for (size_t i = 0; i < consumer_layout_c_len; i++) {
		if (consumer_layout_c[i] != cxx[i]) {
			std::fprintf(stderr, "consumer_cxx: layout item %zu: "
				     "C %zu, C++ %zu\n", i,
				     consumer_layout_c[i], cxx[i]);
			return 1;
		}
	}
	if (std::strcmp(pcstock_version(), PCSTOCK_VERSION_STRING) != 0)
		return fail("header and library versions differ");

	std::memset(&tattr, 0, sizeof(tattr));
	tattr.policy = PCSTOCK_TREE_DEFAULT;
	tattr.reclaim = reclaim;
	tattr.oom = oom;
	if (pcstock_domain_create(&dattr, &d) || pcstock_cpu_enter(d, 0) ||
	    pcstock_tree_create(d, &tattr, &t) ||
	    pcstock_group_create(pcstock_tree_root(t), "tenant", &g))
		return fail("set-up");
	if (pcstock_group_set_max(g, 10) ||
	    pcstock_group_charge(g, 10, 0) ||
	    pcstock_group_charge(g, 1, 0) != -ENOMEM)
		return fail("charge at the limit");
	pcstock_group_stats(g, &st);
	if (st.max != 10 || st.events[PCSTOCK_EVENT_MAX] == 0)
		return fail("stats");
	if (pcstock_group_uncharge(g, 10) || pcstock_group_destroy(g))
		return fail("tear-down");
	pcstock_group_put(g);
	if (pcstock_tree_destroy(t) || pcstock_cpu_exit(d) ||
	    pcstock_domain_destroy(d))
		return fail("destroy");
	std::printf("consumer_cxx: pcstock %s ok in C++ (%zu layout items)\n",
		    pcstock_version(), consumer_layout_c_len);
	return 0;
}
