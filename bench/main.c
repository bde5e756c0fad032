// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pcstock-bench - every charging strategy on the same workloads, in the same
 * process, interleaved.
 *
 * For each configuration every selected strategy builds its tree once; then
 * each repetition runs the strategies in a freshly shuffled (seeded) order,
 * so drift and noisy neighbours hit them alike, and every run ends with a
 * conservation check.  The exit status is 0, 1 for a usage or setup error,
 * 2 if conservation was violated anywhere.
 */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static const char usage_text[] =
"usage: pcstock-bench [options]\n"
"\n"
"Runs the benchmark matrix and writes bench.jsonl, bench.csv, table.md,\n"
"meta.json and plots (gnuplot) to the results directory.\n"
"\n"
"  --workload LIST    comma list of: fault fault-stock tenants sock scale\n"
"                     depth drain tight strand nearmax (default: all)\n"
"  --strategy LIST    comma list (default: %s)\n"
"  --baseline NAME    strategy every ratio is taken against (default:\n"
"                     memcg7, else none)\n"
"  --threads LIST     worker counts for tenants, scale, depth and tight\n"
"                     (default: one per allowed CPU; scale sweeps 1..CPUs\n"
"                     and 2x oversubscribed)\n"
"  --duration S       seconds measured per run (default 0.1)\n"
"  --warmup S         seconds before measuring (default duration / 5)\n"
"  --reps N           repetitions, at least 1 (default 5)\n"
"  --batch N          stock batch in pages (default 64)\n"
"  --cpu-mode MODE    sim | pinned | rseq | thread | coop (default sim);\n"
"                     drain and strand always use simulated CPUs, fault\n"
"                     cooperative ones, fault-stock shares a SIM CPU,\n"
"                     nearmax SIM CPUs unless thread\n"
"  --seed N           shuffling and size seed (default 1)\n"
"  --full             drain also over 100k groups and every groups x CPUs\n"
"  --quick            tiny durations and matrix, 3 repetitions (smoke)\n"
"  --json             JSON Lines on stdout instead of the table\n"
"  --out DIR          results directory (default: results)\n"
"  --list             list workloads and strategies\n"
"  --list-strategies  the same for scripts: name, default|extra, policy\n"
"                     properties, workloads, tab-separated\n"
"  --list-policies    the library's registered policies, one a line\n"
"  --list-designs     the same (the name before 0.6)\n"
"  --profile WHAT     callgrind mode: run N operations of one kind in a\n"
"                     marked function (see scripts/callgrind-fastpath)\n"
"  --ops N            operations for --profile, transactions for\n"
"                     --net-rr (default 100000), hit pairs per round for\n"
"                     --shm (default 1000000)\n"
"  --net-rr           the network's own cost of a one-byte loopback\n"
"                     request/response (UDP; SCTP where the kernel has\n"
"                     it), CPU and wall time per transaction, no pcstock\n"
"                     call (for scripts/lkp-predict); --json: records\n"
"  --shm              the shared tree (pcstock/shared.h) against a private\n"
"                     one, side by side, instead of the matrix: the hit\n"
"                     pair (2 x --reps + 1 alternated rounds of --ops\n"
"                     pairs), N fork()ed processes against N threads on\n"
"                     tenants and scale (N from --threads, default 1,2,4;\n"
"                     --reps runs of --duration), and the time to recover\n"
"                     and reap after a SIGKILL on 10 and 10,000 groups\n"
"                     (10 x --reps deaths each); markdown on stdout, or\n"
"                     records with --json; exit 2 if conservation failed\n"
"  --opcount          the per-operation breakdown instead of the matrix:\n"
"                     locked instructions per operation of tenants and\n"
"                     scale for every policy (trace library, stepped:\n"
"                     exact) and what a locked instruction costs on this\n"
"                     CPU; writes opcount.md and opcount.jsonl\n"
"                     (scripts/op-breakdown adds callgrind's instructions)\n"
"  --lines            the cache-line model instead of the matrix: sock,\n"
"                     scale, tenants and fault traced on simulated CPUs,\n"
"                     predicted against measured (docs/lines-model.md);\n"
"                     writes lines.jsonl, lines-*.dat and plots\n"
"  --cpus LIST        --lines: simulated CPU counts, even, 2..1024\n"
"                     (default 2,16,64,224,1024)\n"
"  --topology DESC    --lines: hwloc synthetic topology (default: two\n"
"                     packages of N/4 two-thread cores from 16 CPUs on)\n"
"  --remote-factor X  --lines: cost of a cross-package transfer against\n"
"                     a local one (default 1: not measurable here)\n"
"  --interleave HOW   --lines: time (default: each simulated CPU's\n"
"                     accesses one at a time by its clock) or op (whole\n"
"                     steps in a shuffled order per round)\n"
"  --pricing HOW      --lines: measured (default: a core keeps a line it\n"
"                     took for the calibrated run of accesses; a request\n"
"                     travels to the holder, which lets go when its hold\n"
"                     ends, and the data comes back: the two ways\n"
"                     measured here; the replay's clocks predict), hold\n"
"                     (the same with no way for the request: the model\n"
"                     before 0.8) or move (the earliest: every access may\n"
"                     move the line, priced at a requester's loss, capped\n"
"                     at the line's move time); --interleave op is always\n"
"                     move\n"
"  --lines-fetch-ns N --lines: price an idle fetch at N ns beyond a local\n"
"                     add instead of the calibration's reading (for a\n"
"                     calibration that lacks it, or to test the\n"
"                     prediction's sensitivity)\n"
"  --lines-store-serial F  --lines: drain buffered stores with serial\n"
"                     share F (0: their lines fetched at once, 1: one\n"
"                     after another) instead of the store reading's\n"
"  --lines-runahead F --lines: hide share F of a locked op's transfer\n"
"                     behind the plain work after it (0: the core waits\n"
"                     for the line, 1: only its next locked op does)\n"
"                     instead of the run-ahead reading's\n"
"  --lines-lock-ends F  --lines: a core's locked op on another line ends\n"
"                     its hold of the line it took last with probability\n"
"                     F instead of the work reading's fit (0: holds last\n"
"                     through other locked ops, 1: never)\n"
"  --lines-drain-under-load F  --lines: buffered stores drain through\n"
"                     share F of a wait for a load (0: not at all, 1:\n"
"                     the whole wait) instead of the drain reading's\n"
"  --lines-store-buffer N  --lines: a CPU buffers at most N of its\n"
"                     traced stores (0..256, 0: no bound; a store that\n"
"                     finds N undrained waits for the oldest);\n"
"                     default: sock's designs their own bound from the\n"
"                     calibration's buffer size, where known\n"
"                     (docs/lines-model.md); needs --pricing measured\n"
"                     or hold\n"
"  --sock-work-ns N   --lines: in the time replay, a sock CPU spends N ns\n"
"                     on other work per message it delivers (a network\n"
"                     stack's own cost: scripts/lkp-predict)\n"
"  --lines-calib FILE --lines: take the transfer calibration (and the\n"
"                     2-CPU local costs, if recorded) from a lines.jsonl\n"
"                     of another run, e.g. another CPU's\n"
"  --help             this text\n";

