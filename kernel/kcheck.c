// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcheck.c - pcstock-kcheck: pcstock against a kernel tree's own
 * page_counter code (docs/kcheck.md).
 *
 * The kernel side is a unit (kernel/unit.c over the shim) loaded as a
 * plugin: the one the build made from the default tree, another given
 * with --unit, or one built now from --kernel DIR (a tree or a tarball)
 * with the build's own scripts.
 *
 * Exit status (KC_EXIT_*, also in usage()): what a test asserts on, so a
 * missing or stale unit is never mistaken for a divergence, and never
 * for a pass.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcstock/pcstock.h>

#include "kcheck.h"

#define KC_EXIT_OK 0
/* Or the planted bug missed, or --require-stock without the stock. */
#define KC_EXIT_DIVERGENCE 1
#define KC_EXIT_USAGE 2
#define KC_EXIT_UNIT KPC_EXIT_UNIT	/* cannot build/load, or another tree */
/* Exit status ctest reads as "skipped" (SKIP_RETURN_CODE). */
#define KC_EXIT_SKIP 77

double kc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pcstock-kcheck [--kernel DIR|TARBALL [--mutation M]]"
		" [--unit SO]\n"
		"       [--expect-tree FILE] [--require-stock] [--migrate]\n"
		"       [--seconds N] [--ops N] [--parses N] [--seed S]\n"
		"       [--no-oracle] [--no-parse] [--expect-divergence]"
		" [--max-repro N] [--quiet]\n"
		"       [--repro-out FILE] [--kunit-out FILE] [--junit FILE]"
		" [--replay FILE]\n"
		"       --kernel DIR --series MBOX|DIR [--fixup DIR]"
		" | --rev A..B\n"
		"Differential of pcstock's counter and limit parsing against"
		" a kernel tree's\nmm/page_counter.c (docs/kcheck.md).\n"
		"--expect-tree FILE (default: $%s):\nthe unit must have"
		" been built from the tree whose id is FILE's first token.\n"
		"Exit status:\n"
		"   0  no divergence (with --expect-divergence: one found,"
		" its reproducer\n      at most --max-repro operations)\n"
		"   1  a divergence (with --expect-divergence: none, or the"
		" reproducer too\n      long); with --require-stock, a unit"
		" without the stock series\n"
		"   2  bad usage\n"
		"   3  the unit could not be built or loaded, or was built"
		" from another tree\n"
		"  77  no kernel unit (skipped)\n", KPC_EXPECT_TREE_ENV);
}

/* Single-quote @s for sh; false if it does not fit in @cap bytes. */
static bool shell_quote(char *dst, size_t cap, const char *s)
{
	size_t n = 0;

	if (cap < 3)
		return false;
	dst[n++] = '\'';
	for (; *s; s++) {
		if (n + 6 >= cap)
			return false;
		if (*s == '\'') {
			memcpy(dst + n, "'\\''", 4);
			n += 4;
		} else {
			dst[n++] = *s;
		}
	}
	dst[n++] = '\'';
	dst[n] = '\0';
	return true;
}

/*
 * The function a failed build or load lacks, from the compiler's, the
 * linker's or dlopen()'s words for it (after @marker), into @name; false
 * if @text has none.
 */
static bool missing_function(const char *text, const char *marker,
			     char *name, size_t len)
{
	const char *p = strstr(text, marker);
	size_t n = 0;

	if (!p)
		return false;
	p += strlen(marker);
	/* A quote: ' or ` in the C locale, U+2018 in UTF-8 ones. */
	if (*p == '\'' || *p == '`')
		p++;
	else if (!strncmp(p, "\xe2\x80\x98", 3))
		p += 3;
	while ((isalnum((unsigned char)*p) || *p == '_') && n + 1 < len)
		name[n++] = *p++;
	name[n] = '\0';
	return n > 0;
}

/* Name the shim's gap, if @text shows one; true if it did. */
static bool report_shim_gap(const char *text)
{
	static const char *const markers[] = {
		"implicit declaration of function ",
		"undefined reference to ",
		"undefined symbol: ",
	};
	char name[128];
	unsigned int i;

	for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		if (missing_function(text, markers[i], name, sizeof(name))) {
			fprintf(stderr, "pcstock-kcheck: the shim lacks %s()"
				" (used by the tree's mm/page_counter.c or"
				" lib/): add it to kernel/shim\n", name);
			return true;
		}
	}
	return false;
}

