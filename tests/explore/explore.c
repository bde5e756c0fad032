// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore.c - the schedule explorer's engine: worker threads, the baton,
 * strategies, traces and reports (the scenarios it runs, and their
 * lookup: explore_registry.c).
 *
 * Baton.  Each explored thread waits on its own semaphore; the thread
 * holding the baton runs until its next scheduling point (the hook), asks
 * the strategy for the next thread, posts that thread's semaphore and waits
 * on its own.  Only the baton holder touches the explorer's state, and the
 * post/wait pair orders every access of one holder before the next, so no
 * lock is needed.  The main thread sets a schedule up, hands the baton to
 * the first thread and waits until the last one finishes.
 *
 * Determinism.  Every decision (who runs first, at each point, after a
 * thread finishes; PCT's priorities and change points) comes from the
 * schedule's decision source, and threads only run while they hold the
 * baton, so the interleaving is a function of the seed.  The worker
 * threads persist across schedules (creating threads per schedule would
 * dominate the cost); each enters its CPU once.  No decision and nothing
 * printed depends on an address: objects, and values that are addresses,
 * are named by label or by order of appearance, so the same command
 * prints the same report in any process, whatever ASLR or the size of
 * the environment did (tests/explore/process-replay.sh checks it).
 *
 * Traces record a step when its atomic is about to execute (on the way
 * out of the hook), so the trace is the order in which the atomics ran.
 *
 * The library's documented aborts (pcs_die(), src/internal.h: a group put
 * more often than it was got, ...) are violations of the schedule that
 * reached them, reported as explore_fail() reports any other (see
 * __wrap_pcs_die() below).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcstock/counter.h>
#include <pcstock/stock.h>

#include "atomic.h"
#include "explore.h"

#define MAX_LABELS 64
#define MAX_UNKNOWN 64
#define MAX_DEPTH 16
#define HANG_SECONDS 60

struct step {
	unsigned char thread;
	unsigned char op;
	bool has_val;		/* the value read (a store: written) */
	bool has_new;		/* an RMW: the value it wrote */
	unsigned int stale;	/* newer values it did not read */
	const void *obj;
	uint64_t val;
	uint64_t new_val;
};

struct label {
	const char *base;
	size_t size;
	char name[32];
	const struct explore_field *fields;
};

static struct {
	const struct explore_scenario *s;
	const struct explore_options *opt;
	pthread_t tid[EXPLORE_MAX_THREADS];
	sem_t sem[EXPLORE_MAX_THREADS];
	sem_t main_sem;
	bool done[EXPLORE_MAX_THREADS];
	/* Deaths (explore_die_within()): own steps left, 0 = immortal. */
	unsigned long death_in[EXPLORE_MAX_THREADS];
	bool died[EXPLORE_MAX_THREADS];
	sigjmp_buf grave[EXPLORE_MAX_THREADS];
	unsigned int live;
	bool shutdown;
	pthread_t driver;		/* the thread that runs the schedules */

	/* The schedule being run. */
	struct explore_source *src;
	enum explore_strategy strategy;
	uint64_t seed;
	unsigned long index;
	int prio[EXPLORE_MAX_THREADS];
	int low;			/* PCT: the last yielder's priority */
	unsigned long change[MAX_DEPTH];
	unsigned int nr_change;
	unsigned long pct_steps;
	unsigned long step;
	unsigned long max_steps;
	bool calibrating;
	bool running;			/* from a schedule's setup to its teardown */

	struct step *trace;
	size_t trace_len;
	struct label labels[MAX_LABELS];
	unsigned int nr_labels;
} X;

static __thread int self = -1;
/* Set while an invariant check runs: its own atomics are not steps. */
static __thread bool checking;

static const char *const op_name[PCS_OP_NR] = {
	[PCS_OP_LOAD] = "load",   [PCS_OP_STORE] = "store",
	[PCS_OP_ADD] = "add",     [PCS_OP_SUB] = "sub",
	[PCS_OP_XCHG] = "xchg",   [PCS_OP_CAS] = "cas",
	[PCS_OP_FENCE] = "fence", [PCS_OP_YIELD] = "yield",
};

/* ---- labels ------------------------------------------------------------ */

