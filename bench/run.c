// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * run.c - the timed harness: start workers, release them together, warm up,
 * measure a fixed duration from per-worker counters, stop, join.
 *
 * Workers publish their operation count with a relaxed store to their own
 * 256-byte-aligned line (will-it-scale's layout) and poll a shared phase
 * word; nobody reads a clock per operation.  The main thread samples the
 * counters at the start and end of the measured interval.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "strategy.h"

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	sched_yield();
#endif
}

/* xorshift64*: cheap, seeded, good enough for sizes and shuffles. */
uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/*
 * The OS CPU a worker placed on domain CPU @cpu runs on: pinned and rseq
 * modes place workers like will-it-scale (round-robin over the CPUs this
 * process may use); sim and thread modes leave them to the scheduler.
 */
int run_os_cpu(const struct opts *o, unsigned int cpu)
{
	if (o->mode != PCSTOCK_CPU_PINNED && o->mode != PCSTOCK_CPU_RSEQ)
		return -1;
	return o->os_cpus[cpu % o->nr_os_cpus];
}

int bind_self(int os_cpu)
{
	cpu_set_t set;

	if (os_cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(os_cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Wait for the start signal; false if the run was called off. */
bool worker_go(struct worker *w)
{
	struct run *r = w->run;
	int phase;

	atomic_fetch_add_explicit(&r->ready, 1, memory_order_release);
	while ((phase = atomic_load_explicit(&r->phase,
					     memory_order_acquire)) ==
	       RUN_WAIT)
		sched_yield();
	return phase == RUN_GO;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;

	w->err = bind_self(w->os_cpu);
	if (!w->err)
		w->err = r->s->enter(r->inst, w->cpu);
	if (w->err) {
		atomic_fetch_add_explicit(&r->ready, 1, memory_order_release);
		return NULL;
	}
	if (worker_go(w))
		r->body(w);
	r->s->exit(r->inst);
	return NULL;
}

static void snapshot(const struct run *r, unsigned long *v)
{
	unsigned int i;

	for (i = 0; i < r->nr; i++)
		v[i] = atomic_load_explicit(&r->w[i].ops,
					    memory_order_relaxed);
}

/*
 * Run r->body on r->nr workers (r->w[i].cpu / os_cpu preset by the caller,
 * held arrays allocated by it).  Fills out->ops, fails, thread_min/max
 * (ops/s) and returns the measured interval in out->value (seconds); the
 * workload turns that into its metric.
 */
int run_timed(struct run *r, struct sample *out)
{
	unsigned long *v0 = calloc(r->nr, sizeof(*v0));
	unsigned long *f0 = calloc(r->nr, sizeof(*f0));
	unsigned long *v1 = calloc(r->nr, sizeof(*v1));
	double t0, t1, rate;
	unsigned int i, started = 0;
	int ret = 0;

	if (!v0 || !v1 || !f0) {
		ret = -ENOMEM;
		goto out;
	}
	atomic_store(&r->phase, RUN_WAIT);
	atomic_store(&r->ready, 0);
	for (i = 0; i < r->nr; i++) {
		r->w[i].run = r;
		r->w[i].id = i;
		r->w[i].err = 0;
		atomic_store(&r->w[i].ops, 0);
		atomic_store(&r->w[i].fails, 0);
		ret = -pthread_create(&r->w[i].tid, NULL, worker_main,
				      &r->w[i]);
		if (ret)
			break;
		started++;
	}
	while (atomic_load_explicit(&r->ready, memory_order_acquire) <
	       started)
		sleep_s(0.0005);
	for (i = 0; i < started && !ret; i++)
		ret = r->w[i].err;
	if (ret || started < r->nr) {
		atomic_store_explicit(&r->phase, RUN_STOP,
				      memory_order_release);
		goto join;
	}
	/* release: pairs with the acquire poll in worker_go(). */
	atomic_store_explicit(&r->phase, RUN_GO, memory_order_release);
	sleep_s(r->o->warmup);
	snapshot(r, v0);
	for (i = 0; i < r->nr; i++)
		f0[i] = atomic_load_explicit(&r->w[i].fails,
					     memory_order_relaxed);
	t0 = now_s();
	sleep_s(r->o->duration);
	snapshot(r, v1);
	t1 = now_s();
	atomic_store_explicit(&r->phase, RUN_STOP, memory_order_relaxed);
	out->ops = 0;
	out->fails = 0;
	out->thread_min = 0;
	out->thread_max = 0;
	for (i = 0; i < r->nr; i++) {
		rate = (double)(v1[i] - v0[i]) / (t1 - t0);
		out->ops += v1[i] - v0[i];
		if (!i || rate < out->thread_min)
			out->thread_min = rate;
		if (rate > out->thread_max)
			out->thread_max = rate;
	}
	out->value = t1 - t0;
join:
	for (i = 0; i < started; i++)
		pthread_join(r->w[i].tid, NULL);
	for (i = 0; i < r->nr && !ret; i++)
		out->fails += atomic_load(&r->w[i].fails) - f0[i];
out:
	free(v0);
	free(v1);
	free(f0);
	return ret;
}

/*
 * End of a run: check conservation with the workers' pages still held,
 * give them back from this (non-CPU) thread, drain every stock and check
 * that every level is back to zero.  @held is the per-leaf total.
 */
int release_and_check(const struct strategy *s, void *inst,
		      const struct tree_spec *t, long *held, char *why,
		      size_t len)
{
	unsigned int i;

	if (s->check(inst, held, why, len))
		return -1;
	for (i = 0; i < t->nr_leaves; i++) {
		if (held[i] > 0)
			s->uncharge(inst, 0, i, (unsigned long)held[i]);
		held[i] = 0;
	}
	s->drain_all(inst);
	if (s->stock_pages(inst)) {
		snprintf(why, len, "%lu pages left in stock after a drain",
			 s->stock_pages(inst));
		return -1;
	}
	return s->check(inst, held, why, len);
}