/* @path's contents (at most 64 KiB; its end if longer), or NULL. */
static char *read_tail(const char *path)
{
	FILE *f = fopen(path, "r");
	long size;
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > 65536 ? size - 65536 : 0, SEEK_SET);
	buf = malloc(65537);
	n = buf ? fread(buf, 1, 65536, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

/*
 * Remove build_unit()'s directory, that of @file (a plugin loaded from it
 * stays mapped).
 */
static void remove_unit_dir(const char *file)
{
	char dir[4096], qdir[4200], cmd[4400];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", file);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	if (!shell_quote(qdir, sizeof(qdir), dir))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", qdir);
	if (system(cmd) != 0)
		fprintf(stderr, "pcstock-kcheck: could not remove %s\n", dir);
}

/*
 * Extract, stage and compile @tree into a fresh directory; the .so path.
 * The scripts' and the compiler's output go to a log, shown when they
 * fail, with the shim's gap named when it is one.
 */
static char *build_unit(const char *tree, const char *mutation, bool quiet)
{
	static char so[4096];
	char dir[] = "/tmp/pcstock-kcheck-XXXXXX";
	char qtree[4200], qdir[200], qmut[200], cmd[12000], log[200];
	char *out;
	int rc;

	if (!mkdtemp(dir)) {
		perror("pcstock-kcheck: mkdtemp");
		return NULL;
	}
	if (!shell_quote(qtree, sizeof(qtree), tree) ||
	    !shell_quote(qdir, sizeof(qdir), dir) ||
	    !shell_quote(qmut, sizeof(qmut), mutation ? mutation : "")) {
		fprintf(stderr, "pcstock-kcheck: path or mutation too long\n");
		rmdir(dir);
		return NULL;
	}
	snprintf(log, sizeof(log), "%s/build.log", dir);
	snprintf(cmd, sizeof(cmd),
		 "{ sh '%s/extract.sh' fetch %s %s/raw && "
		 "sh '%s/extract.sh' stage %s/raw %s/stage %s && "
		 "sh '%s' %s/stage %s/kpc.so; } >%s/build.log 2>&1",
		 KC_KERNEL_DIR, qtree, qdir, KC_KERNEL_DIR, qdir, qdir, qmut,
		 KC_BUILD_UNIT, qdir, qdir, qdir);
	if (!quiet)
		fprintf(stderr, "pcstock-kcheck: building the kernel unit in"
			" %s\n", dir);
	rc = system(cmd);
	if (rc != 0) {
		out = read_tail(log);
		fprintf(stderr, "%s", out ? out : "");
		fprintf(stderr, "pcstock-kcheck: cannot build a kernel unit"
			" from %s\n", tree);
		if (out)
			report_shim_gap(out);
		free(out);
		remove_unit_dir(log);
		return NULL;
	}
	snprintf(so, sizeof(so), "%s/kpc.so", dir);
	return so;
}

static const struct kpc_unit *load_unit(const char *so)
{
	const struct kpc_unit *(*get)(void);
	const struct kpc_unit *k;
	char path[4096];
	void *h;

	/* A bare name is a file here, not a library to search for. */
	snprintf(path, sizeof(path), "%s%s", strchr(so, '/') ? "" : "./", so);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *err = dlerror();

		fprintf(stderr, "pcstock-kcheck: %s\n", err);
		report_shim_gap(err);
		return NULL;
	}
	*(void **)&get = dlsym(h, "kpc_unit");
	if (!get) {
		fprintf(stderr, "pcstock-kcheck: %s has no kpc_unit()\n", so);
		return NULL;
	}
	k = get();
	if (!k || k->abi != KPC_ABI) {
		fprintf(stderr, "pcstock-kcheck: %s: wrong unit ABI\n", so);
		return NULL;
	}
	return k;
}

/*
 * A division by zero is a divide error (#DE on x86), an oops in the
 * kernel: a failure, though not one the shrinker can replay (the process
 * is gone).  Only async-signal-safe calls here.
 */
static void on_divide_error(int sig)
{
	static const char msg[] = "pcstock-kcheck: divide error (SIGFPE),"
				  " in the kernel's code or pcstock's: an"
				  " oops (#DE) in a kernel\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(KC_EXIT_DIVERGENCE);
	_exit(KC_EXIT_DIVERGENCE);
}

static const char *yes_no(const struct kpc_unit *k, unsigned int f)
{
	return k->features & f ? "yes" : "no";
}

/*
 * What the run is about: the tree (version, where it came from, its id
 * and files), the planted bug, the features found and what the oracle
 * adjusts for on this tree.  --quiet keeps the essentials on two lines.
 */
