// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * oracle.c - the counter differential: pcstock's counter against a kernel
 * tree's page_counter code, operation by operation.
 *
 * A case is a random tree (depth 1 to 6, fan-out 1 to 5, at most
 * KC_MAX_NODES counters) built twice, once with pcstock_counter_init()
 * and once with the kernel's page_counter_init(), and a random sequence
 * of operations applied to both.  After every operation every return
 * value and every field of every counter is compared, the warning counts
 * too.  A divergence is shrunk (chunks of operations removed while the
 * divergence stays) and printed as a replayable reproducer.
 *
 * Like with like (kc_adjustments()): a tree before v6.15 has no
 * track_failcnt and always counts failures, so pcstock's counters then all
 * track failcnt; from v6.15 each counter's flag is random and set on both
 * sides.  Likewise a tree without protection_support (6.1) propagates
 * protected usage on every counter, so pcstock's counters all get it.
 * Operations whose kernel function the tree lacks (6.1: the local
 * watermark, page_counter_calculate_protection() and
 * effective_protection(), which live in its memcontrol.c) are not
 * generated, and a field it lacks is not compared.
 *
 * Expected deviations (kc_dev_name[]): a tree before 6.12.118 computes
 * effective_protection() with 64-bit products that wrap and without the
 * cap on a child's unprotected usage; pcstock follows the fix.  Such a
 * difference is let through only when the kernel's value is the old
 * arithmetic's, pcstock's the new one's, on the kernel side's inputs, in
 * the corner where the two differ (prot_agree()); it is counted, and in
 * a calculate_protection walk the kernel's emin/elow are resynced to
 * pcstock's so the case goes on from equal states.  Every other
 * difference is a divergence.
 *
 * A tree with the per-counter stock series gets stock runs too: every
 * counter has a stock (pcstock's PCSTOCK_STOCK_V4 on KC_CPUS simulated
 * CPUs; the kernel's alloc_percpu() over the shim's CPUs), the thread
 * switches CPU between operations, charges through the stock and drains
 * any CPU's slot, and after every operation each counter's slots are
 * compared and conservation checked on both sides: a counter's usage is
 * what callers hold in its subtree plus its subtree's stock.  Whether a
 * counter has a stock is part of the case: some start without one (the
 * series' allocation-failure fallback), and stocks are freed and
 * allocated again mid-case, an allocation now and then failing.
 *
 * A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL) in either side's code is a
 * finding like a divergence: the signal is caught, the case abandoned
 * (the kernel side's stocks leaked, never freed again), and the
 * operations up to the crash shrunk to those that still crash.
 *
 * --migrate (kc_opts.migrate): every case is a stock run, and an
 * operation may run inside the one before it, at one of its preemption
 * points (kernel/shim/linux/preempt.h): on the same CPU (preemption) or
 * another (a concurrent CPU; the only kind where preemption is
 * disabled), the interrupted operation then resuming on the CPU the plan
 * says (a migration).  pcstock's stock cannot be interrupted in this
 * build (its scheduling points exist in explorer builds only), so its
 * side runs the same operations on the same CPUs, each whole, in the
 * order they started.  The two sides then legitimately differ in where
 * pages sit and which charges fail: instead of comparing them, each side
 * is judged by the same invariants, conservation, no negative slot, no
 * underflow warning; the largest slot reached is reported.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/stock.h>

#include "kcase.h"
#include "kcheck.h"

const char *const kc_dev_name[KC_DEV_NR] = {
	[KC_DEV_PROTECTION_CAP] = "protection_cap",
};

const char *const kc_dev_why[KC_DEV_NR] = {
	[KC_DEV_PROTECTION_CAP] = "tree lacks 6.12.118's effective_protection()"
				  " cap; pcstock follows the fix",
};

const char *const kc_adj_name[KC_ADJ_NR] = {
	[KC_ADJ_TRACK_FAILCNT] = "track_failcnt",
	[KC_ADJ_PROTECTION_SUPPORT] = "protection_support",
	[KC_ADJ_NO_LOCAL_WATERMARK] = "local watermark absent",
	[KC_ADJ_NO_CALC_PROTECTION] = "calculate_protection absent",
	[KC_ADJ_PROTECTION_CAP] = "protection_cap",
};

const char *const kc_adj_why[KC_ADJ_NR] = {
	[KC_ADJ_TRACK_FAILCNT] = "no flag: failcnt always counted, pcstock"
				 " tracks it on every counter",
	[KC_ADJ_PROTECTION_SUPPORT] = "no flag: protected usage always"
				      " propagated, pcstock's counters all"
				      " get it",
	[KC_ADJ_NO_LOCAL_WATERMARK] = "not compared; reset_local_watermark"
				      " not run",
	[KC_ADJ_NO_CALC_PROTECTION] = "it lives in memcontrol.c:"
				      " calculate_protection and"
				      " effective_protection not run",
	[KC_ADJ_PROTECTION_CAP] = "no 6.12.118 cap: effective_protection()"
				  " differences of the old arithmetic are"
				  " expected deviations",
};

unsigned int kc_adjustments(const struct kpc_unit *k)
{
	unsigned int f = k->features, adj = 0;

	if (!(f & KPC_F_TRACK_FAILCNT))
		adj |= 1U << KC_ADJ_TRACK_FAILCNT;
	if (!(f & KPC_F_PROTECTION_SUPPORT))
		adj |= 1U << KC_ADJ_PROTECTION_SUPPORT;
	if (!(f & KPC_F_LOCAL_WATERMARK))
		adj |= 1U << KC_ADJ_NO_LOCAL_WATERMARK;
	if (!(f & KPC_F_CALC_PROTECTION))
		adj |= 1U << KC_ADJ_NO_CALC_PROTECTION;
	else if (!(f & KPC_F_PROTECTION_CAP))
		adj |= 1U << KC_ADJ_PROTECTION_CAP;
	return adj;
}

#define ADJ(w, a) ((w)->adj & (1U << (a)))

/* Both sides of one case. */
struct kc_world {
	const struct kpc_unit *k;
	const struct kc_case *cs;
	struct pcstock_counter *ours;
	unsigned char *kmem;
	void *kc[KC_MAX_NODES];
	unsigned int adj;		/* kc_adjustments() */
	unsigned long *expected;	/* counts, or NULL (shrinking) */
	struct pcstock_domain *d;	/* stock runs */
	bool stock_run;
	bool has_stock[KC_MAX_NODES];	/* both sides, now */
	unsigned int cpu;		/* both sides' current CPU */
	unsigned long held[KC_MAX_NODES];	/* pages callers hold: ours */
	unsigned long kheld[KC_MAX_NODES];	/* and the kernel's */
	char what[256];			/* the divergence, once found */

	/* The operations running, innermost last (--migrate nests them). */
	struct kc_op *ops;
	unsigned int nops;
	bool freeze;
	unsigned int next;		/* the next operation to start */
	unsigned int gen;		/* operations generated so far */
	unsigned int depth;
	struct {
		unsigned int idx, points;
	} stack[4];
	bool migrate;
	unsigned long nested, migrations;	/* counts, or shrinking */
	bool count;

	/* A crash: the signal, the faulting address and instruction. */
	bool crashed;
	int crash_sig;
	void *crash_addr, *crash_pc;

	/* The largest kernel slot seen, and its counter's batch. */
	long max_slot;
	unsigned int max_slot_batch;

	/* Set: compare() lists every field that differs instead. */
	struct kc_expect *ex;
	unsigned int nex;
};

#define KC_MAX_EXPECT 16

/* ---- crashes ---- */

static sigjmp_buf crash_jmp;
static volatile sig_atomic_t crash_armed;
static struct kc_world *crash_world;

static void on_crash(int sig, siginfo_t *si, void *ucv)
{
	struct kc_world *w = crash_world;

	if (!crash_armed || !w) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	crash_armed = 0;
	w->crashed = true;
	w->crash_sig = sig;
	w->crash_addr = si->si_addr;
	w->crash_pc = NULL;
#if defined(__x86_64__)
	w->crash_pc = (void *)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	w->crash_pc = (void *)((ucontext_t *)ucv)->uc_mcontext.pc;
#else
	(void)ucv;
#endif
	siglongjmp(crash_jmp, 1);
}

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
#define KC_NR_CRASH_SIGNALS (sizeof(crash_signals) / sizeof(crash_signals[0]))

/* Describe a crash in w->what: the signal, and where (dladdr()). */
static void crash_what(struct kc_world *w)
{
	Dl_info di, du;
	const char *sig = w->crash_sig == SIGSEGV ? "SIGSEGV" :
			  w->crash_sig == SIGBUS ? "SIGBUS" :
			  w->crash_sig == SIGFPE ? "SIGFPE" : "SIGILL";
	int n = snprintf(w->what, sizeof(w->what), "CRASH: %s, address %p",
			 sig, w->crash_addr);

	if (n < 0 || (size_t)n >= sizeof(w->what))
		return;
	if (w->crash_pc && dladdr(w->crash_pc, &di) && di.dli_fname)
		snprintf(w->what + n, sizeof(w->what) - (size_t)n,
			 ", in %s at +%#lx (addr2line -fi -e %s %#lx)",
			 dladdr((void *)w->k->read, &du) &&
			 du.dli_fbase == di.dli_fbase ? "the kernel's code" :
			 di.dli_fname,
			 (unsigned long)((char *)w->crash_pc -
					 (char *)di.dli_fbase),
			 di.dli_fname,
			 (unsigned long)((char *)w->crash_pc -
					 (char *)di.dli_fbase));
}

static void *kc_alloc(size_t align, size_t size)
{
	void *p;

	if (posix_memalign(&p, align, size))
		abort();
	return p;
}

/* Both sides on @cpu from now on. */
static void set_cpu(struct kc_world *w, unsigned int cpu)
{
	pcstock_cpu_exit(w->d);
	if (pcstock_cpu_enter(w->d, cpu))
		abort();
	w->k->set_cpu(cpu);
	w->cpu = cpu;
}

/*
 * Free both sides' stocks.  After a crash none of the kernel's code runs
 * on its counters again: their stocks' memory is released as is.
 */
static void world_release_stocks(struct kc_world *w, const struct kpc_unit *k)
{
	unsigned int i;

	for (i = 0; i < KC_MAX_NODES; i++) {
		if (!w->has_stock[i])
			continue;
		pcstock_counter_free_stock(&w->ours[i]);
		if (!w->crashed)
			k->free_stock(w->kc[i]);
		else if (k->discard_stock)
			k->discard_stock(w->kc[i]);
		w->has_stock[i] = false;
	}
}

static void world_init(struct kc_world *w, const struct kpc_unit *k,
		       const struct kc_case *cs)
{
	size_t stride = (k->counter_size + k->counter_align - 1) /
			k->counter_align * k->counter_align;
	unsigned int i;

	world_release_stocks(w, k);
	w->crashed = false;
	w->stock_run = cs->batch != 0;
	w->k = k;
	w->cs = cs;
	w->what[0] = '\0';
	memset(w->held, 0, sizeof(w->held));
	memset(w->kheld, 0, sizeof(w->kheld));
	w->depth = 0;
	k->set_preempt_hook(NULL, NULL);
	for (i = 0; i < cs->n; i++) {
		int p = cs->parent[i];

		pcstock_counter_init(&w->ours[i], p < 0 ? NULL : &w->ours[p],
				     cs->prot[i]);
		pcstock_counter_set_track_failcnt(&w->ours[i], cs->track[i]);
		w->kc[i] = w->kmem + i * stride;
		k->init(w->kc[i], p < 0 ? NULL : w->kc[p], cs->prot[i]);
		if (k->set_track_failcnt)
			k->set_track_failcnt(w->kc[i], cs->track[i]);
	}
	pcstock_warn_reset();
	k->warn_reset();
	if (cs->batch) {
		for (i = 0; i < cs->n; i++) {
			if (!cs->stocked[i])
				continue;
			if (pcstock_counter_alloc_stock(&w->ours[i], w->d,
							cs->batch,
							PCSTOCK_STOCK_V4) ||
			    k->alloc_stock(w->kc[i], cs->batch))
				abort();
			w->has_stock[i] = true;
		}
		set_cpu(w, 0);
	}
}

static int node_of_ours(const struct kc_world *w,
			const struct pcstock_counter *c)
{
	return c ? (int)(c - w->ours) : -1;
}

static int node_of_kernel(const struct kc_world *w, const void *c)
{
	unsigned int i;

	for (i = 0; i < w->cs->n; i++)
		if (w->kc[i] == c)
			return (int)i;
	return -1;
}

#define DIVERGE(w, ...)                                                      \
	do {                                                                 \
		snprintf((w)->what, sizeof((w)->what), __VA_ARGS__);         \
		return false;                                                \
	} while (0)

/*
 * effective_protection()'s arithmetic, in both versions, for telling the
 * protection_cap deviation from a bug.  @in: usage, parent_usage, setting,
 * parent_effective, siblings_protected.  @fixed false: the arithmetic
 * before 6.12.118, unsigned long products that wrap and the child's whole
 * unprotected usage as its weight; true: 6.12.118's, products kept whole
 * (128 bits) and the weight capped at the parent's unprotected usage.
 * *@corner: whether @in is where the two can differ (a product past 64
 * bits, or a weight above the cap).
 */
static unsigned long prot_share(const unsigned long *in, bool recursive,
				bool fixed, bool *corner)
{
	unsigned long usage = in[0], parent_usage = in[1], setting = in[2];
	unsigned long parent_eff = in[3], siblings = in[4];
	unsigned long prot = usage < setting ? usage : setting;
	unsigned long unclaimed, unprotected, weight, product;

	/* The overcommitted parent's budget, shared by protected usage. */
	if (siblings > parent_eff) {
		*corner = __builtin_mul_overflow(prot, parent_eff, &product);
		if (!fixed)
			return prot * parent_eff / siblings;
		return (unsigned long)((unsigned __int128)prot * parent_eff /
				       siblings);
	}
	*corner = false;
	if (!recursive || parent_eff <= siblings || parent_usage <= siblings ||
	    usage <= prot)
		return prot;
	/* The unclaimed rest, shared by unprotected usage. */
	unclaimed = parent_eff - siblings;
	unprotected = parent_usage - siblings;
	weight = usage - prot;
	*corner = __builtin_mul_overflow(unclaimed, weight, &product) ||
		  weight > unprotected;
	if (!fixed)
		return prot + unclaimed * weight / unprotected;
	if (weight > unprotected)
		weight = unprotected;
	return prot + (unsigned long)((unsigned __int128)unclaimed * weight /
				      unprotected);
}

/*
 * Whether one effective_protection() result agrees: equal, or the
 * protection_cap deviation (counted), which only a tree without the cap
 * may show, and only with the kernel's value the old arithmetic's and
 * pcstock's the fixed one's, both on the kernel side's inputs @in, in the
 * corner where they differ.  Anything else, a rounding bug in either
 * version say, stays a divergence.
 */
static bool prot_agree(struct kc_world *w, const unsigned long *in,
		       bool recursive, unsigned long kernel,
		       unsigned long ours)
{
	bool corner;

	if (kernel == ours)
		return true;
	if (!ADJ(w, KC_ADJ_PROTECTION_CAP) ||
	    kernel != prot_share(in, recursive, false, &corner) ||
	    ours != prot_share(in, recursive, true, &corner) || !corner)
		return false;
	if (w->expected)
		w->expected[KC_DEV_PROTECTION_CAP]++;
	return true;
}

/*
 * One counter's step of a calculate_protection walk from @root, on both
 * sides, its emin and elow compared at once (its children's steps read
 * them).  The kernel's inputs are read before its step, for prot_agree();
 * page_counter_calculate_protection() uses effective_protection() only
 * below the root's children, on a counter in use.  After an expected
 * deviation the kernel's values are set to pcstock's, so that the rest of
 * the walk and the case start from equal states.
 */
static bool calc_step(struct kc_world *w, unsigned int root, unsigned int i,
		      bool recursive)
{
	const struct kpc_unit *k = w->k;
	const struct pcstock_counter *o = &w->ours[i];
	int p = w->cs->parent[i];
	unsigned long in_min[5], in_low[5], emin, elow;
	struct kpc_snap ks, kp;
	bool formula;

	k->snap(w->kc[i], &ks);
	formula = i != root && ks.usage && p != (int)root;
	if (formula) {
		k->snap(w->kc[p], &kp);
		in_min[0] = in_low[0] = (unsigned long)ks.usage;
		in_min[1] = in_low[1] = (unsigned long)kp.usage;
		in_min[2] = ks.min;
		in_low[2] = ks.low;
		in_min[3] = kp.emin;
		in_low[3] = kp.elow;
		in_min[4] = (unsigned long)kp.children_min_usage;
		in_low[4] = (unsigned long)kp.children_low_usage;
	}
	pcstock_counter_calculate_protection(&w->ours[root], &w->ours[i],
					     recursive);
	k->calculate_protection(w->kc[root], w->kc[i], recursive);
	k->snap(w->kc[i], &ks);
	emin = pcstock_counter_emin(o);
	elow = pcstock_counter_elow(o);
	if (ks.emin != emin &&
	    !(formula && prot_agree(w, in_min, recursive, ks.emin, emin)))
		DIVERGE(w, "n%u.emin: kernel %lu, pcstock %lu", i, ks.emin,
			emin);
	if (ks.elow != elow &&
	    !(formula && prot_agree(w, in_low, recursive, ks.elow, elow)))
		DIVERGE(w, "n%u.elow: kernel %lu, pcstock %lu", i, ks.elow,
			elow);
	if (ks.emin != emin || ks.elow != elow)
		k->set_eprot(w->kc[i], emin, elow);
	return true;
}

/*
 * Apply one operation to both sides; false (and w->what) on divergence.
 * A relative amount is resolved against pcstock's side (both sides agree
 * until a divergence); @freeze stores it back as absolute, for printing.
 */
static bool apply(struct kc_world *w, struct kc_op *op, bool freeze)
{
	const struct kpc_unit *k = w->k;
	struct pcstock_counter *o = &w->ours[op->node];
	void *kc = w->kc[op->node];
	unsigned long a = op->v[0], ka;
	unsigned int i;

	if (op->rel == R_USAGE)
		a += pcstock_counter_read(o);
	else if (op->rel == R_ROOM)
		a += pcstock_counter_max(o) - pcstock_counter_read(o);
	else if (op->rel == R_HELD && a > w->held[op->node])
		a = w->held[op->node];
	/* At most what the kernel's callers hold, when its side differs. */
	ka = op->rel == R_HELD && op->v[0] > w->kheld[op->node] ?
		     w->kheld[op->node] : a;
	/* --migrate keeps "at most held": the sides may hold different. */
	if (freeze && !(w->migrate && op->rel == R_HELD)) {
		op->v[0] = a;
		op->rel = R_ABS;
	}

	switch (op->kind) {
	case K_CHARGE:
		pcstock_counter_charge(o, a);
		k->charge(kc, a);
		w->held[op->node] += a;
		w->kheld[op->node] += a;
		break;
	case K_TRY: {
		struct pcstock_counter *of = NULL;
		void *kf = NULL;
		bool ok = pcstock_counter_try_charge(o, a, &of);
		bool kok = k->try_charge(kc, a, &kf);

		if (ok != kok && !w->migrate)
			DIVERGE(w, "returned kernel %d, pcstock %d", kok, ok);
		if (!ok && !kok &&
		    node_of_kernel(w, kf) != node_of_ours(w, of) &&
		    !w->migrate)
			DIVERGE(w, "failing level: kernel n%d, pcstock n%d",
				node_of_kernel(w, kf), node_of_ours(w, of));
		w->held[op->node] += ok ? a : 0;
		w->kheld[op->node] += kok ? a : 0;
		op->ret = ok;
		break;
	}
	case K_CPU:
		set_cpu(w, (unsigned int)a);
		break;
	case K_STOCK_CHARGE: {
		struct pcstock_counter *of = NULL;
		void *kf = NULL;
		unsigned long on = ~0UL, kn = ~0UL;
		bool ok = pcstock_counter_try_charge_stock(o, a, &of, &on);
		bool kok = k->try_charge_stock(kc, a, &kf, &kn);

		w->held[op->node] += ok ? a : 0;
		w->kheld[op->node] += kok ? a : 0;
		if (w->migrate)
			break;
		if (ok != kok)
			DIVERGE(w, "returned kernel %d, pcstock %d", kok, ok);
		if (!ok && node_of_kernel(w, kf) != node_of_ours(w, of))
			DIVERGE(w, "failing level: kernel n%d, pcstock n%d",
				node_of_kernel(w, kf), node_of_ours(w, of));
		if (ok && on != kn)
			DIVERGE(w, "pages charged: kernel %lu, pcstock %lu",
				kn, on);
		break;
	}
	case K_DRAIN: {
		unsigned int cpu = (unsigned int)op->v[1];
		long kslot = k->stock_pages(kc, cpu);
		unsigned long got = pcstock_counter_drain_stock(o, cpu);

		k->drain_stock(kc, cpu);
		if ((unsigned long)kslot != got && !w->migrate)
			DIVERGE(w, "drained: kernel slot held %ld, pcstock"
				" drained %lu", kslot, got);
		break;
	}
	case K_ALLOC_STOCK: {
		int r, kr;

		/* A stocked counter (a shrunk case): nothing to do. */
		if (w->has_stock[op->node])
			break;
		if (op->flag) {
			/* The fallback: the counter stays unstocked. */
			k->fail_next_alloc();
			kr = k->alloc_stock(kc, w->cs->batch);
			if (kr != -ENOMEM)
				DIVERGE(w, "alloc_stock with alloc_percpu()"
					" failing: kernel returned %d", kr);
			break;
		}
		r = pcstock_counter_alloc_stock(o, w->d, w->cs->batch,
						PCSTOCK_STOCK_V4);
		kr = k->alloc_stock(kc, w->cs->batch);
		if (r || kr)
			DIVERGE(w, "returned kernel %d, pcstock %d", kr, r);
		w->has_stock[op->node] = true;
		break;
	}
	case K_FREE_STOCK:
		pcstock_counter_free_stock(o);
		k->free_stock(kc);
		w->has_stock[op->node] = false;
		break;
	case K_CANCEL:
		pcstock_counter_cancel(o, a);
		k->cancel(kc, a);
		break;
	case K_UNCHARGE:
		/*
		 * Given up before the call: an operation run inside it
		 * (--migrate) must not count the pages as held any more.
		 */
		w->held[op->node] -= a < w->held[op->node] ?
					     a : w->held[op->node];
		w->kheld[op->node] -= ka < w->kheld[op->node] ?
					      ka : w->kheld[op->node];
		pcstock_counter_uncharge(o, a);
		k->uncharge(kc, ka);
		break;
	case K_SET_MAX: {
		int r = pcstock_counter_set_max(o, a), kr = k->set_max(kc, a);

		op->ret = (unsigned long)r;
		if (r != kr && !w->migrate)
			DIVERGE(w, "returned kernel %d, pcstock %d", kr, r);
		break;
	}
	case K_XCHG_MAX: {
		unsigned long r = pcstock_counter_xchg_max(o, a);
		unsigned long kr = k->xchg_max(kc, a);

		op->ret = r;
		if (r != kr && !w->migrate)
			DIVERGE(w, "returned kernel %lu, pcstock %lu", kr, r);
		break;
	}
	case K_SET_MIN:
		pcstock_counter_set_min(o, a);
		k->set_min(kc, a);
		break;
	case K_SET_LOW:
		pcstock_counter_set_low(o, a);
		k->set_low(kc, a);
		break;
	case K_SET_HIGH:
		pcstock_counter_set_high(o, a);
		k->set_high(kc, a);
		break;
	case K_RESET_WM:
		pcstock_counter_reset_watermark(o);
		k->reset_watermark(kc);
		break;
	case K_RESET_LOCAL_WM:
		pcstock_counter_reset_local_watermark(o);
		k->reset_local_watermark(kc);
		break;
	case K_RESET_FAILCNT:
		pcstock_counter_reset_failcnt(o);
		k->reset_failcnt(kc);
		break;
	case K_CALC_PROT:
		/* Parents have lower indexes: index order is top-down. */
		for (i = op->node; i < w->cs->n; i++) {
			int p = (int)i;

			while (p >= 0 && p != op->node)
				p = w->cs->parent[p];
			if (p >= 0 && !calc_step(w, op->node, i, op->flag))
				return false;
		}
		break;
	case K_EFF_PROT: {
		unsigned long r = pcstock_effective_protection(
			op->v[0], op->v[1], op->v[2], op->v[3], op->v[4],
			op->flag);
		unsigned long kr = k->effective_protection(
			op->v[0], op->v[1], op->v[2], op->v[3], op->v[4],
			op->flag);

		if (!prot_agree(w, op->v, op->flag, kr, r))
			DIVERGE(w, "returned kernel %lu, pcstock %lu", kr, r);
		break;
	}
	}
	return true;
}

/*
 * Stock runs: each side's conservation (a counter's usage is what callers
 * hold in its subtree plus its subtree's stock), no negative kernel slot;
 * unless --migrate, the slots compared too.
 */
static bool compare_stock(struct kc_world *w)
{
	unsigned long stock[KC_MAX_NODES], want[KC_MAX_NODES] = { 0 };
	unsigned long ostock[KC_MAX_NODES], owant[KC_MAX_NODES] = { 0 };
	unsigned int i, cpu;
	int p;

	for (i = 0; i < w->cs->n; i++) {
		ostock[i] = pcstock_counter_stock_pages(&w->ours[i]);
		stock[i] = 0;
		for (cpu = 0; cpu < KC_CPUS; cpu++) {
			long slot = w->k->stock_pages(w->kc[i], cpu);

			if (slot < 0)
				DIVERGE(w, "n%u stock slot of cpu %u: %ld"
					" pages (kernel side)", i, cpu, slot);
			if (slot * (long)w->max_slot_batch >
			    w->max_slot * (long)w->cs->batch) {
				w->max_slot = slot;
				w->max_slot_batch = w->cs->batch;
			}
			stock[i] += (unsigned long)slot;
		}
		if (stock[i] != ostock[i] && !w->migrate)
			DIVERGE(w, "n%u stock: kernel %lu, pcstock %lu", i,
				stock[i], ostock[i]);
		for (p = (int)i; p >= 0; p = w->cs->parent[p]) {
			want[p] += w->kheld[i] + stock[i];
			owant[p] += w->held[i] + ostock[i];
		}
	}
	for (i = 0; i < w->cs->n; i++) {
		if (w->k->read(w->kc[i]) != want[i])
			DIVERGE(w, "conservation: n%u usage %lu, held + stock"
				" %lu (kernel side)", i, w->k->read(w->kc[i]),
				want[i]);
		if (pcstock_counter_read(&w->ours[i]) != owant[i])
			DIVERGE(w, "conservation: n%u usage %lu, held + stock"
				" %lu (pcstock side)", i,
				pcstock_counter_read(&w->ours[i]), owant[i]);
	}
	return true;
}

#define CMP(field, ours_val)                                                 \
	do {                                                                 \
		unsigned long o_ = (unsigned long)(ours_val);                \
		unsigned long k_ = (unsigned long)ks.field;                  \
		if (o_ != k_ && w->ex && w->nex < KC_MAX_EXPECT)             \
			w->ex[w->nex++] = (struct kc_expect){ i, #field,     \
							      k_, o_ };      \
		else if (o_ != k_ && !w->ex)                                 \
			DIVERGE(w, "n%u.%s: kernel %lu, pcstock %lu", i,     \
				#field, k_, o_);                             \
	} while (0)

/* Every field of every counter, and the warning counts. */
static bool compare(struct kc_world *w)
{
	unsigned long kw = w->k->warn_count(), ow = pcstock_warn_count();
	unsigned int i;

	/* --migrate: the sides differ by design; each keeps the invariants. */
	if (w->migrate) {
		if (kw || ow)
			DIVERGE(w, "underflow warnings: kernel %lu, pcstock"
				" %lu", kw, ow);
		return compare_stock(w);
	}
	for (i = 0; i < w->cs->n; i++) {
		const struct pcstock_counter *o = &w->ours[i];
		struct kpc_snap ks;

		w->k->snap(w->kc[i], &ks);
		CMP(usage, pcstock_counter_read(o));
		CMP(failcnt, pcstock_counter_failcnt(o));
		CMP(emin, pcstock_counter_emin(o));
		CMP(elow, pcstock_counter_elow(o));
		CMP(min_usage, pcstock_counter_min_usage(o));
		CMP(children_min_usage, pcstock_counter_children_min_usage(o));
		CMP(low_usage, pcstock_counter_low_usage(o));
		CMP(children_low_usage, pcstock_counter_children_low_usage(o));
		CMP(watermark, pcstock_counter_watermark(o));
		if (!ADJ(w, KC_ADJ_NO_LOCAL_WATERMARK))
			CMP(local_watermark,
			    pcstock_counter_local_watermark(o));
		CMP(max, pcstock_counter_max(o));
		CMP(high, pcstock_counter_high(o));
		CMP(min, pcstock_counter_min(o));
		CMP(low, pcstock_counter_low(o));
		CMP(protection_support, pcstock_counter_protection_support(o));
	}
	if (kw != ow)
		DIVERGE(w, "underflow warnings: kernel %lu, pcstock %lu", kw,
			ow);
	return !w->stock_run || compare_stock(w);
}

/* ---- running operations, nested ones (--migrate) and crashes ---- */

static bool run_op(struct kc_world *w, unsigned int idx);

/*
 * Allocating and freeing a stock have no concurrent stocked call on the
 * counter (the series frees it with the memcg, pcstock says so in its
 * contract): they never run inside another operation, nor another
 * inside them.
 */
static bool alone(const struct kc_op *op)
{
	return op->kind == K_ALLOC_STOCK || op->kind == K_FREE_STOCK;
}

/*
 * The kernel's code reached a preemption point (kpc.h): if the next
 * operation is planned inside the innermost running one at this point,
 * run it now, on its CPU (another CPU's when preemption is disabled),
 * then let the interrupted one resume on the CPU the plan says.  A
 * divergence in it stays in w->what for the caller to see.
 */
static void on_point(bool preemptible, void *arg)
{
	struct kc_world *w = arg;
	unsigned int in, back, from = w->cpu;
	struct kc_op *op;

	if (!w->depth || w->what[0])
		return;
	w->stack[w->depth - 1].points++;
	if (w->next >= w->nops ||
	    w->next != w->stack[w->depth - 1].idx + 1 ||
	    w->depth >= sizeof(w->stack) / sizeof(w->stack[0]))
		return;
	op = &w->ops[w->next];
	if (op->at != w->stack[w->depth - 1].points ||
	    alone(op) || alone(&w->ops[w->stack[w->depth - 1].idx]))
		return;
	in = op->cpu_in;
	back = op->cpu_back;
	if (!preemptible) {
		if (in == from)
			in = (from + 1) % KC_CPUS;
		back = from;
	}
	if (w->freeze) {
		op->cpu_in = (unsigned char)in;
		op->cpu_back = (unsigned char)back;
		op->ran = back != from ? 2 : 1;
	}
	if (w->count) {
		w->nested++;
		w->migrations += back != from;
	}
	set_cpu(w, in);
	run_op(w, w->next);
	set_cpu(w, back);
}

/* Run operation @idx (and any planned inside it); false on divergence. */
static bool run_op(struct kc_world *w, unsigned int idx)
{
	bool ok;

	w->stack[w->depth].idx = idx;
	w->stack[w->depth].points = 0;
	w->depth++;
	w->next = idx + 1;
	if (w->freeze && !w->ops[idx].ran)
		w->ops[idx].at = 0;
	ok = apply(w, &w->ops[idx], w->freeze);
	w->depth--;
	return ok && !w->what[0];
}

/* Catch the crash signals for the run; @old keeps what was there. */
static void crash_catch(struct kc_world *w, struct sigaction *old)
{
	struct sigaction sa;
	unsigned int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	crash_world = w;
	for (i = 0; i < KC_NR_CRASH_SIGNALS; i++)
		sigaction(crash_signals[i], &sa, &old[i]);
}

static void crash_release(const struct sigaction *old)
{
	unsigned int i;

	for (i = 0; i < KC_NR_CRASH_SIGNALS; i++)
		sigaction(crash_signals[i], &old[i], NULL);
	crash_world = NULL;
}

/* ---- generation ---- */

static void gen_tree(struct kc_case *cs, uint64_t *rs, unsigned int adj)
{
	bool track_flag = !(adj & (1U << KC_ADJ_TRACK_FAILCNT));
	bool prot_flag = !(adj & (1U << KC_ADJ_PROTECTION_SUPPORT));
	unsigned int depth_max = 1 + kc_below(rs, 6), level_start = 0;
	unsigned int fanout = 1 + kc_below(rs, 5), level_end, depth, i;
	bool prot_all = kc_below(rs, 4) != 0;

	cs->n = 1;
	cs->parent[0] = -1;
	/* Depth counts levels: depth 1 is a lone root. */
	for (depth = 1; depth < depth_max; depth++) {
		level_end = cs->n;
		for (i = level_start; i < level_end; i++) {
			unsigned int kids = 1 + kc_below(rs, fanout);

			while (kids-- && cs->n < KC_MAX_NODES)
				cs->parent[cs->n++] = (int)i;
		}
		level_start = level_end;
	}
	for (i = 0; i < cs->n; i++) {
		cs->prot[i] = !prot_flag || prot_all || kc_below(rs, 2);
		cs->track[i] = track_flag ? kc_below(rs, 2) : true;
	}
}

/* A page count: mostly small, sometimes near a level's limit, rarely huge. */
static void gen_pages(struct kc_op *op, uint64_t *rs)
{
	switch (kc_below(rs, 16)) {
	case 0:
		op->v[0] = 0;
		break;
	case 1:
	case 2:
		op->rel = R_ROOM;
		op->v[0] = kc_below(rs, 3) - 1;
		break;
	case 3:
		op->rel = R_USAGE;
		op->v[0] = kc_below(rs, 3) - 1;
		break;
	case 4:
		op->v[0] = 1UL << kc_below(rs, 40);
		break;
	default:
		op->v[0] = 1 + kc_below(rs, kc_below(rs, 2) ? 8 : 200);
		break;
	}
}

/* A setting: limits and protection near the usage, or the extremes. */
static void gen_setting(struct kc_op *op, uint64_t *rs,
			const struct kc_world *w)
{
	unsigned long usage = pcstock_counter_read(&w->ours[op->node]);

	switch (kc_below(rs, 10)) {
	case 0:
		op->v[0] = PCSTOCK_COUNTER_MAX;
		break;
	case 1:
		op->v[0] = kc_below(rs, 2) ? ULONG_MAX :
					     PCSTOCK_COUNTER_MAX + 1;
		break;
	case 2:
		op->v[0] = 0;
		break;
	case 3:
	case 4:
	case 5:
		op->rel = R_USAGE;
		op->v[0] = kc_below(rs, 5) - 2;
		break;
	default:
		op->v[0] = kc_below(rs, 2 * usage + 64);
		break;
	}
}

static unsigned long gen_prot_arg(uint64_t *rs)
{
	switch (kc_below(rs, 6)) {
	case 0:
		return 0;
	case 1:
		return PCSTOCK_COUNTER_MAX - kc_below(rs, 4);
	case 2:
		return kc_rand(rs);
	default:
		return kc_below(rs, 1000);
	}
}

static void gen_op(struct kc_op *op, uint64_t *rs, const struct kc_world *w)
{
	static const unsigned char plain[K_NR] = {
		[K_CHARGE] = 12, [K_TRY] = 20, [K_CANCEL] = 3,
		[K_UNCHARGE] = 12, [K_SET_MAX] = 8, [K_XCHG_MAX] = 4,
		[K_SET_MIN] = 5, [K_SET_LOW] = 5, [K_SET_HIGH] = 2,
		[K_RESET_WM] = 2, [K_RESET_LOCAL_WM] = 2,
		[K_RESET_FAILCNT] = 1, [K_CALC_PROT] = 6, [K_EFF_PROT] = 4,
	};
	/* Stock runs: no cancel (it breaks conservation by design). */
	static const unsigned char stocked[K_NR] = {
		[K_CHARGE] = 4, [K_TRY] = 6, [K_UNCHARGE] = 14,
		[K_SET_MAX] = 6, [K_XCHG_MAX] = 2, [K_SET_MIN] = 2,
		[K_RESET_WM] = 1, [K_CALC_PROT] = 2, [K_CPU] = 8,
		[K_STOCK_CHARGE] = 30, [K_DRAIN] = 6, [K_FREE_STOCK] = 3,
	};
	unsigned char weights[K_NR];
	unsigned int total = 0, pick, i;

	/* No operation whose kernel function the tree lacks. */
	memcpy(weights, w->stock_run ? stocked : plain, sizeof(weights));
	/* --migrate: no protection walk (the sides' usages differ). */
	if (w->migrate)
		weights[K_CALC_PROT] = 0;
	if (ADJ(w, KC_ADJ_NO_LOCAL_WATERMARK))
		weights[K_RESET_LOCAL_WM] = 0;
	if (ADJ(w, KC_ADJ_NO_CALC_PROTECTION))
		weights[K_CALC_PROT] = weights[K_EFF_PROT] = 0;
	for (i = 0; i < K_NR; i++)
		total += weights[i];
	pick = kc_below(rs, total);
	for (i = 0; pick >= weights[i]; i++)
		pick -= weights[i];
	memset(op, 0, sizeof(*op));
	op->kind = (unsigned char)i;
	op->node = (unsigned char)kc_below(rs, w->cs->n);
	op->flag = kc_below(rs, 2);
	/* Free a stock, or give a counter without one a stock. */
	if (op->kind == K_FREE_STOCK && !w->has_stock[op->node]) {
		op->kind = K_ALLOC_STOCK;
		op->flag = !kc_below(rs, 4);	/* alloc_percpu() fails */
	}
	switch (op->kind) {
	case K_CHARGE:
	case K_TRY:
		/*
		 * Stock runs charge positive amounts only: a charge that
		 * wraps usage negative is clamped by the next uncharge, which
		 * breaks conservation by design.
		 */
		if (w->stock_run)
			op->v[0] = kc_below(rs, 8) ?
				kc_below(rs, 3 * w->cs->batch + 2) :
				1UL << kc_below(rs, 40);
		else
			gen_pages(op, rs);
		break;
	case K_STOCK_CHARGE:
		op->v[0] = kc_below(rs, 4) ? 1 + kc_below(rs, 8) :
			   kc_below(rs, 3 * w->cs->batch + 2);
		if (!kc_below(rs, 8))
			op->v[0] = 1UL << kc_below(rs, 40);
		break;
	case K_CPU:
		op->v[0] = kc_below(rs, KC_CPUS);
		break;
	case K_DRAIN:
		op->v[1] = kc_below(rs, KC_CPUS);
		break;
	case K_UNCHARGE:
		if (w->stock_run) {	/* never more than is held */
			op->rel = R_HELD;
			op->v[0] = 1 + kc_below(rs, 2 * w->cs->batch + 8);
			break;
		}
		__attribute__((fallthrough));
	case K_CANCEL:
		/* Mostly what is there; an underflow now and then. */
		if (kc_below(rs, 8)) {
			op->v[0] = kc_below(rs, pcstock_counter_read(
						    &w->ours[op->node]) + 1);
		} else {
			op->rel = R_USAGE;
			op->v[0] = 1 + kc_below(rs, 4);
		}
		break;
	case K_SET_MAX:
	case K_XCHG_MAX:
	case K_SET_MIN:
	case K_SET_LOW:
	case K_SET_HIGH:
		gen_setting(op, rs, w);
		break;
	case K_EFF_PROT:
		for (i = 0; i < 5; i++)
			op->v[i] = gen_prot_arg(rs);
		break;
	default:
		break;
	}
}

/*
 * --migrate: plan @op to run inside the operation before it, at one of
 * its first preemption points, half the time.
 */
static void gen_plan(struct kc_op *op, uint64_t *rs)
{
	if (kc_below(rs, 2))
		return;
	op->at = (unsigned char)(1 + kc_below(rs, 8));
	op->cpu_in = (unsigned char)kc_below(rs, KC_CPUS);
	op->cpu_back = (unsigned char)kc_below(rs, KC_CPUS);
}

/*
 * Run @nops operations of @cs from fresh counters, a crash caught; with
 * @rs, generate them first, one by one (with --migrate one ahead, so that
 * an operation can run inside the one before), counting them in @r.
 * Return: the index of the last operation started when the sides first
 * differ or the code crashes (w->crashed), or -1.
 */
static int run(struct kc_world *w, const struct kpc_unit *k,
	       const struct kc_case *cs, struct kc_op *ops, unsigned int nops,
	       bool freeze, uint64_t *rs, struct kc_result *r)
{
	unsigned int i;

	world_init(w, k, cs);
	w->ops = ops;
	/* Those there: all an operation may run inside another. */
	w->nops = rs ? 0 : nops;
	w->freeze = freeze;
	w->next = 0;
	w->gen = 0;
	for (i = 0; freeze && i < nops; i++)
		ops[i].ran = 0;
	if (sigsetjmp(crash_jmp, 1)) {
		crash_what(w);
		return w->next ? (int)w->next - 1 : 0;
	}
	crash_armed = 1;
	if (w->migrate)
		k->set_preempt_hook(on_point, w);
	if (!compare(w)) {
		crash_armed = 0;
		return 0;
	}
	while (w->next < nops) {
		while (rs && w->gen < nops && w->gen <= w->next + w->migrate) {
			gen_op(&ops[w->gen], rs, w);
			if (w->gen > w->next)
				gen_plan(&ops[w->gen], rs);
			w->nops = ++w->gen;
			r->ops++;
		}
		if (!run_op(w, w->next) || !compare(w)) {
			crash_armed = 0;
			return (int)w->next - 1;
		}
	}
	crash_armed = 0;
	return -1;
}

static int replay(struct kc_world *w, const struct kpc_unit *k,
		  const struct kc_case *cs, struct kc_op *ops,
		  unsigned int nops, bool freeze)
{
	return run(w, k, cs, ops, nops, freeze, NULL, NULL);
}

/* ---- shrinking and printing ---- */

/* Remove chunks of operations while the case still diverges. */
static unsigned int shrink(struct kc_world *w, const struct kpc_unit *k,
			   const struct kc_case *cs, struct kc_op *ops,
			   unsigned int n)
{
	struct kc_op trial[KC_CASE_OPS];
	unsigned int chunk, at;
	bool progress = true, crash = w->crashed;
	int d;

	while (progress) {
		progress = false;
		for (chunk = n / 2 ? n / 2 : 1; chunk; chunk /= 2) {
			for (at = 0; at + chunk <= n;) {
				unsigned int m = n - chunk;

				memcpy(trial, ops, at * sizeof(*ops));
				memcpy(trial + at, ops + at + chunk,
				       (n - at - chunk) * sizeof(*ops));
				d = replay(w, k, cs, trial, m, false);
				/* A crash shrinks to a crash. */
				if (d >= 0 && w->crashed == crash) {
					n = (unsigned int)d + 1;
					memcpy(ops, trial, n * sizeof(*ops));
					progress = true;
				} else {
					at++;
				}
			}
		}
	}
	return n;
}

static void print_op(FILE *f, unsigned int i, const struct kc_op *op)
{
	fprintf(f, "  %2u: %s", i + 1, kc_kind_name[op->kind]);
	switch (op->kind) {
	case K_RESET_WM:
	case K_RESET_LOCAL_WM:
	case K_RESET_FAILCNT:
	case K_FREE_STOCK:
		fprintf(f, " n%u", op->node);
		break;
	case K_CALC_PROT:
		fprintf(f, " root=n%u recursive=%d", op->node, op->flag);
		break;
	case K_CPU:
		fprintf(f, " %lu", op->v[0]);
		break;
	case K_DRAIN:
		fprintf(f, " n%u cpu %lu", op->node, op->v[1]);
		break;
	case K_ALLOC_STOCK:
		fprintf(f, " n%u%s", op->node,
			op->flag ? " (alloc_percpu() fails)" : "");
		break;
	case K_EFF_PROT:
		fprintf(f, "(usage=%lu, parent_usage=%lu, setting=%lu, "
			"parent_effective=%lu, siblings_protected=%lu, "
			"recursive=%d)", op->v[0], op->v[1], op->v[2],
			op->v[3], op->v[4], op->flag);
		break;
	default:
		fprintf(f, " n%u %lu%s", op->node, op->v[0],
			op->rel == R_HELD ? " (at most held)" : "");
		break;
	}
	if (op->ran)
		fprintf(f, "  [inside %u, at its preemption point %u,"
			" on cpu %u; %u resumes on cpu %u]", i,
			op->at, op->cpu_in, i, op->cpu_back);
	fputc('\n', f);
}

static void print_repro(FILE *f, const struct kc_case *cs,
			const struct kc_op *ops, unsigned int n,
			const char *what)
{
	bool shown[KC_MAX_NODES];
	unsigned int i;

	kc_case_shown(cs, ops, n, shown);
	if (cs->batch) {
		fprintf(f, "stock run: batch %u, %u CPUs, starting on CPU 0;"
			" stocked at the start:", cs->batch, KC_CPUS);
		for (i = 0; i < cs->n; i++)
			if (shown[i] && cs->stocked[i])
				fprintf(f, " n%u", i);
		fprintf(f, " (the others shown have no stock)\n");
	}
	fprintf(f, "reproducer (%u operations):\n  tree:", n);
	for (i = 0; i < cs->n; i++) {
		if (!shown[i])
			continue;
		if (cs->parent[i] < 0)
			fprintf(f, " n%u(root", i);
		else
			fprintf(f, " n%u(<n%d", i, cs->parent[i]);
		fprintf(f, "%s%s)", cs->prot[i] ? ",prot" : "",
			cs->track[i] ? ",failcnt" : "");
	}
	fprintf(f, " (%u counters in all)\n", cs->n);
	for (i = 0; i < n; i++)
		print_op(f, i, &ops[i]);
	if (!strncmp(what, "CRASH", 5))
		fprintf(f, "  crashes in operation %u: %s\n", n, what);
	else
		fprintf(f, "  diverges after operation %u: %s\n", n, what);
}

/* Write @n operations of @cs where --repro-out and --kunit-out ask. */
static void write_out(struct kc_world *w, const struct kpc_unit *k,
		      const struct kc_opts *o, const struct kc_case *cs,
		      unsigned int n)
{
	struct kc_expect ex[KC_MAX_EXPECT];
	FILE *f;

	if (o->repro_out) {
		f = fopen(o->repro_out, "w");
		if (!f) {
			perror(o->repro_out);
		} else {
			kc_repro_write(f, k, cs, cs->ops, n, w->migrate,
				       w->what);
			fclose(f);
		}
	}
	if (!o->kunit_out)
		return;
	/* The frozen replay's end state: every field that differs. */
	w->ex = ex;
	w->nex = 0;
	if (!w->crashed)
		compare(w);
	w->ex = NULL;
	f = fopen(o->kunit_out, "w");
	if (!f) {
		perror(o->kunit_out);
		return;
	}
	if (!kc_kunit_write(f, k, cs, cs->ops, n, ex, w->nex, w->what)) {
		fclose(f);
		remove(o->kunit_out);
		return;
	}
	fclose(f);
}

/*
 * The first divergence or crash of a run, the last @n operations of @cs
 * started when it showed: shrunk, replayed frozen (absolute amounts),
 * printed, kept in r->report and written out.
 */
static void report(struct kc_world *w, const struct kpc_unit *k,
		   const struct kc_opts *o, struct kc_result *r,
		   struct kc_case *cs, unsigned int n)
{
	bool crash = w->crashed;
	size_t len = 0;
	FILE *f;

	/* Replays count nothing: the case's count is in already. */
	w->expected = NULL;
	w->count = false;
	n = shrink(w, k, cs, cs->ops, n);
	replay(w, k, cs, cs->ops, n, true);
	r->repro_len = n;
	f = open_memstream(&r->report, &len);
	if (!f)
		abort();
	fprintf(f, "%s in case %lu (seed %llu)\n",
		crash ? "CRASH" : "DIVERGENCE", r->cases,
		(unsigned long long)o->seed);
	print_repro(f, cs, cs->ops, n, w->what);
	fclose(f);
	fputs(r->report, o->out);
	write_out(w, k, o, cs, n);
}

/* --replay FILE: one case, read from the file; 1 if it diverges. */
static int replay_file(struct kc_world *w, const struct kpc_unit *k,
		       const struct kc_opts *o, struct kc_result *r,
		       struct kc_case *cs)
{
	FILE *f = fopen(o->replay, "r");
	bool migrate;
	int d;

	if (!f) {
		perror(o->replay);
		return 2;
	}
	d = kc_repro_read(f, cs, &migrate);
	fclose(f);
	if (d) {
		fprintf(stderr, "pcstock-kcheck: %s is no reproducer\n",
			o->replay);
		return 2;
	}
	if ((migrate || cs->batch) && !w->d) {
		fprintf(stderr, "pcstock-kcheck: %s needs the stock series\n",
			o->replay);
		return 2;
	}
	w->migrate = migrate;
	w->expected = r->expected;
	d = run(w, k, cs, cs->ops, cs->nops, false, NULL, NULL);
	r->cases = 1;
	r->ops = cs->nops;
	r->stock_cases = cs->batch != 0;
	if (d < 0) {
		fprintf(o->out, "replayed %s: %u operations, no divergence\n",
			o->replay, cs->nops);
		return 0;
	}
	r->divergences = 1;
	r->crashes = w->crashed;
	report(w, k, o, r, cs, (unsigned int)d + 1);
	return 1;
}

int kc_oracle_run(const struct kpc_unit *k, const struct kc_opts *o,
		  struct kc_result *r)
{
	double deadline = o->seconds > 0 ? kc_now() + o->seconds : 0;
	struct kc_case *cs = calloc(1, sizeof(*cs));
	struct kc_world w = { 0 };
	uint64_t rs = o->seed * 2654435761ULL + 0x9e3779b97f4a7c15ULL;
	struct sigaction old[KC_NR_CRASH_SIGNALS];
	int ret = 0;

	w.ours = kc_alloc(_Alignof(struct pcstock_counter),
			  KC_MAX_NODES * sizeof(struct pcstock_counter));
	w.kmem = kc_alloc(k->counter_align, KC_MAX_NODES *
			  (k->counter_size + k->counter_align));
	if (!cs)
		abort();
	w.adj = kc_adjustments(k);
	if (k->features & KPC_F_STOCK) {
		struct pcstock_domain_attr da = { .nr_cpus = KC_CPUS,
						  .mode = PCSTOCK_CPU_SIM };

		if (pcstock_domain_create(&da, &w.d))
			abort();
		k->set_cpus(KC_CPUS);
	}
	w.migrate = o->migrate && w.d;
	w.max_slot_batch = 1;
	crash_catch(&w, old);
	if (o->replay) {
		ret = replay_file(&w, k, o, r, cs);
		goto out;
	}
	while (r->ops < o->ops || (deadline && kc_now() < deadline)) {
		unsigned int i;
		int d;

		gen_tree(cs, &rs, w.adj);
		/*
		 * With the series, every other case is a stock run (every
		 * case with --migrate); a counter in four starts without a
		 * stock.
		 */
		cs->batch = w.d && (r->cases % 2 || w.migrate) ?
				    1 + kc_below(&rs, 16) : 0;
		for (i = 0; i < cs->n; i++)
			cs->stocked[i] = kc_below(&rs, 4) != 0;
		if (cs->batch)
			r->stock_cases++;
		w.expected = r->expected;
		w.count = true;
		cs->nops = KC_CASE_OPS;
		d = run(&w, k, cs, cs->ops, cs->nops, false, &rs, r);
		r->cases++;
		if (d < 0)
			continue;
		r->divergences++;
		r->crashes += w.crashed;
		report(&w, k, o, r, cs, (unsigned int)d + 1);
		ret = 1;
		break;
	}
out:
	crash_release(old);
	r->nested = w.nested;
	r->migrations = w.migrations;
	r->max_slot = w.max_slot;
	r->max_slot_batch = w.max_slot_batch;
	k->set_preempt_hook(NULL, NULL);
	world_release_stocks(&w, k);
	if (w.d) {
		pcstock_cpu_exit(w.d);
		pcstock_domain_destroy(w.d);
	}
	free(w.ours);
	free(w.kmem);
	free(cs);
	return ret;
}
