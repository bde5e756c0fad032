// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_shm.c - a shared tree whose process dies at a scheduled point.
 *
 * shm-death: two simulated processes (explored threads, each attached to
 * one region with a handle and a process record of its own) charge one
 * shared tree:
 *
 *	root - A (max 12) - B
 *	                  - C
 *
 * Process 0 runs a script of charges (hits, misses with a surplus for the
 * slot, a charge above the batch), uncharges (into the slot and past it),
 * a drain and the destroy of C (the structure lock, the wait for windows,
 * the drain of C's slots), and dies at a point the schedule's decision
 * source draws among its scheduling points (explore_die_within()): before
 * any shared access of any of those steps.  If it held the structure lock,
 * on_death() does what the kernel's robust futex list does at exit: the
 * lock goes, and the next holder learns its holder died.  Process 1
 * charges and uncharges B and survives; each process counts what it holds
 * in a ledger after each call returns.
 *
 * Then, unscheduled, a third handle (the supervisor, the region's
 * creator) runs pcstock_shm_recover() and the checks:
 *  - the dead process, and only it, is found dead;
 *  - at every level: usage = every record's figure + every CPU's slot +
 *    the children's usage (the invariant of pcstock/shared.h);
 *  - a survivor's figures are its ledger, page for page;
 *  - after the dead record is reaped, the survivors give back their
 *    ledgers and every slot is drained, every level is at 0 and no
 *    counter underflowed (pcstock_warn_count()): no page lost, none
 *    counted twice.
 *
 * shm-pause: a recovery's pause against a live process's fast paths.
 * A record of the region belongs to a process that is gone from the
 * start (a third handle that sim_gone() reports dead), so that every
 * recovery pauses the tree and recounts it.  Process 0 charges and
 * uncharges B, mostly hits and uncharges into its CPU's slot (the fast
 * paths); process 1, a survivor, runs pcstock_shm_recover() between two
 * charges of its own.  The pause must keep process 0 out of every slot
 * while the recount reads the slots and the figures: a hit that took
 * pages from a slot the recount had read, but whose figure it had not,
 * leaves usage short by the hit for good.  The checks are shm-death's,
 * with no process dying inside the schedule.  A fast path that misses
 * the pause (the key's mark, SHM_KEY_FROZEN) is the planted bug
 * shm_no_key_freeze.
 *
 * shm-recoverer-death: shm-pause with two records gone, one holding 3
 * pages of B and the other the 2 of them it gave back (a figure of -2);
 * process 1 recovers, reaps both (the second's figure cancels against the
 * orphan balance the first left) and dies at a drawn point of that: with
 * the tree frozen, some keys marked or cleared, the recount half done, a
 * reap between its two stores, both locks held.  A
 * third explored thread, the supervisor, waits for process 1 to end and,
 * if it died, recovers as the contract asks (pcstock/shared.h: after any
 * death, a recovery); that recovery must finish the dead one's work:
 * process 0's operations, which may wait for the pause meanwhile, go on,
 * and the checks hold.
 *
 * The CPU of each simulated process is fixed (process t on CPU t), so a
 * seed replays the same slots.  Sequential consistency only: the windows'
 * fence is membarrier(2), which the weak-memory model does not simulate.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pcstock/counter.h>
#include <pcstock/shared.h>

#include "atomic.h"
#include "explore.h"
#include "shm.h"

#define NR_PROCS 2
/* Process 0's scheduling points are about 300: most schedules kill it. */
#define DEATH_BOUND 360
/* shm-pause's process 0: 4 fast-path calls a round. */
#define PAUSE_ROUNDS 4
/* shm-recoverer-death's records gone at the start. */
#define NR_GONE 2
/* Process 1's recovery and reaps have about 300 (8 groups, 2 CPUs). */
#define RECOVER_DEATH_BOUND 400

enum { GA, GB, GC, NR_GROUPS };

static struct {
	struct pcstock_shm *sup;
	struct pcstock_shm *h[NR_PROCS];
	pcstock_shm_gid g[NR_GROUPS];
	long held[NR_PROCS][NR_GROUPS];	/* ledgers */
	int record[NR_PROCS];		/* each handle's record */
	/* shm-pause: records gone at the start (1, or 2 with figures). */
	struct pcstock_shm *gone[NR_GONE];
	int gone_record[NR_GONE];
	unsigned int nr_gone;
	atomic_uint ended[NR_PROCS];	/* run() returned, or died */
	/* Locks released for the dead: their offsets in the header, or 0. */
	size_t died_lock[2];
	char msg[200];
} S;

static bool sim_gone(unsigned int proc)
{
	for (unsigned int k = 0; k < S.nr_gone; k++)
		if (S.gone_record[k] == (int)proc)
			return true;
	for (unsigned int t = 0; t < NR_PROCS; t++)
		if (S.record[t] == (int)proc)
			return explore_died(t);
	return false;
}

static int sim_cpu(void)
{
	return (int)explore_self();
}

/* Whether @m is at @off in the header of the mapping of one of ours. */
static bool lock_at(const pthread_mutex_t *m, size_t off)
{
	struct pcstock_shm *all[] = { S.sup, S.h[0], S.h[1], S.gone[0],
				      S.gone[1] };

	for (unsigned int k = 0; k < sizeof(all) / sizeof(all[0]); k++)
		if (all[k] && (const char *)m == (const char *)all[k]->h + off)
			return true;
	return false;
}

/*
 * A lock released for the dead: its next taker is told (EOWNERDEAD).
 * Every handle maps the region at an address of its own: the lock is
 * known by its offset.
 */
static bool sim_owner_died(pthread_mutex_t *m)
{
	for (unsigned int k = 0; k < 2; k++)
		if (S.died_lock[k] && lock_at(m, S.died_lock[k])) {
			S.died_lock[k] = 0;
			return true;
		}
	return false;
}

static void shm_setup(const struct explore_scenario *s)
{
	struct pcstock_shm_attr attr = { .max_groups = 8, .max_procs = 5,
					 .nr_cpus = NR_PROCS, .batch = 4 };
	int err;

	memset(&S, 0, sizeof(S));
	S.gone_record[0] = S.gone_record[1] = -1;
	pcstock_warn_reset();
	pcstock_shm_sim.gone = sim_gone;
	pcstock_shm_sim.cpu = sim_cpu;
	pcstock_shm_sim.owner_died = sim_owner_died;
	err = pcstock_shm_create(NULL, &attr, &S.sup);
	err = err ?: pcstock_shm_group_create(S.sup, PCSTOCK_SHM_ROOT, "A",
					      &S.g[GA]);
	err = err ?: pcstock_shm_group_create(S.sup, S.g[GA], "B", &S.g[GB]);
	err = err ?: pcstock_shm_group_create(S.sup, S.g[GA], "C", &S.g[GC]);
	err = err ?: pcstock_shm_set_limit(S.sup, S.g[GA], PCSTOCK_LIMIT_MAX,
					   12);
	for (int t = 0; t < NR_PROCS && !err; t++) {
		err = pcstock_shm_attach_fd(pcstock_shm_fd(S.sup), &S.h[t]);
		S.record[t] = err ? -1 : pcstock_shm_self(S.h[t]);
	}
	/* shm-pause and shm-recoverer-death: @arg, the records gone. */
	S.nr_gone = s->arg ? *(const unsigned int *)s->arg : 0;
	for (unsigned int k = 0; k < S.nr_gone && !err; k++) {
		err = pcstock_shm_attach_fd(pcstock_shm_fd(S.sup), &S.gone[k]);
		S.gone_record[k] = err ? -1 : pcstock_shm_self(S.gone[k]);
	}
	/*
	 * shm-recoverer-death: the second holds 3 pages of B; the first gave
	 * back 2 of them (its figure -2).  Reaped in that order, the second's
	 * figure cancels 2 against the orphan balance the first left: the
	 * reap's two stores.
	 */
	if (!err && S.nr_gone == NR_GONE) {
		err = pcstock_shm_charge(S.gone[1], S.g[GB], 3, 0);
		err = err ?: pcstock_shm_uncharge(S.gone[0], S.g[GB], 2);
	}
	if (err) {
		snprintf(S.msg, sizeof(S.msg), "setup failed: %d", err);
		explore_fail(S.msg);
	}
}

/* A call and, once it returned, the ledger (a death between: ambiguous). */
static void charge(unsigned int t, int g, unsigned long n)
{
	if (!pcstock_shm_charge(S.h[t], S.g[g], n, PCSTOCK_CHARGE_NOWAIT))
		S.held[t][g] += (long)n;
}

static void uncharge(unsigned int t, int g, unsigned long n)
{
	if (S.held[t][g] >= (long)n &&
	    !pcstock_shm_uncharge(S.h[t], S.g[g], n))
		S.held[t][g] -= (long)n;
}

static void shm_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (t == 0) {
		explore_die_within(DEATH_BOUND);
		charge(0, GB, 3);	/* miss: 4 charged, 1 to the slot */
		charge(0, GB, 1);	/* hit */
		uncharge(0, GB, 2);	/* into the slot */
		charge(0, GC, 2);	/* miss in C */
		charge(0, GB, 6);	/* above the batch: straight */
		pcstock_shm_drain(S.h[0], S.g[GB]);
		uncharge(0, GB, 5);	/* overfills: the slot empties */
		pcstock_shm_group_destroy(S.h[0], S.g[GC]);
		uncharge(0, GC, 2);	/* an offline group: straight */
		return;
	}
	charge(1, GB, 2);
	charge(1, GB, 1);
	uncharge(1, GB, 3);
	charge(1, GB, 4);
	uncharge(1, GB, 1);
}