static void print_header(const struct kpc_unit *k, const char *so,
			 bool quiet)
{
	unsigned int adj = kc_adjustments(k), i;
	const char *sep = "";

	printf("pcstock %s against kernel %s (unit %s), planted bug: %s\n",
	       pcstock_version(), k->version, so, k->mutation);
	if (quiet) {
		printf("tree %s from %s%s%s; stock series %s;", k->tree_id,
		       k->source, *k->describe ? ", " : "", k->describe,
		       !(k->features & KPC_F_STOCK) ? "no" :
		       k->features & KPC_F_OWN_STOCK ? "pcstock's own" :
		       "the tree's");
	} else {
		printf("tree: %s\n", k->source);
		if (*k->describe)
			printf("  git describe: %s\n", k->describe);
		printf("  id %s, files:\n", k->tree_id);
		for (const char *f = k->files; *f;) {
			const char *nl = strchr(f, '\n');
			int len = nl ? (int)(nl - f) : (int)strlen(f);

			printf("    %.*s\n", len, f);
			f += len + (nl != NULL);
		}
		printf("features:\n  track_failcnt %s, protection_support %s,"
		       " local_watermark %s,\n  calculate_protection %s,"
		       " protection_cap (6.12.118) %s\n",
		       yes_no(k, KPC_F_TRACK_FAILCNT),
		       yes_no(k, KPC_F_PROTECTION_SUPPORT),
		       yes_no(k, KPC_F_LOCAL_WATERMARK),
		       yes_no(k, KPC_F_CALC_PROTECTION),
		       yes_no(k, KPC_F_PROTECTION_CAP));
		printf("  stock series %s%s\n", k->features & KPC_F_STOCK ?
			       "yes: every other case runs stocked, against"
			       " pcstock's PCSTOCK_STOCK_V4" :
			       "no: stock differential skipped",
		       k->features & KPC_F_OWN_STOCK ?
			       "\n    (pcstock's own rendering,"
			       " kernel/own_stock.c, not the tree's)" : "");
	}
	printf(quiet ? " oracle adjusts for: " : "oracle adjusts for:");
	for (i = 0; i < KC_ADJ_NR; i++) {
		if (!(adj & (1U << i)))
			continue;
		if (quiet)
			printf("%s%s", sep, kc_adj_name[i]);
		else
			printf("\n  %s (%s)", kc_adj_name[i], kc_adj_why[i]);
		sep = ", ";
	}
	printf("%s\n", adj ? "" : quiet ? "none" : " none");
	/* Loud, on both streams: a renamed series must not pass unseen. */
	if (k->features & KPC_F_STOCK_PARTIAL) {
		static const char partial[] = "WARNING: stock series: NOT FOUND"
			" although the tree mentions a per-counter stock:"
			" functions renamed?\n";

		printf("%s", partial);
		fprintf(stderr, "pcstock-kcheck: %s", partial);
	}
}

/* The expected deviations counted, when the tree may have any. */
static void print_expected(const struct kpc_unit *k,
			   const struct kc_result *r)
{
	bool any = kc_adjustments(k) & (1U << KC_ADJ_PROTECTION_CAP);
	unsigned int i;

	for (i = 0; i < KC_DEV_NR; i++)
		any |= r->expected[i] != 0;
	if (!any)
		return;
	printf("expected deviations:");
	for (i = 0; i < KC_DEV_NR; i++)
		printf("%s %s %lu (%s)", i ? ";" : "", kc_dev_name[i],
		       r->expected[i], kc_dev_why[i]);
	printf("\n");
}

/* @s into @f, escaped for XML text or an attribute. */
static void xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f); break;
		}
	}
}

static void junit_case(FILE *f, const char *name, const char *tree,
		       const struct kc_result *r, const char *detail)
{
	fprintf(f, "  <testcase classname=\"pcstock-kcheck.%s\" name=\"%s\">\n",
		tree, name);
	if (r->divergences) {
		fprintf(f, "    <failure message=\"%lu divergence(s), %lu"
			" crash(es)\">", r->divergences, r->crashes);
		xml_text(f, detail ? detail : "see the run's output");
		fprintf(f, "</failure>\n");
	}
	fprintf(f, "  </testcase>\n");
}

