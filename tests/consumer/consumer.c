// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Built against the installed package by tests/consumer/run.sh, once as is
 * and once with PCSTOCK_INLINE (the inline fast paths, which reach the
 * library's exported thread-local).
 */
#include <stdio.h>
#include <string.h>

#include <pcstock/pcstock.h>

/* A miss, a hit and an uncharge into the stock on CPU 0 of a SIM domain. */
static int stocked(void)
{
	struct pcstock_domain_attr attr = { 2, PCSTOCK_CPU_SIM, NULL };
	struct pcstock_counter root, leaf;
	struct pcstock_stock_stats st;
	struct pcstock_domain *d;
	unsigned long got = 99;
	int bad;

	if (pcstock_domain_create(&attr, &d))
		return 1;
	pcstock_counter_init(&root, NULL, false);
	pcstock_counter_init(&leaf, &root, false);
	bad = pcstock_counter_alloc_stock(&leaf, d, 8, PCSTOCK_STOCK_DEFAULT) ||
	      pcstock_cpu_enter(d, 0) ||
	      !pcstock_counter_try_charge_stock(&leaf, 1, NULL, &got) ||
	      got != 8 ||
	      !pcstock_counter_try_charge_stock(&leaf, 2, NULL, &got) ||
	      got != 0;
	pcstock_counter_uncharge_stock(&leaf, 3);
	pcstock_counter_stock_stats(&leaf, &st);
	bad = bad || st.hits != 1 || st.misses != 1 || st.refills != 2 ||
	      pcstock_counter_stock_pages(&leaf) != 8 ||
	      pcstock_counter_read(&root) != 8;
	pcstock_cpu_exit(d);
	pcstock_counter_free_stock(&leaf);
	bad = bad || pcstock_counter_read(&root) != 0;
	return pcstock_domain_destroy(d) || bad;
}

int main(void)
{
	struct pcstock_counter parent, child, *fail = NULL;

	if (strcmp(pcstock_version(), PCSTOCK_VERSION_STRING) != 0) {
		fprintf(stderr, "header %s, library %s\n",
			PCSTOCK_VERSION_STRING, pcstock_version());
		return 1;
	}
	pcstock_counter_init(&parent, NULL, false);
	pcstock_counter_init(&child, &parent, false);
	if (pcstock_counter_set_max(&parent, 10) != 0 ||
	    !pcstock_counter_try_charge(&child, 10, &fail) ||
	    pcstock_counter_try_charge(&child, 1, &fail) || fail != &parent) {
		fprintf(stderr, "unexpected counter behaviour\n");
		return 1;
	}
	pcstock_counter_uncharge(&child, 10);
	if (stocked()) {
		fprintf(stderr, "unexpected stock behaviour\n");
		return 1;
	}
#ifdef PCSTOCK_INLINE
	printf("consumer (inline fast paths): pcstock %s ok\n",
	       pcstock_version());
#else
	printf("consumer: pcstock %s ok\n", pcstock_version());
#endif
	return pcstock_counter_read(&parent) == 0 ? 0 : 1;
}
