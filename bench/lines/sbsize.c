// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sbsize.c - the store buffer's size, a reading of the calibration
 * (lines.h): how many plain stores a core holds retired but not yet
 * written to its cache.
 *
 * --lines-store-buffer bounds the stores the replay lets a CPU buffer;
 * the bound a machine wants follows from this size and from how many of
 * a workload's stores the trace sees (docs/lines-model.md).  A reading
 * built on stores to lines another core reads was tried first and given
 * up: what a store past the buffer costs there swings between 2 and 60 ns
 * with the two cores' timing, so its knee came and went.  This one needs
 * no second core and no shared line.
 *
 * The method is the one used to size a core's reorder buffer: two
 * independent chains of loads, each load missing every cache (a random
 * cycle through far more memory than the caches hold), with k plain
 * stores to one private word after each load.  A core can have the next
 * chain's load in flight while the previous one misses only if every
 * instruction between them found room; a store that retires only after
 * the missing load keeps its buffer entry until then.  So while k stores
 * fit, a round of the two loads costs about one miss, and once they do not
 * the second load waits for the first and the round costs about two.  The
 * reading is the k of sbs_tab[] before the first whose round is SBS_STEP
 * times the smallest k's or more, so at most the table's spacing (4
 * stores up to 128, 8 or 16 beyond) under the size.  It says so, and is
 * 0, not measured, where no such step shows: a chain that does not miss,
 * a buffer larger than the table, a round that rose gradually or fell
 * back below the step at a larger k.
 *
 * x86-64 only (the stores are written out in assembly, so that the
 * compiler can neither merge nor drop them); elsewhere 0.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lines.h"
#include "strategy.h"

#define SBS_CHAIN_BYTES (64UL << 20)	/* each chain's memory */
#define SBS_ROUNDS 6000L		/* rounds per try */
#define SBS_SWEEPS 5U			/* tries per k, a sweep apart */
#define SBS_STEP 1.45			/* a round that rose past this */
#define SBS_JUMP 1.25		/* and past this over the k before */
#define SBS_MISS_NS 40.0		/* a round under: the chain hit */

#if defined(__x86_64__)

#define SBS_STR2(x) #x
#define SBS_STR(x) SBS_STR2(x)

/*
 * One function per k: @rounds rounds of a load of each chain, each load
 * followed by k stores of the same register to *@word.
 */
#define SBS_FN(k)							\
static void sbs_##k(void **a, void **b, long rounds, long *word)	\
{									\
	void *p = *a, *q = *b;						\
	long v = 1, r;							\
									\
	for (r = 0; r < rounds; r++)					\
		__asm__ volatile("mov (%0), %0\n\t"			\
				 ".rept " SBS_STR(k) "\n\t"		\
				 "movq %2, (%3)\n\t"			\
				 ".endr\n\t"				\
				 "mov (%1), %1\n\t"			\
				 ".rept " SBS_STR(k) "\n\t"		\
				 "movq %2, (%3)\n\t"			\
				 ".endr"				\
				 : "+r"(p), "+r"(q)			\
				 : "r"(v), "r"(word)			\
				 : "memory");				\
	*a = p;								\
	*b = q;								\
}

#define SBS_ALL(X)							\
	X(8) X(16) X(24) X(32) X(36) X(40) X(44) X(48) X(52) X(56)	\
	X(60) X(64) X(68) X(72) X(76) X(80) X(84) X(88) X(92) X(96)	\
	X(100) X(104) X(108) X(112) X(116) X(120) X(124) X(128)	\
	X(136) X(144) X(152) X(160) X(176) X(192) X(208) X(224)	\
	X(240) X(256)

SBS_ALL(SBS_FN)

#define SBS_ENTRY(k) { k, sbs_##k },

static const struct {
	unsigned int k;
	void (*fn)(void **a, void **b, long rounds, long *word);
} sbs_tab[] = { SBS_ALL(SBS_ENTRY) };

#define SBS_NR (sizeof(sbs_tab) / sizeof(sbs_tab[0]))

