// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * repro.c - a counter differential's reproducer outside the run that
 * found it: written to a file (--repro-out) that --replay reads back,
 * and emitted as a KUnit test case a kernel developer can paste
 * (--kunit-out; docs/kcheck.md, "Reports to paste").
 *
 * The file is our own line format, one record a line, so that a reader
 * can edit a reproducer by hand: "node I PARENT PROT TRACK STOCKED" per
 * counter, "op KIND NODE REL FLAG AT CPU_IN CPU_BACK V0..V4" per
 * operation, the amounts as the frozen replay resolved them.
 */
#include <stdlib.h>
#include <string.h>

#include "kcase.h"

const char *const kc_kind_name[K_NR] = {
	"charge", "try_charge", "cancel", "uncharge", "set_max", "xchg_max",
	"set_min", "set_low", "set_high", "reset_watermark",
	"reset_local_watermark", "reset_failcnt", "calculate_protection",
	"effective_protection", "switch_cpu", "try_charge_stock",
	"drain_stock", "alloc_stock", "free_stock",
};

/* Whether @j lies in the subtree of @root. */
static bool below(const struct kc_case *cs, unsigned int j, unsigned int root)
{
	int p = (int)j;

	while (p >= 0 && p != (int)root)
		p = cs->parent[p];
	return p >= 0;
}

void kc_case_shown(const struct kc_case *cs, const struct kc_op *ops,
		   unsigned int n, bool *shown)
{
	unsigned int i, j;
	int p;

	memset(shown, 0, KC_MAX_NODES * sizeof(*shown));
	for (i = 0; i < n; i++) {
		if (ops[i].kind == K_EFF_PROT || ops[i].kind == K_CPU)
			continue;
		for (j = 0; j < cs->n; j++) {
			if (j != ops[i].node && !(ops[i].kind == K_CALC_PROT &&
						  below(cs, j, ops[i].node)))
				continue;
			for (p = (int)j; p >= 0; p = cs->parent[p])
				shown[p] = true;
		}
	}
}

void kc_repro_write(FILE *f, const struct kpc_unit *k,
		    const struct kc_case *cs, const struct kc_op *ops,
		    unsigned int n, bool migrate, const char *what)
{
	unsigned int i;

	fprintf(f, "# pcstock-kcheck reproducer (docs/kcheck.md); replay:"
		" pcstock-kcheck --replay FILE\n");
	fprintf(f, "tree %s %s %s\n", k->tree_id, k->version, k->mutation);
	fprintf(f, "what %s\n", what);
	fprintf(f, "migrate %d\nbatch %u\n", migrate, cs->batch);
	for (i = 0; i < cs->n; i++)
		fprintf(f, "node %u %d %d %d %d\n", i, cs->parent[i],
			cs->prot[i], cs->track[i], cs->stocked[i]);
	for (i = 0; i < n; i++) {
		const struct kc_op *op = &ops[i];

		fprintf(f, "op %s %u %u %d %u %u %u %lu %lu %lu %lu %lu\n",
			kc_kind_name[op->kind], op->node, op->rel, op->flag,
			op->at, op->cpu_in, op->cpu_back, op->v[0], op->v[1],
			op->v[2], op->v[3], op->v[4]);
	}
}

static int kind_of(const char *name)
{
	int i;

	for (i = 0; i < K_NR; i++)
		if (!strcmp(name, kc_kind_name[i]))
			return i;
	return -1;
}

/*
 * Read a reproducer kc_repro_write() wrote into @cs (its operations in
 * cs->ops, cs->nops of them).  Return: 0, or -EINVAL with the bad line
 * reported on stderr.
 */
