// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcheck.c - pcstock-kcheck: pcstock against a kernel tree's own
 * page_counter code (docs/kcheck.md).
 *
 * The kernel side is a unit (kernel/unit.c over the shim) loaded as a
 * plugin: the one the build made from the default tree, another given
 * with --unit, or one built now from --kernel DIR (a tree or a tarball)
 * with the build's own scripts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcstock/pcstock.h>

#include "kcheck.h"

/* Exit status ctest reads as "skipped" (SKIP_RETURN_CODE). */
#define KC_SKIP 77

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
		"       [--seconds N] [--ops N] [--parses N] [--seed S]\n"
		"       [--no-oracle] [--no-parse] [--expect-divergence]"
		" [--max-repro N] [--quiet]\n"
		"Differential of pcstock's counter and limit parsing against"
		" a kernel tree's\nmm/page_counter.c (docs/kcheck.md).  Exit:"
		" 0 no divergence (or, with\n--expect-divergence, one found"
		" with a reproducer of at most --max-repro\noperations), 1"
		" otherwise, 77 no kernel unit (skipped).\n");
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

/* Extract, stage and compile @tree into a fresh directory; the .so path. */
static char *build_unit(const char *tree, const char *mutation, bool quiet)
{
	static char so[4096];
	char dir[] = "/tmp/pcstock-kcheck-XXXXXX";
	char qtree[4200], qdir[200], qmut[200], cmd[12000];
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
	snprintf(cmd, sizeof(cmd),
		 "sh '%s/extract.sh' fetch %s %s/raw && "
		 "sh '%s/extract.sh' stage %s/raw %s/stage %s && "
		 "sh '%s' %s/stage %s/kpc.so",
		 KC_KERNEL_DIR, qtree, qdir, KC_KERNEL_DIR, qdir, qdir, qmut,
		 KC_BUILD_UNIT, qdir, qdir);
	if (!quiet)
		fprintf(stderr, "pcstock-kcheck: building the kernel unit in"
			" %s\n", dir);
	rc = system(cmd);
	if (rc != 0) {
		fprintf(stderr, "pcstock-kcheck: cannot build a kernel unit"
			" from %s\n", tree);
		return NULL;
	}
	snprintf(so, sizeof(so), "%s/kpc.so", dir);
	return so;
}

/* Remove build_unit()'s directory (the plugin stays mapped). */
static void remove_unit_dir(const char *so)
{
	char dir[4096], qdir[4200], cmd[4400];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", so);
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

static const struct kpc_unit *load_unit(const char *so)
{
	const struct kpc_unit *(*get)(void);
	const struct kpc_unit *k;
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "pcstock-kcheck: %s\n", dlerror());
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "mutation", required_argument, NULL, 'm' },
		{ "unit", required_argument, NULL, 'u' },
		{ "seconds", required_argument, NULL, 't' },
		{ "ops", required_argument, NULL, 'o' },
		{ "parses", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "no-oracle", no_argument, NULL, 'O' },
		{ "no-parse", no_argument, NULL, 'P' },
		{ "expect-divergence", no_argument, NULL, 'x' },
		{ "max-repro", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kc_opts o = { .seed = 1, .ops = 100000, .parses = 100000,
			     .max_repro = 5, .out = stdout };
	struct kc_result ro = { 0 }, rp = { 0 };
	const char *tree = NULL, *mutation = NULL, *so = KC_DEFAULT_UNIT;
	bool oracle = true, parse = true, expect = false;
	const struct kpc_unit *k;
	double t0;
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'k': tree = optarg; break;
		case 'm': mutation = optarg; break;
		case 'u': so = optarg; break;
		case 't': o.seconds = strtod(optarg, NULL); break;
		case 'o': o.ops = strtoul(optarg, NULL, 0); break;
		case 'p': o.parses = strtoul(optarg, NULL, 0); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'O': oracle = false; break;
		case 'P': parse = false; break;
		case 'x': expect = true; break;
		case 'r': o.max_repro = (unsigned int)atoi(optarg); break;
		case 'q': o.quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (mutation && !tree)) {
		usage(stderr);
		return 2;
	}
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
			return 1;
	} else if (access(so, R_OK) != 0) {
		printf("pcstock-kcheck: no kernel unit at %s (no kernel tree"
		       " at build time: install linux-source-6.12, or give"
		       " --kernel DIR); skipped\n", so);
		return KC_SKIP;
	}
	k = load_unit(so);
	if (tree)
		remove_unit_dir(so);
	if (!k)
		return 1;
	printf("pcstock %s against kernel %s (unit %s), planted bug: %s\n",
	       pcstock_version(), k->version, so, k->mutation);
	printf("tree: track_failcnt %s; per-counter stock series %s\n",
	       k->features & KPC_F_TRACK_FAILCNT ?
		       "present (flag compared on both sides)" :
		       "absent (failcnt always counted: pcstock tracks it on"
		       " every counter)",
	       k->features & KPC_F_STOCK ?
		       "present: every other case runs stocked, against"
		       " pcstock's PCSTOCK_STOCK_V4" :
		       "absent: stock differential skipped");
	printf("seed %llu\n", (unsigned long long)o.seed);
	fflush(stdout);

	t0 = kc_now();
	if (oracle) {
		ret |= kc_oracle_run(k, &o, &ro);
		printf("counter differential: %lu operations in %lu cases"
		       " (%lu with stocks), %lu divergence(s)\n", ro.ops,
		       ro.cases, ro.stock_cases, ro.divergences);
	}
	if (parse && !(expect && ro.divergences)) {
		ret |= kc_parse_run(k, &o, &rp);
		printf("parse differential: %lu comparisons, %lu"
		       " divergence(s)\n", rp.parses, rp.divergences);
	}
	printf("%.1f s\n", kc_now() - t0);
	if (ret > 1)
		return 1;
	if (expect) {
		unsigned int len = ro.divergences ? ro.repro_len :
						    rp.repro_len;

		if (!ro.divergences && !rp.divergences) {
			printf("FAIL: the planted bug went unnoticed\n");
			return 1;
		}
		if (len > o.max_repro) {
			printf("FAIL: reproducer of %u operations, more than"
			       " %u\n", len, o.max_repro);
			return 1;
		}
		printf("OK: divergence found, reproducer of %u operation(s)\n",
		       len);
		return 0;
	}
	return ret ? 1 : 0;
}
