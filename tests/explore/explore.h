/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * explore.h - a deterministic schedule explorer for pcstock's atomics.
 *
 * The test library calls pcstock_explore_hook() before every atomic
 * (src/atomic.h).  The explorer runs a scenario's threads ("simulated
 * CPUs") so that exactly one of them runs at a time: a thread holds the
 * baton until it reaches a scheduling point, where a strategy decides who
 * runs next.  Decisions come only from a decision source (a seeded PRNG or
 * a byte string), so a seed names one interleaving and replays it exactly.
 *
 * Blocking: an explored thread that blocks on a mutex held by a thread
 * that lost the baton at a scheduling point would hang the explorer.
 * Scenarios therefore give every mutex-taking call (CPU offline, hook
 * registration, stock allocation and free) to one explored thread at most,
 * or do it in setup/teardown, which run unscheduled on the main thread.
 * A watchdog turns a hang into a reported failure instead of a silent one.
 * Spin-waits (a per-CPU spinlock, a retry loop waiting for another
 * thread) back off with pcs_spin_yield() (src/atomic.h), a scheduling
 * point that PCT answers by dropping the spinner below every other
 * thread; without it PCT would run the spinner forever.
 */
#ifndef PCSTOCK_EXPLORE_H
#define PCSTOCK_EXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pcstock/hierarchy.h>

#define EXPLORE_MAX_THREADS 8

enum explore_strategy {
	EXPLORE_RANDOM,		/* uniform random walk over live threads */
	EXPLORE_PCT,		/* probabilistic concurrency testing */
	EXPLORE_BYTES,		/* random walk driven by fuzzer bytes */
};

/*
 * struct explore_source - where scheduling decisions come from
 * @pick: returns a number in [0, bound); bound >= 1
 *
 * A seeded PRNG for random walk and PCT, or the bytes of a fuzzer input.
 */
struct explore_source {
	uint64_t (*pick)(struct explore_source *src, uint64_t bound);
	uint64_t state;
	const uint8_t *bytes;
	size_t len, pos;
};

void explore_source_seed(struct explore_source *src, uint64_t seed);
void explore_source_bytes(struct explore_source *src, const uint8_t *bytes,
			  size_t len);

/*
 * struct explore_scenario - what runs on the simulated CPUs
 * @name: selects it on the command line
 * @help: one line for --list
 * @nr_threads: explored threads, 1..EXPLORE_MAX_THREADS
 * @expect: "violation" when the scenario exists to be caught (planted
 *          bugs, V4's missing cap), else NULL
 * @init: once per process, unscheduled (create domains); 0 or -errno
 * @thread_init: once per worker thread, before any schedule (enter a CPU)
 * @setup: before each schedule, unscheduled (counters, stocks, labels)
 * @run: the body of explored thread @t
 * @check_step: at every scheduling point, with scheduling off; returns a
 *              description of the violated invariant, or NULL
 * @check_end: after all threads finished, unscheduled; same return
 * @on_death: on explored thread @t right after it died
 *            (explore_die_within()), scheduling off for it: what the
 *            kernel does at a process's exit (the robust futex list);
 *            may be NULL
 * @teardown: after each schedule, unscheduled
 * @fini: once per process after the last schedule, unscheduled, while the
 *        library's hook is still the explorer's (wait here for work the
 *        schedules left to liburcu's call_rcu thread, which calls the hook)
 * @arg: scenario parameters
 * @applies: NULL for a scenario of its own; else the scenario is a
 *           template, run once per registered stock policy (enum
 *           pcstock_tree_policy, 0..PCSTOCK_TREE_NR_POLICIES - 1) whose
 *           properties it applies to: "<name>-<policy name>", with
 *           @policy and @info set (explore_find(), explore_list())
 * @policy_info: a template's pcstock_tree_policy_info() (explore_registry.c,
 *               which the kernel explorer links without the library,
 *               calls it through this)
 * @weak_only: only the weak-memory model can fail it (--list-per-policy
 *             asks CMake for --weak runs only)
 * @policy: @info: a generated scenario's policy and its properties
 *
 * A template's callbacks take everything that differs between policies
 * from @info, never from the policy's value or name: a newly registered
 * policy is explored without an edit here.
 */
