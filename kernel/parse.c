// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * parse.c - the parse differential: the kernel's page_counter_memparse()
 * (over its own memparse() and simple_strtoull()) against
 * pcstock_counter_memparse(), and a cgroup limit file's write (the
 * kernel's strstrip(), then page_counter_memparse()) against
 * pcstock_group_write() on every limit file of a v2 and a v1 tree.
 *
 * Inputs come from a generator that mixes the grammar's pieces (bases,
 * suffixes, keywords, whitespace of both the C and the kernel's Latin-1
 * ctype, long digit strings that overflow, junk bytes); each is compared
 * on return value and, on success, on the value stored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/pcstock.h>

#include "kcheck.h"

/* ---- input generation ---- */

static void put(char *buf, size_t *len, size_t cap, int c)
{
	if (*len + 1 < cap)
		buf[(*len)++] = (char)c;
}

static void put_ws(char *buf, size_t *len, size_t cap, uint64_t *rs)
{
	/* C whitespace, the kernel's 0xA0, and near misses. */
	static const unsigned char ws[] = { ' ', '\t', '\n', '\v', '\f', '\r',
					    0xa0, 0x85, 0x1c, 0x00 };
	unsigned int n = kc_below(rs, 3);

	while (n--) {
		unsigned char c = ws[kc_below(rs, sizeof(ws) - 1)];

		/* Near misses and 0xA0 only now and then. */
		if (c >= 0x80 || c == 0x1c)
			c = kc_below(rs, 8) ? ' ' : c;
		put(buf, len, cap, c);
	}
}

static void gen_input(char *buf, size_t cap, uint64_t *rs)
{
	static const char digits[] = "0123456789abcdefABCDEF";
	static const char suffix[] = "kKmMgGtTpPeEbBxZ";
	static const char *const words[] = { "max", "-1", "MAX", "max ",
					     "maxx", "", "+1", "-0" };
	size_t len = 0;
	unsigned int n, i;

	if (!kc_below(rs, 40)) {	/* junk */
		n = kc_below(rs, 12);
		while (n--)
			put(buf, &len, cap, 1 + (int)kc_below(rs, 255));
		buf[len] = '\0';
		return;
	}
	if (kc_below(rs, 2))
		put_ws(buf, &len, cap, rs);
	if (!kc_below(rs, 8)) {
		const char *w = words[kc_below(rs, sizeof(words) /
						       sizeof(words[0]))];

		while (*w)
			put(buf, &len, cap, *w++);
	} else {
		switch (kc_below(rs, 4)) {
		case 0:			/* hex, sometimes a bare prefix */
			put(buf, &len, cap, '0');
			put(buf, &len, cap, kc_below(rs, 2) ? 'x' : 'X');
			n = kc_below(rs, 18);
			for (i = 0; i < n; i++)
				put(buf, &len, cap,
				    digits[kc_below(rs, sizeof(digits) - 1)]);
			break;
		case 1:			/* octal, with 8s and 9s */
			put(buf, &len, cap, '0');
			n = kc_below(rs, 24);
			for (i = 0; i < n; i++)
				put(buf, &len, cap, '0' + (int)kc_below(rs, 10));
			break;
		default:		/* decimal, up to overflow and far beyond */
			n = 1 + kc_below(rs, kc_below(rs, 4) ? 8 : 80);
			for (i = 0; i < n; i++)
				put(buf, &len, cap, '0' + (int)kc_below(rs, 10));
			break;
		}
		if (kc_below(rs, 2))
			put(buf, &len, cap,
			    suffix[kc_below(rs, sizeof(suffix) - 1)]);
		if (!kc_below(rs, 10))
			put(buf, &len, cap,
			    suffix[kc_below(rs, sizeof(suffix) - 1)]);
	}
	if (kc_below(rs, 2))
		put_ws(buf, &len, cap, rs);
	if (!kc_below(rs, 30)) {	/* padding past 64 bytes */
		n = 40 + kc_below(rs, 60);
		while (n--)
			put(buf, &len, cap, ' ');
	}
	buf[len] = '\0';
}

/* ---- the limit files ---- */

struct kc_file {
	const char *name;
	bool v1;
	const char *keyword;
	size_t stat;		/* offset in struct pcstock_group_stats */
};

#define STAT(f) offsetof(struct pcstock_group_stats, f)

static const struct kc_file files[] = {
	{ "memory.max", false, "max", STAT(max) },
	{ "memory.high", false, "max", STAT(high) },
	{ "memory.min", false, "max", STAT(min) },
	{ "memory.low", false, "max", STAT(low) },
	{ "memory.swap.max", false, "max", STAT(memsw_max) },
	{ "memory.limit_in_bytes", true, "-1", STAT(max) },
	{ "memory.memsw.limit_in_bytes", true, "-1", STAT(memsw_max) },
};

#define NFILES (sizeof(files) / sizeof(files[0]))

