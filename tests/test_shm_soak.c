// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_shm_soak.c - the shared tree's kill soak (issue 33's acceptance:
 * 10,000 kills or more, 0 pages lost or duplicated, no lock left held, at
 * every level).
 *
 * A supervisor builds a three-level tree (the root, two tenants, three
 * leaves each; a max on one tenant and on one leaf of the other, so that
 * charges fail too) and keeps NR_WORKERS forked workers charging and
 * uncharging the leaves, now and then draining a leaf, recovering (so
 * that a recoverer dies midway too) or creating and destroying a scratch
 * group (so that the structure lock's holder dies too).  Over and over it
 * SIGKILLs one worker, sometimes two, at a random moment, waits for them,
 * recovers, gives back what the dead held (pcstock_shm_reap()) and forks
 * replacements.  Every few kills it parks the live workers and checks,
 * at every group,
 *	usage = the figures of every record + the slots + the children's,
 * that each live worker's figures are exactly what its own ledger says it
 * holds, that no dead process still has a record, that every group is
 * still found by its name under its parent, and that both locks are free.
 * At the end it kills everyone, recovers, reaps, drains, and expects every
 * usage to be 0.
 *
 * The workers park cooperatively (a flag polled between operations),
 * never by SIGSTOP: a process stopped inside a window would hold up the
 * very pause the checks are meant to follow.
 *
 * Usage: test_shm_soak [-k kills] [-c check_every] [-s seed]
 * (the seed draws the victims, the pauses and the workers' operations; the
 * interleavings are the scheduler's, so a seed does not replay a run).
 *
 * Built with -DSOAK_SKIP_RECOVER (test_shm_soak_skip_recover) neither the
 * supervisor nor the workers call pcstock_shm_recover(): a dead worker's
 * pages are then never given back, and the soak must say so and exit 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pcstock/shared.h>

/*
 * The library's view of the region, read for the summary only: how many
 * kills landed inside an operation's window, with a lock held, or in a
 * recovery's pause.
 */
#include "shm.h"

#define NR_WORKERS 6
#define NR_TENANTS 2
#define LEAVES_PER_TENANT 3
#define NR_LEAVES (NR_TENANTS * LEAVES_PER_TENANT)
#define FIRST_LEAF (1 + NR_TENANTS)
#define NR_GROUPS (FIRST_LEAF + NR_LEAVES)	/* root, tenants, leaves */

#define BATCH 8U		/* small: the stocks matter */
#define MAX_CHUNK 12U		/* some charges bypass the stock */
#define HOLD_CAP 48L		/* a worker gives back above this a leaf */
#define TENANT1_MAX 300UL	/* about half what its workers would hold */
#define LEAF0_MAX 100UL		/* about half what its workers would hold */
#define MAX_PROCS 32U
#define PARK_TIMEOUT_S 10
#define LOCK_TIMEOUT_S 10

/* A worker's operations, out of DICE: the rest charge or uncharge. */
#define DICE 65536U
#define DRAINS 1280U		/* 2% */
#define RECOVERS 2U		/* each one reads /proc for every record */
#define SCRATCHES 16U

/*
 * A worker sleeps up to REST_NS once in REST_ONE_IN operations, so that
 * fewer than NR_WORKERS are runnable at once on a small machine: a victim,
 * or a worker preempted inside a window, gets a CPU soon, and a kill or a
 * recovery does not wait for time slices.  On 2 CPUs: about 850 kills/s
 * instead of 50, for about half the share of kills that land inside an
 * operation (12% instead of 23%).
 */
#define REST_ONE_IN 1024
#define REST_NS 400000

/* ---- memory shared with the workers -------------------------------------- */

/*
 * One per worker slot, in a MAP_SHARED mapping made before any fork so
 * that the supervisor reads a live worker's ledger.  The ledger is the
 * worker's word for what it holds; it is written after the library call
 * returns, so it is trusted only for a live worker that has parked.
 */
struct worker {
	_Alignas(64) atomic_long held[NR_LEAVES];
	atomic_int record;		/* its process record, -1 before */
	atomic_uint parked;		/* the pause it acknowledged */
	atomic_ulong charges, failures;
	char error[160];		/* why it gave up, for the supervisor */
};

struct control {
	_Alignas(64) atomic_uint pause;	/* nonzero, a generation: park */
	struct worker w[NR_WORKERS];
};

static struct control *ctl;

/* ---- the supervisor's state (copied into each worker by fork) ------------ */

static struct pcstock_shm *sup;
static pcstock_shm_gid gid[NR_GROUPS];
static int parent[NR_GROUPS];
static char sname[NR_GROUPS][8];	/* the name under its parent */
static char gname[NR_GROUPS][24];	/* the path, for messages */
static pid_t pids[NR_WORKERS];		/* 0: no worker in the slot */
static pid_t sup_pid;
static uint64_t seed;
static unsigned int pause_gen;
static unsigned long check_every = 10, next_check;

static struct {
	unsigned long kills, unattached, in_window, tree_locked;
	unsigned long recover_locked, frozen, recovered, reaped, pages;
	unsigned long checks;
} tally;

/* ---- small helpers ------------------------------------------------------- */

/* xorshift64*: enough, and each process has its own stream. */
static uint64_t next_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(uint64_t ns)
{
	struct timespec ts = { 0, (long)ns };

	nanosleep(&ts, NULL);
}

static void futex_wait(atomic_uint *w, unsigned int val)
{
	/* Shared (no FUTEX_PRIVATE_FLAG): the waker is another process. */
	syscall(SYS_futex, w, FUTEX_WAIT, val, NULL, NULL, 0);
}

static void futex_wake_all(atomic_uint *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Kill every worker (they would die with us anyway: PR_SET_PDEATHSIG). */
static void kill_workers(void)
{
	for (int i = 0; i < NR_WORKERS; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
}

/*
 * Exit 1 with a message.  In the SKIP_RECOVER build only a loss (@loss:
 * the books, a ledger, a record, a usage left) may end so: anything else
 * aborts, which ctest counts as a failure even under WILL_FAIL, so that
 * the variant passes only when the soak saw the pages go.
 */
static void __attribute__((noreturn, format(printf, 2, 0)))
vdie(bool loss, const char *fmt, va_list ap)
{
	fprintf(stderr, "test_shm_soak: FAIL (seed %llu, after %lu kills): ",
		(unsigned long long)seed, tally.kills);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	kill_workers();
#ifdef SOAK_SKIP_RECOVER
	if (!loss)
		abort();
#else
	(void)loss;
#endif
	exit(1);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(false, fmt, ap);
}

/* Pages lost or duplicated, or a dead process's left behind. */
static void __attribute__((noreturn, format(printf, 1, 2)))
die_loss(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(true, fmt, ap);
}

/* The one way anyone recovers (none at all in the SKIP_RECOVER build). */
static int recover_with(struct pcstock_shm *h, unsigned int *nr_dead)
{
	*nr_dead = 0;
#ifdef SOAK_SKIP_RECOVER
	(void)h;
	return 0;
#else
	return pcstock_shm_recover(h, nr_dead);
#endif
}

/* ---- the workers --------------------------------------------------------- */

static void __attribute__((noreturn, format(printf, 2, 3)))
worker_fail(struct worker *me, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(me->error, sizeof(me->error), fmt, ap);
	va_end(ap);
	_exit(2);
}

/* Acknowledge pause @gen, then sleep until it ends. */
static void park(struct worker *me, unsigned int gen)
{
	/* Release: the ledger's last store before the acknowledgement. */
	atomic_store_explicit(&me->parked, gen, memory_order_release);
	while (atomic_load_explicit(&ctl->pause, memory_order_acquire) == gen)
		futex_wait(&ctl->pause, gen);
}

/* After the call returned: a kill before this line leaves it stale. */
static void ledger_add(struct worker *me, int leaf, long n)
{
	long v = atomic_load_explicit(&me->held[leaf], memory_order_relaxed);

	atomic_store_explicit(&me->held[leaf], v + n, memory_order_relaxed);
}

static void do_charge(struct pcstock_shm *w, struct worker *me, int leaf,
		      unsigned long n, uint64_t r)
{
	static const unsigned int flags[] = {
		0, 0, PCSTOCK_CHARGE_NOWAIT, PCSTOCK_CHARGE_NORETRY,
	};
	int err = pcstock_shm_charge(w, gid[FIRST_LEAF + leaf], n,
				     flags[r % 4]);

	if (err == -ENOMEM) {
		/* The limits at work: nothing charged, nothing to note. */
		atomic_fetch_add_explicit(&me->failures, 1,
					  memory_order_relaxed);
		return;
	}
	if (err)
		worker_fail(me, "charge of %lu to %s: %d", n,
			    gname[FIRST_LEAF + leaf], err);
	atomic_fetch_add_explicit(&me->charges, 1, memory_order_relaxed);
	ledger_add(me, leaf, (long)n);
}

static void do_uncharge(struct pcstock_shm *w, struct worker *me, int leaf,
			unsigned long n)
{
	int err = pcstock_shm_uncharge(w, gid[FIRST_LEAF + leaf], n);

	if (err)
		worker_fail(me, "uncharge of %lu from %s: %d", n,
			    gname[FIRST_LEAF + leaf], err);
	ledger_add(me, leaf, -(long)n);
}

/*
 * A group of the slot's own under a tenant, created and destroyed at
 * once: a kill in between leaves it for the slot's next worker, a kill
 * inside leaves the structure lock to a successor's repair.
 */
static void scratch(struct pcstock_shm *w, struct worker *me)
{
	int slot = (int)(me - ctl->w);
	pcstock_shm_gid tenant = gid[1 + slot % NR_TENANTS], g;
	char name[8];
	int err;

	snprintf(name, sizeof(name), "s%d", slot);
	err = pcstock_shm_group_create(w, tenant, name, &g);
	if (err == -EEXIST)
		err = pcstock_shm_group_lookup(w, tenant, name, &g);
	if (!err)
		err = pcstock_shm_group_destroy(w, g);
	if (err)
		worker_fail(me, "scratch group %s: %d", name, err);
}

/* The rare operations: a drain, a recovery, a scratch group. */
static void rare(struct pcstock_shm *w, struct worker *me, int leaf,
		 unsigned int dice)
{
	unsigned int dead;
	long got;
	int err;

	if (dice < DRAINS) {
		got = pcstock_shm_drain(w, gid[FIRST_LEAF + leaf]);
		if (got < 0)
			worker_fail(me, "drain of %s: %ld",
				    gname[FIRST_LEAF + leaf], got);
	} else if (dice < DRAINS + RECOVERS) {
		err = recover_with(w, &dead);
		if (err)
			worker_fail(me, "recover: %d", err);
	} else {
		scratch(w, me);
	}
}

/* One operation on a random leaf. */
static void step(struct pcstock_shm *w, struct worker *me, uint64_t *rng)
{
	uint64_t r = next_rand(rng);
	int leaf = (int)(r % NR_LEAVES);
	unsigned long n = 1 + (r >> 8) % MAX_CHUNK;
	long held = atomic_load_explicit(&me->held[leaf],
					 memory_order_relaxed);
	unsigned int dice = (unsigned int)(r >> 16) % DICE;

	if (dice < DRAINS + RECOVERS + SCRATCHES)
		rare(w, me, leaf, dice);
	else if (held < (long)n || (held < HOLD_CAP && dice % 2))
		do_charge(w, me, leaf, n, r >> 32);
	else
		do_uncharge(w, me, leaf, n);
	if (next_rand(rng) % REST_ONE_IN == 0)
		nap(next_rand(rng) % REST_NS);
}

static void __attribute__((noreturn)) worker_main(int slot, uint64_t wseed)
{
	struct worker *me = &ctl->w[slot];
	struct pcstock_shm *w;
	uint64_t rng = wseed | 1;
	int err;

	/* Never outlive the supervisor, even one that failed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != sup_pid)
		_exit(0);
	/* The inherited handle is the parent's: attach on our own. */
	err = pcstock_shm_attach_fd(pcstock_shm_fd(sup), &w);
	if (err)
		worker_fail(me, "attach: %d", err);
	atomic_store_explicit(&me->record, pcstock_shm_self(w),
			      memory_order_relaxed);
	for (;;) {
		unsigned int gen = atomic_load_explicit(&ctl->pause,
							memory_order_acquire);

		if (gen)
			park(me, gen);
		else
			step(w, me, &rng);
	}
}

/* ---- the supervisor: workers' lives -------------------------------------- */

static void spawn(int slot, uint64_t *rng)
{
	struct worker *me = &ctl->w[slot];
	uint64_t wseed = next_rand(rng);
	pid_t pid;

	/* A fresh ledger: the dead one's is not the newcomer's. */
	for (int l = 0; l < NR_LEAVES; l++)
		atomic_store_explicit(&me->held[l], 0, memory_order_relaxed);
	atomic_store_explicit(&me->record, -1, memory_order_relaxed);
	atomic_store_explicit(&me->parked, 0, memory_order_relaxed);
	me->error[0] = '\0';
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid)
		worker_main(slot, wseed);
	pids[slot] = pid;
}

static int slot_of(pid_t pid)
{
	for (int i = 0; i < NR_WORKERS; i++)
		if (pids[i] == pid)
			return i;
	return -1;
}

/* A worker that left on its own has failed: say why. */
static void __attribute__((noreturn)) worker_died(pid_t pid, int status)
{
	int slot = slot_of(pid);

	if (slot < 0)
		die("pid %d, no worker of ours, exited", (int)pid);
	pids[slot] = 0;
	if (WIFEXITED(status))
		die("worker %d (pid %d) gave up: %s", slot, (int)pid,
		    ctl->w[slot].error[0] ? ctl->w[slot].error : "?");
	die("worker %d (pid %d) died of signal %d", slot, (int)pid,
	    WIFSIGNALED(status) ? WTERMSIG(status) : -1);
}

static void reap_strays(void)
{
	int status;
	pid_t pid = waitpid(-1, &status, WNOHANG);

	if (pid > 0)
		worker_died(pid, status);
}

static void send_kill(int slot)
{
	if (kill(pids[slot], SIGKILL))
		die("kill %d: %s", (int)pids[slot], strerror(errno));
}

/* Wait for slot @slot's worker, killed; its pid is then free. */
static void wait_killed(int slot)
{
	pid_t pid = pids[slot];
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid %d: %s", (int)pid, strerror(errno));
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		worker_died(pid, status);
	pids[slot] = 0;
}

/* @pid's record, or -1 if the kill came before its attach took one. */
static int record_of(pid_t pid)
{
	for (unsigned int p = 0; p < MAX_PROCS; p++)
		if (pcstock_shm_proc_state(sup, p) != PCSTOCK_SHM_PROC_FREE &&
		    pcstock_shm_proc_pid(sup, p) == pid)
			return (int)p;
	return -1;
}

/*
 * Where the dead left the region, before anyone repairs it: inside an
 * operation (its window mark), holding a lock (the kernel marks a robust
 * mutex whose owner died in the lock word), inside a recovery's pause.
 */
static void note_death(pid_t pid)
{
	int rec = record_of(pid);

	tally.kills++;
	tally.unattached += rec < 0;
	if (rec >= 0)
		tally.in_window += !!atomic_load(
			&shm_proc(sup, (unsigned int)rec)->active);
}

static void note_locks(void)
{
	bool recovering =
		sup->h->recover_lock.__data.__lock & FUTEX_OWNER_DIED;

	tally.tree_locked +=
		!!(sup->h->tree_lock.__data.__lock & FUTEX_OWNER_DIED);
	tally.recover_locked += recovering;
	/* Only the recovery lock's holder pauses: it was the dead. */
	tally.frozen += recovering && atomic_load(&sup->h->frozen);
}

/* Has slot @i's worker (if any) acknowledged the current pause? */
static bool parked(int i)
{
	/* Acquire: its ledger's stores before the acknowledgement. */
	return !pids[i] || atomic_load_explicit(&ctl->w[i].parked,
						memory_order_acquire) ==
				   pause_gen;
}

/* Park every live worker: on return none is inside the library. */
static void park_all(void)
{
	double deadline = now() + PARK_TIMEOUT_S;

	if (!++pause_gen)
		pause_gen = 1;
	atomic_store_explicit(&ctl->pause, pause_gen, memory_order_seq_cst);
	for (int i = 0; i < NR_WORKERS; i++)
		while (!parked(i)) {
			reap_strays();
			if (now() > deadline)
				die("worker %d (pid %d) did not park within %d s: stuck in the library?",
				    i, (int)pids[i], PARK_TIMEOUT_S);
			sched_yield();
		}
}

static void unpark_all(void)
{
	atomic_store_explicit(&ctl->pause, 0, memory_order_release);
	futex_wake_all(&ctl->pause);
}

/* ---- the supervisor: recovery -------------------------------------------- */

static unsigned int recover(const char *when)
{
	unsigned int dead;
	int err = recover_with(sup, &dead);

	if (err)
		die("%s: pcstock_shm_recover: %d", when, err);
	tally.recovered += dead;
	return dead;
}

/* What a supervisor does after a recovery: reap every DEAD or LEFT record. */
static void reap_dead(const char *when)
{
	for (unsigned int p = 0; p < MAX_PROCS; p++) {
		int st = pcstock_shm_proc_state(sup, p);
		unsigned long pages;
		int err;

		if (st != PCSTOCK_SHM_PROC_DEAD && st != PCSTOCK_SHM_PROC_LEFT)
			continue;
		err = pcstock_shm_reap(sup, p, &pages);
		if (err)
			die("%s: pcstock_shm_reap(%u): %d", when, p, err);
		tally.reaped++;
		tally.pages += pages;
	}
}

/* ---- the supervisor: checks (every worker parked) ------------------------ */

/* Every record's figure for group @g (the orphan balance included). */
static long figures(int g)
{
	long sum = pcstock_shm_proc_charged(sup, PCSTOCK_SHM_ORPHAN, gid[g]);

	for (unsigned int p = 0; p < MAX_PROCS; p++)
		if (pcstock_shm_proc_state(sup, p) != PCSTOCK_SHM_PROC_FREE)
			sum += pcstock_shm_proc_charged(sup, p, gid[g]);
	return sum;
}

/* At every level: usage = figures + slots + children's usage. */
static void check_books(const char *when)
{
	unsigned long cap = BATCH *
			    (unsigned long)sysconf(_SC_NPROCESSORS_CONF);

	for (int g = 0; g < NR_GROUPS; g++) {
		unsigned long usage = pcstock_shm_usage(sup, gid[g]);
		unsigned long stock = pcstock_shm_stock_pages(sup, gid[g]);
		unsigned long children = 0;
		long want;

		for (int c = 0; c < NR_GROUPS; c++)
			if (parent[c] == g)
				children += pcstock_shm_usage(sup, gid[c]);
		want = figures(g) + (long)stock + (long)children;
		if ((long)usage != want)
			die_loss("%s: %s: usage %lu != figures %ld + stock %lu + children %lu: %+ld pages",
				 when, gname[g], usage, figures(g), stock, children,
				 (long)usage - want);
		if (stock > cap)
			die("%s: %s: %lu pages in the slots, above %lu",
			    when, gname[g], stock, cap);
	}
}

/* Each live worker's figures are its ledger, to the page. */
static void check_ledgers(const char *when)
{
	for (int i = 0; i < NR_WORKERS; i++) {
		struct worker *me = &ctl->w[i];
		int rec = atomic_load_explicit(&me->record,
					       memory_order_relaxed);

		if (!pids[i])
			continue;
		if (rec < 0 ||
		    pcstock_shm_proc_state(sup, (unsigned int)rec) !=
			    PCSTOCK_SHM_PROC_LIVE ||
		    pcstock_shm_proc_pid(sup, (unsigned int)rec) != pids[i])
			die("%s: worker %d (pid %d) parked without its record (%d)",
			    when, i, (int)pids[i], rec);
		for (int g = 1; g < NR_GROUPS; g++) {
			long fig = pcstock_shm_proc_charged(sup,
							    (unsigned int)rec,
							    gid[g]);
			long want = g < FIRST_LEAF ?
					    0 :
					    atomic_load_explicit(
						    &me->held[g - FIRST_LEAF],
						    memory_order_relaxed);

			if (fig != want)
				die_loss("%s: worker %d (pid %d) holds %ld pages of %s, its figure says %ld: %+ld pages",
					 when, i, (int)pids[i], want, gname[g], fig,
					 fig - want);
		}
	}
}

/* Only the supervisor and the live workers have records. */
static void check_records(const char *when)
{
	for (unsigned int p = 0; p < MAX_PROCS; p++) {
		pid_t pid = pcstock_shm_proc_pid(sup, p);
		long held = 0;

		if (pcstock_shm_proc_state(sup, p) == PCSTOCK_SHM_PROC_FREE ||
		    pid == sup_pid || slot_of(pid) >= 0)
			continue;
		for (int g = 1; g < NR_GROUPS; g++)
			held += pcstock_shm_proc_charged(sup, p, gid[g]);
		die_loss("%s: record %u of dead pid %d (state %d) still holds %ld pages: never given back",
			 when, p, (int)pid, pcstock_shm_proc_state(sup, p), held);
	}
}

/* The structure, repaired or not: each group found by name under its parent. */
static void check_structure(const char *when)
{
	for (int g = 1; g < NR_GROUPS; g++) {
		pcstock_shm_gid found = 0;
		int err = pcstock_shm_group_lookup(sup, gid[parent[g]],
						   sname[g], &found);

		if (err || found != gid[g] ||
		    pcstock_shm_group_parent(sup, gid[g]) != gid[parent[g]])
			die("%s: %s: lookup %d, gid %#llx for %#llx, parent %#llx",
			    when, gname[g], err, (unsigned long long)found,
			    (unsigned long long)gid[g],
			    (unsigned long long)pcstock_shm_group_parent(
				    sup, gid[g]));
	}
}

static void on_alarm(int sig)
{
	static const char msg[] =
		"test_shm_soak: FAIL: a lock is still held (timed out)\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
#ifdef SOAK_SKIP_RECOVER
	abort();		/* not a loss: see vdie() */
#endif
	_exit(1);
}

/*
 * No lock left held: the structure lock (a group's create and destroy,
 * which a dead holder's successor repairs) and the recovery lock (a
 * recovery, which finds nobody new dead), under an alarm, so that a lock
 * a dead process kept fails the test instead of hanging it.
 */
static void probe_locks(const char *when)
{
	pcstock_shm_gid g;
	int err;

	alarm(LOCK_TIMEOUT_S);
	err = pcstock_shm_group_create(sup, PCSTOCK_SHM_ROOT, "probe", &g);
	if (err)
		die("%s: probe create: %d", when, err);
	err = pcstock_shm_group_destroy(sup, g);
	if (err)
		die("%s: probe destroy: %d", when, err);
	if (recover(when))
		die("%s: a process died unnoticed", when);
	alarm(0);
}

/* The full check: everyone parked, books, reap, books, ledgers, locks. */
static void full_check(const char *when)
{
	park_all();
	check_books(when);
	reap_dead(when);
	check_books(when);
	check_ledgers(when);
	check_records(when);
	check_structure(when);
	probe_locks(when);
	unpark_all();
	tally.checks++;
}

/* ---- the supervisor: the run --------------------------------------------- */

static void build_tree(void)
{
	struct pcstock_shm_attr attr = {
		.max_groups = 64,
		.max_procs = MAX_PROCS,
		.batch = BATCH,
	};
	int err = pcstock_shm_create(NULL, &attr, &sup);

	if (err)
		die("pcstock_shm_create: %d", err);
	gid[0] = PCSTOCK_SHM_ROOT;
	parent[0] = -1;
	snprintf(gname[0], sizeof(gname[0]), "/");
	for (int g = 1; g < NR_GROUPS; g++) {
		bool leaf = g >= FIRST_LEAF;

		parent[g] = leaf ? 1 + (g - FIRST_LEAF) / LEAVES_PER_TENANT : 0;
		snprintf(sname[g], sizeof(sname[g]), "%c%d", leaf ? 'l' : 't',
			 leaf ? (g - FIRST_LEAF) % LEAVES_PER_TENANT : g - 1);
		if (leaf)
			snprintf(gname[g], sizeof(gname[g]), "t%d/%s",
				 parent[g] - 1, sname[g]);
		else
			snprintf(gname[g], sizeof(gname[g]), "%s", sname[g]);
		err = pcstock_shm_group_create(sup, gid[parent[g]], sname[g],
					       &gid[g]);
		if (err)
			die("group %s: %d", gname[g], err);
	}
	/* A limit at the middle level and one at a leaf of the other side. */
	err = pcstock_shm_set_limit(sup, gid[2], PCSTOCK_LIMIT_MAX,
				    TENANT1_MAX);
	if (!err)
		err = pcstock_shm_set_limit(sup, gid[FIRST_LEAF],
					    PCSTOCK_LIMIT_MAX, LEAF0_MAX);
	if (err)
		die("set_limit: %d", err);
}

/*
 * One round: one victim, or two at once (a recovery with several dead);
 * killed mostly after up to 300 us, sometimes at once (a newcomer inside
 * its attach), recovered, reaped and replaced.
 */
static void kill_round(uint64_t *rng)
{
	uint64_t r = next_rand(rng);
	int nr = r % 16 ? 1 : 2, slot[2];
	pid_t pid[2];
	bool check;

	slot[0] = (int)((r >> 8) % NR_WORKERS);
	slot[1] = (slot[0] + 1 + (int)((r >> 16) % (NR_WORKERS - 1))) %
		  NR_WORKERS;
	if ((r >> 24) % 8)
		nap((r >> 32) % 300000);
	reap_strays();
	for (int v = 0; v < nr; v++) {
		pid[v] = pids[slot[v]];
		send_kill(slot[v]);
	}
	for (int v = 0; v < nr; v++) {
		wait_killed(slot[v]);
		note_death(pid[v]);
	}
	note_locks();
	check = tally.kills >= next_check;
	if (check)
		next_check = tally.kills + check_every;
	/* A worker's own recovery may have seen the dead first. */
	if (recover("after a kill") > (unsigned int)nr)
		die("after a kill: more dead than the %d killed", nr);
	if (check)
		full_check("after a kill");
	else
		reap_dead("after a kill");
	for (int v = 0; v < nr; v++)
		spawn(slot[v], rng);
}

/* Everyone killed, recovered, reaped, drained: nothing may be left. */
static void final_check(void)
{
	const char *when = "at the end";

	park_all();
	for (int i = 0; i < NR_WORKERS; i++)
		send_kill(i);
	for (int i = 0; i < NR_WORKERS; i++)
		wait_killed(i);
	recover(when);
	reap_dead(when);
	for (int g = 1; g < NR_GROUPS; g++)
		if (pcstock_shm_drain(sup, gid[g]) < 0)
			die("%s: drain of %s failed", when, gname[g]);
	check_books(when);
	for (int g = 0; g < NR_GROUPS; g++) {
		unsigned long usage = pcstock_shm_usage(sup, gid[g]);

		if (usage)
			die_loss("%s: %s: usage %lu pages after every process was killed, recovered and reaped: lost or duplicated",
				 when, gname[g], usage);
	}
	check_records(when);
	check_structure(when);
	probe_locks(when);
}

static void parse_args(int argc, char **argv, unsigned long *kills)
{
	int opt;

	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	while ((opt = getopt(argc, argv, "k:c:s:")) != -1) {
		if (opt == 'k')
			*kills = strtoul(optarg, NULL, 0);
		else if (opt == 'c')
			check_every = strtoul(optarg, NULL, 0);
		else if (opt == 's')
			seed = strtoull(optarg, NULL, 0);
		else
			die("usage: %s [-k kills] [-c check_every] [-s seed]",
			    argv[0]);
	}
	if (!check_every || check_every > 100)
		die("-c must be 1..100: a full check at least every 100 kills");
}

static void summary(double secs)
{
	unsigned long charges = 0, failures = 0;

	for (int i = 0; i < NR_WORKERS; i++) {
		charges += ctl->w[i].charges;
		failures += ctl->w[i].failures;
	}
	printf("test_shm_soak: seed %llu: %lu kills: %lu inside an operation, %lu holding the structure lock, %lu the recovery lock, %lu in a pause, %lu before attaching\n",
	       (unsigned long long)seed, tally.kills, tally.in_window,
	       tally.tree_locked, tally.recover_locked, tally.frozen,
	       tally.unattached);
	printf("test_shm_soak: %lu records recovered by the supervisor, %lu reaped, %lu pages reaped; %lu full checks; %lu charges, %lu failed at a limit\n",
	       tally.recovered, tally.reaped, tally.pages, tally.checks,
	       charges, failures);
	printf("test_shm_soak: %.2f s, %.0f kills/s: 0 pages lost or duplicated, no lock held\n",
	       secs, (double)tally.kills / secs);
	if (tally.kills >= 100 && !failures)
		die("no charge ever failed: the limits were not exercised");
}

int main(int argc, char **argv)
{
	unsigned long kills = 10000;
	uint64_t rng;
	double t0;

	parse_args(argc, argv, &kills);
	next_check = check_every;
	rng = seed | 1;
	sup_pid = getpid();
	/* Sleeps of a few microseconds, not the default 50 us slack. */
	prctl(PR_SET_TIMERSLACK, 1UL);
	signal(SIGALRM, on_alarm);
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	build_tree();

	t0 = now();
	for (int i = 0; i < NR_WORKERS; i++)
		spawn(i, &rng);
	while (tally.kills < kills)
		kill_round(&rng);
	final_check();
	summary(now() - t0);
	return pcstock_shm_detach(sup) ? 1 : 0;
}