enum {
	OPT_WORKLOAD = 256, OPT_STRATEGY, OPT_BASELINE, OPT_THREADS,
	OPT_DURATION, OPT_WARMUP, OPT_REPS, OPT_BATCH, OPT_CPU_MODE, OPT_SEED,
	OPT_FULL, OPT_QUICK, OPT_JSON, OPT_OUT, OPT_LIST, OPT_PROFILE, OPT_OPS,
	OPT_NET_RR,
	OPT_HELP, OPT_LINES, OPT_CPUS, OPT_TOPOLOGY, OPT_REMOTE,
	OPT_INTERLEAVE, OPT_PRICING, OPT_LINES_CALIB, OPT_LINES_FETCH, OPT_LINES_SERIAL, OPT_LINES_RUNAHEAD, OPT_LINES_LOCK_ENDS,
	OPT_LINES_UNDER_LOAD, OPT_LINES_STORE_BUFFER,
	OPT_SOCK_WORK, OPT_LIST_STRATEGIES, OPT_LIST_POLICIES, OPT_OPCOUNT,
	OPT_SHM,
};

static const struct option long_opts[] = {
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "strategy", required_argument, NULL, OPT_STRATEGY },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "cpu-mode", required_argument, NULL, OPT_CPU_MODE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "full", no_argument, NULL, OPT_FULL },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "list-strategies", no_argument, NULL, OPT_LIST_STRATEGIES },
	{ "list-policies", no_argument, NULL, OPT_LIST_POLICIES },
	{ "list-designs", no_argument, NULL, OPT_LIST_POLICIES },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "net-rr", no_argument, NULL, OPT_NET_RR },
	{ "ops", required_argument, NULL, OPT_OPS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "opcount", no_argument, NULL, OPT_OPCOUNT },
	{ "shm", no_argument, NULL, OPT_SHM },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "remote-factor", required_argument, NULL, OPT_REMOTE },
	{ "interleave", required_argument, NULL, OPT_INTERLEAVE },
	{ "pricing", required_argument, NULL, OPT_PRICING },
	{ "lines-calib", required_argument, NULL, OPT_LINES_CALIB },
	{ "lines-fetch-ns", required_argument, NULL, OPT_LINES_FETCH },
	{ "lines-store-serial", required_argument, NULL, OPT_LINES_SERIAL },
	{ "lines-runahead", required_argument, NULL, OPT_LINES_RUNAHEAD },
	{ "lines-lock-ends", required_argument, NULL, OPT_LINES_LOCK_ENDS },
	{ "lines-drain-under-load", required_argument, NULL,
	  OPT_LINES_UNDER_LOAD },
	{ "lines-store-buffer", required_argument, NULL,
	  OPT_LINES_STORE_BUFFER },
	{ "sock-work-ns", required_argument, NULL, OPT_SOCK_WORK },
	{ NULL, 0, NULL, 0 },
};

