// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * quotad.c - a per-tenant quota daemon in miniature, driven only through
 * the cgroup-style file interface.
 *
 * The tenant tree comes from a small built-in configuration (sizes parsed
 * strictly with pcstock_parse_size(), then written to the limit files as
 * pcstock_format_size() prints them: the files parse with the kernel's
 * memparse, which reads "", "K" and "1k" as 0 pages and "020000" as
 * octal, so the configuration's own text is never sent).  Worker threads serve bursts of
 * requests for random tenants: look the tenant up by path, charge a few
 * pages per request, hold up to a bound, give everything back, put the
 * reference.  A manager thread changes limits at runtime with
 * pcstock_group_write() and replaces tenants (destroy one, create another)
 * while the workers charge them.  A reporter thread prints memory.events
 * and memory.stat with pcstock_group_read().  On shutdown every thread
 * gives its pages back, every tenant is destroyed children first, and the
 * daemon checks that usage went back to 0.
 *
 *   usage: quotad [seconds]      (default 2; ctest runs 1)
 *
 * Things to notice: no thread registers or enters a CPU (the default
 * domain follows the CPU a thread runs on); a worker holds a reference
 * while it holds pages, and a tenant destroyed under it only makes its
 * next charge fail with -ENOENT; pcstock_handle_over_high() runs at a safe
 * point, after each burst.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcstock/pcstock.h>

#define NR_WORKERS 4
#define NR_SLOTS 6		/* tenants alive at any time */
#define HOLD_MAX 192		/* pages a worker holds at most */

/* The configuration a daemon would read from a file. */
static const char config[] =
	"# tenant  memory.max  memory.high\n"
	"gold      4M          3M\n"
	"silver    1M          max\n"
	"bronze    512K        256K\n";

struct plan {
	char name[16];
	char max[32], high[32];	/* in bytes (or "max"), as checked */
};

/*
 * A tenant's record, the group's user data: allocated at create, freed by
 * the tree's release callback once the group is gone (destroyed, every
 * reference put, a grace period), never by the thread that destroys it.
 */
struct tenant {
	const struct plan *plan;
	unsigned int serial;
};

static struct plan plans[8];
static int nr_plans;

static struct pcstock_domain *domain;
static struct pcstock_group *tenants;	/* parent of every tenant */
static atomic_bool stop;
static atomic_ulong requests, refused, vanished;
static atomic_ulong created, released;

/* The slots: names the workers look up; the manager's references. */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static char slot_name[NR_SLOTS][48];
static struct pcstock_group *slot_group[NR_SLOTS];

static int parse_config(void)
{
	const char *line = config;

	for (; *line; line = strchr(line, '\n') + 1) {
		struct plan *p = &plans[nr_plans];
		unsigned long max, high;

		if (*line == '#')
			continue;
		if (sscanf(line, "%15s %15s %15s", p->name, p->max,
			   p->high) != 3 ||
		    pcstock_parse_size(p->max, PCSTOCK_PARSE_PAGE_ALIGNED,
				       &max) ||
		    pcstock_parse_size(p->high, PCSTOCK_PARSE_PAGE_ALIGNED,
				       &high)) {
			fprintf(stderr, "quotad: bad config line: %.30s\n",
				line);
			return -EINVAL;
		}
		/* What the strict parser read, in the files' own terms. */
		pcstock_format_size(max, p->max, sizeof(p->max));
		pcstock_format_size(high, p->high, sizeof(p->high));
		nr_plans++;
	}
	return 0;
}

/* The tree's release callback: a tenant's record outlives its group. */
static void tenant_release(void *data, void *arg)
{
	free(data);
	atomic_fetch_add_explicit(&released, 1, memory_order_relaxed);
}

/*
 * Create tenant @serial in slot @slot with a plan, limits as strings.  The
 * strings go to the kernel's parser (memparse, as a write to the cgroup
 * file would), which the configuration was checked against strictly.
 */
static int tenant_create(int slot, unsigned int serial)
{
	struct plan *p = &plans[serial % (unsigned int)nr_plans];
	struct tenant *rec = malloc(sizeof(*rec));
	struct pcstock_group *g;
	char name[32];
	int err;

	if (!rec)
		return -ENOMEM;
	*rec = (struct tenant){ .plan = p, .serial = serial };
	snprintf(name, sizeof(name), "%s-%u", p->name, serial);
	err = pcstock_group_create_data(tenants, name, rec, &g);
	if (err)
		free(rec);	/* no group: the record is still ours */
	else
		atomic_fetch_add_explicit(&created, 1, memory_order_relaxed);
	if (!err)
		err = pcstock_group_write(g, "memory.max", p->max);
	if (!err)
		err = pcstock_group_write(g, "memory.high", p->high);
	if (err) {
		fprintf(stderr, "quotad: tenant %s: %s\n", name,
			strerror(-err));
		return err;
	}
	pthread_mutex_lock(&slots_lock);
	snprintf(slot_name[slot], sizeof(slot_name[slot]), "tenants/%s",
		 name);
	slot_group[slot] = g;
	pthread_mutex_unlock(&slots_lock);
	return 0;
}

static int tenant_destroy(int slot)
{
	struct pcstock_group *g;
	int err;

	pthread_mutex_lock(&slots_lock);
	g = slot_group[slot];
	slot_group[slot] = NULL;
	slot_name[slot][0] = '\0';
	pthread_mutex_unlock(&slots_lock);
	if (!g)
		return 0;
	/* Workers holding pages keep their references; they give back. */
	err = pcstock_group_destroy(g);
	pcstock_group_put(g);
	return err;
}

/* One burst for one tenant: charge, hold, give back, put. */
static void burst(unsigned int *seed)
{
	struct pcstock_group *g;
	unsigned long held = 0;
	char path[48];
	int slot = (int)(rand_r(seed) % NR_SLOTS), err = 0;

	pthread_mutex_lock(&slots_lock);
	memcpy(path, slot_name[slot], sizeof(path));
	pthread_mutex_unlock(&slots_lock);
	if (!path[0] || pcstock_group_lookup(pcstock_tree_root(
			pcstock_group_tree(tenants)), path, &g))
		return;		/* replaced meanwhile */
	for (int i = 0; i < 64 && !err; i++) {
		unsigned long n = 1 + (unsigned long)(rand_r(seed) % 8);

		if (held + n > HOLD_MAX || rand_r(seed) % 4 == 0) {
			pcstock_group_uncharge(g, held);
			held = 0;
		}
		err = pcstock_group_charge(g, n, 0);
		atomic_fetch_add_explicit(&requests, 1, memory_order_relaxed);
		if (!err)
			held += n;
		else if (err == -ENOMEM)
			atomic_fetch_add_explicit(&refused, 1,
						  memory_order_relaxed);
		err = err == -ENOMEM ? 0 : err;
	}
	if (err == -ENOENT)	/* destroyed under us: pages still go back */
		atomic_fetch_add_explicit(&vanished, 1, memory_order_relaxed);
	pcstock_group_uncharge(g, held);
	pcstock_group_put(g);
	pcstock_handle_over_high();
}

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		burst(&seed);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	nanosleep(&ts, NULL);
}