static void pause_run(const struct explore_scenario *s, unsigned int t)
{
	unsigned int dead = 0;

	(void)s;
	if (t == 0) {
		/* Long enough to be running when a recovery pauses. */
		charge(0, GB, 1);	/* miss: 4 charged, 3 to the slot */
		for (int k = 0; k < PAUSE_ROUNDS; k++) {
			charge(0, GB, 1);	/* hits */
			uncharge(0, GB, 1);	/* into the slot */
			charge(0, GB, 2);
			uncharge(0, GB, 2);
		}
		return;
	}
	if (t == 2) {
		/* The supervisor: after a death, a recovery. */
		while (!pcs_load(&S.ended[1], PCS_ACQUIRE))
			pcs_spin_yield();
		if (pcs_load(&S.ended[1], PCS_RELAXED) == 2 &&
		    pcstock_shm_recover(S.sup, &dead))
			explore_fail("the supervisor's recovery failed");
		return;
	}
	charge(1, GC, 1);
	if (S.nr_gone == NR_GONE)
		explore_die_within(RECOVER_DEATH_BOUND);
	if (pcstock_shm_recover(S.h[1], &dead) || dead != S.nr_gone)
		explore_fail("process 1's recovery did not find the gone "
			     "records");
	/* The reaps, in the order that moves the orphan balance. */
	for (unsigned int k = 0; S.nr_gone == NR_GONE && k < S.nr_gone; k++)
		if (pcstock_shm_reap(S.h[1], (unsigned int)S.gone_record[k],
				     NULL))
			explore_fail("process 1's reap failed");
	charge(1, GC, 1);
	pcs_store(&S.ended[1], 1, PCS_RELEASE);
}