#define COUNTER_FIELD(f) { #f, offsetof(struct pcstock_counter, f) }
static const struct explore_field pcstock_counter_fields[] = {
	COUNTER_FIELD(usage),
	COUNTER_FIELD(failcnt),
	COUNTER_FIELD(emin),
	COUNTER_FIELD(min_usage),
	COUNTER_FIELD(children_min_usage),
	COUNTER_FIELD(elow),
	COUNTER_FIELD(low_usage),
	COUNTER_FIELD(children_low_usage),
	COUNTER_FIELD(watermark),
	COUNTER_FIELD(local_watermark),
	COUNTER_FIELD(max),
	COUNTER_FIELD(high),
	COUNTER_FIELD(min),
	COUNTER_FIELD(low),
	COUNTER_FIELD(stock_batch),
	COUNTER_FIELD(stock_state),
	{ NULL, 0 },
};
const struct explore_field *explore_counter_fields = pcstock_counter_fields;

void explore_label(const void *base, size_t size, const char *name,
		   const struct explore_field *fields)
{
	struct label *l;

	if (X.nr_labels == MAX_LABELS)
		return;
	l = &X.labels[X.nr_labels++];
	l->base = base;
	l->size = size;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->fields = fields;
}

/*
 * struct names - the unregistered objects of one printout, numbered
 * (obj#N) in order of first appearance in the trace, which is as
 * deterministic as the trace itself
 */
struct names {
	const void *unknown[MAX_UNKNOWN];
	unsigned int nr;
};

static void format_obj(char *buf, size_t len, const void *obj,
		       struct names *nm)
{
	const char *p = obj;
	unsigned int i;

	if (!obj) {
		snprintf(buf, len, "-");
		return;
	}
	for (i = 0; i < X.nr_labels; i++) {
		const struct label *l = &X.labels[i];
		const struct explore_field *f;
		size_t off;

		if (p < l->base || p >= l->base + l->size)
			continue;
		off = (size_t)(p - l->base);
		for (f = l->fields; f && f->name; f++) {
			if (f->offset == off) {
				snprintf(buf, len, "%s.%s", l->name, f->name);
				return;
			}
		}
		if (off)
			snprintf(buf, len, "%s+%zu", l->name, off);
		else
			snprintf(buf, len, "%s", l->name);
		return;
	}
	for (i = 0; i < nm->nr && nm->unknown[i] != obj; i++)
		;
	if (i == nm->nr && i < MAX_UNKNOWN)
		nm->unknown[nm->nr++] = obj;
	snprintf(buf, len, "obj#%u", i);
}

/*
 * Values that are addresses.  A load of a link (a group's parent or
 * sibling, the name index's table) reads an address, which differs from
 * one process to the next (ASLR, the size of the environment): printed
 * as a number, one schedule would read differently in its replay.  A
 * value inside a mapping of this process (/proc/self/maps, read when a
 * trace is printed) is printed as the object it points to, named as
 * format_obj() names one: "&a.mem.usage", "&obj#3".
 */
static struct {
	uint64_t lo, hi;
} *maps;
static size_t nr_maps, maps_cap;

static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char *line = NULL;
	size_t cap = 0;

	nr_maps = 0;
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (nr_maps == maps_cap) {
			size_t n = maps_cap ? 2 * maps_cap : 256;
			void *m = realloc(maps, n * sizeof(*maps));

			if (!m)
				break;
			maps = m;
			maps_cap = n;
		}
		maps[nr_maps].lo = lo;
		maps[nr_maps++].hi = hi;
	}
	free(line);
	fclose(f);
}

static bool is_address(uint64_t v)
{
	size_t i;

	for (i = 0; i < nr_maps; i++)
		if (v >= maps[i].lo && v < maps[i].hi)
			return true;
	return false;
}

/* Small values in decimal, a negative long as one; the rest in hex. */
static void format_num(char *buf, size_t len, uint64_t v)
{
	if (v < (1ULL << 40))
		snprintf(buf, len, "%" PRIu64, v);
	else if ((int64_t)v < 0 && (int64_t)v > -(1LL << 40))
		snprintf(buf, len, "%" PRId64, (int64_t)v);
	else
		snprintf(buf, len, "%#" PRIx64, v);
}

/*
 * A value of the trace: an address as "&" and its name, else in hex
 * (@hex) or as format_num() writes it.
 */