struct kc_groups {
	struct pcstock_domain *d;
	struct pcstock_tree *t[2];
	struct pcstock_group *g[NFILES];
};

static int groups_create(struct kc_groups *gs)
{
	struct pcstock_domain_attr da = { .nr_cpus = 2,
					  .mode = PCSTOCK_CPU_SIM };
	unsigned int v, i;
	int err;

	err = pcstock_domain_create(&da, &gs->d);
	if (err)
		return err;
	for (v = 0; v < 2; v++) {
		struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_DEFAULT,
						  .batch = 64, .memsw = true,
						  .track_failcnt = v == 1 };

		err = pcstock_tree_create(gs->d, &attr, &gs->t[v]);
		if (err)
			return err;
	}
	for (i = 0; i < NFILES; i++) {
		struct pcstock_tree *t = gs->t[files[i].v1];

		err = pcstock_group_create(pcstock_tree_root(t), files[i].name,
					   &gs->g[i]);
		if (err)
			return err;
	}
	/*
	 * A memsw limit below the memory limit is refused (v1, as the
	 * kernel does; pcstock's memory.swap.max addresses the memsw
	 * counter too, a documented difference): the memsw files' groups
	 * have a memory limit of 0, so that every value written to them is
	 * a parse question only.
	 */
	for (i = 0; i < NFILES && !err; i++) {
		if (!strcmp(files[i].name, "memory.memsw.limit_in_bytes"))
			err = pcstock_group_write(gs->g[i],
						  "memory.limit_in_bytes", "0");
		if (!strcmp(files[i].name, "memory.swap.max"))
			err = pcstock_group_write(gs->g[i], "memory.max", "0");
	}
	return err;
}

static void groups_destroy(struct kc_groups *gs)
{
	unsigned int i;

	for (i = 0; i < NFILES; i++) {
		if (!gs->g[i])
			continue;
		pcstock_group_destroy(gs->g[i]);
		pcstock_group_put(gs->g[i]);
	}
	for (i = 0; i < 2; i++)
		if (gs->t[i])
			pcstock_tree_destroy(gs->t[i]);
	if (gs->d)
		pcstock_domain_destroy(gs->d);
}

static void print_input(FILE *f, const char *in)
{
	const unsigned char *p = (const unsigned char *)in;

	fputc('"', f);
	for (; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			fputc(*p, f);
		else
			fprintf(f, "\\x%02x", *p);
	}
	fputc('"', f);
}

static bool report(const struct kc_opts *o, struct kc_result *r,
		   const char *what, const char *in, int krc,
		   unsigned long kv, int orc, unsigned long ov)
{
	if (!r->divergences++) {
		fprintf(o->out, "DIVERGENCE (seed %llu): %s ",
			(unsigned long long)o->seed, what);
		print_input(o->out, in);
		fprintf(o->out, ": kernel %d/%lu, pcstock %d/%lu\n", krc, kv,
			orc, ov);
		r->repro_len = 1;
	}
	return false;
}

int kc_parse_run(const struct kpc_unit *k, const struct kc_opts *o,
		 struct kc_result *r)
{
	double deadline = o->seconds > 0 ? kc_now() + o->seconds : 0;
	uint64_t rs = o->seed * 0x9e3779b97f4a7c15ULL + 12345;
	struct kc_groups gs = { 0 };
	char in[160];
	int err;

	err = groups_create(&gs);
	if (err) {
		fprintf(o->out, "parse: cannot create the groups: %d\n", err);
		groups_destroy(&gs);
		return 2;
	}
	while (r->parses < o->parses || (deadline && kc_now() < deadline)) {
		unsigned long kv = 0, ov = 0;
		unsigned int i;
		int krc, orc;

		gen_input(in, sizeof(in), &rs);
		/* page_counter_memparse() itself, both keywords. */
		for (i = 0; i < 2; i++) {
			const char *kw = i ? "-1" : "max";

			kv = ov = 0;
			krc = k->memparse_pages(in, kw, &kv);
			orc = pcstock_counter_memparse(in, kw, &ov);
			r->parses++;
			if ((krc != orc || kv != ov) &&
			    !report(o, r, i ? "memparse(-1)" : "memparse(max)",
				    in, krc, kv, orc, ov))
				goto out;
		}
		/* One limit file in turn. */
		i = (unsigned int)(r->parses / 2 % NFILES);
		{
			struct pcstock_group_stats st;

			kv = 0;
			krc = k->write_limit(in, files[i].keyword, &kv);
			orc = pcstock_group_write(gs.g[i], files[i].name, in);
			pcstock_group_stats(gs.g[i], &st);
			ov = *(const unsigned long *)(const void *)
				((const char *)&st + files[i].stat);
			r->parses++;
			if ((krc != orc || (!krc && kv != ov)) &&
			    !report(o, r, files[i].name, in, krc, kv, orc,
				    krc ? 0 : ov))
				goto out;
		}
	}
out:
	groups_destroy(&gs);
	return r->divergences ? 1 : 0;
}