/* --junit FILE: one test case per differential run, for CI. */
static void write_junit(const char *path, const struct kpc_unit *k,
			bool oracle, bool parse, const struct kc_result *ro,
			const struct kc_result *rp, double seconds)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuite name=\"pcstock-kcheck\" tests=\"%d\""
		" failures=\"%d\" time=\"%.1f\">\n", oracle + parse,
		(oracle && ro->divergences) + (parse && rp->divergences),
		seconds);
	fprintf(f, "  <properties><property name=\"tree\" value=\"");
	xml_text(f, k->source);
	fprintf(f, "\"/><property name=\"version\" value=\"%s\"/>"
		"<property name=\"tree_id\" value=\"%s\"/>"
		"<property name=\"planted_bug\" value=\"%s\"/>"
		"</properties>\n", k->version, k->tree_id, k->mutation);
	if (oracle)
		junit_case(f, "counter_differential", k->version, ro,
			   ro->report);
	if (parse)
		junit_case(f, "parse_differential", k->version, rp, NULL);
	fprintf(f, "</testsuite>\n");
	fclose(f);
}

/*
 * --series FILE [--fixup DIR] or --rev A..B: kernel/series.sh applies the
 * patches (or checks out the commits) one by one and runs this program on
 * each step's tree with @pass's options.
 */
