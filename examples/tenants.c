// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tenants.c - a small multi-threaded accounting service on pcstock.
 *
 * Each tenant gets a group with limits read from strings (as a daemon would
 * read them from its configuration).  Worker threads serve "requests" that
 * charge a few pages to their tenant, hold them for a while, and release
 * them.  When a tenant hits its limit, the reclaim callback frees pages by
 * dropping that tenant's oldest cached buffers.  At the end the service
 * prints a stats dump.
 *
 *   usage: tenants [requests-per-worker]
 *
 * Things to notice: threads need no registration (pcstock uses the
 * bulletproof RCU flavour); each worker holds a group reference while it
 * holds pages; pcstock_handle_over_high() is called at a safe point (after
 * each request) and returns how long the kernel would have throttled.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <pcstock/pcstock.h>

#define NR_WORKERS 4
#define NR_TENANTS 3

struct tenant {
	const char *name, *max, *high;
	struct pcstock_group *g;
	atomic_long cached;	/* pages in the tenant's buffer cache */
};

static struct tenant tenants[NR_TENANTS] = {
	{ .name = "alpha", .max = "4M", .high = "3M" },	/* 1024 and 768 pages of 4 KiB */
	{ .name = "beta", .max = "1M", .high = "max" },
	{ .name = "gamma", .max = "max", .high = "max" },
};

static struct pcstock_domain *domain;
static unsigned long requests = 20000;
static atomic_ulong throttle_ms, refused;

/* Reclaim: drop cached buffers of the tenants in the over-limit subtree. */
static long reclaim(struct pcstock_group *g, unsigned long nr_pages,
		    void *arg)
{
	long freed = 0;

	for (int i = 0; i < NR_TENANTS && (unsigned long)freed < nr_pages;
	     i++) {
		struct tenant *t = &tenants[i];
		long want = (long)nr_pages - freed;
		long have = atomic_load(&t->cached);

		if (g != t->g && g != pcstock_group_parent(t->g))
			continue;
		while (have > 0 && !atomic_compare_exchange_weak(
					   &t->cached, &have,
					   have - (have < want ? have : want)))
			;
		if (have > 0) {
			long n = have < want ? have : want;

			pcstock_group_uncharge(t->g, (unsigned long)n);
			freed += n;
		}
	}
	return freed;
}

static void *worker(void *arg)
{
	unsigned int id = (unsigned int)(size_t)arg, seed = id * 7919 + 1;

	pcstock_cpu_enter(domain, id);
	for (unsigned long i = 0; i < requests; i++) {
		struct tenant *t = &tenants[rand_r(&seed) % NR_TENANTS];
		unsigned long pages = 1 + rand_r(&seed) % 8;

		/* A request: charge, work, release most, cache the rest. */
		if (pcstock_group_charge(t->g, pages, 0)) {
			atomic_fetch_add(&refused, 1);
			continue;
		}
		pcstock_group_uncharge(t->g, pages - 1);
		atomic_fetch_add(&t->cached, 1);
		atomic_fetch_add(&throttle_ms, pcstock_handle_over_high());
	}
	pcstock_cpu_exit(domain);
	return NULL;
}

static void dump(struct pcstock_tree *tree)
{
	struct pcstock_tree_stats ts;

	printf("%-8s %8s %8s %8s %6s %6s %8s\n", "tenant", "usage", "exact",
	       "max", "max_ev", "high_ev", "cached");
	for (int i = 0; i < NR_TENANTS; i++) {
		struct pcstock_group_stats st;

		pcstock_group_stats(tenants[i].g, &st);
		printf("%-8s %8lu %8lu %8lu %6lu %6lu %8ld\n",
		       tenants[i].name, st.usage, st.usage_exact,
		       st.max == PCSTOCK_COUNTER_MAX ? 0 : st.max,
		       st.events[PCSTOCK_EVENT_MAX],
		       st.events[PCSTOCK_EVENT_HIGH],
		       atomic_load(&tenants[i].cached));
	}
	pcstock_tree_stats(tree, &ts);
	printf("refused %lu, throttled %lu ms, drain_all %lu\n",
	       atomic_load(&refused), atomic_load(&throttle_ms), ts.drain_all);
}

int main(int argc, char **argv)
{
	struct pcstock_domain_attr dattr = { NR_WORKERS, PCSTOCK_CPU_SIM,
					     NULL };
	struct pcstock_tree_attr tattr = { .policy = PCSTOCK_TREE_DEFAULT,
					   .reclaim = reclaim };
	struct pcstock_tree *tree;
	struct pcstock_group *svc;
	pthread_t threads[NR_WORKERS];
	int err, ret = 0;

	if (argc > 1)
		requests = strtoul(argv[1], NULL, 0);
	err = pcstock_domain_create(&dattr, &domain);
	if (!err)
		err = pcstock_tree_create(domain, &tattr, &tree);
	if (!err)
		err = pcstock_group_create(pcstock_tree_root(tree), "service",
					   &svc);
	for (int i = 0; !err && i < NR_TENANTS; i++) {
		err = pcstock_group_create(svc, tenants[i].name,
					   &tenants[i].g);
		if (!err)
			err = pcstock_group_write_limit(tenants[i].g,
							PCSTOCK_LIMIT_MAX,
							tenants[i].max);
		if (!err)
			err = pcstock_group_write_limit(tenants[i].g,
							PCSTOCK_LIMIT_HIGH,
							tenants[i].high);
	}
	if (err) {
		fprintf(stderr, "tenants: set-up failed: %d\n", err);
		return 1;
	}

	for (size_t i = 0; i < NR_WORKERS; i++)
		pthread_create(&threads[i], NULL, worker, (void *)i);
	for (size_t i = 0; i < NR_WORKERS; i++)
		pthread_join(threads[i], NULL);
	dump(tree);

	/* Shut down: release the caches, check that nothing leaked. */
	for (int i = 0; i < NR_TENANTS; i++) {
		pcstock_group_uncharge(tenants[i].g,
				       (unsigned long)atomic_load(
					       &tenants[i].cached));
		pcstock_group_destroy(tenants[i].g);
		pcstock_group_put(tenants[i].g);
	}
	pcstock_group_drain_all(svc);
	if (pcstock_group_usage(svc) != 0) {
		fprintf(stderr, "tenants: %lu pages leaked\n",
			pcstock_group_usage(svc));
		ret = 1;
	}
	pcstock_group_destroy(svc);
	pcstock_group_put(svc);
	if (pcstock_tree_destroy(tree))
		ret = 1;
	pcstock_domain_destroy(domain);
	return ret;
}
