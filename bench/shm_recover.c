// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm_recover.c - the --shm mode's recovery rows (shm.c's file comment,
 * item 3): a worker killed where the SIGKILL lands, then
 * pcstock_shm_recover() and pcstock_shm_reap() timed apart on a small
 * tree and a big one.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm_bench.h"

/* ---- 3. recovering after a dead process ------------------------------------------- */

struct rec_ctl {
	_Alignas(BENCH_LINE) atomic_ulong ops;
	atomic_int self;		/* the worker's record */
	atomic_int err;
};

/* Charges 2 and uncharges 1 round-robin over every leaf until killed. */
static __attribute__((noreturn)) void rec_child(struct shared *t,
						struct rec_ctl *c)
{
	struct pcstock_shm *h;
	unsigned long ops = 0;
	unsigned int k = 0;
	int err = pcstock_shm_attach_fd(pcstock_shm_fd(t->s), &h);

	if (err) {
		atomic_store(&c->err, err);
		_exit(1);
	}
	atomic_store(&c->self, pcstock_shm_self(h));
	for (;;) {
		if (!pcstock_shm_charge(h, t->leaf[k], 2, 0))
			pcstock_shm_uncharge(h, t->leaf[k], 1);
		k = k + 1 == t->nr_leaves ? 0 : k + 1;
		atomic_store_explicit(&c->ops, ++ops, memory_order_relaxed);
	}
}

/*
 * One death and its recovery: the worker runs until it has been round
 * every leaf twice (so that its record holds a figure in every group),
 * then is killed.  The two calls' times in @us (recover, reap), the pages
 * reaped in *@pages.  0, -errno, or -EPROTO with @why filled when the
 * recovery is not what shared.h says (conservation, one dead record).
 */
static int rec_once(struct shared *t, struct rec_ctl *c, double *us,
		    unsigned long *pages, char *why, size_t len)
{
	unsigned long want = 2UL * t->nr_leaves + 1000;
	unsigned int dead = 0;
	double t0, t1, t2;
	pid_t pid;
	int ret, rec, st;

	atomic_store(&c->ops, 0);
	atomic_store(&c->self, -1);
	atomic_store(&c->err, 0);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		rec_child(t, c);
	t0 = now_s();
	while (atomic_load(&c->ops) < want && !atomic_load(&c->err) &&
	       now_s() - t0 < 30)
		sched_yield();
	kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (atomic_load(&c->ops) < want) {
		ret = atomic_load(&c->err);
		snprintf(why, len, "the worker did not charge: %s",
			 ret ? strerror(-ret) : "timed out");
		return ret ? ret : -ETIMEDOUT;
	}
	rec = atomic_load(&c->self);
	t0 = now_s();
	ret = pcstock_shm_recover(t->s, &dead);
	t1 = now_s();
	if (!ret && (dead != 1 ||
		     pcstock_shm_proc_state(t->s, (unsigned int)rec) !=
			     PCSTOCK_SHM_PROC_DEAD)) {
		snprintf(why, len, "%u dead records found, the worker's %s",
			 dead, pcstock_shm_proc_state(t->s, (unsigned int)rec)
				       == PCSTOCK_SHM_PROC_DEAD ?
				 "dead" : "not dead");
		return -EPROTO;
	}
	t2 = now_s();
	if (!ret)
		ret = pcstock_shm_reap(t->s, (unsigned int)rec, pages);
	us[0] = (t1 - t0) * 1e6;
	us[1] = (now_s() - t2) * 1e6;
	if (ret)
		return ret;
	/* Nobody holds a page now: the root's usage is the slots'. */
	if (pcstock_shm_usage(t->s, PCSTOCK_SHM_ROOT) != shared_stock(t)) {
		snprintf(why, len, "root usage %lu, %lu pages in slots "
			 "after the reap",
			 pcstock_shm_usage(t->s, PCSTOCK_SHM_ROOT),
			 shared_stock(t));
		return -EPROTO;
	}
	return 0;
}

struct rec_fig {
	unsigned int groups, cpus, reps;
	struct spread rec, reap, pages;
	double load[2];
	bool cons_ok;
};