/* A random cycle through @lines lines of @mem: its first line. */
static void **sbs_chain(char *mem, size_t lines, uint64_t *rng)
{
	size_t *perm = malloc(lines * sizeof(*perm)), i, j, t;
	void **first;

	if (!perm)
		return NULL;
	for (i = 0; i < lines; i++)
		perm[i] = i;
	for (i = lines - 1; i > 0; i--) {
		j = (size_t)(rng_next(rng) % (i + 1));
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (i = 0; i < lines; i++)
		*(void **)(void *)(mem + perm[i] * LM_LINE) =
			mem + perm[(i + 1) % lines] * LM_LINE;
	first = (void **)(void *)(mem + perm[0] * LM_LINE);
	free(perm);
	return first;
}

/* One try of entry @i: seconds per round. */
static double sbs_round(unsigned int i, void **a, void **b, long *word)
{
	double t = now_s();

	sbs_tab[i].fn(a, b, SBS_ROUNDS, word);
	return (now_s() - t) / SBS_ROUNDS;
}

struct sbs_arg {
	const struct opts *o;
	struct lm_sbs *r;
	int ret;
};

/*
 * The reading, on a thread bound to the run's first CPU: SBS_SWEEPS
 * sweeps over the table, each k's fastest try counting.  A sweep takes
 * each k once, so that a spell of a few tens of milliseconds in which the
 * two misses do not overlap (seen on the family 25 model 17 VM, at any k)
 * slows one try of one k, not all of them.
 */
static void *sbs_thread(void *arg)
{
	struct sbs_arg *x = arg;
	struct lm_sbs *r = x->r;
	size_t lines = SBS_CHAIN_BYTES / LM_LINE;
	uint64_t rng = x->o->seed ^ 0x5b5;
	long word[LM_LINE / sizeof(long)];
	double t[SBS_NR], ratio;
	unsigned int i, n, step = 0;
	void *a, *b;
	char *mem;

	mem = mmap(NULL, 2 * SBS_CHAIN_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		x->ret = -ENOMEM;
		return NULL;
	}
	a = sbs_chain(mem, lines, &rng);
	b = sbs_chain(mem + SBS_CHAIN_BYTES, lines, &rng);
	if (!a || !b) {
		munmap(mem, 2 * SBS_CHAIN_BYTES);
		x->ret = -ENOMEM;
		return NULL;
	}
	bind_self(x->o->os_cpus[0]);
	for (i = 0; i < SBS_NR; i++)
		t[i] = INFINITY;
	for (n = 0; n < SBS_SWEEPS; n++)
		for (i = 0; i < SBS_NR; i++)
			t[i] = fmin(t[i], sbs_round(i, &a, &b, word));
	munmap(mem, 2 * SBS_CHAIN_BYTES);
	r->base_s = t[0];
	if (!(r->base_s * 1e9 >= SBS_MISS_NS)) {
		r->why = "the chains did not miss";
		return NULL;
	}
	for (i = 1; i < SBS_NR && !step; i++)
		if (t[i] / t[0] >= SBS_STEP)
			step = i;
	if (!step) {
		r->why = "no step up to the table's end";
		return NULL;
	}
	r->step = t[step] / t[0];
	ratio = t[step] / t[step - 1];
	for (i = step + 1; i < SBS_NR; i++)
		if (t[i] / t[0] < SBS_STEP) {
			r->why = "a round rose and fell back";
			return NULL;
		}
	/* A step (SBS_JUMP over the k before), not a slow rise. */
	if (ratio < SBS_JUMP)
		r->why = "the round rose gradually";
	else if (step == 1)
		r->why = "a step at the table's second k";
	else
		r->entries = sbs_tab[step - 1].k;
	return NULL;
}

int sbs_trial(const struct opts *o, struct lm_sbs *r)
{
	struct sbs_arg x = { .o = o, .r = r };
	pthread_t tid;

	memset(r, 0, sizeof(*r));
	r->base_s = r->step = NAN;
	if (pthread_create(&tid, NULL, sbs_thread, &x))
		return -ENOMEM;
	pthread_join(tid, NULL);
	return x.ret;
}

#else	/* !__x86_64__ */

int sbs_trial(const struct opts *o, struct lm_sbs *r)
{
	(void)o;
	memset(r, 0, sizeof(*r));
	r->base_s = r->step = NAN;
	r->why = "x86-64 only";
	return 0;
}

#endif

/*
 * The run's reading, the median size over the repetitions that read one
 * (NAN, and the first repetition's reason, where none did), with the
 * base round and step of the repetition nearest that median.
 */
void sbs_derive(struct lm_run *x)
{
	struct lm_calib *c = &x->cal;
	double v[BENCH_MAX_REPS];
	unsigned int i, n = 0, near = 0;

	for (i = 0; i < x->nr_tcost; i++)
		if (x->tsbs[i].entries)
			v[n++] = x->tsbs[i].entries;
	c->sb_entries = c->sb_base_s = c->sb_step = NAN;
	c->sb_read_in = n;
	c->sb_tried = x->nr_tcost;
	if (!n) {
		snprintf(c->sb_why, sizeof(c->sb_why), "%s",
			 x->nr_tcost && x->tsbs[0].why ? x->tsbs[0].why :
			 "not taken");
		return;
	}
	c->sb_entries = median(v, n);
	for (i = 0; i < x->nr_tcost; i++)
		if (x->tsbs[i].entries &&
		    fabs(x->tsbs[i].entries - c->sb_entries) <
		    fabs(x->tsbs[near].entries - c->sb_entries))
			near = i;
	c->sb_base_s = x->tsbs[near].base_s;
	c->sb_step = x->tsbs[near].step;
	c->sb_why[0] = '\0';
}

/* The store buffer's size in a record, NAN where it has none. */
void sbs_read(const char *rec, struct lm_calib *c)
{
	double v;

	c->sb_entries = c->sb_base_s = c->sb_step = NAN;
	c->sb_read_in = c->sb_tried = 0;
	snprintf(c->sb_why, sizeof(c->sb_why), "the record has no reading");
	if (!json_num(rec, "store_buffer_entries", &v) || !(v > 0))
		return;
	c->sb_entries = v;
	c->sb_why[0] = '\0';
	if (json_num(rec, "store_buffer_base_round_ns", &v))
		c->sb_base_s = v * 1e-9;
	if (json_num(rec, "store_buffer_step", &v))
		c->sb_step = v;
}

/*
 * Every store a sock message makes, by design: valgrind's callgrind over
 * the bench's own sock run (scripts/store-buffer-bound, 2026-12-05; the
 * worker loop's data writes: the charges and uncharges, the rings, the
 * polls and the calls' frames).  The replay traces only the library's
 * and the rings' stores to shared memory, a share of what fills a core's
 * buffer; bench_lines_store_counts re-counts these with callgrind and
 * fails when one has moved by more than a fifth.  plain has none:
 * valgrind implements no rseq(2).  The counts are the compiled code's, so
 * one table per compiler: clang 14's memcg7 makes a quarter more stores
 * than gcc 12's (clang's column: 2026-12-05, the mean of five runs).
 */
static const struct {
	const char *design;
	double every;
} sb_every[] = {
#ifdef __clang__
	{ "default", 22.1 },
	{ "v4", 33.6 },
	{ "memcg7", 50.1 },
	{ "none", 43.7 },
	{ "exact", 21.6 },
#else
	{ "default", 19.8 },
	{ "v4", 31.5 },
	{ "memcg7", 39.5 },
	{ "none", 46.9 },
	{ "exact", 20.1 },
#endif
};

/*
 * The bound of @design's sock replay on the calibration @c: the traced
 * stores that fit in the buffer if each stands for every / @traced of
 * the stores filling it, rounded down (at least 1); *@every the count
 * used.  0 (no bound) where the calibration has no size or the design
 * no count.
 */
unsigned int sbs_design_bound(const struct lm_calib *c, const char *design,
			      double traced, double *every)
{
	size_t i;
	double n;

	*every = (double)NAN;
	if (!isfinite(c->sb_entries) || !(traced > 0))
		return 0;
	for (i = 0; i < sizeof(sb_every) / sizeof(sb_every[0]); i++)
		if (!strcmp(sb_every[i].design, design))
			break;
	if (i == sizeof(sb_every) / sizeof(sb_every[0]))
		return 0;
	*every = sb_every[i].every;
	n = floor(c->sb_entries * traced / sb_every[i].every);
	return n < 1 ? 1 : n > BENCH_LINES_SB_MAX ? BENCH_LINES_SB_MAX :
						    (unsigned int)n;
}
