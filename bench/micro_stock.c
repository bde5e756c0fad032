// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * micro_stock.c - measurements of the stock's fast paths (not a test: it
 * asserts nothing and is not registered with ctest).
 *
 *   micro_stock            the two comparisons below, side by side
 *   micro_stock --hits N   N hit charge + stock uncharge pairs only, for
 *                          valgrind --tool=callgrind (instructions per call)
 *   micro_stock --pingpong default|v4
 *                          one ping-pong run of one policy, for callgrind
 *                          (instructions per charge and uncharge)
 *
 * 1. Hit pair: a 1-page stock-hit charge then a 1-page stock uncharge on
 *    one CPU (DEFAULT; the slot stays between batch - 1 and batch), against
 *    the floor, a fetch_add + fetch_sub pair on a thread-local
 *    cache-aligned atomic_int, and against the primitives the slot
 *    protocol needs (a load + CAS to take, a load + CAS to add), called
 *    out of line on the same kind of atomic_int.  All are timed in
 *    alternating repetitions and the medians compared.
 * 2. Cross-CPU ping-pong (the netperf pattern): a producer on CPU 0 charges
 *    1-4 pages on the leaf of a 3-level tree and passes them through a
 *    single-producer ring to a consumer on CPU 1 that uncharges them;
 *    DEFAULT against V4 throughput, alternating repetitions.
 *
 * Built against the installed flavour of the library (no test hooks).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/stock.h>

#define BATCH 64U
#define REPS 5
#define HIT_PAIRS 10000000UL
#define PING_ITEMS 4000000UL
#define RING_SIZE 4096U		/* power of two */
#define RING_PUBLISH 32U	/* items between index publications */

struct tree {
	struct pcstock_counter root, mid, leaf;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static _Noreturn void die(const char *what, int err)
{
	fprintf(stderr, "micro_stock: %s: %s\n", what, strerror(-err));
	exit(1);
}

static void tree_init(struct tree *t, struct pcstock_domain *d,
		      enum pcstock_stock_policy policy)
{
	int ret;

	pcstock_counter_init(&t->root, NULL, false);
	pcstock_counter_init(&t->mid, &t->root, false);
	pcstock_counter_init(&t->leaf, &t->mid, false);
	ret = pcstock_counter_alloc_stock(&t->leaf, d, BATCH, policy);
	if (ret)
		die("alloc_stock", ret);
}

static void tree_fini(struct tree *t)
{
	pcstock_counter_free_stock(&t->leaf);
	if (pcstock_counter_read(&t->root))
		fprintf(stderr, "micro_stock: %lu pages left charged\n",
			pcstock_counter_read(&t->root));
}

static struct pcstock_domain *domain_new(enum pcstock_cpu_mode mode,
					 unsigned int nr_cpus)
{
	struct pcstock_domain_attr attr = { nr_cpus, mode, NULL };
	struct pcstock_domain *d;
	int ret = pcstock_domain_create(&attr, &d);

	if (ret)
		die("domain_create", ret);
	return d;
}

/* ---- 1. hit pair against the bare atomic pair ------------------------------ */

static _Thread_local _Alignas(64) atomic_int bare;

static void hit_pairs(struct tree *t, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		pcstock_counter_try_charge_stock(&t->leaf, 1, NULL, NULL);
		pcstock_counter_uncharge_stock(&t->leaf, 1);
	}
}

static double time_hits(struct tree *t, unsigned long n)
{
	double t0 = now_ns();

	hit_pairs(t, n);
	return (now_ns() - t0) / (double)n;
}

/* The slot protocol's primitives alone: take 1 and give 1 back by CAS. */
static __attribute__((noinline)) void cas_take(atomic_int *v)
{
	int old = atomic_load_explicit(v, memory_order_relaxed);

	while (old >= 1 &&
	       !atomic_compare_exchange_strong_explicit(v, &old, old - 1,
							memory_order_acquire,
							memory_order_relaxed))
		;
}

static __attribute__((noinline)) void cas_give(atomic_int *v)
{
	int old = atomic_load_explicit(v, memory_order_relaxed);

	while (!atomic_compare_exchange_strong_explicit(v, &old,
			old + 1 > (int)BATCH ? 0 : old + 1,
			memory_order_acq_rel, memory_order_relaxed))
		;
}

