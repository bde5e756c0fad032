// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_counter.c - libFuzzer differential test: src/counter.c against the
 * sequential model in counter_model.c.  After every operation every
 * observable of every counter, the return value, the reported fail level,
 * the underflow count and the warning handler's arguments must agree, else
 * the fuzzer prints what diverged and traps.
 *
 * Input format (bytes; a read past the end yields 0):
 *   n        1 + n % 6 counters
 *   per counter i: p, f
 *            parent = i ? p % (i + 1) - 1 : -1 (-1 is a root; parents
 *            always have lower indices, so index order is top-down);
 *            protection_support = f & 1, track_failcnt = f & 2
 *   then operations until the input ends (at most MAX_OPS):
 *   op       (op & 0x7f) % NR_OPS selects the operation, op & 0x80 asks
 *            try_charge for fail == NULL
 *   target   % n
 *   amount   for the operations that take one, see amount()
 *   calculate_protection reads a root (% n) and a recursive flag (& 1) and
 *   walks the root's subtree top-down.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pcstock/counter.h>

#include "counter_model.h"

#define MAX_OPS 256

enum op {
	OP_CHARGE,
	OP_TRY_CHARGE,
	OP_CANCEL,
	OP_UNCHARGE,
	OP_SET_MAX,
	OP_SET_MIN,
	OP_SET_LOW,
	OP_SET_HIGH,
	OP_RESET_WATERMARK,
	OP_CALCULATE_PROTECTION,
	NR_OPS
};

static const char *const op_names[NR_OPS] = {
	"charge", "try_charge", "cancel", "uncharge", "set_max", "set_min",
	"set_low", "set_high", "reset_watermark", "calculate_protection",
};

struct input {
	const uint8_t *p;
	size_t left;
};

static uint8_t next(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static uint64_t next_u64(struct input *in)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | next(in);
	return v;
}

/*
 * Mostly small page counts; sometimes a medium one; occasionally a value at
 * PCM, at the signed boundary 2^63, a "negative" 2^64 - k, or any 64 bits,
 * so that the wrapping arithmetic is exercised.
 */
static uint64_t amount(struct input *in)
{
	uint8_t sel = next(in);
	uint64_t k = sel & 31;

	switch (sel >> 5) {
	case 4:
		return (uint64_t)next(in) << 8 | next(in);
	case 5:
		return PCSTOCK_COUNTER_MAX - 16 + k;
	case 6:
		return (k & 16) ? (1ULL << 63) - 8 + (k & 15) : -(k & 15) - 1;
	case 7:
		return next_u64(in);
	default:
		return k;
	}
}

/* The state under test. */
static struct pcstock_counter ctr[MODEL_MAX_COUNTERS];
static struct model model;

static struct {
	unsigned int calls;
	const struct pcstock_counter *c;
	long value;
	unsigned long nr_pages;
} seen;

static void on_warn(const char *what, const struct pcstock_counter *c,
		    long value, unsigned long nr_pages, void *arg)
{
	seen.calls++;
	seen.c = c;
	seen.value = value;
	seen.nr_pages = nr_pages;
}

static int op_nr;
static enum op cur_op;

static void check(const char *what, int i, uint64_t impl, uint64_t want)
{
	if (impl == want)
		return;
	fprintf(stderr,
		"pcstock-fuzz: divergence after op %d (%s): counter %d %s: "
		"counter.c %llu, model %llu\n",
		op_nr, op_names[cur_op], i, what, (unsigned long long)impl,
		(unsigned long long)want);
	__builtin_trap();
}