static void format_val(char *buf, size_t len, uint64_t v, bool hex,
		       struct names *nm)
{
	if (is_address(v)) {
		snprintf(buf, len, "&");
		format_obj(buf + 1, len - 1, (const void *)(uintptr_t)v, nm);
	} else if (hex) {
		snprintf(buf, len, "%#" PRIx64, v);
	} else {
		format_num(buf, len, v);
	}
}

/*
 * Step @st's object and values into @obj, @val and @new_val (64 bytes
 * each), numbering the objects they name in @nm: print_trace() and
 * name_addresses() number the same way.
 */
static void format_step(const struct step *st, struct names *nm, char *obj,
			char *val, char *new_val)
{
	format_obj(obj, 64, st->obj, nm);
	val[0] = new_val[0] = '\0';
	if (st->has_val)
		format_val(val, 64, st->val, true, nm);
	if (st->has_new)
		format_val(new_val, 64, st->new_val, true, nm);
}

static const char *strategy_name(enum explore_strategy st)
{
	static const char *const names[] = {
		[EXPLORE_RANDOM] = "random",
		[EXPLORE_PCT] = "pct",
		[EXPLORE_BYTES] = "bytes",
	};

	return names[st];
}

static void print_trace(void)
{
	struct names nm = { .nr = 0 };
	char obj[64], val[64], new_val[64];
	size_t i;

	read_maps();
	printf("interleaving (%zu steps):\n", X.trace_len);
	for (i = 0; i < X.trace_len; i++) {
		const struct step *st = &X.trace[i];

		format_step(st, &nm, obj, val, new_val);
		printf("%6zu t%u %-5s %s", i, st->thread, op_name[st->op],
		       obj);
		if (st->has_val)
			printf(" = %s", val);
		if (st->has_new)
			printf(" -> %s", new_val);
		if (st->stale)
			printf(" (stale: %u newer)", st->stale);
		printf("\n");
	}
	printf("end of interleaving\n");
}

/* ---- the litmus form of a violation ------------------------------------ */

/* Is @obj inside a labelled object?  Others (obj#N) are a thread's own. */
static bool labelled(const void *obj)
{
	const char *p = obj;
	unsigned int i;

	for (i = 0; obj && i < X.nr_labels; i++)
		if (p >= X.labels[i].base &&
		    p < X.labels[i].base + X.labels[i].size)
			return true;
	return false;
}

/*
 * keep[i]: step i accesses a labelled location that some thread writes
 * and that two or more threads access, or that a thread writes by an RMW:
 * the others may read it by a plain access the trace does not show (the
 * kernel's read of max in try_charge(), against set_max()'s xchg).  A
 * field one thread alone stores and reads (a watermark) is left out.
 * Return: how many threads keep steps.
 */
static unsigned int litmus_keep(bool *keep)
{
	unsigned int threads = 0, nr = 0;
	size_t i, j;

	for (i = 0; i < X.trace_len; i++) {
		const struct step *st = &X.trace[i];
		unsigned int seen = 0;
		bool written = false, rmw = false;

		keep[i] = false;
		if (st->op == PCS_OP_FENCE || st->op == PCS_OP_YIELD ||
		    !labelled(st->obj))
			continue;
		for (j = 0; j < X.trace_len; j++) {
			const struct step *o = &X.trace[j];

			if (o->obj != st->obj)
				continue;
			seen |= 1u << o->thread;
			written |= o->op != PCS_OP_LOAD;
			rmw |= o->op != PCS_OP_LOAD && o->op != PCS_OP_STORE;
		}
		keep[i] = written && (rmw || (seen & (seen - 1)));
		if (keep[i])
			threads |= 1u << st->thread;
	}
	for (; threads; threads &= threads - 1)
		nr++;
	return nr;
}

/*
 * A violation of two or three threads as a litmus test: each thread's
 * accesses to the shared fields (see litmus_keep(); a thread's private
 * objects, read-only fields and its own bookkeeping left out), in its
 * program order, with the
 * value each read (=) or wrote (->), and the full fences between them.
 * @N orders them as the schedule did: replayed in that order, SC, the
 * values follow; a reader can check it by hand or write it for herd7.
 */
