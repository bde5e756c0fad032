// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_wmm.c - the explorer's weak-memory mode: an operational model of
 * C11 atomics in the style of RC11's view-based semantics.
 *
 * A library built with PCSTOCK_EXPLORE_WMM (src/atomic.h) hands every
 * atomic access to pcstock_explore_wmm() after its scheduling point.  An
 * access by an explored thread, with --weak, goes through the model:
 *
 *  - Each location (found by address; 1, 2, 4 or 8 bytes: ints, bools,
 *    pointers) keeps its modification order: the list of values stored to
 *    it, each numbered by its position (its timestamp).  A store always
 *    goes to the end of that order, which is the order the stores ran in.
 *  - Each explored thread keeps a view: per location, the oldest
 *    timestamp it may still read.  Its own stores and every value it reads
 *    move its view forward (coherence).
 *  - A relaxed or acquire load reads any value not older than its view;
 *    which one is a decision drawn from the schedule's decision source, so
 *    a seed names the values read as well as the interleaving and replays
 *    both.  Memory itself always holds the newest value.
 *  - A release store (or RMW) attaches the storing thread's view to the
 *    value; an acquire load (or RMW) that reads it joins that view into its
 *    own: release/acquire synchronisation.  A relaxed store attaches the
 *    view of its thread's last release fence; a relaxed load adds the view
 *    it read to its thread's pending acquire view, which an acquire fence
 *    joins.  An RMW passes on the view of the value it replaced, so a
 *    release sequence made of RMWs keeps synchronising.
 *  - RMWs (and a CAS, failing or not) read the newest value.
 *  - seq_cst accesses are acquire and release, and run in one total order
 *    S, the order they ran in.  A global SC view records, per location,
 *    the newest seq_cst store or RMW to it, and everything a seq_cst fence
 *    has seen.  A seq_cst load reads any value not older than its view and
 *    that SC view: never a value older than a seq_cst store before it in
 *    S (RC11's psc would have a cycle), but, as C11 allows, possibly an
 *    older value than a relaxed or release store its own or another
 *    thread made before some seq_cst access.  A seq_cst access is not a
 *    fence: it adds only its own store to the SC view.  A seq_cst fence
 *    joins the SC view into its thread's view and back.
 *
 * What the model leaves out (each makes it report fewer weak outcomes,
 * never more):
 *  - load buffering and out-of-thin-air values: a load never reads a store
 *    that has not run yet (no promises);
 *  - a failing CAS always reads the newest value;
 *  - plain (non-atomic) accesses are not modelled at all: they see memory
 *    as it is, the newest value.  A plain or untracked write to a tracked
 *    location (an initialising memset, atomic_init, a write by a thread
 *    the explorer does not schedule) is found at the next access, when
 *    memory no longer holds the newest value the model knows: it becomes a
 *    base value every thread sees, and older values are forgotten;
 *  - accesses by threads the explorer does not schedule (the main thread's
 *    setup and checks, liburcu's call_rcu thread) act on memory directly;
 *    a location's first value is what memory holds when it is first
 *    accessed in a schedule, visible to every thread.
 *  - the model keeps every location's history for the whole schedule, so
 *    memory freed and reused within one schedule keeps its old values
 *    readable unless a plain write changed it (the scenarios free in
 *    teardown).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "explore.h"

#define MAX_LOCS 1024
#define HASH_SIZE 4096		/* a power of two, > 2 * MAX_LOCS */
#define NO_VIEW 0

struct msg {
	uint64_t val;
	uint32_t view;		/* NO_VIEW, or pool offset + 1 */
	uint32_t view_len;
};

struct loc {
	uintptr_t addr;
	size_t size;
	uint32_t first;		/* the oldest value still readable */
	uint32_t nr, cap;
	struct msg *msg;
};

static struct {
	unsigned int nr_locs;
	struct loc loc[MAX_LOCS];
	uint16_t hash[HASH_SIZE];		/* location + 1; 0: free */
	uint32_t cur[EXPLORE_MAX_THREADS][MAX_LOCS];
	uint32_t acq[EXPLORE_MAX_THREADS][MAX_LOCS];	/* pending acquire */
	uint32_t rel[EXPLORE_MAX_THREADS][MAX_LOCS];	/* last release fence */
	bool rel_set[EXPLORE_MAX_THREADS];
	uint32_t sc[MAX_LOCS];
	uint32_t *pool;
	size_t pool_len, pool_cap;
} W;

void explore_wmm_reset(void)
{
	unsigned int n = W.nr_locs, t;

	for (t = 0; t < EXPLORE_MAX_THREADS; t++) {
		memset(W.cur[t], 0, n * sizeof(uint32_t));
		memset(W.acq[t], 0, n * sizeof(uint32_t));
		memset(W.rel[t], 0, n * sizeof(uint32_t));
		W.rel_set[t] = false;
	}
	memset(W.sc, 0, n * sizeof(uint32_t));
	memset(W.hash, 0, sizeof(W.hash));
	W.nr_locs = 0;
	W.pool_len = 0;
}

/* ---- memory itself ------------------------------------------------------- */

/*
 * Memory is accessed seq_cst whatever the model's order: the model decides
 * what a thread may see, and the strongest real order keeps TSan (which
 * sees these accesses) from reporting what the baton already orders.
 */
#define MEM_CASE(bits, expr)                                                 \
	case (bits) / 8: {                                                   \
		uint##bits##_t *p_ = obj;                                    \
		(void)p_;                                                    \
		expr;                                                        \
	}

static uint64_t mem_read(void *obj, size_t size)
{
	switch (size) {
	MEM_CASE(8, return __atomic_load_n(p_, __ATOMIC_SEQ_CST))
	MEM_CASE(16, return __atomic_load_n(p_, __ATOMIC_SEQ_CST))
	MEM_CASE(32, return __atomic_load_n(p_, __ATOMIC_SEQ_CST))
	MEM_CASE(64, return __atomic_load_n(p_, __ATOMIC_SEQ_CST))
	}
	explore_fail("weak memory: an atomic of unsupported size");
	return 0;
}

static void mem_write(void *obj, size_t size, uint64_t v)
{
	switch (size) {
	MEM_CASE(8, __atomic_store_n(p_, (uint8_t)v, __ATOMIC_SEQ_CST); return)
	MEM_CASE(16, __atomic_store_n(p_, (uint16_t)v, __ATOMIC_SEQ_CST); return)
	MEM_CASE(32, __atomic_store_n(p_, (uint32_t)v, __ATOMIC_SEQ_CST); return)
	MEM_CASE(64, __atomic_store_n(p_, v, __ATOMIC_SEQ_CST); return)
	}
	explore_fail("weak memory: an atomic of unsupported size");
}

static bool mem_cas(void *obj, size_t size, uint64_t *expected, uint64_t v)
{
#define CAS_CASE(bits)                                                       \
	MEM_CASE(bits, {                                                     \
		uint##bits##_t e_ = (uint##bits##_t)*expected;               \
		bool ok_ = __atomic_compare_exchange_n(p_, &e_,              \
			(uint##bits##_t)v, false, __ATOMIC_SEQ_CST,          \
			__ATOMIC_SEQ_CST);                                   \
		*expected = e_;                                              \
		return ok_;                                                  \
	})
	switch (size) {
	CAS_CASE(8)
	CAS_CASE(16)
	CAS_CASE(32)
	CAS_CASE(64)
	}
#undef CAS_CASE
	explore_fail("weak memory: an atomic of unsupported size");
	return false;
}

static uint64_t mask_of(size_t size)
{
	return size >= 8 ? ~0ULL : (1ULL << (8 * size)) - 1;
}

/* The new value of an RMW that read @old (CAS: only on success). */
static uint64_t rmw_value(enum pcs_atomic_op op, uint64_t old, uint64_t val,
			  size_t size)
{
	switch (op) {
	case PCS_OP_ADD:
		return (old + val) & mask_of(size);
	case PCS_OP_SUB:
		return (old - val) & mask_of(size);
	default:
		return val;	/* XCHG, CAS */
	}
}

/*
 * An access outside the model (unscheduled threads, checks, SC mode):
 * atomically on memory, through the same helpers.  Add and sub retry a
 * CAS: other threads may touch memory concurrently here.  An explored
 * thread's values go to its trace (SC mode) as the model's do.
 */
static int fence_word;

static uint64_t direct(enum pcs_atomic_op op, void *obj, size_t size,
		       uint64_t val, uint64_t *expected)
{
	uint64_t old, new;
	bool ok;

	switch (op) {
	case PCS_OP_FENCE:
		/*
		 * Every direct access is seq_cst; this is the full barrier
		 * for plain accesses around it (a locked instruction), and,
		 * unlike a fence, something TSan accepts.
		 */
		__atomic_fetch_add(&fence_word, 0, __ATOMIC_SEQ_CST);
		return 0;
	case PCS_OP_LOAD:
		old = mem_read(obj, size);
		explore_note(old, 0);
		return old;
	case PCS_OP_STORE:
		mem_write(obj, size, val);
		explore_note(val, 0);
		return 0;
	case PCS_OP_CAS:
		ok = mem_cas(obj, size, expected, val);
		explore_note(*expected, 0);
		if (ok)
			explore_note_write(val);
		return ok;
	default:
		old = mem_read(obj, size);
		do
			new = rmw_value(op, old, val, size);
		while (!mem_cas(obj, size, &old, new));
		explore_note(old, 0);
		explore_note_write(new);
		return old;
	}
}

/* ---- views --------------------------------------------------------------- */

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static void join(uint32_t *dst, const uint32_t *src, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		dst[i] = max_u32(dst[i], src[i]);
}

static void join_msg(uint32_t *dst, const struct msg *m)
{
	if (m->view != NO_VIEW)
		join(dst, W.pool + m->view - 1, m->view_len);
}

/* A copy of @base (NULL: empty) joined with @also's view, in the pool. */
static void attach_view(struct msg *m, const uint32_t *base,
			const struct msg *also)
{
	unsigned int n = W.nr_locs;
	uint32_t *v;

	m->view = NO_VIEW;
	m->view_len = 0;
	if (!base && (!also || also->view == NO_VIEW))
		return;
	if (W.pool_len + n > W.pool_cap) {
		size_t cap = W.pool_cap ? 2 * W.pool_cap : 1 << 16;

		while (cap < W.pool_len + n)
			cap *= 2;
		W.pool = realloc(W.pool, cap * sizeof(*W.pool));
		if (!W.pool)
			explore_fail("weak memory: out of memory");
		W.pool_cap = cap;
	}
	v = W.pool + W.pool_len;
	if (base)
		memcpy(v, base, n * sizeof(*v));
	else
		memset(v, 0, n * sizeof(*v));
	if (also)
		join_msg(v, also);
	m->view = (uint32_t)W.pool_len + 1;
	m->view_len = n;
	W.pool_len += n;
}

static bool is_acquire(memory_order mo)
{
	return mo == memory_order_acquire || mo == memory_order_acq_rel ||
	       mo == memory_order_seq_cst || mo == memory_order_consume;
}

static bool is_release(memory_order mo)
{
	return mo == memory_order_release || mo == memory_order_acq_rel ||
	       mo == memory_order_seq_cst;
}

/* ---- locations ----------------------------------------------------------- */

static struct msg *append(struct loc *l, uint64_t val)
{
	struct msg *m;

	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->msg = realloc(l->msg, l->cap * sizeof(*l->msg));
		if (!l->msg)
			explore_fail("weak memory: out of memory");
	}
	m = &l->msg[l->nr++];
	m->val = val;
	m->view = NO_VIEW;
	m->view_len = 0;
	return m;
}

/*
 * The location at @obj, created at its first access with what memory holds
 * as its first value.  If memory no longer holds the newest value the model
 * knows, a write outside the model happened: that value becomes a base
 * every thread sees.
 */
static unsigned int find_loc(void *obj, size_t size)
{
	uintptr_t a = (uintptr_t)obj;
	unsigned int h = (unsigned int)((a >> 2) * 2654435761u) &
			 (HASH_SIZE - 1);
	uint64_t now = mem_read(obj, size);
	struct loc *l;

	for (; W.hash[h]; h = (h + 1) & (HASH_SIZE - 1)) {
		l = &W.loc[W.hash[h] - 1];
		if (l->addr != a)
			continue;
		if (l->size != size)
			explore_fail("weak memory: one address accessed with "
				     "two sizes");
		if (l->msg[l->nr - 1].val != now) {
			append(l, now);
			l->first = l->nr - 1;
		}
		return W.hash[h] - 1u;
	}
	if (W.nr_locs == MAX_LOCS)
		explore_fail("weak memory: too many atomic locations");
	W.hash[h] = (uint16_t)(W.nr_locs + 1);
	l = &W.loc[W.nr_locs];
	l->addr = a;
	l->size = size;
	l->nr = 0;
	l->first = 0;
	append(l, now);
	return W.nr_locs++;
}

/* ---- the accesses -------------------------------------------------------- */

/* Read message @k of @x: coherence, then what the order synchronises. */
static const struct msg *read_msg(unsigned int t, unsigned int x, uint32_t k,
				  memory_order mo)
{
	const struct msg *m = &W.loc[x].msg[k];

	W.cur[t][x] = max_u32(W.cur[t][x], k);
	join_msg(is_acquire(mo) ? W.cur[t] : W.acq[t], m);
	explore_note(m->val, W.loc[x].nr - 1 - k);
	return m;
}

static uint64_t load(unsigned int t, unsigned int x, memory_order mo)
{
	struct loc *l = &W.loc[x];
	uint32_t lo = max_u32(W.cur[t][x], l->first), k = l->nr - 1;

	if (mo == memory_order_seq_cst)
		lo = max_u32(lo, W.sc[x]);
	if (k > lo)
		k = lo + (uint32_t)explore_pick(k - lo + 1);
	return read_msg(t, x, k, mo)->val;
}

/*
 * The model's half of a store: a new newest value of @x by @t; @read is
 * the value an RMW replaced (NULL for a plain store).  Memory is written by
 * the caller.
 */
static void add_msg(unsigned int t, unsigned int x, uint64_t val,
		    memory_order mo, const struct msg *read)
{
	struct loc *l = &W.loc[x];
	struct msg m = { .val = val };

	if (is_release(mo))
		attach_view(&m, W.cur[t], read);
	else
		attach_view(&m, W.rel_set[t] ? W.rel[t] : NULL, read);
	*append(l, val) = m;
	W.cur[t][x] = l->nr - 1;
	/* Only this store: a later seq_cst load of @x reads it or newer. */
	if (mo == memory_order_seq_cst)
		W.sc[x] = l->nr - 1;
}

static void store(unsigned int t, unsigned int x, uint64_t val,
		  memory_order mo)
{
	add_msg(t, x, val, mo, NULL);
	explore_note(val, 0);
	mem_write((void *)W.loc[x].addr, W.loc[x].size, val);
}

/*
 * An RMW reads the newest value.  Memory changes by its CAS against the
 * value the model holds newest: an unscheduled thread (liburcu's call_rcu
 * thread dropping a reference) may change it meanwhile, and then the
 * location is looked up again, which takes that write in as a base.
 */
static uint64_t rmw(unsigned int t, void *obj, size_t size,
		    enum pcs_atomic_op op, uint64_t val, uint64_t *expected,
		    memory_order mo, memory_order mo_fail)
{
	unsigned int x;
	struct msg read;
	uint64_t old, seen, new;

	do {
		x = find_loc(obj, size);
		old = W.loc[x].msg[W.loc[x].nr - 1].val;
		if (op == PCS_OP_CAS && old != *expected) {
			read_msg(t, x, W.loc[x].nr - 1, mo_fail);
			*expected = old;
			return 0;
		}
		new = rmw_value(op, old, val, size);
		seen = old;
	} while (!mem_cas(obj, size, &seen, new));
	/* A copy: appending may move the history. */
	read = *read_msg(t, x, W.loc[x].nr - 1, mo);
	add_msg(t, x, new, mo, &read);
	explore_note_write(new);
	return op == PCS_OP_CAS ? 1 : old;
}

static void fence(unsigned int t, memory_order mo)
{
	unsigned int n = W.nr_locs;

	if (is_acquire(mo))
		join(W.cur[t], W.acq[t], n);
	if (mo == memory_order_seq_cst) {
		join(W.cur[t], W.sc, n);
		join(W.sc, W.cur[t], n);
	}
	if (is_release(mo)) {
		memcpy(W.rel[t], W.cur[t], n * sizeof(uint32_t));
		W.rel_set[t] = true;
	}
}

/* ---- site coverage ------------------------------------------------------- */

#define MAX_SITES 128
#define MAX_PENDING 4

/*
 * The tags of the ordered sites (src/atomic.h, PCS_ORDER()) named since
 * this thread's last access: the access's own, evaluated with its
 * arguments, after its scheduling point (a CAS names two when its failure
 * order has a tag of its own).  Per thread: liburcu's call_rcu thread
 * makes accesses too, outside the model.
 */
struct site {
	const char *tag;
	memory_order mo;		/* the order it was given */
	bool mixed;			/* given more than one */
	unsigned long long count;
};

static __thread struct site pending[MAX_PENDING];
static __thread unsigned int nr_pending;

/* Every tag an explored thread reached in weak memory, and how often. */
static struct site sites[MAX_SITES];
static unsigned int nr_sites;

memory_order pcstock_explore_site(const char *tag, memory_order mo)
{
	unsigned int i;

	/* An invariant check's own accesses are no site's. */
	if (explore_checking())
		return mo;
	/* pcs_wmm() and pcs_fence() pass their order twice. */
	for (i = 0; i < nr_pending; i++)
		if (!strcmp(pending[i].tag, tag))
			return mo;
	if (nr_pending < MAX_PENDING) {
		pending[nr_pending].tag = tag;
		pending[nr_pending++].mo = mo;
	}
	return mo;
}

/*
 * The access being made takes this thread's pending tags; they count as
 * reached when the model handles it (@t, an explored thread in weak
 * memory, else -1), where the order can make a difference.  An invariant
 * check runs at a scheduling point, before the access's own order is
 * named, except for an order passed to a helper (counter.c's
 * add_return(), whose one access is the ordered one): the check's
 * accesses name no tag and leave the pending ones to that access.
 */
static void take_sites(int t)
{
	unsigned int i, j;

	if (explore_checking())
		return;
	for (i = 0; t >= 0 && i < nr_pending; i++) {
		for (j = 0; j < nr_sites; j++)
			if (!strcmp(sites[j].tag, pending[i].tag))
				break;
		if (j == MAX_SITES) {
			explore_fail("weak memory: too many ordered sites");
			continue;	/* PCT's calibration ignores it */
		}
		if (j == nr_sites)
			sites[nr_sites++] = pending[i];
		sites[j].mixed |= sites[j].mo != pending[i].mo;
		sites[j].count++;
	}
	nr_pending = 0;
}

static int by_tag(const void *a, const void *b)
{
	return strcmp(((const struct site *)a)->tag,
		      ((const struct site *)b)->tag);
}

void explore_site_report(void)
{
	static const char *const names[] = {
		[memory_order_relaxed] = "relaxed",
		[memory_order_consume] = "consume",
		[memory_order_acquire] = "acquire",
		[memory_order_release] = "release",
		[memory_order_acq_rel] = "acq_rel",
		[memory_order_seq_cst] = "seq_cst",
	};
	const struct site *s;
	unsigned int i;

	/* Sorted by tag, so that two runs compare line by line. */
	qsort(sites, nr_sites, sizeof(sites[0]), by_tag);
	printf("ordered sites reached in weak memory: %u\n", nr_sites);
	for (i = 0; i < nr_sites; i++) {
		s = &sites[i];
		printf("site %s %s %llu\n", s->tag,
		       s->mixed ? "mixed" : names[s->mo], s->count);
	}
}

uint64_t pcstock_explore_wmm(enum pcs_atomic_op op, void *obj, size_t size,
			     uint64_t val, uint64_t *expected,
			     memory_order mo, memory_order mo_fail)
{
	int t = explore_weak_self();

	take_sites(t);
	val &= mask_of(size);
	if (expected)
		*expected &= mask_of(size);
	if (t < 0)
		return direct(op, obj, size, val, expected);
	if (op == PCS_OP_FENCE) {
		fence((unsigned int)t, mo);
		return 0;
	}
	if (op == PCS_OP_LOAD)
		return load((unsigned int)t, find_loc(obj, size), mo);
	if (op == PCS_OP_STORE) {
		store((unsigned int)t, find_loc(obj, size), val, mo);
		return 0;
	}
	return rmw((unsigned int)t, obj, size, op, val, expected, mo,
		   mo_fail);
}
