// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * prefork.c - a pre-fork server on a shared tree: a supervisor, worker
 * processes charging per-tenant groups of one region, a worker killed
 * mid-run and its pages given back.
 *
 * The supervisor creates the tree in a memfd, a group "tenants" with one
 * group per tenant below it, each with a memory.max, and forks the
 * workers.  Each worker attaches on its own (the handle it inherited is
 * the supervisor's record, which the library refuses to a child),
 * registers its own reclaim callback, and serves requests: a request
 * charges a few pages to a tenant and holds them while the worker's next
 * few requests run, then leaves them in the worker's per-tenant cache of
 * results (still charged, as a page cache's pages are) or gives them
 * back.  A charge that finds its tenant at memory.max calls the reclaim
 * callback of the worker that charges, which can free only that worker's
 * cache; when that is not enough the request is rejected.
 *
 * Meanwhile the supervisor prints memory.current and memory.events of
 * every tenant, SIGKILLs one worker, notices the death on a pidfd,
 * recovers the tree, reaps what the dead worker held and forks a
 * replacement.  At the end it stops the workers with SIGTERM (each gives
 * back what it holds and detaches), drains the stocks and checks that
 * every tenant's memory.current is 0: the kill lost no page.
 *
 *   usage: prefork [milliseconds]      (default 1500; ctest runs 1000)
 *
 * Things to notice: a process's callbacks and data are its own (function
 * pointers mean nothing in another address space), so the gids are the
 * one thing every process shares, here by inheritance; a handle serves
 * one thread at a time (these workers have one); nothing in the library
 * watches for deaths: the supervisor looks, then calls recover and reap.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pcstock/pcstock.h>

#define NR_WORKERS 4
#define NR_TENANTS 4
#define VICTIM 1		/* the worker the supervisor kills */
#define IN_FLIGHT 8		/* requests a worker holds at once */
#define PAGES_MAX 16		/* pages a request needs at most */
#define CACHE_MAX 32		/* pages a worker caches per tenant */
#define NR_REPORTS 3		/* while the workers run */

/* memory.max of each tenant, in pages (4 KiB with the default build). */
static const struct {
	const char *name;
	unsigned long max;
} plans[NR_TENANTS] = {
	{ "tenant-a", 1024 },
	{ "tenant-b", 256 },
	{ "tenant-c", 512 },
	{ "tenant-d", 128 },
};
#define TENANTS_MAX 1024	/* "tenants": less than the sum above */

/*
 * This process's handle: the supervisor's in the supervisor; in a worker,
 * the one it attached (the inherited copy is dropped).  The gids are
 * numbers, valid in every process attached to the region.
 */
static struct pcstock_shm *shm;
static pcstock_shm_gid tenants_gid, gid[NR_TENANTS];

/* ---- a worker ---------------------------------------------------------- */

struct request {
	int tenant;
	unsigned long pages;	/* 0: the slot is free */
};

/* A worker's own state: no other process sees it, or needs to. */
static struct request held[IN_FLIGHT];
static unsigned long cached[NR_TENANTS];
static unsigned long served, rejected, reclaim_calls, reclaimed;
static volatile sig_atomic_t stopping;

static void on_sigterm(int sig)
{
	stopping = 1;
}

/*
 * This worker's reclaim callback.  It runs inside this worker's charge,
 * so it can free what this worker holds and nothing else: its cached
 * pages of the tenant over its limit (or of every tenant, when the limit
 * hit is "tenants").  Inside a callback an uncharge goes straight to the
 * counters, so the charge's retry sees the room at once.
 */
static unsigned long reclaim(struct pcstock_shm *s, pcstock_shm_gid g,
			     unsigned long nr_pages, void *arg)
{
	unsigned long freed = 0;

	reclaim_calls++;
	for (int t = 0; t < NR_TENANTS && freed < nr_pages; t++) {
		unsigned long n = cached[t];

		if (g != gid[t] && g != tenants_gid)
			continue;
		if (n > nr_pages - freed)
			n = nr_pages - freed;
		if (n && !pcstock_shm_uncharge(s, gid[t], n)) {
			cached[t] -= n;
			freed += n;
		}
	}
	reclaimed += freed;
	return freed;
}

/*
 * A request is done.  Its pages hold its result, which the worker keeps in
 * its cache for later requests (pages still charged, as a page cache's
 * are) while the cache has room; the rest is given back.
 */
static int finish(struct request *r)
{
	unsigned long keep = CACHE_MAX - cached[r->tenant];
	int err = 0;

	if (keep > r->pages)
		keep = r->pages;
	cached[r->tenant] += keep;
	if (r->pages > keep)
		err = pcstock_shm_uncharge(shm, gid[r->tenant],
					   r->pages - keep);
	r->pages = 0;
	return err;
}

/*
 * A new request for a random tenant.  NORETRY: at the limit, one call to
 * the reclaim callback and one retry, then the request is turned away
 * rather than kept waiting through the kernel's 16 retries.
 */
static int serve(struct request *r, unsigned int *seed)
{
	int t = (int)(rand_r(seed) % NR_TENANTS);
	unsigned long want = 1 + (unsigned long)(rand_r(seed) % PAGES_MAX);
	int err = pcstock_shm_charge(shm, gid[t], want, PCSTOCK_CHARGE_NORETRY);

	if (err == -ENOMEM) {
		/* At the limit even after this worker's reclaim. */
		rejected++;
		return 0;
	}
	if (err)
		return err;
	*r = (struct request){ .tenant = t, .pages = want };
	served++;
	return 0;
}

/* A worker's life, from fork() to its exit status. */
static int worker(int id)
{
	struct pcstock_shm_callbacks cb = { .reclaim = reclaim };
	struct sigaction sa = { .sa_handler = on_sigterm };
	struct pcstock_shm *inherited = shm;
	unsigned int seed = (unsigned int)getpid();
	sigset_t term;
	int err;

	/* SIGTERM was blocked across fork(): the handler first, then it. */
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &term, NULL);

	/*
	 * A record of our own: the inherited handle answers only
	 * pcstock_shm_fd() (anything else is -ECHILD), and its detach drops
	 * the copied mapping, never the supervisor's record.
	 */
	err = pcstock_shm_attach_fd(pcstock_shm_fd(inherited), &shm);
	pcstock_shm_detach(inherited);
	if (!err)
		err = pcstock_shm_set_callbacks(shm, &cb);
	if (err) {
		fprintf(stderr, "prefork: worker %d: attach: %s\n", id,
			strerror(-err));
		return 1;
	}

	/* Each request takes the place of the oldest one, which ends. */
	for (unsigned long i = 0; !stopping && !err; i++) {
		struct request *r = &held[i % IN_FLIGHT];

		if (r->pages)
			err = finish(r);
		if (!err)
			err = serve(r, &seed);
	}

	/* Stopping: the requests in flight end, the cache is given back. */
	for (int k = 0; k < IN_FLIGHT && !err; k++)
		if (held[k].pages)
			err = finish(&held[k]);
	for (int t = 0; t < NR_TENANTS && !err; t++)
		if (cached[t])
			err = pcstock_shm_uncharge(shm, gid[t], cached[t]);
	printf("worker %d (pid %d): %lu requests served, %lu rejected; "
	       "reclaim freed %lu pages in %lu calls\n", id, (int)getpid(),
	       served, rejected, reclaimed, reclaim_calls);
	if (err)
		fprintf(stderr, "prefork: worker %d: %s\n", id, strerror(-err));
	/* Nothing charged any more: the record is freed, not left for reap. */
	if (pcstock_shm_detach(shm))
		err = -EBADF;
	return err ? 1 : 0;
}