static double time_cas(unsigned long n)
{
	double t0 = now_ns();
	unsigned long i;

	atomic_store(&bare, (int)BATCH - 1);
	for (i = 0; i < n; i++) {
		cas_take(&bare);
		cas_give(&bare);
	}
	return (now_ns() - t0) / (double)n;
}

static double time_bare(unsigned long n)
{
	double t0 = now_ns();
	unsigned long i;

	for (i = 0; i < n; i++) {
		atomic_fetch_add_explicit(&bare, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&bare, 1, memory_order_relaxed);
	}
	return (now_ns() - t0) / (double)n;
}

/* Prime the slot (one miss) so that every later pair is a hit. */
static void hit_setup(struct pcstock_domain **d, struct tree *t)
{
	*d = domain_new(PCSTOCK_CPU_SIM, 1);
	tree_init(t, *d, PCSTOCK_STOCK_DEFAULT);
	if (pcstock_cpu_enter(*d, 0))
		die("cpu_enter", -EINVAL);
	pcstock_counter_try_charge_stock(&t->leaf, 1, NULL, NULL);
	pcstock_counter_uncharge_stock(&t->leaf, 1);
}

static void hit_teardown(struct pcstock_domain *d, struct tree *t)
{
	pcstock_cpu_exit(d);
	tree_fini(t);
	pcstock_domain_destroy(d);
}

static void measure_hits(void)
{
	double hit[REPS], floor[REPS], cas[REPS], h, f, k;
	struct pcstock_domain *d;
	struct pcstock_stock_stats st;
	struct tree t;
	int r;

	hit_setup(&d, &t);
	for (r = 0; r < REPS; r++) {
		hit[r] = time_hits(&t, HIT_PAIRS);
		floor[r] = time_bare(HIT_PAIRS);
		cas[r] = time_cas(HIT_PAIRS);
	}
	pcstock_counter_stock_stats(&t.leaf, &st);
	h = median(hit, REPS);
	f = median(floor, REPS);
	k = median(cas, REPS);
	printf("hit pair (charge 1 + uncharge 1, DEFAULT): %6.2f ns\n", h);
	printf("bare fetch_add + fetch_sub pair:           %6.2f ns\n", f);
	printf("bare load+CAS take + load+CAS give pair:   %6.2f ns\n", k);
	printf("ratio hit / bare: %.2fx (goal <= 1.5x); hit / CAS pair: %.2fx; "
	       "CAS pair / bare: %.2fx; misses %lu, trims %lu\n",
	       h / f, h / k, k / f, st.misses, st.trims);
	hit_teardown(d, &t);
}

/* ---- 2. cross-CPU ping-pong -------------------------------------------------- */

struct ring {
	_Alignas(64) atomic_uint head;	/* written by the producer */
	_Alignas(64) atomic_uint tail;	/* written by the consumer */
	_Alignas(64) unsigned char item[RING_SIZE];
};

struct pingpong {
	struct pcstock_domain *d;
	struct tree *t;
	struct ring ring;
	unsigned long failed;
};

/* Publish our index every RING_PUBLISH items. */
static void ring_advance(atomic_uint *own, unsigned int *mine)
{
	if (++*mine % RING_PUBLISH == 0)
		/* release: pairs with the peer's acquire in ring_wait(). */
		atomic_store_explicit(own, *mine, memory_order_release);
}

/*
 * Wait while our index is @gap ahead of the peer's (producer: the ring is
 * full; consumer: it is empty), after publishing ours so that the peer
 * cannot be waiting for it too.
 */
static void ring_wait(atomic_uint *own, unsigned int mine, atomic_uint *other,
		      unsigned int *peer, unsigned int gap)
{
	if (mine - *peer != gap)
		return;
	/* release: pairs with the peer's acquire below. */
	atomic_store_explicit(own, mine, memory_order_release);
	while (mine - *peer == gap) {
		__builtin_ia32_pause();
		/* acquire: pairs with the peer's releases. */
		*peer = atomic_load_explicit(other, memory_order_acquire);
	}
}