static void print_litmus(void)
{
	struct names nm = { .nr = 0 };
	unsigned int t, nr;
	char obj[64], a[64], b[64];
	bool *keep;
	size_t i;

	/* obj#N as the interleaving above numbers them. */
	read_maps();
	for (i = 0; i < X.trace_len; i++)
		format_step(&X.trace[i], &nm, obj, a, b);
	keep = calloc(X.trace_len ? X.trace_len : 1, sizeof(*keep));
	if (!keep)
		return;
	nr = litmus_keep(keep);
	if (nr < 2 || nr > 3) {
		free(keep);
		return;
	}
	printf("litmus (%u threads: the accesses to the fields they share "
	       "or write by an RMW; @N: its step above):\n", nr);
	for (t = 0; t < X.s->nr_threads; t++) {
		bool any = false, fence = false;

		for (i = 0; i < X.trace_len; i++) {
			const struct step *st = &X.trace[i];

			if (st->thread != t)
				continue;
			if (st->op == PCS_OP_FENCE) {
				fence = any;
				continue;
			}
			if (!keep[i])
				continue;
			if (!any)
				printf("t%u:\n", t);
			if (fence)
				printf("         fence\n");
			any = true;
			fence = false;
			format_obj(obj, sizeof(obj), st->obj, &nm);
			printf("  @%-5zu %-5s %-22s", i, op_name[st->op], obj);
			if (st->has_val && st->has_new) {
				format_val(a, sizeof(a), st->val, false, &nm);
				format_val(b, sizeof(b), st->new_val, false,
					   &nm);
				printf(" %s -> %s", a, b);
			} else if (st->has_val) {
				format_val(a, sizeof(a), st->val, false, &nm);
				printf(" %s %s", st->op == PCS_OP_LOAD ||
				       st->op == PCS_OP_CAS ? "=" : "->", a);
			}
			if (st->stale)
				printf(" (stale: %u newer)", st->stale);
			printf("\n");
		}
	}
	printf("end of litmus\n");
	free(keep);
}

/*
 * The replay line names the program running (glibc's
 * program_invocation_short_name, from argv[0]): pcstock-explore, or a
 * variant such as pcstock-explore-kernel, whose schedules only it replays.
 */
static void print_header(const char *what)
{
	if (X.calibrating) {
		/* PCT's calibration: no seed, the first live thread runs. */
		printf("%s\nscenario: %s  PCT's calibration run (the "
		       "sequential schedule)%s\n", what, X.s->name,
		       X.opt->weak ? "  memory: weak" : "");
		printf("replay: %s --scenario %s --strategy pct --depth %u"
		       " --schedules 0%s\n", program_invocation_short_name,
		       X.s->name, X.opt->depth, X.opt->weak ? " --weak" : "");
		return;
	}
	printf("%s\nscenario: %s  strategy: %s%s", what, X.s->name,
	       strategy_name(X.strategy), X.opt->weak ? "  memory: weak" : "");
	if (X.strategy == EXPLORE_PCT)
		printf("  depth: %u  steps: %lu", X.opt->depth, X.pct_steps);
	printf("  seed: %" PRIu64 "  schedule: %lu\n", X.seed, X.index + 1);
	if (X.strategy == EXPLORE_BYTES) {
		printf("replay: run the fuzzer on the input it saved\n");
		return;
	}
	printf("replay: %s --scenario %s --strategy %s",
	       program_invocation_short_name, X.s->name,
	       strategy_name(X.strategy));
	if (X.strategy == EXPLORE_PCT)
		printf(" --depth %u --steps %lu", X.opt->depth, X.pct_steps);
	printf("%s --replay %" PRIu64 "\n", X.opt->weak ? " --weak" : "",
	       X.seed);
}

/*
 * A violation ends the process: the other explored threads are parked at
 * scheduling points and cannot be unwound.  The status says whether the
 * caller wanted one (planted bugs).
 */
__attribute__((noreturn)) static void report(const char *msg)
{
	char what[320];

	snprintf(what, sizeof(what), "VIOLATION: %s", msg);
	print_header(what);
	if (!X.opt->quiet) {
		print_trace();
		print_litmus();
	}
	fflush(stdout);
	if (X.opt->abort_on_fail) {
		/* The line tests/fuzz/run_fuzzer.cmake looks for. */
		fprintf(stderr, "pcstock-fuzz: divergence: %s\n", msg);
		abort();
	}
	exit(X.opt->fail_status);
}

/* PCT's calibration ignores the checks' violations (explore_run()). */
void explore_fail(const char *msg)
{
	if (!X.calibrating)
		report(msg);
}