struct explore_scenario {
	const char *name;
	const char *help;
	unsigned int nr_threads;
	const char *expect;
	int (*init)(const struct explore_scenario *s);
	void (*thread_init)(const struct explore_scenario *s, unsigned int t);
	void (*setup)(const struct explore_scenario *s);
	void (*run)(const struct explore_scenario *s, unsigned int t);
	const char *(*check_step)(const struct explore_scenario *s);
	const char *(*check_end)(const struct explore_scenario *s);
	void (*on_death)(const struct explore_scenario *s, unsigned int t);
	void (*teardown)(const struct explore_scenario *s);
	void (*fini)(const struct explore_scenario *s);
	const void *arg;
	bool (*applies)(const struct pcstock_policy_info *info);
	int (*policy_info)(enum pcstock_tree_policy p,
			   struct pcstock_policy_info *out);
	bool weak_only;
	enum pcstock_tree_policy policy;
	struct pcstock_policy_info info;
};

/* NULL-terminated lists of scenarios, one per source file. */
extern const struct explore_scenario *const explore_counter_scenarios[];
extern const struct explore_scenario *const explore_stock_scenarios[];
extern const struct explore_scenario *const explore_group_scenarios[];
extern const struct explore_scenario *const explore_memcg7_scenarios[];
extern const struct explore_scenario *const explore_protect_scenarios[];
extern const struct explore_scenario *const explore_limits_scenarios[];
extern const struct explore_scenario *const explore_tree_scenarios[];
extern const struct explore_scenario *const explore_drain_scenarios[];
extern const struct explore_scenario *const explore_shm_scenarios[];

/*
 * explore_model_mutex() - slot @i (0 or 1) of the mutexes the model knows
 * stands for @mu from now on (NULL: none), labelled @name in traces; each
 * scenario that uses one sets it in its setup and clears it in its
 * teardown (explore_memcg7.c: the interposed pthread_mutex_*()).
 */
void explore_model_mutex(unsigned int i, pthread_mutex_t *mu,
			 const char *name);

/*
 * explore_find() - the scenario called @name, or NULL.  A per-policy one
 * is built in static storage, which the next call reuses.
 */
const struct explore_scenario *explore_find(const char *name);
/* explore_list() - print every scenario's name and help to stdout */
void explore_list(void);
/*
 * explore_list_per_policy() - for the build (tests/explore.cmake): one line
 * per generated scenario that must pass, "<name> sc,weak" or "<name> weak",
 * the memory models to run it in.
 */
void explore_list_per_policy(void);

/*
 * explore_caps_slots() - whether @info's policy promises that no per-CPU
 * slot ever holds more than batch pages.  struct pcstock_policy_info has
 * no such member yet: the one place that asks the stock's kind instead.
 */
bool explore_caps_slots(const struct pcstock_policy_info *info);

/* ---- labels: stable names for the objects of an interleaving ---------- */

/* One named field of a registered object. */
struct explore_field {
	const char *name;
	size_t offset;
};

/*
 * explore_label() - name the bytes [base, base + size) for traces
 * @fields: NULL, or a table ending with a NULL name; an address inside the
 *          object is printed "name.field" for an exact field offset,
 *          "name+off" otherwise.
 * Registrations are dropped at the end of each schedule.
 */
void explore_label(const void *base, size_t size, const char *name,
		   const struct explore_field *fields);
/*
 * The fields of the counters scenarios label: struct pcstock_counter's;
 * in the kernel explorer the kernel's struct page_counter's, which a
 * pcstock_counter's storage holds there (kernel/adapter.c), set before
 * main() by kernel/explore_lists.c.
 */