static void *producer(void *arg)
{
	struct pingpong *pp = arg;
	struct ring *r = &pp->ring;
	unsigned int head = 0, tail = 0;
	unsigned long i;

	if (pcstock_cpu_enter(pp->d, 0))
		return NULL;
	for (i = 0; i < PING_ITEMS; i++) {
		unsigned char n = (unsigned char)(1 + (i & 3));

		ring_wait(&r->head, head, &r->tail, &tail, RING_SIZE);
		if (!pcstock_counter_try_charge_stock(&pp->t->leaf, n, NULL,
						      NULL)) {
			pp->failed++;
			n = 0;
		}
		r->item[head % RING_SIZE] = n;
		ring_advance(&r->head, &head);
	}
	atomic_store_explicit(&r->head, head, memory_order_release);
	pcstock_cpu_exit(pp->d);
	return NULL;
}

static void *consumer(void *arg)
{
	struct pingpong *pp = arg;
	struct ring *r = &pp->ring;
	unsigned int head = 0, tail = 0;
	unsigned long i;

	if (pcstock_cpu_enter(pp->d, 1))
		return NULL;
	for (i = 0; i < PING_ITEMS; i++) {
		unsigned char n;

		ring_wait(&r->tail, tail, &r->head, &head, 0);
		n = r->item[tail % RING_SIZE];
		ring_advance(&r->tail, &tail);
		if (n)
			pcstock_counter_uncharge_stock(&pp->t->leaf, n);
	}
	pcstock_cpu_exit(pp->d);
	return NULL;
}

/* Items per second of one producer/consumer run. */
static double pingpong_run(struct pcstock_domain *d,
			   enum pcstock_stock_policy policy)
{
	static struct pingpong pp;
	pthread_t prod, cons;
	struct tree *t;
	double t0, el;

	t = aligned_alloc(64, sizeof(*t));
	if (!t)
		die("aligned_alloc", -ENOMEM);
	tree_init(t, d, policy);
	memset(&pp, 0, sizeof(pp));
	pp.d = d;
	pp.t = t;
	t0 = now_ns();
	if (pthread_create(&cons, NULL, consumer, &pp) ||
	    pthread_create(&prod, NULL, producer, &pp))
		die("pthread_create", -EAGAIN);
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);
	el = now_ns() - t0;
	if (pp.failed)
		fprintf(stderr, "micro_stock: %lu charges failed\n", pp.failed);
	tree_fini(t);
	free(t);
	return (double)PING_ITEMS / el * 1e9;
}

static void measure_pingpong(void)
{
	double def[REPS], v4[REPS], a, b;
	struct pcstock_domain *d;
	const char *mode = "PINNED";
	struct pcstock_domain_attr attr = { 2, PCSTOCK_CPU_PINNED, NULL };
	int r;

	/* Pinned to two PUs when the machine allows it, else simulated. */
	if (pcstock_domain_create(&attr, &d)) {
		mode = "SIM";
		d = domain_new(PCSTOCK_CPU_SIM, 2);
	}
	for (r = 0; r < REPS; r++) {
		def[r] = pingpong_run(d, PCSTOCK_STOCK_DEFAULT);
		v4[r] = pingpong_run(d, PCSTOCK_STOCK_V4);
	}
	a = median(def, REPS);
	b = median(v4, REPS);
	printf("ping-pong (%s, 1-4 pages, 3 levels) DEFAULT: %6.2f M items/s\n",
	       mode, a / 1e6);
	printf("ping-pong (%s, 1-4 pages, 3 levels) V4:      %6.2f M items/s\n",
	       mode, b / 1e6);
	printf("ratio DEFAULT / V4: %.2fx (goal >= 3x)\n", a / b);
	pcstock_domain_destroy(d);
}

int main(int argc, char **argv)
{
	struct pcstock_domain *d;
	struct tree t;

	if (argc == 3 && !strcmp(argv[1], "--hits")) {
		hit_setup(&d, &t);
		hit_pairs(&t, strtoul(argv[2], NULL, 0));
		hit_teardown(d, &t);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--pingpong")) {
		d = domain_new(PCSTOCK_CPU_SIM, 2);
		pingpong_run(d, strcmp(argv[2], "v4") ? PCSTOCK_STOCK_DEFAULT :
							PCSTOCK_STOCK_V4);
		pcstock_domain_destroy(d);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: %s [--hits N | --pingpong default|v4]\n",
			argv[0]);
		return 2;
	}
	measure_hits();
	measure_pingpong();
	return 0;
}