static int parse_mode(const char *s, enum pcstock_cpu_mode *m)
{
	static const enum pcstock_cpu_mode modes[] = {
		PCSTOCK_CPU_SIM, PCSTOCK_CPU_PINNED, PCSTOCK_CPU_RSEQ,
		PCSTOCK_CPU_THREAD, PCSTOCK_CPU_COOP,
	};
	unsigned int i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(s, cpu_mode_name(modes[i]))) {
			*m = modes[i];
			return 0;
		}
	return -EINVAL;
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static int parse_double(const char *s, double lo, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return *end || *v < lo ? -EINVAL : 0;
}

/* A share: a number in [0, 1]. */
static int parse_share(const char *s, double *v)
{
	int ret = parse_double(s, 0, v);

	return !ret && *v > 1 ? -EINVAL : ret;
}

static int parse_uint(const char *s, unsigned long lo, unsigned long hi,
		      unsigned int *v)
{
	unsigned long x;
	char *end;

	x = strtoul(s, &end, 10);
	if (*end || !*s || x < lo || x > hi)
		return -EINVAL;
	*v = (unsigned int)x;
	return 0;
}

static void list_all(void)
{
	const struct strategy *s;
	unsigned int i;

	printf("workloads:");
	for (i = 0; i < bench_nr_workloads(); i++)
		printf(" %s", bench_workloads[i]->name);
	printf("\nstrategies:\n");
	for (i = 0; (s = bench_strategy_nth(i)); i++)
		printf("  %-12s %s\n", s->name, s->what);
	printf("default: %s\n", bench_default_strategies());
}

/*
 * --list-strategies, for scripts (bench/smoke.cmake): one line per
 * strategy, tab-separated: its name; "default" or "extra" (in the default
 * set or on request); its policy's properties (a comma list of those that
 * hold, "policy" first) or "-"; the workloads it takes part in, or "-".
 */