static int rec_tree(struct shm_run *run, struct rec_ctl *c,
		    unsigned int groups, struct rec_fig *f)
{
	/*
	 * Exactly the groups (the reap scans every index), and REC_PROCS
	 * records (the recount reads each's figure of every group).
	 */
	struct pcstock_shm_attr a = {
		.max_groups = groups + 1, .max_procs = REC_PROCS,
		.batch = run->o->batch,
	};
	unsigned int reps = 10 * run->o->reps, r;
	struct shared t = { 0 };
	double *v[3];
	char why[160];
	int ret;

	memset(f, 0, sizeof(*f));
	f->groups = groups;
	f->reps = reps;
	f->cons_ok = true;
	f->load[0] = load1();
	for (r = 0; r < 3; r++)
		v[r] = calloc(reps, sizeof(double));
	ret = v[0] && v[1] && v[2] ? 0 : -ENOMEM;
	/* @groups below the root: mid and groups - 1 leaves. */
	if (!ret)
		ret = shared_build(&t, &a, true, groups - 1);
	for (r = 0; r < reps && !ret; r++) {
		unsigned long pages = 0;
		double us[2] = { 0, 0 };

		ret = rec_once(&t, c, us, &pages, why, sizeof(why));
		if (ret == -EPROTO) {
			fprintf(stderr, "pcstock-bench --shm: recovery of %u "
				"groups: %s\n", groups, why);
			f->cons_ok = false;
			run->bad = true;
			ret = 0;
		}
		v[0][r] = us[0];
		v[1][r] = us[1];
		v[2][r] = (double)pages;
	}
	if (!ret) {
		/* The region's slots: the machine's configured CPUs. */
		f->cpus = (unsigned int)sysconf(_SC_NPROCESSORS_CONF);
		f->rec = spread_of(v[0], reps);
		f->reap = spread_of(v[1], reps);
		f->pages = spread_of(v[2], reps);
		f->load[1] = load1();
	}
	shared_free(&t);
	for (r = 0; r < 3; r++)
		free(v[r]);
	return ret;
}

static void rec_print(const struct shm_run *run, const struct rec_fig *f)
{
	/* What the recount reads: a figure per record (and the orphan's), a slot per CPU. */
	double work = (double)f->groups * (REC_PROCS + 1 + f->cpus);

	if (run->o->json) {
		printf("{\"kind\":\"shm_recover\",\"groups\":%u,"
		       "\"records\":%u,\"cpus\":%u,\"reps\":%u,"
		       "\"recount_reads\":%.0f,\"recover_us\":%.2f,"
		       "\"recover_min\":%.2f,\"recover_max\":%.2f,"
		       "\"reap_us\":%.2f,\"reap_min\":%.2f,\"reap_max\":%.2f,"
		       "\"pages_reaped\":%.0f,\"cons_ok\":%s,"
		       "\"load_before\":%.2f,\"load_after\":%.2f,"
		       "\"cpu_model\":\"%s\"}\n", f->groups, REC_PROCS,
		       f->cpus, f->reps, work, f->rec.med, f->rec.lo,
		       f->rec.hi, f->reap.med, f->reap.lo, f->reap.hi,
		       f->pages.med, f->cons_ok ? "true" : "false",
		       f->load[0], f->load[1], run->model);
		return;
	}
	printf("| %u | %u | %u | %.0f | %.1f | %.1f-%.1f | %.1f | "
	       "%.1f-%.1f | %.0f | %s | %.2f |\n", f->groups, REC_PROCS,
	       f->cpus, work, f->rec.med, f->rec.lo, f->rec.hi, f->reap.med,
	       f->reap.lo, f->reap.hi, f->pages.med,
	       f->cons_ok ? "yes" : "NO", f->load[0]);
}

int shm_recovery(struct shm_run *run)
{
	struct rec_fig f[2];
	struct rec_ctl *c;
	int ret;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return -errno;
	ret = rec_tree(run, c, SMALL_GROUPS, &f[0]);
	if (!ret)
		ret = rec_tree(run, c, BIG_GROUPS, &f[1]);
	munmap(c, sizeof(*c));
	if (ret)
		return ret;
	if (!run->o->json)
		printf("### Recovery after a SIGKILL\n\na worker charging "
		       "round-robin over every leaf (root/mid/leaves) is "
		       "killed, waited for, then pcstock_shm_recover() (one "
		       "dead record) and pcstock_shm_reap() of its record "
		       "are timed apart; %u times per tree; the recount "
		       "reads groups x (records + 1 + CPUs) words\n\n"
		       "| groups | records | CPUs | recount reads | recover "
		       "us, median | range | reap us, median | range | "
		       "pages reaped | conserved | load |\n"
		       "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n",
		       f[0].reps);
	rec_print(run, &f[0]);
	rec_print(run, &f[1]);
	/*
	 * The slope between the two trees is the per-group part, the fixed
	 * part (the pause's membarrier and waits, /proc reads) left out.
	 */
	if (!run->o->json)
		printf("\n%u groups against %u: recover %.1fx, reap %.1fx the "
		       "time, for %.0fx the groups; per group added: recover "
		       "%.1f ns (%.2f ns per recount read), reap %.1f ns\n\n",
		       f[1].groups, f[0].groups, f[1].rec.med / f[0].rec.med,
		       f[1].reap.med / f[0].reap.med,
		       (double)f[1].groups / f[0].groups,
		       (f[1].rec.med - f[0].rec.med) * 1e3 /
			       (f[1].groups - f[0].groups),
		       (f[1].rec.med - f[0].rec.med) * 1e3 /
			       (f[1].groups - f[0].groups) /
			       (REC_PROCS + 1 + f[0].cpus),
		       (f[1].reap.med - f[0].reap.med) * 1e3 /
			       (f[1].groups - f[0].groups));
	return 0;
}