static void shm_on_death(const struct explore_scenario *s, unsigned int t)
{
	pthread_mutex_t *lock[2] = { &S.h[t]->h->tree_lock,
				     &S.h[t]->h->recover_lock };

	(void)s;
	pcs_store(&S.ended[t], 2, PCS_RELEASE);
	/*
	 * The robust futex list at exit: a lock the dead held is released
	 * and its next holder told (EOWNERDEAD: the structure's repair; for
	 * the recovery lock, the end of a reap left half done, too).  glibc
	 * keeps a robust mutex's owner's thread id in the mutex (the futex
	 * word the kernel's list walk reads); an unlock attempt by a
	 * non-owner would work too, but ThreadSanitizer reports it.  The
	 * unlock cannot tell, so sim_owner_died() does.
	 */
	for (unsigned int k = 0; k < 2; k++)
		if ((lock[k]->__data.__owner & FUTEX_TID_MASK) == gettid()) {
			pthread_mutex_unlock(lock[k]);
			S.died_lock[k] = (size_t)((char *)lock[k] -
						  (char *)S.h[t]->h);
		}
}

static long figures(pcstock_shm_gid g)
{
	long sum = pcstock_shm_proc_charged(S.sup, PCSTOCK_SHM_ORPHAN, g);

	for (unsigned int p = 0; p < pcstock_shm_max_procs(S.sup); p++)
		sum += pcstock_shm_proc_charged(S.sup, p, g);
	return sum;
}

