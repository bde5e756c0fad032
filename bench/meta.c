// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * meta.c - what a result depends on: source commit, compiler and flags,
 * kernel, glibc and its rseq area, CPU model, processing units, cores and
 * NUMA nodes (through a pcstock domain), CPU mode, library versions, run
 * options and time.  One JSON object (first line of bench.jsonl, and
 * meta.json) and one human paragraph (table header).
 */
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench.h"

#ifndef BENCH_SOURCE_DIR
#define BENCH_SOURCE_DIR "."
#endif
#ifndef BENCH_C_FLAGS
#define BENCH_C_FLAGS "?"
#endif
#ifndef BENCH_URCU_VERSION
#define BENCH_URCU_VERSION "?"
#endif
#ifndef BENCH_HWLOC_VERSION
#define BENCH_HWLOC_VERSION "?"
#endif

struct meta {
	char commit[48];
	char compiler[64];
	char kernel[256];
	char cpu_model[128];
	char utc[32];
	double load[3];
	unsigned int pus, cores, nodes;
};

const char *cpu_mode_name(enum pcstock_cpu_mode m)
{
	switch (m) {
	case PCSTOCK_CPU_SIM:
		return "sim";
	case PCSTOCK_CPU_PINNED:
		return "pinned";
	case PCSTOCK_CPU_RSEQ:
		return "rseq";
	case PCSTOCK_CPU_THREAD:
		return "thread";
	case PCSTOCK_CPU_COOP:
		return "coop";
	}
	return "?";
}

static void first_line(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");

	buf[0] = 0;
	if (!p)
		return;
	if (fgets(buf, (int)len, p))
		buf[strcspn(buf, "\n")] = 0;
	pclose(p);
}

/* The CPU's model name (/proc/cpuinfo), "unknown" if none. */
void bench_cpu_model(char *buf, size_t len)
{
	char line[256], *colon;
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !colon)
			continue;
		snprintf(buf, len, "%s", colon + 2);
		buf[strcspn(buf, "\n")] = 0;
		break;
	}
	if (f)
		fclose(f);
}

/* Processing units, cores and NUMA nodes this process may use. */
static void topology(struct meta *m)
{
	struct pcstock_domain_attr attr = { .mode = PCSTOCK_CPU_PINNED };
	struct pcstock_domain *d;
	unsigned long seen_core[64] = { 0 }, seen_node[64] = { 0 };
	unsigned int i;
	int v;

	if (pcstock_domain_create(&attr, &d))
		return;
	m->pus = pcstock_domain_nr_cpus(d);
	for (i = 0; i < m->pus; i++) {
		v = pcstock_cpu_core(d, i);
		if (v >= 0 && v < 4096 &&
		    !(seen_core[v / 64] & (1UL << (v % 64)))) {
			seen_core[v / 64] |= 1UL << (v % 64);
			m->cores++;
		}
		v = pcstock_cpu_numa_node(d, i);
		if (v >= 0 && v < 4096 &&
		    !(seen_node[v / 64] & (1UL << (v % 64)))) {
			seen_node[v / 64] |= 1UL << (v % 64);
			m->nodes++;
		}
	}
	pcstock_domain_destroy(d);
}