/* ---- the supervisor ---------------------------------------------------- */

struct child {
	pid_t pid;
	int pidfd;
};

static struct child workers[NR_WORKERS];
static bool failed, victim_buried;

/* @err: a negative errno, or 0 when @what says it all. */
static void fail(const char *what, int err)
{
	if (err)
		fprintf(stderr, "prefork: %s: %s\n", what, strerror(-err));
	else
		fprintf(stderr, "prefork: %s\n", what);
	failed = true;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Deaths are noticed on pidfds rather than with SIGCHLD: poll() on them
 * is at once the supervisor's clock (its timeout) and its death notice,
 * with no handler and no race between a check and a sleep; and a pidfd
 * names one process, never another that reuses its pid.
 */
static int spawn(int id)
{
	struct child *c = &workers[id];
	sigset_t term, old;
	pid_t pid;
	int err;

	/* Nothing buffered may be printed twice, by the child too. */
	fflush(stdout);
	/* Blocked until the child has its handler (worker()). */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	pid = fork();
	if (pid == 0)
		exit(worker(id));
	err = pid < 0 ? -errno : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	c->pid = pid;
	c->pidfd = pidfd_open(pid, 0);
	if (c->pidfd < 0) {
		err = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return err;
	}
	return 0;
}

/* The record a process attached as, or -1 (not attached yet, or left). */
static int record_of(pid_t pid)
{
	for (unsigned int p = 0; p < pcstock_shm_max_procs(shm); p++)
		if (pcstock_shm_proc_state(shm, p) == PCSTOCK_SHM_PROC_LIVE &&
		    pcstock_shm_proc_pid(shm, p) == pid)
			return (int)p;
	return -1;
}

/*
 * Give back what dead or departed processes held: recover() finds the
 * dead records (a zombie counts as dead) and, pausing every live
 * worker's window for a moment, derives every usage again from the
 * figures and the slots; reap() uncharges each figure.  Returns the
 * records reaped.
 */
static int recover_and_reap(void)
{
	unsigned int dead;
	int err = pcstock_shm_recover(shm, &dead), nr = 0;

	if (err) {
		fail("recover", err);
		return 0;
	}
	for (unsigned int p = 0; p < pcstock_shm_max_procs(shm); p++) {
		int st = pcstock_shm_proc_state(shm, p);
		unsigned long pages;

		if (st != PCSTOCK_SHM_PROC_DEAD && st != PCSTOCK_SHM_PROC_LEFT)
			continue;
		printf("  record %u (pid %d, %s) held:", p,
		       (int)pcstock_shm_proc_pid(shm, p),
		       st == PCSTOCK_SHM_PROC_DEAD ? "dead" : "left");
		for (int t = 0; t < NR_TENANTS; t++)
			printf(" %s %ld", plans[t].name,
			       pcstock_shm_proc_charged(shm, p, gid[t]));
		err = pcstock_shm_reap(shm, p, &pages);
		if (err) {
			printf("\n");
			fail("reap", err);
			continue;
		}
		printf("; %lu pages given back\n", pages);
		nr++;
	}
	return nr;
}

/*
 * Worker @id is gone (its pidfd is readable).  Recover before waitpid():
 * until the zombie is reaped its pid cannot be reused, so the library
 * cannot take a newer process for it.
 */
static int bury(int id, bool expected)
{
	struct child *c = &workers[id];
	int status = 0, nr = recover_and_reap();

	waitpid(c->pid, &status, 0);
	close(c->pidfd);
	if (WIFSIGNALED(status))
		printf("  worker %d (pid %d) killed by signal %d\n", id,
		       (int)c->pid, WTERMSIG(status));
	else
		printf("  worker %d (pid %d) exited with %d\n", id,
		       (int)c->pid, WEXITSTATUS(status));
	if (expected && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		victim_buried = true;
	else
		fail("a worker died unexpectedly", 0);
	/* Its pid may be anyone's now: never signal it again. */
	*c = (struct child){ .pid = 0, .pidfd = -1 };
	return nr;
}

static void report(long t)
{
	char cur[32], events[128];

	for (int i = 0; i < NR_TENANTS; i++) {
		if (pcstock_shm_read(shm, gid[i], "memory.current", cur,
				     sizeof(cur)) < 0 ||
		    pcstock_shm_read(shm, gid[i], "memory.events", events,
				     sizeof(events)) < 0) {
			fail("read", -EIO);
			return;
		}
		/* One line per tenant: the files' newlines as spaces. */
		cur[strcspn(cur, "\n")] = '\0';
		for (char *p = events; *p; p++)
			if (*p == '\n')
				*p = p[1] ? ',' : '\0';
		printf("%5ld ms  %-8s  current %8s  events %s\n", t,
		       plans[i].name, cur, events);
	}
}

static int setup(void)
{
	struct pcstock_shm_attr attr = {
		.max_groups = 16,	/* root, "tenants", the tenants */
		.max_procs = 2 * NR_WORKERS,	/* and the supervisor */
	};
	int err;

	/* NULL: an anonymous memfd, shared by fork() and its descriptor. */
	err = pcstock_shm_create(NULL, &attr, &shm);
	if (!err)
		err = pcstock_shm_group_create(shm, PCSTOCK_SHM_ROOT, "tenants",
					       &tenants_gid);
	if (!err)
		err = pcstock_shm_set_limit(shm, tenants_gid, PCSTOCK_LIMIT_MAX,
					    TENANTS_MAX);
	for (int t = 0; t < NR_TENANTS && !err; t++) {
		err = pcstock_shm_group_create(shm, tenants_gid, plans[t].name,
					       &gid[t]);
		if (!err)
			err = pcstock_shm_set_limit(shm, gid[t],
						    PCSTOCK_LIMIT_MAX,
						    plans[t].max);
	}
	return err;
}

/* Stop every worker: each finishes its requests, gives back, detaches. */
static void stop_workers(void)
{
	for (int i = 0; i < NR_WORKERS; i++)
		if (workers[i].pid > 0)
			kill(workers[i].pid, SIGTERM);
	for (int i = 0; i < NR_WORKERS; i++) {
		int status;

		if (workers[i].pid <= 0)
			continue;
		waitpid(workers[i].pid, &status, 0);
		close(workers[i].pidfd);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("a worker failed to stop", 0);
	}
}

/* After the stop: nothing charged, stocks drained, every usage 0. */
static void check_empty(void)
{
	char cur[32], peak[32];

	/* A worker that died instead of stopping: give its pages back. */
	if (recover_and_reap())
		fail("a worker left pages behind", 0);
	for (int t = 0; t <= NR_TENANTS; t++) {
		pcstock_shm_gid g = t < NR_TENANTS ? gid[t] : tenants_gid;
		const char *name = t < NR_TENANTS ? plans[t].name : "tenants";

		/* memory.current counts the stock, as the kernel's does. */
		pcstock_shm_drain(shm, g);
		if (pcstock_shm_read(shm, g, "memory.current", cur,
				     sizeof(cur)) < 0 ||
		    pcstock_shm_read(shm, g, "memory.peak", peak,
				     sizeof(peak)) < 0) {
			fail("read", -EIO);
			return;
		}
		cur[strcspn(cur, "\n")] = '\0';
		peak[strcspn(peak, "\n")] = '\0';
		printf("end      %-8s  current %8s  peak %8s\n", name, cur,
		       peak);
		if (strcmp(cur, "0"))
			fail("usage left after the workers stopped", 0);
	}
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1500;
	long start, kill_at = ms * 2 / 5, every = ms / (NR_REPORTS + 1);
	long next_report = every;
	bool killed = false;
	int err, reaped = 0;

	/* Line by line: the workers' lines then fall where they happen. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (ms <= 0) {
		fprintf(stderr, "usage: prefork [milliseconds]\n");
		return 2;
	}
	err = setup();
	if (err) {
		fail("setup", err);
		return 1;
	}
	for (int i = 0; i < NR_WORKERS && !err; i++)
		err = spawn(i);
	if (err) {
		fail("fork", err);
		return 1;
	}

	/*
	 * Until the time is up and the killed worker is buried (on a loaded
	 * machine its death may be seen late): that is what makes the run
	 * the same every time.
	 */
	start = now_ms();
	for (long t = 0; !failed && (t < ms || !victim_buried);
	     t = now_ms() - start) {
		struct pollfd pfd[NR_WORKERS];
		long wake = next_report < ms ? next_report : ms;

		if (!killed && kill_at < wake)
			wake = kill_at;
		for (int i = 0; i < NR_WORKERS; i++)
			pfd[i] = (struct pollfd){ workers[i].pidfd, POLLIN, 0 };
		/* Overtime: only a death is awaited, a look every 10 ms. */
		if (poll(pfd, NR_WORKERS,
			 t >= ms ? 10 : wake > t ? (int)(wake - t) : 0) < 0 &&
		    errno != EINTR) {
			fail("poll", -errno);
			break;
		}
		for (int i = 0; i < NR_WORKERS && !failed; i++) {
			if (!pfd[i].revents)
				continue;
			reaped += bury(i, killed && i == VICTIM);
			if (failed)
				break;
			err = spawn(i);
			if (err)
				fail("fork", err);
			else
				printf("  worker %d replaced by pid %d\n", i,
				       (int)workers[i].pid);
		}
		t = now_ms() - start;
		if (!killed && t >= kill_at) {
			/* One that has not attached yet holds nothing: wait. */
			if (record_of(workers[VICTIM].pid) < 0) {
				kill_at = t + 10;
			} else {
				printf("%5ld ms  SIGKILL worker %d (pid %d)\n",
				       t, VICTIM, (int)workers[VICTIM].pid);
				kill(workers[VICTIM].pid, SIGKILL);
				killed = true;
			}
		}
		if (t >= next_report && next_report < ms) {
			report(t);
			next_report += every;
		}
	}

	stop_workers();
	if (!failed && reaped != 1)
		fail("the killed worker's record was not reaped", 0);
	check_empty();
	printf("%lu recoveries; %s\n", pcstock_shm_recoveries(shm),
	       failed ? "FAILED" : "ok: every page came back");
	/* The creator's detach closes the region; the memfd goes with it. */
	if (pcstock_shm_detach(shm))
		failed = true;
	return failed ? 1 : 0;
}