/* Runtime changes: a limit rewritten, a tenant replaced, every 20 ms. */
static void *manager(void *arg)
{
	static const char *const maxes[] = { "256K", "2M", "max", "" };
	unsigned int serial = NR_SLOTS, seed = 7;
	int err = 0;

	while (!err && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		int slot = (int)(rand_r(&seed) % NR_SLOTS);
		struct pcstock_group *g;

		sleep_ms(20);
		pthread_mutex_lock(&slots_lock);
		g = slot_group[(slot + 1) % NR_SLOTS];
		if (g)
			pcstock_group_get(g);
		pthread_mutex_unlock(&slots_lock);
		if (g) {
			/* "" is 0 (the kernel's empty write): all refused */
			err = pcstock_group_write(g, "memory.max",
						  maxes[rand_r(&seed) % 4]);
			pcstock_group_put(g);
		}
		if (!err)
			err = tenant_destroy(slot);
		if (!err)
			err = tenant_create(slot, serial++);
	}
	if (err)
		fprintf(stderr, "quotad: manager: %s\n", strerror(-err));
	return (void *)(intptr_t)err;
}

/* Print one file's lines as "key=value" on one line. */
static void print_file(struct pcstock_group *g, const char *file)
{
	char buf[512];
	ssize_t n = pcstock_group_read(g, file, buf, sizeof(buf));

	if (n < 0 || (size_t)n >= sizeof(buf)) {
		printf(" %s:?", file);
		return;
	}
	for (char *p = buf; *p; p++)
		*p = *p == '\n' ? ' ' : *p == ' ' ? '=' : *p;
	printf(" %s: %s", file + strlen("memory."), buf);
}