/*
 * @msg into @out with every address ("0x...") replaced by its name in the
 * trace: a label, or obj#N numbered as print_trace() numbers it.  A heap
 * address differs from run to run, its name does not, so the replay of a
 * library abort prints the same violation line.
 */
static void name_addresses(char *out, size_t len, const char *msg)
{
	struct names nm = { .nr = 0 };
	char obj[64], val[64], new_val[64], *end;
	const char *p = msg;
	size_t i, n = 0;

	read_maps();
	for (i = 0; i < X.trace_len; i++)
		format_step(&X.trace[i], &nm, obj, val, new_val);
	while (*p && n + 1 < len) {
		if (p[0] != '0' || p[1] != 'x' ||
		    !isxdigit((unsigned char)p[2])) {
			out[n++] = *p++;
			continue;
		}
		format_obj(obj, sizeof(obj),
			   (const void *)(uintptr_t)strtoull(p, &end, 16),
			   &nm);
		p = end;
		n += (size_t)snprintf(out + n, len - n, "%s", obj);
		if (n >= len)
			n = len - 1;
	}
	out[n] = '\0';
}

/*
 * The library's documented aborts.  Every explorer binary is linked with
 * --wrap=pcs_die (tests/explore.cmake), so the library's calls of
 * pcs_die() come here, except those inside the object that defines it
 * (counter.c's own: the linker redirects only references between
 * objects).  An abort in an explored thread, which holds the baton, or in
 * the driver's setup, checks or teardown of a schedule, while every
 * explored thread is parked, is a violation of that schedule: "library
 * aborted: <message>", with its seed and interleaving, so that a test
 * expecting a violation finds it and the seed replays it; in PCT's
 * calibration run too, whose checks' violations are ignored (the library
 * cannot go on after its abort).  Anywhere else
 * (a thread of liburcu's, which runs beside the explored threads;
 * before the first schedule) nothing can be printed safely: the message
 * and abort(), as the library does.
 */
__attribute__((noreturn, format(printf, 1, 2)))
void __wrap_pcs_die(const char *fmt, ...);

void __wrap_pcs_die(const char *fmt, ...)
{
	char msg[200], named[200], line[240];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (X.running &&
	    (self >= 0 || pthread_equal(pthread_self(), X.driver))) {
		name_addresses(named, sizeof(named), msg);
		snprintf(line, sizeof(line), "library aborted: %s", named);
		report(line);
	}
	fprintf(stderr, "pcstock: %s\n", msg);
	abort();
}

/* ---- strategies -------------------------------------------------------- */

static unsigned int choose(enum pcs_atomic_op op)
{
	unsigned int t, best = 0, k;
	int top = INT_MIN;

	if (X.strategy == EXPLORE_PCT) {
		for (k = 0; k < X.nr_change; k++) {
			/* Change point k: below every initial priority. */
			if (X.change[k] == X.step && self >= 0)
				X.prio[self] = (int)k + 1;
		}
		/*
		 * A spin-wait's yield: below every priority so far, the
		 * latest yielder lowest, so the thread it waits for runs
		 * (PCT's usual treatment of yields).
		 */
		if (op == PCS_OP_YIELD && self >= 0)
			X.prio[self] = --X.low;
		for (t = 0; t < X.s->nr_threads; t++) {
			if (!X.done[t] && X.prio[t] >= top) {
				top = X.prio[t];
				best = t;
			}
		}
		return best;
	}
	k = (unsigned int)X.src->pick(X.src, X.live);
	for (t = 0; t < X.s->nr_threads; t++) {
		if (X.done[t])
			continue;
		if (!k--)
			return t;
	}
	return 0; /* not reached: k < live */
}

/*
 * PCT (Burckhardt et al., ASPLOS 2010): random distinct initial
 * priorities d .. d+n-1, and d-1 change points drawn from [1, steps].
 */
static void pct_init(void)
{
	unsigned int n = X.s->nr_threads, d = X.opt->depth, i;

	X.low = 0;
	for (i = 0; i < n; i++)
		X.prio[i] = (int)(d + i);
	for (i = n - 1; i > 0; i--) {
		unsigned int j = (unsigned int)X.src->pick(X.src, i + 1);
		int tmp = X.prio[i];

		X.prio[i] = X.prio[j];
		X.prio[j] = tmp;
	}
	X.nr_change = d > 1 ? d - 1 : 0;
	if (X.nr_change > MAX_DEPTH)
		X.nr_change = MAX_DEPTH;
	for (i = 0; i < X.nr_change; i++)
		X.change[i] = 1 + X.src->pick(X.src, X.pct_steps);
}