int kc_repro_read(FILE *f, struct kc_case *cs, bool *migrate)
{
	char line[512], name[32];
	unsigned int lineno = 0;

	memset(cs, 0, sizeof(*cs));
	*migrate = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned int i, node, rel, at, in, back;
		int parent, prot, track, stocked, flag, kind, m;
		struct kc_op *op;
		bool ok = true;

		lineno++;
		if (line[0] == '#' || line[0] == '\n' ||
		    !strncmp(line, "tree ", 5) || !strncmp(line, "what ", 5))
			continue;
		if (sscanf(line, "migrate %d", &m) == 1) {
			*migrate = m != 0;
		} else if (sscanf(line, "batch %u", &cs->batch) == 1) {
			ok = cs->batch < 1024;
		} else if (sscanf(line, "node %u %d %d %d %d", &i, &parent,
				  &prot, &track, &stocked) == 5) {
			ok = i == cs->n && i < KC_MAX_NODES &&
			     parent < (int)i && parent >= -1;
			if (ok) {
				cs->parent[i] = parent;
				cs->prot[i] = prot;
				cs->track[i] = track;
				cs->stocked[i] = stocked;
				cs->n++;
			}
		} else if (cs->nops < KC_CASE_OPS &&
			   (op = &cs->ops[cs->nops],
			    sscanf(line, "op %31s %u %u %d %u %u %u %lu %lu %lu"
				   " %lu %lu", name, &node, &rel, &flag, &at,
				   &in, &back, &op->v[0], &op->v[1], &op->v[2],
				   &op->v[3], &op->v[4]) == 12)) {
			kind = kind_of(name);
			ok = kind >= 0 && node < cs->n && rel <= R_HELD &&
			     at < 256 && in < KC_CPUS && back < KC_CPUS;
			op->kind = (unsigned char)kind;
			op->node = (unsigned char)node;
			op->rel = (unsigned char)rel;
			op->flag = flag;
			op->at = (unsigned char)at;
			op->cpu_in = (unsigned char)in;
			op->cpu_back = (unsigned char)back;
			cs->nops += ok;
		} else {
			ok = false;
		}
		if (!ok) {
			fprintf(stderr, "pcstock-kcheck: reproducer line %u:"
				" %s", lineno, line);
			return -22;	/* -EINVAL */
		}
	}
	return cs->n && cs->nops ? 0 : -22;
}

/* ---- KUnit ---- */

/* The kernel's expression for a field of counter c[@i]. */
static void kunit_field(FILE *f, unsigned int i, const char *field)
{
	static const char *const atomics[] = {
		"min_usage", "children_min_usage", "low_usage",
		"children_low_usage",
	};
	unsigned int a;

	if (!strcmp(field, "usage")) {
		fprintf(f, "page_counter_read(&c[%u])", i);
		return;
	}
	for (a = 0; a < sizeof(atomics) / sizeof(atomics[0]); a++) {
		if (!strcmp(field, atomics[a])) {
			fprintf(f, "(unsigned long)atomic_long_read("
				"&c[%u].%s)", i, field);
			return;
		}
	}
	fprintf(f, "(unsigned long)READ_ONCE(c[%u].%s)", i, field);
}

/* Why @op cannot be written as a KUnit call, or NULL. */
static const char *kunit_unfit(const struct kc_case *cs,
			       const struct kc_op *op)
{
	if (cs->batch)
		return "a stock run: simulated CPUs are no KUnit's";
	if (op->at)
		return "an operation inside another (--migrate)";
	if (op->kind == K_EFF_PROT)
		return "effective_protection() is static in page_counter.c";
	return NULL;
}

static void kunit_op(FILE *f, const struct kc_case *cs,
		     const struct kc_op *op)
{
	unsigned int n = op->node, j;

	fprintf(f, "\t");
	switch (op->kind) {
	case K_CHARGE:
		fprintf(f, "page_counter_charge(&c[%u], %luUL);\n", n,
			op->v[0]);
		break;
	case K_TRY:
		fprintf(f, "KUNIT_EXPECT_EQ(test, (int)page_counter_try_charge"
			"(&c[%u], %luUL, &fail), %d);\n", n, op->v[0],
			(int)op->ret);
		break;
	case K_CANCEL:
		fprintf(f, "page_counter_cancel(&c[%u], %luUL);\n", n,
			op->v[0]);
		break;
	case K_UNCHARGE:
		fprintf(f, "page_counter_uncharge(&c[%u], %luUL);\n", n,
			op->v[0]);
		break;
	case K_SET_MAX:
		fprintf(f, "KUNIT_EXPECT_EQ(test, page_counter_set_max(&c[%u],"
			" %luUL), %d);\n", n, op->v[0], (int)op->ret);
		break;
	case K_XCHG_MAX:
		fprintf(f, "/* memory_max_write()'s exchange in place */\n"
			"\tKUNIT_EXPECT_EQ(test, xchg(&c[%u].max, %luUL),"
			" %luUL);\n", n, op->v[0], op->ret);
		break;
	case K_SET_MIN:
	case K_SET_LOW:
	case K_SET_HIGH:
		fprintf(f, "page_counter_%s(&c[%u], %luUL);\n",
			kc_kind_name[op->kind], n, op->v[0]);
		break;
	case K_RESET_WM:
		fprintf(f, "page_counter_reset_watermark(&c[%u]);\n", n);
		break;
	case K_RESET_LOCAL_WM:
		fprintf(f, "/* peak_write() */\n\tWRITE_ONCE(c[%u]."
			"local_watermark, page_counter_read(&c[%u]));\n", n,
			n);
		break;
	case K_RESET_FAILCNT:
		fprintf(f, "/* mem_cgroup_reset() */\n\tc[%u].failcnt = 0;\n",
			n);
		break;
	case K_CALC_PROT:
		fprintf(f, "/* the walk of mem_cgroup_calculate_protection()"
			" */\n");
		for (j = n; j < cs->n; j++)
			if (below(cs, j, n))
				fprintf(f, "\tpage_counter_calculate_protection("
					"&c[%u], &c[%u], %s);\n", n, j,
					op->flag ? "true" : "false");
		break;
	}
}

