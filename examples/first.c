// SPDX-License-Identifier: LGPL-2.1-or-later
/* first.c - the README's first program: one tenant, a limit, charges. */
#include <errno.h>
#include <stdio.h>

#include <pcstock/pcstock.h>

int main(void)
{
	struct pcstock_domain *d;	/* the CPUs stocks are kept for */
	struct pcstock_tree *t;		/* a memcg-like tree of groups */
	struct pcstock_group *acme;
	char cur[32] = "";
	int ok;

	/* NULL: an RSEQ domain, one CPU per processing unit. */
	if (pcstock_domain_create(NULL, &d))
		return 1;
	/* NULL: the default policy (per-counter stock), batch 64. */
	if (pcstock_tree_create(d, NULL, &t) ||
	    pcstock_group_create(pcstock_tree_root(t), "acme", &acme))
		return 1;

	/* Limits are cgroup files (bytes) or setters (pages). */
	ok = pcstock_group_write(acme, "memory.max", "1M") == 0 && /* 256 */
	     pcstock_group_charge(acme, 200, 0) == 0 &&
	     pcstock_group_charge(acme, 100, 0) == -ENOMEM &&
	     pcstock_group_read(acme, "memory.current", cur,
				sizeof(cur)) > 0;
	printf("%s: memory.current %s", ok ? "ok" : "FAILED", cur);
	pcstock_group_uncharge(acme, 200);

	/* Children first, then the tree, then the domain. */
	pcstock_group_destroy(acme);
	pcstock_group_put(acme);
	return !ok || pcstock_tree_destroy(t) || pcstock_domain_destroy(d);
}