static int report_one(struct pcstock_group *g, void *arg)
{
	const struct tenant *rec = pcstock_group_data(g);
	char path[64];

	if (!rec)
		return 0;	/* not a tenant */
	pcstock_group_path(g, path, sizeof(path));
	printf("  %-22s plan %-6s", path, rec->plan->name);
	print_file(g, "memory.events");
	printf("\n  %22s            ", "");
	print_file(g, "memory.stat");
	printf("\n");
	return 0;
}

static void *reporter(void *arg)
{
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		sleep_ms(250);
		printf("report: %lu requests, %lu refused\n",
		       atomic_load(&requests), atomic_load(&refused));
		/* Walk callbacks may read files: they only read counters. */
		pcstock_group_walk(tenants, report_one, NULL);
	}
	return NULL;
}

/* Shutdown: children first (post-order), then check usage is 0. */
static int collect(struct pcstock_group *g, void *arg)
{
	struct pcstock_group **list = arg;

	if (g != tenants) {
		pcstock_group_get(g);
		while (*list)
			list++;
		*list = g;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long seconds = argc > 1 ? atol(argv[1]) : 2;
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_DEFAULT,
					  .release = tenant_release };
	struct pcstock_group *left[NR_SLOTS + 1] = { NULL };
	pthread_t workers[NR_WORKERS], mgr, rep;
	struct pcstock_tree *tree;
	char current[32];
	void *mgr_err;
	int err;

	if (parse_config() || pcstock_domain_create(NULL, &domain) ||
	    pcstock_tree_create(domain, &attr, &tree) ||
	    pcstock_group_create(pcstock_tree_root(tree), "tenants",
				 &tenants))
		return 1;
	for (int i = 0; i < NR_SLOTS; i++)
		if (tenant_create(i, (unsigned int)i))
			return 1;
	for (int i = 0; i < NR_WORKERS; i++)
		pthread_create(&workers[i], NULL, worker,
			       (void *)(uintptr_t)(i + 1));
	pthread_create(&mgr, NULL, manager, NULL);
	pthread_create(&rep, NULL, reporter, NULL);

	sleep_ms(seconds * 1000);
	atomic_store(&stop, true);
	for (int i = 0; i < NR_WORKERS; i++)
		pthread_join(workers[i], NULL);
	pthread_join(mgr, &mgr_err);
	pthread_join(rep, NULL);

	for (int i = 0; i < NR_SLOTS; i++)
		tenant_destroy(i);
	pcstock_group_walk_post(tenants, collect, left);
	err = (int)(intptr_t)mgr_err;
	for (int i = 0; left[i]; i++) {
		if (!err)
			err = pcstock_group_destroy(left[i]);
		pcstock_group_put(left[i]);
	}
	/* memory.current counts the stock, as the kernel's: drain first. */
	pcstock_group_drain_all(tenants);
	pcstock_group_read(tenants, "memory.current", current,
			   sizeof(current));
	printf("shutdown: %lu requests, %lu refused, %lu bursts cut short by "
	       "a destroy; tenants memory.current %s",
	       atomic_load(&requests), atomic_load(&refused),
	       atomic_load(&vanished), current);
	if (strcmp(current, "0\n")) {
		fprintf(stderr, "quotad: usage left after shutdown\n");
		err = -EBADE;
	}
	if (!err)
		err = pcstock_group_destroy(tenants);
	pcstock_group_put(tenants);
	if (!err)
		err = pcstock_tree_destroy(tree);
	/* Every release has run by now: each record was freed, once. */
	if (!err && atomic_load(&released) != atomic_load(&created)) {
		fprintf(stderr, "quotad: %lu tenant records released of %lu\n",
			atomic_load(&released), atomic_load(&created));
		err = -EBADE;
	}
	if (!err)
		err = pcstock_domain_destroy(domain);
	if (err)
		fprintf(stderr, "quotad: shutdown: %s\n", strerror(-err));
	return err ? 1 : 0;
}