static void collect(struct meta *m)
{
	char dirty[8];
	struct utsname u;
	time_t now = time(NULL);

	memset(m, 0, sizeof(*m));
	first_line("git -C '" BENCH_SOURCE_DIR "' rev-parse --short=12 HEAD "
		   "2>/dev/null", m->commit, sizeof(m->commit));
	first_line("git -C '" BENCH_SOURCE_DIR "' status --porcelain "
		   "--untracked-files=no 2>/dev/null | head -c 1", dirty,
		   sizeof(dirty));
	if (!m->commit[0])
		snprintf(m->commit, sizeof(m->commit), "unknown");
	else if (dirty[0])
		strncat(m->commit, "-dirty", sizeof(m->commit) - 13);
#ifdef __clang__
	snprintf(m->compiler, sizeof(m->compiler), "clang %s",
		 __clang_version__);
#else
	snprintf(m->compiler, sizeof(m->compiler), "gcc %s", __VERSION__);
#endif
	if (!uname(&u))
		snprintf(m->kernel, sizeof(m->kernel), "%s %s %s", u.sysname,
			 u.release, u.machine);
	bench_cpu_model(m->cpu_model, sizeof(m->cpu_model));
	strftime(m->utc, sizeof(m->utc), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	/* Other processes' load, as a warning sign next to the figures. */
	if (getloadavg(m->load, 3) != 3)
		m->load[0] = m->load[1] = m->load[2] = -1;
	topology(m);
}

static const char *cpu_id_method(enum pcstock_cpu_mode mode)
{
	if (mode != PCSTOCK_CPU_RSEQ)
		return "thread-local slot";
	return __rseq_size ? "glibc rseq cpu_id" : "sched_getcpu()";
}

static void put_json(FILE *f, const struct meta *mp, const struct opts *o,
		     double elapsed)
{
	const struct meta m = *mp;

	fprintf(f, "{\"kind\":\"meta\",\"tool\":\"pcstock-bench\","
		"\"commit\":\"%s\",\"compiler\":\"%s\",\"cflags\":\"%s\","
		"\"kernel\":\"%s\",\"glibc\":\"%s\",\"rseq_size\":%u,"
		"\"cpu_model\":\"%s\",\"pus\":%u,\"cores\":%u,"
		"\"numa_nodes\":%u,\"allowed_cpus\":%u,\"cpu_mode\":\"%s\","
		"\"cpu_id\":\"%s\",\"pcstock\":\"%s\",\"liburcu\":\"%s\","
		"\"hwloc\":\"%s\",\"page_size\":%lu,\"batch\":%u,"
		"\"duration_s\":%g,\"warmup_s\":%g,\"reps\":%u,"
		"\"seed\":%llu,\"baseline\":\"%s\",\"quick\":%s,"
		"\"utc\":\"%s\",\"elapsed_s\":%.1f,"
		"\"loadavg\":[%.2f,%.2f,%.2f]}",
		m.commit, m.compiler, BENCH_C_FLAGS, m.kernel,
		gnu_get_libc_version(), __rseq_size, m.cpu_model, m.pus,
		m.cores, m.nodes, o->nr_os_cpus, cpu_mode_name(o->mode),
		cpu_id_method(o->mode), pcstock_version(), BENCH_URCU_VERSION,
		BENCH_HWLOC_VERSION, PCSTOCK_PAGE_SIZE, o->batch, o->duration,
		o->warmup, o->reps, (unsigned long long)o->seed, o->baseline,
		o->quick ? "true" : "false", m.utc, elapsed, m.load[0],
		m.load[1], m.load[2]);
}

static void put_text(FILE *f, const struct meta *mp, const struct opts *o,
		     double elapsed)
{
	const struct meta m = *mp;

	fprintf(f, "Machine: %s, %u PUs / %u cores / %u NUMA node(s) "
		"allowed; %s; glibc %s (rseq %s).  \n"
		"Build: pcstock %s (commit %s), %s, `%s`; liburcu %s, "
		"hwloc %s.  \n"
		"Run: cpu-mode %s, batch %u, %g s measured after %g s "
		"warm-up, %u repetitions, strategies interleaved in a "
		"shuffled order (seed %llu), %s UTC, %.0f s in all; load "
		"average at the end %.2f / %.2f / %.2f (1/5/15 min).  \n"
		"Cells: median over repetitions, with the coefficient of "
		"variation when above 2 %%; \"A vs B\": paired speedup of A "
		"over B (>1: A better), median (min-max).\n",
		m.cpu_model, m.pus, m.cores, m.nodes, m.kernel,
		gnu_get_libc_version(), __rseq_size ? "on" : "off",
		pcstock_version(), m.commit, m.compiler, BENCH_C_FLAGS,
		BENCH_URCU_VERSION, BENCH_HWLOC_VERSION,
		cpu_mode_name(o->mode), o->batch, o->duration, o->warmup,
		o->reps, (unsigned long long)o->seed, m.utc, elapsed,
		m.load[0], m.load[1], m.load[2]);
}

static char *meta_print(const struct opts *o, double elapsed,
			void (*put)(FILE *, const struct meta *,
				    const struct opts *, double))
{
	struct meta m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	collect(&m);
	put(f, &m, o, elapsed);
	fclose(f);
	return buf;
}

char *meta_json(const struct opts *o, double elapsed)
{
	return meta_print(o, elapsed, put_json);
}

char *meta_text(const struct opts *o, double elapsed)
{
	return meta_print(o, elapsed, put_text);
}
