// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * opcount.c - the per-operation breakdown (--opcount): how many locked
 * instructions one operation of the tenants and scale workloads costs
 * each policy, and what one locked instruction costs on this CPU.
 *
 * An operation is what workload.c's pair loop counts as one: charge one
 * page to a leaf, uncharge it, go on to the next leaf (tenants N=..: a
 * round-robin over N leaves under one shared parent, each CPU starting at
 * its own place in the span; scale own: each CPU on a leaf of its own).
 * Here the loop is stepped in one thread, one CPU's operation at a time in
 * a fixed order (CPU 0, 1, .., T-1, 0, ..), so that every count is exact
 * and repeats for a given build: after a warm-up that fills the stocks,
 * OPC_STEPS operations per CPU are counted (an eighth with --quick, and
 * the chains below best of 2).
 *
 * Every policy runs on SIM CPUs (what --profile NAME- runs on), and once
 * more on COOP CPUs where that changes the counts: memcg7, whose
 * owner-exclusive variant (the kernel's, which the pinned workers of the
 * timed tenants run: a CPU has one owner at a time) has no trylock.  plain
 * runs on RSEQ CPUs only, but the trace library runs a model of its
 * sequences on the others (src/policy_plain.h), which this counts: the
 * model's own lock stands in for the kernel's restarts and is not counted
 * (the real sequences have no locked instruction: scripts/callgrind-fastpath
 * checks it with objdump), so plain's locked column is the real code's
 * and its loads and stores are the model's.
 *
 * Counting needs the trace variant of the library (src/atomic.h: every
 * atomic wrapper calls pcstock_trace_hook with the kind of access), so
 * --opcount runs in pcstock-bench-lines, as --lines does.  A locked
 * instruction is one of the wrappers' read-modify-writes: fetch_add and
 * fetch_sub (lock add / lock xadd on x86), cas (lock cmpxchg) and xchg
 * (locked by itself); seq_cst fences are counted apart (mfence or a
 * locked or).  What does not go through the wrappers is not seen: the
 * read side of liburcu (exact's and plain's charges take it; with
 * membarrier(2) it has no fence) and a pthread mutex (none on these
 * loops' paths).
 *
 * The same accesses go to the line model's directory (bench/lines/
 * model.c), warm-up included, as the stepping CPU's: the lines they move
 * from one CPU to another per operation.  The CPUs alternate strictly,
 * so a line that two of them write moves on every operation: an upper
 * bound on what real interleavings move, and 0 exactly where no line of
 * the library's is shared.
 *
 * The instructions per operation are callgrind's, not counted here (the
 * trace hooks add their own): --profile NAME-tenants-N and NAME-scale-own
 * (profile.c) run this same loop on the installed library, each counted
 * operation inside bench_mark_op(); scripts/op-breakdown runs both and
 * prints one table.
 *
 * The cost of a locked instruction is measured beside the counts, in
 * dependent chains on a private line (no other CPU touches it), best of
 * OPC_TRIALS: a register add (one cycle on any x86 or arm64 core of the
 * last decade: the chain gives the clock the core ran at), a plain add
 * to memory (a load and a store: what memcg7's owner does on a hit), a
 * lock add, a lock cmpxchg that succeeds, an xchg and a seq_cst fence.
 * "locked ns/op" is the counts times those latencies: what the locked
 * instructions alone would cost an operation if nothing overlapped them,
 * not a prediction of the measured rate.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "strategy.h"

#ifdef BENCH_LINES
#include "lines/lines.h"
#endif

#define OPC_STEPS 8192UL	/* counted operations per CPU */
#define OPC_THREADS 2U		/* tenants' CPUs unless --threads */
#define OPC_BATCH 64U		/* --profile's batch: the bench's default */
#define OPC_MAX_CPUS 64U
#define OPC_TRIALS 7
#define OPC_CHAIN_ITERS (1UL << 21)	/* x 8 links per trial */

/* A configuration of the stepped loop, labelled as the timed one is. */
struct opc_shape {
	const char *workload;
	unsigned int span;	/* tenants: N; scale: 1 */
	bool own;		/* scale own: a leaf per CPU */
	unsigned int cpus;	/* 0: the tenants CPU count */
};

/* The loop: each CPU's next leaf (its k of pair_body()). */
struct opc_loop {
	const struct strategy *s;
	void *inst;
	struct config c;
	unsigned int k[OPC_MAX_CPUS];
	unsigned long fails;
};

static void opc_config(const struct opc_shape *sh, unsigned int cpus,
		       unsigned int batch, enum pcstock_cpu_mode mode,
		       struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->threads = cpus;
	c->tree.nr_leaves = sh->own ? cpus : sh->span;
	c->tree.depth = 2;
	c->tree.nr_cpus = cpus;
	c->tree.batch = batch;
	c->tree.mode = mode;
	c->arg[0] = sh->span;
	c->arg[1] = sh->own;
	c->arg[2] = 1;
	if (sh->own)
		snprintf(c->label, sizeof(c->label), "T=%u own", cpus);
	else
		snprintf(c->label, sizeof(c->label), "N=%u T=%u", sh->span,
			 cpus);
}

/*
 * One operation, the marked unit of --profile NAME-tenants-N: charge a
 * page, give it back.  Never inlined: callgrind toggles on its name
 * (bench_mark_*), and the counting hook is on around it only.
 */
BENCH_MARK static bool
bench_mark_op(const struct strategy *s, void *inst, unsigned int cpu,
	      unsigned int leaf)
{
	if (!s->charge(inst, cpu, leaf, 1))
		return false;
	s->uncharge(inst, cpu, leaf, 1);
	return true;
}

#ifdef BENCH_LINES
/*
 * The counts, by kind of access, of the accesses made while opc_on; and
 * every access of the loop, warm-up included, applied to the line
 * model's directory (lines.h) as CPU opc_cpu's, so that it counts the
 * cache lines moved between the CPUs.
 */
static _Thread_local bool opc_on;
static _Thread_local int opc_cpu = -1;
static unsigned long opc_n[PCS_OP_NR];

static void opc_hook(enum pcs_atomic_op op, const void *obj)
{
	struct lm_line *l;

	if (opc_on)
		opc_n[op]++;
	if (opc_cpu >= 0 && obj)
		dir_access(&dir, (unsigned int)opc_cpu, (uintptr_t)obj,
			   op != PCS_OP_LOAD, &l);
}
#endif

/*
 * @steps operations of every CPU in turn; @mark: through bench_mark_op()
 * with the counting on (else the warm-up, straight to the strategy).
 */
static int opc_steps(struct opc_loop *l, unsigned long steps, bool mark)
{
	unsigned int span = l->c.arg[0], cpu, leaf;
	unsigned long i;
	bool ok;
	int ret;

	for (i = 0; i < steps; i++) {
		for (cpu = 0; cpu < l->c.threads; cpu++) {
			ret = l->s->enter(l->inst, cpu);
			if (ret)
				return ret;
			leaf = l->k[cpu];
#ifdef BENCH_LINES
			opc_on = mark;
			opc_cpu = (int)cpu;
#endif
			if (mark) {
				ok = bench_mark_op(l->s, l->inst, cpu, leaf);
			} else {
				ok = l->s->charge(l->inst, cpu, leaf, 1);
				if (ok)
					l->s->uncharge(l->inst, cpu, leaf, 1);
			}
#ifdef BENCH_LINES
			opc_on = false;
			opc_cpu = -1;
#endif
			l->fails += !ok;
			l->s->exit(l->inst);
			if (span > 1)
				l->k[cpu] = leaf + 1 == span ? 0 : leaf + 1;
		}
	}
	return 0;
}

/* Build @s's tree for @c, warm it up (stocks filled, caches settled). */
static int opc_start(struct opc_loop *l, const struct strategy *s,
		     const struct config *c)
{
	unsigned int cpu;
	int ret;

	memset(l, 0, sizeof(*l));
	if (c->threads > OPC_MAX_CPUS)
		return -E2BIG;
	l->s = s;
	l->c = *c;
	for (cpu = 0; cpu < c->threads; cpu++)
		l->k[cpu] = c->arg[1] ? cpu : cpu * c->arg[0] / c->threads;
	ret = s->create(&l->c.tree, &l->inst);
	if (ret)
		return ret;
	ret = opc_steps(l, 4UL * (c->arg[0] + c->tree.batch), false);
	if (ret)
		s->destroy(l->inst);
	return ret;
}

/* Every page back (each operation gave its own back): conservation. */
static int opc_stop(struct opc_loop *l)
{
	long *held = calloc(l->c.tree.nr_leaves, sizeof(*held));
	char why[160];
	int ret = -ENOMEM;

	if (held)
		ret = release_and_check(l->s, l->inst, &l->c.tree, held, why,
					sizeof(why)) ? -EPROTO : 0;
	if (ret == -EPROTO)
		fprintf(stderr, "opcount: %s %s: conservation: %s\n",
			l->c.label, l->s->name, why);
	free(held);
	l->s->destroy(l->inst);
	return ret;
}

/*
 * --profile NAME-tenants-N, NAME-scale-own (profile.c): @n operations of
 * the loop, each in bench_mark_op(), after the same warm-up; the CPUs of
 * @mode (tenants on OPC_THREADS of them, scale own on one).  @n must be a
 * multiple of the CPUs: each step is one operation of each.
 */
int opcount_profile(enum pcstock_tree_policy policy,
		    enum pcstock_cpu_mode mode, const char *kind,
		    unsigned long n)
{
	const char *name = pcstock_tree_policy_name(policy);
	const struct strategy *s = name ? bench_strategy(name) : NULL;
	struct opc_shape sh = { .span = 1, .own = true, .cpus = 1 };
	struct opc_loop l;
	struct config c;
	char *end;
	int ret;

	if (!strncmp(kind, "tenants-", 8)) {
		sh.span = (unsigned int)strtoul(kind + 8, &end, 10);
		sh.own = false;
		sh.cpus = OPC_THREADS;
		if (*end || !sh.span)
			return -EINVAL;
	} else if (strcmp(kind, "scale-own")) {
		return -EINVAL;
	}
	if (!s)
		return -EINVAL;
	opc_config(&sh, sh.cpus, OPC_BATCH, mode, &c);
	if (n % c.threads)
		return -EINVAL;
	ret = opc_start(&l, s, &c);
	if (ret)
		return ret;
	ret = opc_steps(&l, n / c.threads, true);
	return opc_stop(&l) ? -EPROTO : ret;
}

/* ---- --opcount ---------------------------------------------------------- */

#ifdef BENCH_LINES
/* The configurations counted, those of the figures. */
static const struct opc_shape opc_shapes[] = {
	{ "tenants", 1, false, 0 },
	{ "tenants", 4, false, 0 },
	{ "tenants", 7, false, 0 },
	{ "tenants", 8, false, 0 },
	{ "tenants", 64, false, 0 },
	{ "scale", 1, true, 1 },
};

#define NR_SHAPES (sizeof(opc_shapes) / sizeof(opc_shapes[0]))

/* ---- what a locked instruction costs here ------------------------------- */

struct opc_cost {
	double reg_ns;		/* register add: a cycle */
	double mem_ns;		/* plain add to memory */
	/*
	 * A plain add to an int through a pointer, in a called function, as
	 * plain's sequences make one: loaded zero-extended (movl) or
	 * sign-extended (movslq); NAN off x86-64.
	 */
	double call_movl_ns, call_movslq_ns, call_lock_ns;
	double lock_add_ns, cas_ns, xchg_ns, fence_ns;
	int trials;		/* best of */
	char cpu[128];
};

/*
 * The chains: OPC_CHAIN_ITERS x 8 links, each link waiting for the one
 * before (through a register, or the line); the line is this thread's
 * own.  Each kind its own loop, so that nothing but the links is in it.
 */
#define X8(link) link link link link link link link link

#if defined(__x86_64__) || defined(__i386__)
#define REG_ADD(r) __asm__ volatile("add $1, %0" : "+r"(r));
#elif defined(__aarch64__)
#define REG_ADD(r) __asm__ volatile("add %0, %0, #1" : "+r"(r));
#else
#define REG_ADD(r) __asm__ volatile("" : "+r"(r)); (r)++;
#endif

static _Alignas(BENCH_LINE) atomic_ulong chain_line;
static _Alignas(BENCH_LINE) volatile unsigned long chain_plain;

static unsigned long chain_reg(unsigned long r)
{
	unsigned long i;

	for (i = 0; i < OPC_CHAIN_ITERS; i++) {
		X8(REG_ADD(r))
	}
	return r;
}

static unsigned long chain_mem(unsigned long r)
{
	unsigned long i;

	for (i = 0; i < OPC_CHAIN_ITERS; i++) {
		X8(chain_plain = chain_plain + 1;)
	}
	return r + chain_plain;
}

/*
 * The add of a restartable sequence's commit, out of line and through a
 * pointer (the slot's address is computed, so no CPU can rename the
 * memory operand away, as some do with chain_mem()'s fixed address):
 * each call's load takes the previous call's store from the store queue.
 */
static _Alignas(BENCH_LINE) int chain_int;
static int *volatile chain_int_ptr = &chain_int;

#if defined(__x86_64__)
static __attribute__((noinline)) void link_movl(int *p)
{
	__asm__ volatile("movl (%0), %%eax\n\t"
			 "addq $1, %%rax\n\t"
			 "movl %%eax, (%0)" : : "r"(p) : "rax", "cc", "memory");
}

static __attribute__((noinline)) void link_movslq(int *p)
{
	__asm__ volatile("movslq (%0), %%rax\n\t"
			 "addq $1, %%rax\n\t"
			 "movl %%eax, (%0)" : : "r"(p) : "rax", "cc", "memory");
}

static __attribute__((noinline)) void link_lock(int *p)
{
	__asm__ volatile("lock addl $1, (%0)" : : "r"(p) : "cc", "memory");
}

/* Inlined with a constant @link: direct calls, nothing else in the loop. */
static inline __attribute__((always_inline)) unsigned long
chain_call(void (*link)(int *), unsigned long r)
{
	int *p = chain_int_ptr;
	unsigned long i;

	for (i = 0; i < OPC_CHAIN_ITERS; i++) {
		X8(link(p);)
	}
	return r + (unsigned long)*p;
}

static unsigned long chain_call_lock(unsigned long r)
{
	return chain_call(link_lock, r);
}

static unsigned long chain_call_movl(unsigned long r)
{
	return chain_call(link_movl, r);
}

static unsigned long chain_call_movslq(unsigned long r)
{
	return chain_call(link_movslq, r);
}
#endif

static unsigned long chain_lock_add(unsigned long r)
{
	unsigned long i;

	for (i = 0; i < OPC_CHAIN_ITERS; i++) {
		X8(atomic_fetch_add_explicit(&chain_line, 1,
					     memory_order_relaxed);)
	}
	return r;
}

/* Each cmpxchg expects what the one before wrote: it always succeeds. */
static unsigned long chain_cas(unsigned long r)
{
	unsigned long i, e = atomic_load_explicit(&chain_line,
						  memory_order_relaxed);

	for (i = 0; i < OPC_CHAIN_ITERS; i++) {
		X8(atomic_compare_exchange_strong_explicit(&chain_line, &e,
					e + 1, memory_order_relaxed,
					memory_order_relaxed); e++;)
	}
	return r + e;
}

static unsigned long chain_xchg(unsigned long r)
{
	unsigned long i;

	for (i = 0; i < OPC_CHAIN_ITERS; i++) {
		X8(r = atomic_exchange_explicit(&chain_line, r + 1,
						memory_order_relaxed);)
	}
	return r;
}

/*
 * The fence itself: mfence on x86-64 (what a seq_cst fence compiles to
 * there; gcc refuses atomic_thread_fence() under -fsanitize=thread).
 */
#if defined(__x86_64__)
#define OPC_FENCE() __asm__ volatile("mfence" ::: "memory")
#elif defined(__SANITIZE_THREAD__)
#define OPC_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#else
#define OPC_FENCE() atomic_thread_fence(memory_order_seq_cst)
#endif

static unsigned long chain_fence(unsigned long r)
{
	unsigned long i;

	for (i = 0; i < OPC_CHAIN_ITERS; i++) {
		X8(OPC_FENCE();)
	}
	return r;
}

/* ns per link of @chain: the best of @trials. */
static double chain_ns(unsigned long (*chain)(unsigned long), int trials)
{
	static volatile unsigned long sink;
	double best = 0, t;
	int trial;

	for (trial = 0; trial < trials; trial++) {
		t = now_s();
		sink = chain(sink);
		t = (now_s() - t) / (8.0 * OPC_CHAIN_ITERS);
		if (!trial || t < best)
			best = t;
	}
	return best * 1e9;
}

static void opc_measure_cost(struct opc_cost *c, int trials)
{
	bench_cpu_model(c->cpu, sizeof(c->cpu));
	c->trials = trials;
	c->reg_ns = chain_ns(chain_reg, trials);
	c->mem_ns = chain_ns(chain_mem, trials);
#if defined(__x86_64__)
	c->call_movl_ns = chain_ns(chain_call_movl, trials);
	c->call_movslq_ns = chain_ns(chain_call_movslq, trials);
	c->call_lock_ns = chain_ns(chain_call_lock, trials);
#else
	c->call_movl_ns = c->call_movslq_ns = c->call_lock_ns = NAN;
#endif
	c->lock_add_ns = chain_ns(chain_lock_add, trials);
	c->cas_ns = chain_ns(chain_cas, trials);
	c->xchg_ns = chain_ns(chain_xchg, trials);
	c->fence_ns = chain_ns(chain_fence, trials);
}

/* ,"@key":@v, or null where it was not measured (not JSON's nan). */
static void opc_json_ns(FILE *js, const char *key, double v)
{
	if (isfinite(v))
		fprintf(js, ",\"%s\":%.6g", key, v);
	else
		fprintf(js, ",\"%s\":null", key);
}

/* One row: accesses per operation, by kind. */
struct opc_row {
	double n[PCS_OP_NR];
	double locked, locked_ns;
	double xfer;			/* line transfers */
	unsigned long ops, fails;
};

static int opc_count(const struct strategy *s, const struct config *c,
		     unsigned long steps, struct opc_row *row)
{
	struct opc_loop l;
	unsigned int k;
	int ret;

	dir_clear(&dir);
	dir.nr_cpus = c->threads;
	pcstock_trace_hook = opc_hook;
	ret = opc_start(&l, s, c);
	if (ret) {
		pcstock_trace_hook = NULL;
		return ret;
	}
	memset(opc_n, 0, sizeof(opc_n));
	dir_zero(&dir);
	ret = opc_steps(&l, steps, true);
	pcstock_trace_hook = NULL;
	memset(row, 0, sizeof(*row));
	row->ops = steps * c->threads;
	row->fails = l.fails;
	for (k = 0; k < PCS_OP_NR; k++)
		row->n[k] = (double)opc_n[k] / (double)row->ops;
	row->locked = row->n[PCS_OP_ADD] + row->n[PCS_OP_SUB] +
		      row->n[PCS_OP_XCHG] + row->n[PCS_OP_CAS];
	row->xfer = (double)dir.xfer / (double)row->ops;
	dir_clear(&dir);
	k = opc_stop(&l) ? 1 : 0;
	return ret ? ret : k ? -EPROTO : 0;
}

static void opc_price(struct opc_row *r, const struct opc_cost *c)
{
	r->locked_ns = (r->n[PCS_OP_ADD] + r->n[PCS_OP_SUB]) * c->lock_add_ns +
		       r->n[PCS_OP_CAS] * c->cas_ns +
		       r->n[PCS_OP_XCHG] * c->xchg_ns +
		       r->n[PCS_OP_FENCE] * c->fence_ns;
}

/* The --profile argument whose callgrind count is this row's. */
static void opc_profile_name(const char *policy, enum pcstock_cpu_mode m,
			     const struct opc_shape *sh, char *buf, size_t len)
{
	const char *prefix = policy;
	char kind[24];

	/*
	 * profile.c's prefixes: NAME- runs on SIM CPUs, memcg7x- is memcg7
	 * on COOP ones; another policy's COOP row has none.
	 */
	if (!strcmp(policy, "memcg7") && m == PCSTOCK_CPU_COOP)
		prefix = "memcg7x";
	else if (m == PCSTOCK_CPU_COOP) {
		snprintf(buf, len, "-");
		return;
	}
	if (sh->own)
		snprintf(kind, sizeof(kind), "scale-own");
	else
		snprintf(kind, sizeof(kind), "tenants-%u", sh->span);
	snprintf(buf, len, "%s-%s", prefix, kind);
}

static void opc_put(FILE *f1, FILE *f2, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void opc_put(FILE *f1, FILE *f2, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (f1)
		vfprintf(f1, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	if (f2)
		vfprintf(f2, fmt, ap);
	va_end(ap);
}

static void opc_emit(FILE *md, FILE *js, const struct opc_shape *sh,
		     const struct config *c, const char *policy,
		     enum pcstock_cpu_mode m, const char *prof,
		     const struct opc_row *r)
{
	opc_put(stdout, md, "| %s %s | %s | %s | %.3f | %.3f | %.3f | %.3f |"
		" %.3f | %.2f | %.2f | %.3f | %.1f | `%s` |\n", sh->workload,
		c->label, policy, cpu_mode_name(m), r->locked,
		r->n[PCS_OP_CAS], r->n[PCS_OP_XCHG],
		r->n[PCS_OP_ADD] + r->n[PCS_OP_SUB], r->n[PCS_OP_FENCE],
		r->n[PCS_OP_LOAD], r->n[PCS_OP_STORE], r->xfer, r->locked_ns,
		prof);
	if (!js)
		return;
	fprintf(js, "{\"kind\":\"opcount\",\"workload\":\"%s\","
		"\"config\":\"%s\",\"strategy\":\"%s\",\"cpu_mode\":\"%s\","
		"\"profile\":\"%s\",\"ops\":%lu,\"fails\":%lu,"
		"\"locked_per_op\":%.6g,\"cas_per_op\":%.6g,"
		"\"xchg_per_op\":%.6g,\"add_sub_per_op\":%.6g,"
		"\"fences_per_op\":%.6g,\"loads_per_op\":%.6g,"
		"\"stores_per_op\":%.6g,\"transfers_per_op\":%.6g,"
		"\"locked_ns_per_op\":%.6g}\n",
		sh->workload, c->label, policy, cpu_mode_name(m), prof, r->ops,
		r->fails, r->locked, r->n[PCS_OP_CAS], r->n[PCS_OP_XCHG],
		r->n[PCS_OP_ADD] + r->n[PCS_OP_SUB], r->n[PCS_OP_FENCE],
		r->n[PCS_OP_LOAD], r->n[PCS_OP_STORE], r->xfer, r->locked_ns);
}

static bool opc_same(const struct opc_row *a, const struct opc_row *b)
{
	return !memcmp(a->n, b->n, sizeof(a->n)) && a->xfer == b->xfer;
}

/* Each policy of @list on each shape: a row, and a SIM row if it differs. */
static int opc_table(const struct opts *o, const char *list,
		     unsigned int tcpus, unsigned long steps,
		     const struct opc_cost *cost, FILE *md, FILE *js)
{
	static const enum pcstock_cpu_mode modes[] = {
		PCSTOCK_CPU_SIM, PCSTOCK_CPU_COOP,
	};
	enum pcstock_cpu_mode ran;
	const struct strategy *s;
	struct opc_row row[2];
	struct config c;
	char name[32], prof[64];
	const char *p;
	unsigned int i, m;
	size_t len;
	int ret;

	for (i = 0; i < NR_SHAPES; i++) {
		for (p = list; *p; p += len + (p[len] == ',')) {
			len = strcspn(p, ",");
			snprintf(name, sizeof(name), "%.*s", (int)len, p);
			s = bench_strategy(name);
			if (!s || !(s->flags & STRAT_POLICY)) {
				fprintf(stderr, "pcstock-bench: --opcount "
					"counts the policies (%s), not '%s'\n",
					bench_policy_strategies(), name);
				return -EINVAL;
			}
			for (m = 0; m < 2; m++) {
				opc_config(&opc_shapes[i],
					   opc_shapes[i].cpus ?
					   opc_shapes[i].cpus : tcpus,
					   o->batch, modes[m], &c);
				fprintf(stderr, "opcount: %s %s %s %s\n",
					opc_shapes[i].workload, c.label, name,
					cpu_mode_name(modes[m]));
				ret = opc_count(s, &c, steps, &row[m]);
				if (ret)
					return ret;
				opc_price(&row[m], cost);
				if (m && opc_same(&row[0], &row[1]))
					break;
				ran = grp_ran_on_rseq(name) ?
				      PCSTOCK_CPU_RSEQ : modes[m];
				opc_profile_name(name, ran, &opc_shapes[i],
						 prof, sizeof(prof));
				opc_emit(md, js, &opc_shapes[i], &c, name, ran,
					 prof, &row[m]);
			}
		}
	}
	return 0;
}

int opcount_main(const struct opts *o)
{
	unsigned int tcpus = OPC_THREADS;
	unsigned long steps = o->quick ? OPC_STEPS / 8 : OPC_STEPS;
	struct opc_cost cost;
	char path[4096], *mt, *run;
	double load[3] = { 0, 0, 0 };
	FILE *md, *js;
	int ret;

	if (o->threads)
		tcpus = (unsigned int)strtoul(o->threads, NULL, 10);
	if (!tcpus || tcpus > OPC_MAX_CPUS) {
		fprintf(stderr, "pcstock-bench: --opcount: --threads 1..%u\n",
			OPC_MAX_CPUS);
		return 1;
	}
	if (mkdir(o->out, 0777) && errno != EEXIST) {
		fprintf(stderr, "pcstock-bench: cannot create %s\n", o->out);
		return 1;
	}
	if (getloadavg(load, 3) < 0)
		load[0] = load[1] = load[2] = -1;
	fprintf(stderr, "opcount: timing the locked instructions\n");
	opc_measure_cost(&cost, o->quick ? 2 : OPC_TRIALS);
	snprintf(path, sizeof(path), "%s/opcount.md", o->out);
	md = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/opcount.jsonl", o->out);
	js = fopen(path, "w");
	/* The machine and the build; the Run line is the timed matrix's. */
	mt = meta_text(o, 0);
	run = mt ? strstr(mt, "Run:") : NULL;
	if (run)
		*run = 0;
	opc_put(stdout, md, "## pcstock-bench --opcount\n\n%s"
		"Load average before the chains: %.2f / %.2f / %.2f "
		"(1/5/15 min).\n\n"
		"A locked instruction on this CPU (%s): dependent chains on a "
		"private line, best of %d, ns (cycles, taking a register add "
		"as one):\n\n"
		"| register add | add to memory (load + store) | lock add | "
		"lock cmpxchg | xchg | mfence (seq_cst fence) |\n"
		"|---:|---:|---:|---:|---:|---:|\n"
		"| %.3f (1) | %.2f (%.1f) | %.2f (%.1f) | %.2f (%.1f) | "
		"%.2f (%.1f) | %.2f (%.1f) |\n\n"
		"A restartable sequence's commit against a locked add, each "
		"in a called function on an int through a pointer, ns per "
		"link (plain's take and give in a hit pair are one such "
		"chain through the slot; `plain` loads with movl):\n\n"
		"| movl load, add, movl store | movslq load, add, movl store "
		"| lock add |\n|---:|---:|---:|\n"
		"| %.2f | %.2f | %.2f |\n\n"
		"Per operation (a charge of one page and its uncharge; "
		"%lu counted per CPU after a warm-up, stepped one CPU at a "
		"time: exact): locked instructions, of which cas, xchg and "
		"add/sub, seq_cst fences, atomic loads and stores, the cache "
		"lines the library's accesses move between the CPUs (the "
		"line model's directory, bench/lines/model.c; the CPUs "
		"strictly alternating: a line two of them write moves on "
		"every operation, an upper bound), and the locked "
		"instructions' latency from the chains above (counts x ns, "
		"nothing overlapped):\n\n"
		"| config | policy | CPUs | locked | cas | xchg | add/sub | "
		"fences | loads | stores | line transfers | locked ns/op | "
		"--profile |\n"
		"|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---|\n",
		mt ? mt : "", load[0], load[1], load[2], cost.cpu, cost.trials, cost.reg_ns,
		cost.mem_ns, cost.mem_ns / cost.reg_ns, cost.lock_add_ns,
		cost.lock_add_ns / cost.reg_ns, cost.cas_ns,
		cost.cas_ns / cost.reg_ns, cost.xchg_ns,
		cost.xchg_ns / cost.reg_ns, cost.fence_ns,
		cost.fence_ns / cost.reg_ns, cost.call_movl_ns,
		cost.call_movslq_ns, cost.call_lock_ns, steps);
	free(mt);
	if (js)
		fprintf(js, "{\"kind\":\"lock_cost\",\"cpu\":\"%s\","
			"\"trials\":%d,\"load1\":%.2f,\"reg_add_ns\":%.6g,"
			"\"mem_add_ns\":%.6g,\"lock_add_ns\":%.6g,"
			"\"cas_ns\":%.6g,\"xchg_ns\":%.6g,\"fence_ns\":%.6g",
			cost.cpu, cost.trials, load[0], cost.reg_ns, cost.mem_ns,
			cost.lock_add_ns, cost.cas_ns, cost.xchg_ns,
			cost.fence_ns);
	if (js) {
		opc_json_ns(js, "call_movl_ns", cost.call_movl_ns);
		opc_json_ns(js, "call_movslq_ns", cost.call_movslq_ns);
		opc_json_ns(js, "call_lock_ns", cost.call_lock_ns);
		fprintf(js, "}\n");
	}
	ret = opc_table(o, o->strategies ? o->strategies :
			bench_policy_strategies(), tcpus, steps, &cost, md,
			js);
	if (md)
		fclose(md);
	if (js)
		fclose(js);
	if (ret)
		fprintf(stderr, "pcstock-bench --opcount: %s\n",
			strerror(-ret));
	else
		fprintf(stderr, "pcstock-bench: results in %s/opcount.md, "
			"opcount.jsonl\n", o->out);
	return ret ? (ret == -EPROTO ? 2 : 1) : 0;
}
#endif /* BENCH_LINES */