/* Keys that still carry a pause's mark. */
static unsigned int shm_frozen_keys(void)
{
	unsigned int n = 0;

	for (uint32_t i = 0; i < S.sup->max_groups; i++)
		n += (pcs_load(shm_key_of(S.sup, i), PCS_RELAXED) &
		      SHM_KEY_FROZEN) != 0;
	return n;
}

/* usage = figures + slots + children, at B, C, A and the root. */
static const char *check_levels(void)
{
	static const int below[NR_GROUPS][2] = {
		[GA] = { GB, GC }, [GB] = { -1, -1 }, [GC] = { -1, -1 },
	};
	long top = 0;

	for (int g = NR_GROUPS - 1; g >= 0; g--) {
		long want = figures(S.g[g]) +
			    (long)pcstock_shm_stock_pages(S.sup, S.g[g]);
		long have = (long)pcstock_shm_usage(S.sup, S.g[g]);

		for (int k = 0; k < 2; k++)
			if (below[g][k] >= 0)
				want += (long)pcstock_shm_usage(S.sup,
						S.g[below[g][k]]);
		if (have != want) {
			snprintf(S.msg, sizeof(S.msg),
				 "group %c: usage %ld, but figures + slots + "
				 "children = %ld (process 0 %s)",
				 'A' + g, have, want,
				 explore_died(0) ? "died" : "lived");
			return S.msg;
		}
		if (g == GA)
			top = have;
	}
	if ((long)pcstock_shm_usage(S.sup, PCSTOCK_SHM_ROOT) != top) {
		snprintf(S.msg, sizeof(S.msg), "root %lu, A %ld",
			 pcstock_shm_usage(S.sup, PCSTOCK_SHM_ROOT), top);
		return S.msg;
	}
	return NULL;
}

static const char *shm_check_end(const struct explore_scenario *s)
{
	unsigned int dead = 0, want = 0;
	unsigned long pages;
	const char *msg;
	int err;

	(void)s;
	/* The dead, and the gone record, that no recovery marked yet. */
	for (unsigned int t = 0; t < NR_PROCS; t++)
		want += explore_died(t) &&
			pcstock_shm_proc_state(S.sup, (unsigned int)
					       S.record[t]) ==
				PCSTOCK_SHM_PROC_LIVE;
	for (unsigned int k = 0; k < S.nr_gone; k++)
		want += pcstock_shm_proc_state(S.sup, (unsigned int)
					       S.gone_record[k]) ==
			PCSTOCK_SHM_PROC_LIVE;
	err = pcstock_shm_recover(S.sup, &dead);
	if (err || dead != want ||
	    (S.nr_gone && pcstock_shm_recoveries(S.sup) == 0)) {
		snprintf(S.msg, sizeof(S.msg),
			 "recover: %d, %u dead, %u expected (process 0 %s, "
			 "1 %s)", err, dead, want,
			 explore_died(0) ? "died" : "lived",
			 explore_died(1) ? "died" : "lived");
		return S.msg;
	}
	if (pcstock_shm_recoveries(S.sup) && (shm_frozen_keys() ||
					      pcs_load(&S.sup->h->frozen,
						       PCS_RELAXED)))
		return "the tree is still frozen after a recovery";
	msg = check_levels();
	if (msg)
		return msg;
	for (unsigned int t = 0; t < NR_PROCS; t++) {
		if (explore_died(t))
			continue;
		for (int g = 0; g < NR_GROUPS; g++)
			if (pcstock_shm_proc_charged(S.sup,
						     (unsigned int)S.record[t],
						     S.g[g]) != S.held[t][g]) {
				snprintf(S.msg, sizeof(S.msg),
					 "process %u's figure for %c: %ld, "
					 "its ledger: %ld", t, 'A' + g,
					 pcstock_shm_proc_charged(S.sup,
						(unsigned int)S.record[t],
						S.g[g]),
					 S.held[t][g]);
				return S.msg;
			}
	}
	/* Give everything back: the dead by reaping, the living by hand. */
	for (unsigned int t = 0; t < NR_PROCS; t++)
		if (explore_died(t) &&
		    pcstock_shm_reap(S.sup, (unsigned int)S.record[t], &pages))
			return "reap failed";
	/* What a dead reaper did not reap (a FREE record was reaped). */
	for (unsigned int k = 0; k < S.nr_gone; k++)
		if (pcstock_shm_proc_state(S.sup, (unsigned int)
					   S.gone_record[k]) ==
			    PCSTOCK_SHM_PROC_DEAD &&
		    pcstock_shm_reap(S.sup, (unsigned int)S.gone_record[k],
				     &pages))
			return "a gone record's reap failed";
	for (unsigned int t = 0; t < NR_PROCS; t++)
		for (int g = 0; g < NR_GROUPS && !explore_died(t); g++)
			if (S.held[t][g] &&
			    pcstock_shm_uncharge(S.h[t], S.g[g],
						 (unsigned long)S.held[t][g]))
				return "a survivor's uncharge failed";
	for (int g = 0; g < NR_GROUPS; g++)
		pcstock_shm_drain(S.sup, S.g[g]);
	for (int g = 0; g < NR_GROUPS; g++)
		if (pcstock_shm_usage(S.sup, S.g[g]) ||
		    pcstock_shm_stock_pages(S.sup, S.g[g])) {
			snprintf(S.msg, sizeof(S.msg),
				 "group %c keeps %lu pages (%lu in slots) "
				 "once everything was given back (process 0 "
				 "%s)", 'A' + g,
				 pcstock_shm_usage(S.sup, S.g[g]),
				 pcstock_shm_stock_pages(S.sup, S.g[g]),
				 explore_died(0) ? "died" : "lived");
			return S.msg;
		}
	if (pcstock_shm_usage(S.sup, PCSTOCK_SHM_ROOT))
		return "the root keeps pages";
	if (pcstock_warn_count()) {
		snprintf(S.msg, sizeof(S.msg),
			 "%lu counter underflows: pages given back twice",
			 pcstock_warn_count());
		return S.msg;
	}
	return NULL;
}