#define CHECK_FIELD(i, field)                                                 \
	check(#field, (i), pcstock_counter_##field(&ctr[i]), model.c[i].field)

static void compare_all(void)
{
	int i;

	for (i = 0; i < model.nr; i++) {
		check("usage", i, pcstock_counter_read(&ctr[i]),
		      model.c[i].usage);
		CHECK_FIELD(i, max);
		CHECK_FIELD(i, high);
		CHECK_FIELD(i, min);
		CHECK_FIELD(i, low);
		CHECK_FIELD(i, watermark);
		CHECK_FIELD(i, local_watermark);
		CHECK_FIELD(i, failcnt);
		CHECK_FIELD(i, min_usage);
		CHECK_FIELD(i, low_usage);
		CHECK_FIELD(i, children_min_usage);
		CHECK_FIELD(i, children_low_usage);
		CHECK_FIELD(i, emin);
		CHECK_FIELD(i, elow);
	}
	check("underflow count", -1, pcstock_warn_count(), model.underflows);
	check("warning calls", -1, seen.calls, model.warn_calls);
	if (!seen.calls)
		return;
	check("warned counter", -1, (uint64_t)(seen.c - ctr),
	      (uint64_t)model.warn_counter);
	check("warned value", -1, (uint64_t)seen.value, model.warn_value);
	check("warned nr_pages", -1, seen.nr_pages, model.warn_nr);
}

static bool in_subtree(int i, int root)
{
	for (; i >= 0; i = model.c[i].parent)
		if (i == root)
			return true;
	return false;
}

static void calculate_protection(struct input *in)
{
	int root = next(in) % model.nr;
	bool recursive = next(in) & 1;
	int i;

	for (i = root; i < model.nr; i++) {
		if (!in_subtree(i, root))
			continue;
		pcstock_counter_calculate_protection(&ctr[root], &ctr[i],
						     recursive);
		model_calculate_protection(&model, root, i, recursive);
		compare_all();
	}
}

static void try_charge(int i, uint64_t nr, bool null_fail)
{
	struct pcstock_counter *fail = NULL;
	int want_fail = -1;
	bool got, want;

	got = pcstock_counter_try_charge(&ctr[i], nr, null_fail ? NULL : &fail);
	want = model_try_charge(&model, i, nr, &want_fail);
	check("try_charge result", i, got, want);
	if (null_fail || got)
		check("fail untouched", i, fail != NULL, 0);
	else
		check("fail level", i, (uint64_t)(fail - ctr),
		      (uint64_t)want_fail);
}

/* Operations taking (counter, pages) and returning nothing. */
static const struct {
	void (*impl)(struct pcstock_counter *c, unsigned long nr);
	void (*model)(struct model *m, int i, uint64_t nr);
} plain_ops[NR_OPS] = {
	[OP_CHARGE] = { pcstock_counter_charge, model_charge },
	[OP_CANCEL] = { pcstock_counter_cancel, model_cancel },
	[OP_UNCHARGE] = { pcstock_counter_uncharge, model_uncharge },
	[OP_SET_MIN] = { pcstock_counter_set_min, model_set_min },
	[OP_SET_LOW] = { pcstock_counter_set_low, model_set_low },
	[OP_SET_HIGH] = { pcstock_counter_set_high, model_set_high },
};

static void run_op(struct input *in)
{
	uint8_t code = next(in);
	int i = next(in) % model.nr;
	uint64_t nr;

	cur_op = (enum op)((code & 0x7f) % NR_OPS);
	if (plain_ops[cur_op].impl) {
		nr = amount(in);
		plain_ops[cur_op].impl(&ctr[i], nr);
		plain_ops[cur_op].model(&model, i, nr);
	} else if (cur_op == OP_TRY_CHARGE) {
		try_charge(i, amount(in), code & 0x80);
	} else if (cur_op == OP_SET_MAX) {
		nr = amount(in);
		check("set_max result", i,
		      (uint64_t)pcstock_counter_set_max(&ctr[i], nr),
		      (uint64_t)model_set_max(&model, i, nr));
	} else if (cur_op == OP_RESET_WATERMARK) {
		pcstock_counter_reset_watermark(&ctr[i]);
		model_reset_watermark(&model, i);
	} else {
		calculate_protection(in);
	}
	compare_all();
}

static void build_tree(struct input *in)
{
	int n = 1 + next(in) % MODEL_MAX_COUNTERS;
	int i;

	model_init(&model, PCSTOCK_COUNTER_MAX);
	for (i = 0; i < n; i++) {
		int parent = i ? next(in) % (i + 1) - 1 : -1;
		uint8_t flags = next(in);

		pcstock_counter_init(&ctr[i], parent < 0 ? NULL : &ctr[parent],
				     flags & 1);
		pcstock_counter_set_track_failcnt(&ctr[i], flags & 2);
		model_add(&model, parent, flags & 1, flags & 2);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };

	pcstock_set_warn_handler(on_warn, NULL);
	pcstock_warn_reset();
	seen.calls = 0;
	build_tree(&in);
	for (op_nr = 0; in.left && op_nr < MAX_OPS; op_nr++)
		run_op(&in);
	return 0;
}