static int run_series(const char *tree, const char *series, const char *rev,
		      const char *fixup, char **pass, unsigned int npass)
{
	char self[4096], script[4200];
	char *argv[80];
	unsigned int n = 0, i;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0) {
		perror("pcstock-kcheck: /proc/self/exe");
		return KC_EXIT_USAGE;
	}
	self[len] = '\0';
	snprintf(script, sizeof(script), "%s/series.sh", KC_KERNEL_DIR);
	argv[n++] = (char *)"sh";
	argv[n++] = script;
	argv[n++] = self;
	argv[n++] = (char *)tree;
	argv[n++] = (char *)(series ? "series" : "rev");
	argv[n++] = (char *)(series ? series : rev);
	argv[n++] = (char *)(fixup ? fixup : "");
	for (i = 0; i < npass; i++)
		argv[n++] = pass[i];
	argv[n] = NULL;
	fflush(stdout);
	execv("/bin/sh", argv);
	perror("pcstock-kcheck: /bin/sh");
	return KC_EXIT_UNIT;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "mutation", required_argument, NULL, 'm' },
		{ "unit", required_argument, NULL, 'u' },
		{ "expect-tree", required_argument, NULL, 'e' },
		{ "require-stock", no_argument, NULL, 'S' },
		{ "migrate", no_argument, NULL, 'M' },
		{ "seconds", required_argument, NULL, 't' },
		{ "ops", required_argument, NULL, 'o' },
		{ "parses", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "no-oracle", no_argument, NULL, 'O' },
		{ "no-parse", no_argument, NULL, 'P' },
		{ "expect-divergence", no_argument, NULL, 'x' },
		{ "max-repro", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "replay", required_argument, NULL, 'R' },
		{ "repro-out", required_argument, NULL, 'W' },
		{ "kunit-out", required_argument, NULL, 'K' },
		{ "junit", required_argument, NULL, 'J' },
		{ "series", required_argument, NULL, 'L' },
		{ "rev", required_argument, NULL, 'V' },
		{ "fixup", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kc_opts o = { .seed = 1, .ops = 100000, .parses = 100000,
			     .max_repro = 5, .out = stdout };
	struct kc_result ro = { 0 }, rp = { 0 };
	const char *tree = NULL, *mutation = NULL, *so = KC_DEFAULT_UNIT;
	const char *expect_tree = getenv(KPC_EXPECT_TREE_ENV);
	const char *junit = NULL, *series = NULL, *rev = NULL, *fixup = NULL;
	/* What each step of --series or --rev passes on to its own run. */
	char *pass[64];
	unsigned int npass = 0;
	bool oracle = true, parse = true, expect = false, need_stock = false;
	const struct kpc_unit *k;
	char why[512];
	double t0;
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'k': tree = optarg; break;
		case 'm': mutation = optarg; break;
		case 'u': so = optarg; break;
		case 'e': expect_tree = optarg; break;
		case 'S': need_stock = true; break;
		case 'M': o.migrate = true; break;
		case 't': o.seconds = strtod(optarg, NULL); break;
		case 'o': o.ops = strtoul(optarg, NULL, 0); break;
		case 'p': o.parses = strtoul(optarg, NULL, 0); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'O': oracle = false; break;
		case 'P': parse = false; break;
		case 'x': expect = true; break;
		case 'r': o.max_repro = (unsigned int)atoi(optarg); break;
		case 'q': o.quiet = true; break;
		case 'R': o.replay = optarg; break;
		case 'W': o.repro_out = optarg; break;
		case 'K': o.kunit_out = optarg; break;
		case 'J': junit = optarg; break;
		case 'L': series = optarg; break;
		case 'V': rev = optarg; break;
		case 'F': fixup = optarg; break;
		case 'h': usage(stdout); return KC_EXIT_OK;
		default: usage(stderr); return KC_EXIT_USAGE;
		}
		if (strchr("MtospOPq", c) && npass + 3 < 64) {
			pass[npass++] = argv[optind - 1 - (optarg != NULL)];
			if (optarg)
				pass[npass++] = optarg;
		}
	}
	if (optind != argc || (mutation && !tree) ||
	    ((series || rev) && (!tree || mutation || (series && rev))) ||
	    (fixup && !series)) {
		usage(stderr);
		return KC_EXIT_USAGE;
	}
	if (series || rev)
		return run_series(tree, series, rev, fixup, pass, npass);
	/* A reproducer is one case: no parse differential. */
	if (o.replay)
		parse = false;
	/* --seconds: run that long in all, whatever the counts. */
	if (o.seconds > 0) {
		o.ops = 0;
		o.parses = 0;
		if (oracle && parse)
			o.seconds /= 2;
	}
	if (tree) {
		so = build_unit(tree, mutation, o.quiet);
		if (!so)
			return KC_EXIT_UNIT;
	} else if (access(so, R_OK) != 0) {
		printf("pcstock-kcheck: no kernel unit at %s (no kernel tree"
		       " at build time: install linux-source-6.12, or give"
		       " --kernel DIR); skipped\n", so);
		return KC_EXIT_SKIP;
	}
	k = load_unit(so);
	if (tree)
		remove_unit_dir(so);
	if (!k)
		return KC_EXIT_UNIT;
	if (expect_tree && *expect_tree &&
	    kpc_tree_mismatch(k, expect_tree, why, sizeof(why))) {
		fprintf(stderr, "pcstock-kcheck: unit built from another tree"
			" (%s); rebuild\n", why);
		return KC_EXIT_UNIT;
	}
	print_header(k, so, o.quiet);
	if ((need_stock || o.migrate) && !(k->features & KPC_F_STOCK)) {
		printf("FAIL: %s, but the unit has no stock series"
		       " (page_counter_try_charge_stock() and"
		       " page_counter_drain_stock() not both in the tree)\n",
		       o.migrate ? "--migrate" : "--require-stock");
		return KC_EXIT_DIVERGENCE;
	}
	printf("seed %llu\n", (unsigned long long)o.seed);
	fflush(stdout);

	signal(SIGFPE, on_divide_error);
	t0 = kc_now();
	if (oracle) {
		ret |= kc_oracle_run(k, &o, &ro);
		printf("counter differential: %lu operations in %lu cases"
		       " (%lu with stocks), %lu divergence(s), %lu of them"
		       " crashes\n", ro.ops, ro.cases, ro.stock_cases,
		       ro.divergences, ro.crashes);
		if (o.migrate)
			printf("migrate: %lu operations ran inside another,"
			       " %lu of the interrupted resumed on another"
			       " CPU\n", ro.nested, ro.migrations);
		if (ro.stock_cases)
			printf("largest kernel stock slot: %ld pages, %.2f"
			       " times its counter's batch (%u)\n",
			       ro.max_slot, (double)ro.max_slot /
			       ro.max_slot_batch, ro.max_slot_batch);
		print_expected(k, &ro);
	}
	if (parse && !(expect && ro.divergences)) {
		ret |= kc_parse_run(k, &o, &rp);
		printf("parse differential: %lu comparisons, %lu"
		       " divergence(s)\n", rp.parses, rp.divergences);
	}
	printf("%.1f s\n", kc_now() - t0);
	if (junit)
		write_junit(junit, k, oracle, parse, &ro, &rp, kc_now() - t0);
	/* The first divergence's text, kept for --junit: done with. */
	free(ro.report);
	free(rp.report);
	if (o.replay && ret > 1)
		return KC_EXIT_USAGE;
	/* The parse groups could not be made: nothing was compared. */
	if (ret > 1)
		return KC_EXIT_DIVERGENCE;
	if (expect) {
		unsigned int len = ro.divergences ? ro.repro_len :
						    rp.repro_len;

		if (!ro.divergences && !rp.divergences) {
			printf("FAIL: the planted bug went unnoticed\n");
			return KC_EXIT_DIVERGENCE;
		}
		if (len > o.max_repro) {
			printf("FAIL: reproducer of %u operations, more than"
			       " %u\n", len, o.max_repro);
			return KC_EXIT_DIVERGENCE;
		}
		printf("OK: divergence found, reproducer of %u operation(s)\n",
		       len);
		return KC_EXIT_OK;
	}
	return ret ? KC_EXIT_DIVERGENCE : KC_EXIT_OK;
}