/* ---- the baton --------------------------------------------------------- */

static void sem_wait_intr(sem_t *sem)
{
	while (sem_wait(sem) && errno == EINTR)
		;
}

static void hook(enum pcs_atomic_op op, const void *obj)
{
	unsigned int next;

	if (self < 0 || checking)
		return;
	if (X.s->check_step) {
		const char *msg;

		checking = true;
		msg = X.s->check_step(X.s);
		checking = false;
		if (msg)
			explore_fail(msg);
	}
	if (++X.step > X.max_steps)
		explore_fail("step limit exceeded (livelock?)");
	next = choose(op);
	if (next != (unsigned int)self) {
		sem_post(&X.sem[next]);
		sem_wait_intr(&X.sem[self]);
	}
	if (X.death_in[self] && !--X.death_in[self]) {
		/*
		 * Killed before this access, as SIGKILL stops a process
		 * between two instructions: the rest of run() never happens
		 * (explore_die_within()).
		 */
		X.died[self] = true;
		siglongjmp(X.grave[self], 1);
	}
	if (X.trace_len < X.max_steps) {
		struct step *st = &X.trace[X.trace_len++];

		st->thread = (unsigned char)self;
		st->op = (unsigned char)op;
		st->obj = obj;
		st->has_val = false;
		st->has_new = false;
		st->stale = 0;
	}
}

void explore_die_within(unsigned long bound)
{
	if (self < 0 || checking || !bound)
		return;
	X.death_in[self] = 1 + X.src->pick(X.src, bound);
}

bool explore_died(unsigned int t)
{
	return t < EXPLORE_MAX_THREADS && X.died[t];
}

int explore_weak_self(void)
{
	return X.opt && X.opt->weak && !checking && pcstock_explore_hook ?
		       self : -1;
}

bool explore_checking(void)
{
	return checking;
}

uint64_t explore_pick(uint64_t bound)
{
	return X.src->pick(X.src, bound);
}

/*
 * After hook() traced the step: it belongs to the same thread.  An
 * unscheduled thread's or a check's access traced no step of its own.
 */
static struct step *noted_step(void)
{
	if (self < 0 || checking || !X.trace_len)
		return NULL;
	return &X.trace[X.trace_len - 1];
}

void explore_note(uint64_t val, unsigned int stale)
{
	struct step *st = noted_step();

	if (!st)
		return;
	st->has_val = true;
	st->val = val;
	st->stale = stale;
}

void explore_note_write(uint64_t val)
{
	struct step *st = noted_step();

	if (!st)
		return;
	st->has_new = true;
	st->new_val = val;
}

static void finish(unsigned int t)
{
	X.done[t] = true;
	if (--X.live)
		sem_post(&X.sem[choose(PCS_OP_NR)]);
	else
		sem_post(&X.main_sem);
}

static void *worker(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg;

	if (X.s->thread_init)
		X.s->thread_init(X.s, t);
	self = (int)t;
	sem_post(&X.main_sem);
	for (;;) {
		sem_wait_intr(&X.sem[t]);
		if (X.shutdown)
			break;
		/* A death (hook()) lands here, its run() abandoned. */
		if (!sigsetjmp(X.grave[t], 0))
			X.s->run(X.s, t);
		else if (X.s->on_death)
			X.s->on_death(X.s, t);
		X.death_in[t] = 0;
		finish(t);
	}
	return NULL;
}

unsigned int explore_self(void)
{
	return (unsigned int)self;
}

/*
 * Only one explored thread runs at a time, so nothing is lost by keeping
 * them all on one processor, and a hand-over is then a plain context
 * switch instead of a cross-core wake-up: 7x more schedules per second on
 * the 2-core reference machine.  Decisions never depend on it.
 */
static void pin_to_one_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

