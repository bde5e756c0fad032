// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * main.c - pcstock-explore, the schedule explorer's command line.
 *
 * Exit status: 0 when every schedule passed; 1 after a violation (printed
 * with its seed and interleaving); with --expect-violation the other way
 * round, for the tests that prove a planted bug is found within a budget.
 * --strategy and --schedules take comma-separated lists: one process runs
 * the scenario with each strategy in turn, each with its budget (or the
 * one budget given), each from the same first seed.
 * --weak runs the weak-memory model (explore_wmm.c), which needs the
 * library built with PCSTOCK_EXPLORE_WMM, as every explorer's is.
 * --site-coverage then lists the ordered sites its runs reached in weak
 * memory (scripts/order-sweep runs every weak run of the suite with it).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explore.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pcstock-explore --scenario NAME [options]\n"
		"  --list                 list the scenarios\n"
		"  --list-per-policy      the per-policy scenarios to run clean\n"
		"  --strategy random|pct  scheduling strategy (random); a list\n"
		"                         (random,pct) runs each in turn\n"
		"  --depth D              PCT bug depth (3)\n"
		"  --steps K              PCT step estimate (calibrated)\n"
		"  --schedules N          schedules to run (1000); a list\n"
		"                         gives each strategy its own\n"
		"  --seed S               first seed; schedule i uses S+i (1)\n"
		"  --replay S             run the one schedule of seed S\n"
		"  --max-steps N          per schedule, else livelock (100000)\n"
		"  --weak                 weak memory: loads may read older "
		"values\n"
		"  --expect-violation     succeed only if a violation is found\n"
		"  --site-coverage        with --weak: after the runs, the\n"
		"                         ordered sites (PCS_ORDER() tags)\n"
		"                         reached: \"site TAG ORDER COUNT\"\n"
		"  --verbose              print every interleaving\n"
		"  --quiet                no interleaving in reports\n");
}

#define MAX_RUNS 4

static unsigned long long number(const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end) {
		fprintf(stderr, "pcstock-explore: bad number '%s'\n", arg);
		exit(2);
	}
	return v;
}

/*
 * Split the comma-separated @arg into at most MAX_RUNS words of @out
 * (each at most 31 bytes).  Return: how many, 0 if malformed.
 */
static unsigned int split(const char *arg, char out[MAX_RUNS][32])
{
	unsigned int n = 0;
	size_t len;

	for (;;) {
		len = strcspn(arg, ",");
		if (!len || len >= 32 || n == MAX_RUNS)
			return 0;
		memcpy(out[n], arg, len);
		out[n++][len] = '\0';
		if (!arg[len])
			return n;
		arg += len + 1;
	}
}

static int strategy(const char *name, enum explore_strategy *out)
{
	if (!strcmp(name, "random"))
		*out = EXPLORE_RANDOM;
	else if (!strcmp(name, "pct"))
		*out = EXPLORE_PCT;
	else
		return -1;
	return 0;
}

static const char *const strategy_names[] = {
	[EXPLORE_RANDOM] = "random",
	[EXPLORE_PCT] = "pct",
	[EXPLORE_BYTES] = "bytes",
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "list-per-policy", no_argument, NULL, 'L' },
		/*
		 * Its name from before the explorer said "policy": a hidden
		 * alias (not in usage()), as older build directories may
		 * still call it.
		 */
		{ "list-designed", no_argument, NULL, 'L' },
		{ "scenario", required_argument, NULL, 'S' },
		{ "strategy", required_argument, NULL, 't' },
		{ "depth", required_argument, NULL, 'd' },
		{ "steps", required_argument, NULL, 'k' },
		{ "schedules", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "replay", required_argument, NULL, 'r' },
		{ "max-steps", required_argument, NULL, 'm' },
		{ "expect-violation", no_argument, NULL, 'x' },
		{ "weak", no_argument, NULL, 'w' },
		{ "site-coverage", no_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct explore_options opt = {
		.strategy = EXPLORE_RANDOM,
		.depth = 3,
		.max_steps = 100000,
		.seed = 1,
		.schedules = 1000,
		.fail_status = 1,
	};
	const struct explore_scenario *s = NULL;
	enum explore_strategy strategies[MAX_RUNS] = { EXPLORE_RANDOM };
	unsigned long budgets[MAX_RUNS] = { 1000 };
	unsigned int nr_runs = 1, nr_budgets = 1, i;
	unsigned long n;
	struct explore_result res;
	char words[MAX_RUNS][32];
	struct timespec t0, t1;
	bool expect = false, coverage = false;
	double secs;
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			explore_list();
			return 0;
		case 'L':
			explore_list_per_policy();
			return 0;
		case 'S':
			s = explore_find(optarg);
			if (!s) {
				fprintf(stderr, "pcstock-explore: no scenario "
					"'%s' (see --list)\n", optarg);
				return 2;
			}
			break;
		case 't':
			nr_runs = split(optarg, words);
			for (i = 0; i < nr_runs; i++)
				if (strategy(words[i], &strategies[i]))
					nr_runs = 0;
			if (!nr_runs) {
				usage(stderr);
				return 2;
			}
			break;
		case 'd':
			opt.depth = (unsigned int)number(optarg);
			break;
		case 'k':
			opt.steps = (unsigned long)number(optarg);
			break;
		case 'n':
			nr_budgets = split(optarg, words);
			if (!nr_budgets) {
				usage(stderr);
				return 2;
			}
			for (i = 0; i < nr_budgets; i++)
				budgets[i] = (unsigned long)number(words[i]);
			break;
		case 's':
			opt.seed = number(optarg);
			break;
		case 'r':
			opt.seed = number(optarg);
			budgets[0] = 1;
			nr_budgets = 1;
			break;
		case 'm':
			opt.max_steps = (unsigned long)number(optarg);
			break;
		case 'x':
			expect = true;
			break;
		case 'w':
#ifndef PCSTOCK_EXPLORE_WMM
			fprintf(stderr, "pcstock-explore: built without the "
				"weak-memory model\n");
			return 2;
#endif
			opt.weak = true;
			break;
		case 'c':
			coverage = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'q':
			opt.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!s || optind != argc || !opt.depth || !opt.max_steps ||
	    (nr_budgets != 1 && nr_budgets != nr_runs) ||
	    (coverage && !opt.weak)) {
		usage(stderr);
		return 2;
	}
	opt.fail_status = expect ? 0 : 1;
	err = explore_start(s);
	if (err) {
		fprintf(stderr, "pcstock-explore: %s: setup failed: %s\n",
			s->name, strerror(-err));
		return 2;
	}
	for (i = 0, n = 0; i < nr_runs; i++) {
		opt.strategy = strategies[i];
		opt.schedules = budgets[nr_budgets == 1 ? 0 : i];
		clock_gettime(CLOCK_MONOTONIC, &t0);
		explore_run(&opt, &res);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("%s (%s%s): %lu schedules (seeds %" PRIu64 "..%"
		       PRIu64 "), %llu steps, %.2f s, %.0f schedules/s: no "
		       "violation\n", s->name, strategy_names[opt.strategy],
		       opt.weak ? ", weak" : "", res.schedules, opt.seed,
		       opt.seed + res.schedules - 1, res.steps, secs,
		       secs > 0 ? (double)res.schedules / secs : 0.0);
		n += opt.schedules;
	}
	explore_stop();
	if (coverage)
		explore_site_report();
	if (expect) {
		printf("expected a violation within %lu schedules: not found\n",
		       n);
		return 1;
	}
	return 0;
}