/*
 * Write the reproducer as a KUnit test file: the counters shown, the
 * operations as the kernel's calls, each call's result expected to be
 * pcstock's, then each field @ex lists expected to be pcstock's value.
 * Return: false (nothing written) if an operation has no KUnit form.
 */
bool kc_kunit_write(FILE *f, const struct kpc_unit *k,
		    const struct kc_case *cs, const struct kc_op *ops,
		    unsigned int n, const struct kc_expect *ex,
		    unsigned int nex, const char *what)
{
	bool shown[KC_MAX_NODES];
	unsigned int i, top = 0;
	const char *why;

	for (i = 0; i < n; i++) {
		why = kunit_unfit(cs, &ops[i]);
		if (why) {
			fprintf(stderr, "pcstock-kcheck: no KUnit case: %s\n",
				why);
			return false;
		}
	}
	kc_case_shown(cs, ops, n, shown);
	for (i = 0; i < cs->n; i++)
		if (shown[i])
			top = i + 1;
	fprintf(f, "// SPDX-License-Identifier: GPL-2.0\n"
		"/*\n * Written by pcstock-kcheck from a reproducer on %s"
		" (tree %s),\n * planted bug: %s.  The kernel's code"
		" diverged from pcstock\n * after operation %u: %s.\n"
		" * The values expected are pcstock's.\n */\n"
		"#include <kunit/test.h>\n#include <linux/page_counter.h>\n\n"
		"static void page_counter_kcheck_repro(struct kunit *test)\n"
		"{\n\tstruct page_counter *c, *fail;\n\n"
		"\tc = kunit_kcalloc(test, %u, sizeof(*c), GFP_KERNEL);\n"
		"\tKUNIT_ASSERT_NOT_NULL(test, c);\n", k->version, k->tree_id,
		k->mutation, n, what, top);
	for (i = 0; i < top; i++) {
		if (!shown[i])
			continue;
		fprintf(f, "\tpage_counter_init(&c[%u], ", i);
		if (cs->parent[i] < 0)
			fprintf(f, "NULL");
		else
			fprintf(f, "&c[%d]", cs->parent[i]);
		if (k->features & KPC_F_PROTECTION_SUPPORT)
			fprintf(f, ", %s", cs->prot[i] ? "true" : "false");
		fprintf(f, ");\n");
		if (k->features & KPC_F_TRACK_FAILCNT)
			fprintf(f, "\tc[%u].track_failcnt = %s;\n", i,
				cs->track[i] ? "true" : "false");
	}
	fprintf(f, "\t(void)fail;\n\n");
	for (i = 0; i < n; i++)
		kunit_op(f, cs, &ops[i]);
	if (nex)
		fprintf(f, "\n");
	for (i = 0; i < nex; i++) {
		fprintf(f, "\t/* kernel: %lu */\n\tKUNIT_EXPECT_EQ(test, ",
			ex[i].kernel);
		kunit_field(f, ex[i].node, ex[i].field);
		fprintf(f, ", %luUL);\n", ex[i].pcstock);
	}
	fprintf(f, "}\n\nstatic struct kunit_case page_counter_kcheck_cases[]"
		" = {\n\tKUNIT_CASE(page_counter_kcheck_repro),\n\t{}\n};\n\n"
		"static struct kunit_suite page_counter_kcheck_suite = {\n"
		"\t.name = \"page_counter_kcheck\",\n"
		"\t.test_cases = page_counter_kcheck_cases,\n};\n"
		"kunit_test_suite(page_counter_kcheck_suite);\n");
	return true;
}