int explore_start(const struct explore_scenario *s)
{
	unsigned int t;
	int err;

	X.s = s;
	X.driver = pthread_self();
	pin_to_one_cpu();
	if (s->init) {
		err = s->init(s);
		if (err)
			return err;
	}
	sem_init(&X.main_sem, 0, 0);
	for (t = 0; t < s->nr_threads; t++) {
		sem_init(&X.sem[t], 0, 0);
		err = pthread_create(&X.tid[t], NULL, worker,
				     (void *)(uintptr_t)t);
		if (err)
			return -err;
		/* One at a time: thread_init may use the library. */
		sem_wait_intr(&X.main_sem);
	}
	pcstock_explore_hook = hook;
	return 0;
}

void explore_stop(void)
{
	unsigned int t;

	if (X.s->fini)
		X.s->fini(X.s);
	pcstock_explore_hook = NULL;
	X.shutdown = true;
	for (t = 0; t < X.s->nr_threads; t++) {
		sem_post(&X.sem[t]);
		pthread_join(X.tid[t], NULL);
	}
}

/*
 * Wait for the last thread; a hang means a thread blocked off the baton.
 * Waited in one-second slices, and a slice that took far longer than that
 * is not counted: the whole process was stopped (SIGSTOP, a suspended
 * VM), not the schedule, which must not read as a hang when it resumes.
 */
static void wait_schedule(void)
{
	struct timespec start, deadline, now;
	unsigned int waited = 0;

	for (;;) {
		clock_gettime(CLOCK_REALTIME, &start);
		deadline = start;
		deadline.tv_sec += 1;
		if (!sem_timedwait(&X.main_sem, &deadline))
			return;
		if (errno == EINTR)
			continue;
		clock_gettime(CLOCK_REALTIME, &now);
		if (now.tv_sec - start.tv_sec > 3)
			continue;
		if (++waited >= HANG_SECONDS)
			explore_fail("explorer hang: a thread blocked outside "
				     "a scheduling point (mutex held by a "
				     "descheduled thread?)");
	}
}

static void run_one(struct explore_source *src)
{
	const char *msg;

	X.src = src;
	X.step = 0;
	X.trace_len = 0;
	X.nr_labels = 0;
	X.live = X.s->nr_threads;
	memset(X.done, 0, sizeof(X.done));
	memset(X.died, 0, sizeof(X.died));
	memset(X.death_in, 0, sizeof(X.death_in));
	if (X.strategy == EXPLORE_PCT)
		pct_init();
	X.running = true;
	X.s->setup(X.s);
	if (X.opt->weak)
		explore_wmm_reset();
	sem_post(&X.sem[choose(PCS_OP_NR)]);
	wait_schedule();
	if (X.opt->verbose) {
		print_header("schedule");
		print_trace();
	}
	msg = X.s->check_end ? X.s->check_end(X.s) : NULL;
	if (msg)
		explore_fail(msg);
	if (X.s->teardown)
		X.s->teardown(X.s);
	X.running = false;
}

static void alloc_trace(const struct explore_options *opt)
{
	X.opt = opt;
	X.max_steps = opt->max_steps;
	free(X.trace);
	X.trace = calloc(X.max_steps, sizeof(*X.trace));
	if (!X.trace) {
		perror("pcstock-explore");
		exit(2);
	}
}

void explore_run(const struct explore_options *opt,
		 struct explore_result *res)
{
	struct explore_source src;
	unsigned long i;

	alloc_trace(opt);
	memset(res, 0, sizeof(*res));
	X.pct_steps = opt->steps;
	if (opt->strategy == EXPLORE_PCT && !X.pct_steps) {
		/*
		 * Calibrate on the sequential schedule (an empty byte source
		 * always picks the first live thread), its violations
		 * ignored: deterministic, and independent of the seeds.
		 */
		X.strategy = EXPLORE_BYTES;
		X.calibrating = true;
		explore_source_bytes(&src, NULL, 0);
		run_one(&src);
		X.calibrating = false;
		X.pct_steps = X.step ? X.step : 1;
		res->steps += X.step;
	}
	X.strategy = opt->strategy;
	res->pct_steps = X.pct_steps;
	for (i = 0; i < opt->schedules; i++) {
		X.index = i;
		X.seed = opt->seed + i;
		explore_source_seed(&src, X.seed);
		run_one(&src);
		res->schedules++;
		res->steps += X.step;
	}
}

void explore_run_source(const struct explore_options *opt,
			struct explore_source *src)
{
	if (X.opt != opt)
		alloc_trace(opt);
	X.strategy = EXPLORE_BYTES;
	X.seed = 0;
	run_one(src);
}
