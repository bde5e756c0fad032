// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * siblings.c - pcstock-siblings: what a group costs to create, look up and
 * destroy when its parent has N children (a daemon with one group per
 * tenant).
 *
 * For each N on the command line (default 100 10000 100000): a fresh tree
 * (DEFAULT policy, one simulated CPU), N siblings created under one parent,
 * then lookups by name of random siblings, each followed by a one-page
 * charge and uncharge and a put (the daemon's per-request path), then every
 * sibling destroyed.  Then the same on a shared tree (pcstock/shared.h: a
 * memfd region of N + 2 groups, lookups by name under one parent, the
 * charge and uncharge by gid), side by side.  Prints the mean CPU time per
 * operation ("create-last": the last tenth of the creates, made with
 * N - N/10 siblings present); the figures depend on the machine, so the
 * output names the CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcstock/pcstock.h>

#define LOOKUPS 200000UL

/*
 * The thread's CPU time: on a shared machine wall-clock time mostly
 * measures the other processes.  Cache and TLB misses are still counted.
 */
static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void cpu_model(char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, size, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			snprintf(buf, size, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
}

static int run(struct pcstock_domain *d, unsigned long n)
{
	struct pcstock_group **g = calloc(n, sizeof(*g));
	struct pcstock_tree *t = NULL;
	struct pcstock_group *parent, *found;
	double t0, t_create, t_last, t_lookup, t_destroy;
	unsigned long last = n / 10 ? n / 10 : 1;
	unsigned int seed = 1;
	char name[32];
	int err;

	if (!g || pcstock_tree_create(d, NULL, &t))
		return -ENOMEM;
	err = pcstock_group_create(pcstock_tree_root(t), "tenants", &parent);
	t0 = now_ns();
	t_last = t0;
	for (unsigned long i = 0; !err && i < n; i++) {
		if (i == n - last)
			t_last = now_ns();
		snprintf(name, sizeof(name), "t%lu", i);
		err = pcstock_group_create(parent, name, &g[i]);
	}
	t_create = now_ns();
	for (unsigned long i = 0; !err && i < LOOKUPS; i++) {
		snprintf(name, sizeof(name), "tenants/t%lu",
			 (unsigned long)rand_r(&seed) % n);
		err = pcstock_group_lookup(pcstock_tree_root(t), name, &found);
		if (!err)
			err = pcstock_group_charge(found, 1, 0);
		if (!err) {
			pcstock_group_uncharge(found, 1);
			pcstock_group_put(found);
		}
	}
	t_lookup = now_ns();
	for (unsigned long i = 0; !err && i < n; i++) {
		err = pcstock_group_destroy(g[i]);
		pcstock_group_put(g[i]);
	}
	t_destroy = now_ns();
	if (!err)
		printf("%-8s %9lu %12.2f %12.2f %16.3f %12.2f\n", "private", n,
		       (t_create - t0) / n / 1e3, (t_create - t_last) / last / 1e3,
		       (t_lookup - t_create) / LOOKUPS / 1e3,
		       (t_destroy - t_lookup) / n / 1e3);
	if (!err)
		err = pcstock_group_destroy(parent);
	pcstock_group_put(parent);
	if (!err)
		err = pcstock_tree_destroy(t);
	free(g);
	return err;
}

static int run_shared(unsigned long n)
{
	struct pcstock_shm_attr attr = { .max_groups = (unsigned int)n + 2,
					 .max_procs = 2 };
	pcstock_shm_gid *g = calloc(n, sizeof(*g)), parent, found;
	double t0, t_create, t_last, t_lookup, t_destroy;
	unsigned long last = n / 10 ? n / 10 : 1;
	struct pcstock_shm *s = NULL;
	unsigned int seed = 1;
	char name[32];
	int err;

	if (!g)
		return -ENOMEM;
	err = pcstock_shm_create(NULL, &attr, &s);
	if (!err)
		err = pcstock_shm_group_create(s, PCSTOCK_SHM_ROOT, "tenants",
					       &parent);
	t0 = now_ns();
	t_last = t0;
	for (unsigned long i = 0; !err && i < n; i++) {
		if (i == n - last)
			t_last = now_ns();
		snprintf(name, sizeof(name), "t%lu", i);
		err = pcstock_shm_group_create(s, parent, name, &g[i]);
	}
	t_create = now_ns();
	for (unsigned long i = 0; !err && i < LOOKUPS; i++) {
		snprintf(name, sizeof(name), "t%lu",
			 (unsigned long)rand_r(&seed) % n);
		err = pcstock_shm_group_lookup(s, parent, name, &found);
		if (!err)
			err = pcstock_shm_charge(s, found, 1, 0);
		if (!err)
			err = pcstock_shm_uncharge(s, found, 1);
	}
	t_lookup = now_ns();
	for (unsigned long i = 0; !err && i < n; i++) {
		pcstock_shm_drain(s, g[i]);
		err = pcstock_shm_group_destroy(s, g[i]);
	}
	t_destroy = now_ns();
	if (!err)
		printf("%-8s %9lu %12.2f %12.2f %16.3f %12.2f\n", "shared", n,
		       (t_create - t0) / n / 1e3,
		       (t_create - t_last) / last / 1e3,
		       (t_lookup - t_create) / LOOKUPS / 1e3,
		       (t_destroy - t_lookup) / n / 1e3);
	if (s)
		pcstock_shm_detach(s);
	free(g);
	return err;
}

int main(int argc, char **argv)
{
	struct pcstock_domain_attr attr = { 1, PCSTOCK_CPU_SIM, NULL };
	static const char *const dflt[] = { "100", "10000", "100000" };
	const char *const *ns = argc > 1 ? (const char *const *)argv + 1 : dflt;
	int nr = argc > 1 ? argc - 1 : 3;
	struct pcstock_domain *d;
	char model[128];
	int err;

	if (pcstock_domain_create(&attr, &d) || pcstock_cpu_enter(d, 0)) {
		fprintf(stderr, "pcstock-siblings: no domain\n");
		return 1;
	}
	cpu_model(model, sizeof(model));
	printf("CPU: %s\nmean thread CPU time per operation, microseconds\n",
	       model);
	printf("%-8s %9s %12s %12s %16s %12s\n", "tree", "siblings", "create",
	       "create-last", "lookup+charge", "destroy");
	for (int i = 0; i < nr; i++) {
		unsigned long n = strtoul(ns[i], NULL, 10);

		err = n ? run(d, n) : -EINVAL;
		if (!err)
			err = run_shared(n);
		if (err) {
			fprintf(stderr, "pcstock-siblings: N=%s: %s\n", ns[i],
				strerror(-err));
			return 1;
		}
	}
	pcstock_cpu_exit(d);
	pcstock_domain_destroy(d);
	return 0;
}