static void list_strategies(void)
{
	struct pcstock_policy_info in;
	const struct strategy *s;
	unsigned int i, w, n;

	for (i = 0; (s = bench_strategy_nth(i)); i++) {
		printf("%s\t%s\t", s->name,
		       bench_strategy_is_default(s) ? "default" : "extra");
		if ((s->flags & STRAT_POLICY) &&
		    !pcstock_tree_policy_info(s->policy, &in))
			printf("policy%s%s%s%s%s", in.stocks ? ",stocks" : "",
			       in.per_counter ? ",per_counter" : "",
			       in.group_batch ? ",group_batch" : "",
			       in.uncharges_refill ? ",uncharges_refill" : "",
			       in.exact_at_limit ? ",exact_at_limit" : "");
		else
			printf("-");
		printf("\t");
		for (w = 0, n = 0; w < bench_nr_workloads(); w++)
			if ((s->flags & bench_workloads[w]->needs) ==
			    bench_workloads[w]->needs)
				printf("%s%s", n++ ? "," : "",
				       bench_workloads[w]->name);
		printf("%s\n", n ? "" : "-");
	}
}

/*
 * --list-policies: the library's registry, one name a line, asked of it
 * directly (not of the strategy table), so that a test can check the
 * table against it.
 */
static void list_policies(void)
{
	const char *name;
	int p;

	for (p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
		name = pcstock_tree_policy_name((enum pcstock_tree_policy)p);
		printf("%s\n", name ? name : "?");
	}
}

static int allowed_cpus(struct opts *o)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	o->os_cpus = calloc(CPU_SETSIZE, sizeof(int));
	if (!o->os_cpus)
		return -ENOMEM;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			o->os_cpus[o->nr_os_cpus++] = i;
	return o->nr_os_cpus ? 0 : -ENODEV;
}

struct prog {
	unsigned int done, total;
	double start;
	bool tty;
};

static void progress(struct prog *p, const struct config *c,
		     unsigned int rep, unsigned int reps, const char *strat)
{
	double el = now_s() - p->start;
	double eta = p->done ? el / p->done * (p->total - p->done) : 0;

	fprintf(stderr, "%s[%3u/%u] %-8s %-24s rep %u/%u %-12s %4.0fs eta %4.0fs%s",
		p->tty ? "\r" : "", p->done + 1, p->total, c->wl->name,
		c->label, rep + 1, reps, strat, el, eta, p->tty ? "" : "\n");
}