static void shm_teardown(const struct explore_scenario *s)
{
	(void)s;
	for (unsigned int t = 0; t < NR_PROCS; t++)
		pcstock_shm_detach(S.h[t]);
	pcstock_shm_detach(S.sup);
	/* Its record was reaped: only the mapping and the handle go. */
	for (unsigned int k = 0; k < S.nr_gone; k++)
		pcstock_shm_detach(S.gone[k]);
	pcstock_shm_sim.gone = NULL;
	pcstock_shm_sim.cpu = NULL;
	pcstock_shm_sim.owner_died = NULL;
}

static const struct explore_scenario shm_death = {
	.name = "shm-death",
	.help = "a shared tree's process dies at any step of a charge, "
		"uncharge, drain or destroy; recovery conserves every page",
	.nr_threads = NR_PROCS,
	.setup = shm_setup,
	.run = shm_run,
	.on_death = shm_on_death,
	.check_end = shm_check_end,
	.teardown = shm_teardown,
};

static const unsigned int gone_one = 1, gone_two = NR_GONE;

static const struct explore_scenario shm_pause = {
	.name = "shm-pause",
	.help = "a recovery's pause against a live process's hits and "
		"uncharges: no fast path uses a slot while the recount reads",
	.nr_threads = NR_PROCS,
	.setup = shm_setup,
	.run = pause_run,
	.check_end = shm_check_end,
	.teardown = shm_teardown,
	.arg = &gone_one,
};

static const struct explore_scenario shm_recoverer_death = {
	.name = "shm-recoverer-death",
	.help = "a recoverer dies at any step of its pause; the next "
		"recovery finishes its work and conserves every page",
	.nr_threads = NR_PROCS + 1,
	.setup = shm_setup,
	.run = pause_run,
	.on_death = shm_on_death,
	.check_end = shm_check_end,
	.teardown = shm_teardown,
	.arg = &gone_two,
};

const struct explore_scenario *const explore_shm_scenarios[] = {
	&shm_death,
	&shm_pause,
	&shm_recoverer_death,
	NULL,
};