extern const struct explore_field *explore_counter_fields;

/* ---- running ------------------------------------------------------------ */

struct explore_options {
	enum explore_strategy strategy;
	unsigned int depth;		/* PCT bug depth d >= 1 */
	unsigned long steps;		/* PCT step estimate; 0: calibrate */
	unsigned long max_steps;	/* per schedule; more is a livelock */
	uint64_t seed;			/* schedule i uses seed + i */
	unsigned long schedules;
	bool weak;			/* weak-memory model (explore_wmm.c) */
	bool verbose;			/* print every interleaving */
	bool quiet;			/* no trace in reports */
	int fail_status;		/* exit status after a violation */
	bool abort_on_fail;		/* abort() instead (fuzzing) */
};

/*
 * struct explore_result - what a clean run did
 * @schedules: schedules completed
 * @steps: scheduling points passed, over all schedules
 * @pct_steps: the PCT step estimate used (calibrated or given)
 */
struct explore_result {
	unsigned long schedules;
	unsigned long long steps;
	unsigned long pct_steps;
};

/*
 * explore_start() - create the worker threads for a scenario (once)
 * Return: 0 or -errno (from the scenario's init or thread creation).
 */
int explore_start(const struct explore_scenario *s);

/* explore_stop() - join the worker threads. */
void explore_stop(void);

/*
 * explore_run() - run opt->schedules schedules with seeds opt->seed,
 * opt->seed + 1, ...  The first violation is printed (seed, strategy,
 * interleaving) to stdout and ends the process with opt->fail_status (or
 * abort()); so a return means every schedule passed.
 */
void explore_run(const struct explore_options *opt,
		 struct explore_result *res);

/* explore_run_source() - one schedule driven by @src (fuzzer bytes). */
void explore_run_source(const struct explore_options *opt,
			struct explore_source *src);

/* Called by scenarios' run(): the explored thread's own index. */
unsigned int explore_self(void);

/*
 * explore_die_within() - called by a scenario's run(): the calling
 * thread dies at one of its next @bound scheduling points, the one drawn
 * from the schedule's decision source (so a seed names the moment of
 * death too): at that point, before its access, the rest of its run() is
 * abandoned (siglongjmp), as SIGKILL stops a process at any instruction
 * (every shared access of the library is a scheduling point).  Then
 * on_death() runs on it.  A bound above the thread's remaining steps may
 * let it live.
 */
void explore_die_within(unsigned long bound);
/* explore_died() - whether thread @t died in the schedule just run */
bool explore_died(unsigned int t);

/* ---- the weak-memory model's interface to the engine -------------------- */

/* explore_wmm_reset() - forget every location; before each schedule */
void explore_wmm_reset(void);
/*
 * explore_weak_self() - the index of the explored thread making an access
 * the model must handle: -1 outside weak mode, for unscheduled threads and
 * while an invariant check runs.
 */
int explore_weak_self(void);
/*
 * explore_checking() - whether this thread runs an invariant check (inside
 * a scheduling point, between an access's order and the access)
 */
bool explore_checking(void);
/* explore_pick() - a decision in [0, bound) from the schedule's source */
uint64_t explore_pick(uint64_t bound);
/*
 * explore_note() - the value the step just traced read (a store: wrote);
 * ignored outside an explored thread's own steps
 */
void explore_note(uint64_t val, unsigned int stale);
/* explore_note_write() - the value the step just traced (an RMW) wrote */
void explore_note_write(uint64_t val);
/*
 * explore_site_report() - print the tags of the ordered sites (src/atomic.h,
 * PCS_ORDER()) that explored threads reached in weak memory since the
 * process started, the order each was given ("mixed" if more than one)
 * and how often: "site <TAG> <order> <count>", one a line
 */
void explore_site_report(void);
/* explore_fail() - report a violation (or a model failure) and exit */
void explore_fail(const char *msg);

#endif /* PCSTOCK_EXPLORE_H */