static void shuffle(unsigned int *v, unsigned int n, uint64_t *rng)
{
	unsigned int i, j, t;

	for (i = n; i > 1; i--) {
		j = (unsigned int)(rng_next(rng) % i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/*
 * Build every strategy's tree for @c, unless @prev (the previous
 * configuration) had the same workload and tree: runs end with everything
 * returned and drained, so its trees are reused.
 */
static int build(const struct config *c, const struct config *prev,
		 const struct strategy *const *st, unsigned int nr_st,
		 void **inst)
{
	unsigned int i;
	int ret, err = 0;

	if (prev && prev->wl == c->wl &&
	    !memcmp(&prev->tree, &c->tree, sizeof(c->tree)))
		return 0;
	for (i = 0; i < nr_st; i++) {
		if (inst[i])
			st[i]->destroy(inst[i]);
		inst[i] = NULL;
		if ((st[i]->flags & c->wl->needs) != c->wl->needs)
			continue;
		ret = st[i]->create(&c->tree, &inst[i]);
		if (ret) {
			fprintf(stderr, "\n%s %s: %s: cannot build the tree: "
				"%s\n", c->wl->name, c->label, st[i]->name,
				strerror(-ret));
			inst[i] = NULL;
			err = ret;
		}
	}
	return err;
}

/*
 * Run the repetitions of @c on the trees in @inst.  Returns the number of
 * conservation violations, or -errno.
 */
static int run_config(const struct opts *o, const struct config *c,
		      unsigned int ci, const struct strategy *const *st,
		      unsigned int nr_st, void **inst, struct result *res,
		      struct prog *p)
{
	unsigned int order[BENCH_MAX_STRATEGIES], n = 0, rep, i, k;
	uint64_t rng = o->seed * 0xD1B54A32D192ED03ULL + ci + 1;
	struct sample smp;
	int ret, bad = 0, err = 0;

	for (i = 0; i < nr_st; i++)
		if (inst[i])
			order[n++] = i;
	for (rep = 0; rep < o->reps; rep++) {
		shuffle(order, n, &rng);
		for (k = 0; k < n; k++) {
			i = order[k];
			progress(p, c, rep, o->reps, st[i]->name);
			memset(&smp, 0, sizeof(smp));
			smp.cons_ok = true;
			ret = c->wl->measure(o, c, st[i], inst[i], &smp);
			if (ret) {
				fprintf(stderr, "\n%s %s: %s: run failed: %s\n",
					c->wl->name, c->label, st[i]->name,
					strerror(-ret));
				err = ret;
				continue;
			}
			bad += !smp.cons_ok;
			result_put(res, ci, i, rep, &smp);
		}
	}
	p->done++;
	return err ? err : bad;
}

static int pick(struct opts *o, const struct strategy **st,
		unsigned int *nr_st, struct config *cfg, unsigned int *nr_cfg)
{
	const char *slist = o->strategies ? o->strategies :
			    bench_default_strategies();
	/*
	 * memcg7 by name: the seed's "before", the stock the series replaces,
	 * is what every ratio is about; without it, no stock at all.
	 */
	const char *fallback[] = { o->baseline, "memcg7", "none", "ctr-none" };
	const char *p;
	char name[32];
	unsigned int i, w;
	size_t len;

	*nr_st = 0;
	for (p = slist; *p; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		if (!len)
			continue;
		if (!bench_strategy(name) || *nr_st >= BENCH_MAX_STRATEGIES) {
			fprintf(stderr, "pcstock-bench: unknown strategy '%s'"
				" (--list)\n", name);
			return -EINVAL;
		}
		st[(*nr_st)++] = bench_strategy(name);
	}
	for (p = o->workloads; p && *p; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		for (w = 0; w < bench_nr_workloads(); w++)
			if (strlen(bench_workloads[w]->name) == len &&
			    !strncmp(bench_workloads[w]->name, p, len))
				break;
		if (len && w == bench_nr_workloads()) {
			fprintf(stderr, "pcstock-bench: unknown workload "
				"'%.*s' (--list)\n", (int)len, p);
			return -EINVAL;
		}
	}
	*nr_cfg = 0;
	for (w = 0; w < bench_nr_workloads(); w++) {
		if (o->workloads && !in_list(o->workloads,
					     bench_workloads[w]->name))
			continue;
		i = *nr_cfg;
		*nr_cfg += bench_workloads[w]->expand(o, cfg + *nr_cfg,
						      BENCH_MAX_CONFIGS -
						      *nr_cfg);
		for (; i < *nr_cfg; i++)
			cfg[i].wl = bench_workloads[w];
	}
	for (i = 0; i < 4; i++)
		for (w = 0; w < *nr_st; w++)
			if (fallback[i] && !strcmp(st[w]->name, fallback[i])) {
				o->baseline = fallback[i];
				return 0;
			}
	o->baseline = *nr_st ? st[0]->name : "none";
	return 0;
}

/*
 * --lines and --opcount need the trace variant of the library
 * (src/atomic.h), which the measuring binary must not carry: they live in
 * pcstock-bench-lines, next to this one, which does everything they
 * report.
 */
static int run_lines(struct opts *o, char **argv)
{
#ifdef BENCH_LINES
	int ret = allowed_cpus(o);

	(void)argv;
	if (ret)
		return 1;
	ret = o->opcount ? opcount_main(o) : lines_main(o);
	free(o->os_cpus);
	return ret;
#else
	char self[4096], *slash;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 32);

	(void)o;
	if (len <= 0) {
		fprintf(stderr, "pcstock-bench: cannot find myself\n");
		return 1;
	}
	self[len] = 0;
	slash = strrchr(self, '/');
	strcpy(slash ? slash + 1 : self, "pcstock-bench-lines");
	execv(self, argv);
	fprintf(stderr, "pcstock-bench: cannot run %s: %s\n", self,
		strerror(errno));
	return 1;
#endif
}

int main(int argc, char **argv)
{
	struct opts o = {
		.duration = 0.1, .warmup = -1, .reps = 5, .batch = 64,
		.mode = PCSTOCK_CPU_SIM, .seed = 1, .out = "results",
		/* the seed's "before": see pick()'s fallback */
		.baseline = "memcg7", .remote_factor = 1,
		.pricing_hold = true, .pricing_request = true,
		.lines_fetch_ns = NAN,
		.lines_store_serial = NAN,
		.lines_runahead = NAN,
		.lines_lock_ends = NAN,
		.lines_under_load = NAN,
	};
	static struct config cfg[BENCH_MAX_CONFIGS];
	const struct strategy *st[BENCH_MAX_STRATEGIES];
	void *inst[BENCH_MAX_STRATEGIES] = { NULL };
	unsigned int nr_st, nr_cfg, c, ops = 100000;
	bool net_rr = false, shm = false, ops_set = false;
	const char *profile = NULL;
	bool reps_set = false, dur_set = false;
	struct prog prog = { .tty = isatty(2) };
	struct result *res;
	char *mj, *mt;
	int opt, ret, bad = 0, err = 0;

	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		ret = 0;
		switch (opt) {
		case OPT_WORKLOAD:
			o.workloads = optarg;
			break;
		case OPT_STRATEGY:
			o.strategies = optarg;
			break;
		case OPT_BASELINE:
			o.baseline = optarg;
			break;
		case OPT_THREADS:
			o.threads = optarg;
			break;
		case OPT_DURATION:
			ret = parse_double(optarg, 0.001, &o.duration);
			dur_set = true;
			break;
		case OPT_WARMUP:
			ret = parse_double(optarg, 0, &o.warmup);
			break;
		case OPT_REPS:
			ret = parse_uint(optarg, 1, BENCH_MAX_REPS, &o.reps);
			reps_set = true;
			break;
		case OPT_BATCH:
			ret = parse_uint(optarg, 1, PCSTOCK_STOCK_MAX_BATCH,
					 &o.batch);
			break;
		case OPT_CPU_MODE:
			ret = parse_mode(optarg, &o.mode);
			break;
		case OPT_SEED:
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case OPT_FULL:
			o.full = true;
			break;
		case OPT_QUICK:
			o.quick = true;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_OUT:
			o.out = optarg;
			break;
		case OPT_LIST:
			list_all();
			return 0;
		case OPT_LIST_STRATEGIES:
			list_strategies();
			return 0;
		case OPT_LIST_POLICIES:
			list_policies();
			return 0;
		case OPT_PROFILE:
			profile = optarg;
			break;
		case OPT_NET_RR:
			net_rr = true;
			break;
		case OPT_OPS:
			ret = parse_uint(optarg, 1, 1UL << 30, &ops);
			ops_set = true;
			break;
		case OPT_HELP:
			printf(usage_text, bench_default_strategies());
			return 0;
		case OPT_LINES:
			o.lines = true;
			break;
		case OPT_OPCOUNT:
			o.opcount = true;
			break;
		case OPT_SHM:
			shm = true;
			break;
		case OPT_CPUS:
			o.sim_cpus = optarg;
			break;
		case OPT_TOPOLOGY:
			o.topology = optarg;
			break;
		case OPT_REMOTE:
			ret = parse_double(optarg, 0.1, &o.remote_factor);
			break;
		case OPT_INTERLEAVE:
			o.interleave_op = !strcmp(optarg, "op");
			ret = o.interleave_op || !strcmp(optarg, "time") ?
			      0 : -EINVAL;
			break;
		case OPT_PRICING:
			o.pricing_request = !strcmp(optarg, "measured");
			o.pricing_hold = o.pricing_request ||
					 !strcmp(optarg, "hold");
			ret = o.pricing_hold || !strcmp(optarg, "move") ?
			      0 : -EINVAL;
			break;
		case OPT_LINES_FETCH:
			ret = parse_double(optarg, 0, &o.lines_fetch_ns);
			break;
		case OPT_LINES_SERIAL:
			ret = parse_share(optarg, &o.lines_store_serial);
			break;
		case OPT_LINES_RUNAHEAD:
			ret = parse_share(optarg, &o.lines_runahead);
			break;
		case OPT_LINES_LOCK_ENDS:
			ret = parse_share(optarg, &o.lines_lock_ends);
			break;
		case OPT_LINES_UNDER_LOAD:
			ret = parse_share(optarg, &o.lines_under_load);
			break;
		case OPT_LINES_STORE_BUFFER:
			ret = parse_uint(optarg, 0, BENCH_LINES_SB_MAX,
					 &o.lines_store_buffer);
			o.lines_store_buffer_set = true;
			break;
		case OPT_SOCK_WORK:
			ret = parse_double(optarg, 0, &o.sock_work_ns);
			break;
		case OPT_LINES_CALIB:
			o.lines_calib = optarg;
			break;
		default:
			fprintf(stderr, usage_text,
				bench_default_strategies());
			return 1;
		}
		if (ret) {
			fprintf(stderr, "pcstock-bench: bad value '%s'\n",
				optarg);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, usage_text, bench_default_strategies());
		return 1;
	}
	if (profile)
		return profile_main(profile, ops) ? 1 : 0;
	if (net_rr) {
		if (allowed_cpus(&o))
			return 1;
		c = netrr_main(&o, ops) ? 1 : 0;
		free(o.os_cpus);
		return (int)c;
	}
	if (o.quick) {
		o.duration = dur_set ? o.duration : 0.01;
		o.reps = reps_set ? o.reps : 3;
	}
	if (o.warmup < 0)
		o.warmup = o.duration / 5;
	if (o.lines || o.opcount)
		return run_lines(&o, argv);
	if (shm) {
		if (allowed_cpus(&o))
			return 1;
		ret = shm_main(&o, ops_set ? ops : 0);
		free(o.os_cpus);
		return ret;
	}
	ret = allowed_cpus(&o);
	if (!ret)
		ret = pick(&o, st, &nr_st, cfg, &nr_cfg);
	if (ret)
		return 1;
	res = result_new(&o, nr_cfg, nr_st);
	if (!res)
		return 1;
	fprintf(stderr, "pcstock-bench: %u configurations x %u strategies x "
		"%u repetitions, %g s each; %s\n", nr_cfg, nr_st, o.reps,
		o.duration, bench_strategy_note());
	prog.total = nr_cfg;
	prog.start = now_s();
	for (c = 0; c < nr_cfg; c++) {
		ret = build(&cfg[c], c ? &cfg[c - 1] : NULL, st, nr_st, inst);
		if (ret < 0)
			err = ret;
		ret = run_config(&o, &cfg[c], c, st, nr_st, inst, res, &prog);
		if (ret < 0)
			err = ret;
		else
			bad += ret;
	}
	for (c = 0; c < nr_st; c++)
		if (inst[c])
			st[c]->destroy(inst[c]);
	fprintf(stderr, "%sdone in %.0f s\n", prog.tty ? "\n" : "",
		now_s() - prog.start);
	mj = meta_json(&o, now_s() - prog.start);
	mt = meta_text(&o, now_s() - prog.start);
	if (!mj || !mt ||
	    report_write(res, cfg, nr_cfg, st, nr_st, mj, mt))
		err = -EIO;
	else
		fprintf(stderr, "pcstock-bench: results in %s/\n", o.out);
	free(mj);
	free(mt);
	result_free(res);
	free(o.os_cpus);
	if (bad) {
		fprintf(stderr, "pcstock-bench: conservation violated in %d "
			"run(s)\n", bad);
		return 2;
	}
	return err ? 1 : 0;
}
