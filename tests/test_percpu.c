// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_percpu.c - the per-CPU arena: layout and footprint, alignment,
 * zeroing, reuse, capacity, allocation failure, concurrent use.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/cpu.h>
#include <pcstock/percpu.h>

#include "domain.h"
#include "internal.h"

#define KIB ((size_t)1024)
#define MIB (1024 * KIB)

static struct pcstock_domain *domain_new(unsigned int nr_cpus)
{
	struct pcstock_domain_attr attr = { nr_cpus, PCSTOCK_CPU_SIM, NULL };
	struct pcstock_domain *d = NULL;

	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	return d;
}

static size_t alloc_ok(struct pcstock_domain *d, size_t size, size_t align)
{
	size_t h = SIZE_MAX;

	assert_int_equal(pcstock_percpu_alloc(d, size, align, &h), 0);
	return h;
}

static struct pcstock_domain_memory memory(struct pcstock_domain *d)
{
	struct pcstock_domain_memory m;

	pcstock_domain_memory(d, &m);
	return m;
}

static bool all_zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return false;
	return true;
}

/* Fault injection: fail the fault_nth allocation site hit. */
static unsigned long fault_nth, fault_hits;

static bool fail_nth(const char *site)
{
	return ++fault_hits == fault_nth;
}

static void test_alloc_rejects_bad_input(void **state)
{
	struct pcstock_domain *d = domain_new(2);
	size_t h = 12345;

	assert_int_equal(pcstock_percpu_alloc(NULL, 4, 4, &h), -EINVAL);
	assert_int_equal(pcstock_percpu_alloc(d, 4, 4, NULL), -EINVAL);
	assert_int_equal(pcstock_percpu_alloc(d, 0, 4, &h), -EINVAL);
	assert_int_equal(pcstock_percpu_alloc(d, PCSTOCK_PERCPU_MAX_SIZE + 1, 4,
					      &h), -EINVAL);
	assert_int_equal(pcstock_percpu_alloc(d, 4, 3, &h), -EINVAL);
	assert_int_equal(pcstock_percpu_alloc(d, 4, 2 * PCSTOCK_PERCPU_MAX_SIZE,
					      &h), -EINVAL);
	assert_int_equal(h, 12345);
	assert_null(pcstock_percpu_ptr(d, 0, 2));
	assert_null(pcstock_percpu_ptr(NULL, 0, 0));
	assert_int_equal(memory(d).in_use, 0);
	pcstock_domain_memory(d, NULL);
	pcstock_domain_destroy(d);
	assert_int_equal(memory(NULL).reserved, 0);
	assert_int_equal(memory(NULL).in_use, 0);
}

#define LAYOUT_CPUS 1024U
#define LAYOUT_OBJS 1024U

/* The kernel series' figure: 1024 CPUs x 1024 counters = 4 MiB. */
static void test_layout_4_bytes_per_cpu_and_object(void **state)
{
	struct pcstock_domain *d = domain_new(LAYOUT_CPUS);
	size_t *h = calloc(LAYOUT_OBJS, sizeof(*h));
	struct pcstock_domain_memory m;
	unsigned int i, cpu;

	assert_non_null(h);
	for (i = 0; i < LAYOUT_OBJS; i++)
		h[i] = alloc_ok(d, 4, 0);
	m = memory(d);
	assert_true(m.reserved <= 4 * MIB + 200 * KIB);
	assert_int_equal(m.in_use, 4 * MIB);

	/* Consecutive CPUs are a constant >= 4 KiB apart: so are any two. */
	for (i = 0; i < LAYOUT_OBJS; i += 31) {
		char *p0 = pcstock_percpu_ptr(d, h[i], 0);
		size_t step = (size_t)((char *)pcstock_percpu_ptr(d, h[i], 1) -
				       p0);

		assert_true(step >= 4 * KIB);
		for (cpu = 1; cpu < LAYOUT_CPUS; cpu++)
			assert_ptr_equal(pcstock_percpu_ptr(d, h[i], cpu),
					 p0 + cpu * step);
		assert_ptr_equal(pcs_percpu_ptr(d, h[i], 7), p0 + 7 * step);
	}
	/* No two objects overlap on any CPU. */
	for (cpu = 0; cpu < LAYOUT_CPUS; cpu++)
		for (i = 0; i < LAYOUT_OBJS; i++)
			*(uint32_t *)pcstock_percpu_ptr(d, h[i], cpu) =
				cpu * LAYOUT_OBJS + i;
	for (cpu = 0; cpu < LAYOUT_CPUS; cpu++)
		for (i = 0; i < LAYOUT_OBJS; i++)
			assert_int_equal(*(uint32_t *)pcstock_percpu_ptr(d,
						h[i], cpu),
					 cpu * LAYOUT_OBJS + i);
	for (i = 0; i < LAYOUT_OBJS; i++)
		pcstock_percpu_free(d, h[i]);
	assert_int_equal(memory(d).in_use, 0);
	free(h);
	pcstock_domain_destroy(d);
}

static void test_alignment_is_honoured(void **state)
{
	static const size_t sizes[] = { 1, 3, 4, 5, 8, 12, 64, 100, 4096 };
	struct pcstock_domain *d = domain_new(3);
	size_t s, align, h;
	unsigned int cpu;

	for (s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
		for (align = 1; align <= PCSTOCK_PERCPU_MAX_SIZE; align *= 2) {
			/* A 1-byte object first, to misalign the next fit. */
			size_t pad = alloc_ok(d, 1, 1);

			h = alloc_ok(d, sizes[s], align);
			assert_int_equal(h % align, 0);
			for (cpu = 0; cpu < 3; cpu++)
				assert_int_equal((uintptr_t)pcstock_percpu_ptr(
						d, h, cpu) % align, 0);
			pcstock_percpu_free(d, pad);
		}
	}
	/* Natural alignment: the size's power of two, at most 16. */
	assert_int_equal(alloc_ok(d, 8, 0) % 8, 0);
	assert_int_equal(alloc_ok(d, 1, 1) % 4, 0);
	assert_int_equal(alloc_ok(d, 64, 0) % 16, 0);
	assert_int_equal(alloc_ok(d, 1, 1) % 4, 0);
	assert_int_equal(alloc_ok(d, 2, 0) % 2, 0);
	pcstock_domain_destroy(d);
}

static void test_memory_is_zeroed_on_reallocation(void **state)
{
	struct pcstock_domain *d = domain_new(4);
	size_t h, again;
	unsigned int cpu;

	h = alloc_ok(d, 256, 64);
	for (cpu = 0; cpu < 4; cpu++) {
		assert_true(all_zero(pcstock_percpu_ptr(d, h, cpu), 256));
		memset(pcstock_percpu_ptr(d, h, cpu), 0xa5, 256);
	}
	pcstock_percpu_free(d, h);
	again = alloc_ok(d, 256, 64);
	/* First fit gives the same space back, cleared on every CPU. */
	assert_int_equal(again, h);
	for (cpu = 0; cpu < 4; cpu++)
		assert_true(all_zero(pcstock_percpu_ptr(d, h, cpu), 256));
	pcstock_domain_destroy(d);
}

#define CHURN_OBJS 200U
#define CHURN_ROUNDS 50U

static void test_churn_reuses_memory(void **state)
{
	struct pcstock_domain *d = domain_new(8);
	size_t h[CHURN_OBJS], footprint = 0, worst = 0;
	unsigned int round, i, seed;

	for (round = 0; round < CHURN_ROUNDS; round++) {
		/* The same mixed sizes and alignments every round. */
		for (i = 0, seed = 1; i < CHURN_OBJS; i++) {
			size_t size, align;

			seed = seed * 1103515245 + 12345;
			size = 1 + (seed >> 4) % 200;
			align = 1U << (seed >> 12) % 7;
			/* Rounded to granules, plus the worst padding. */
			worst += size + 3 + align - 1;
			h[i] = alloc_ok(d, size, align);
			*(unsigned int *)pcstock_percpu_ptr(d, h[i], 7) = i;
		}
		for (i = 0; i < CHURN_OBJS; i++)
			assert_int_equal(*(unsigned int *)pcstock_percpu_ptr(
						 d, h[i], 7), i);
		/* Free every other object, then the rest. */
		for (i = 0; i < CHURN_OBJS; i += 2)
			pcstock_percpu_free(d, h[i]);
		for (i = 1; i < CHURN_OBJS; i += 2)
			pcstock_percpu_free(d, h[i]);
		assert_int_equal(memory(d).in_use, 0);
		if (round == 0)
			footprint = memory(d).reserved;
		assert_int_equal(memory(d).reserved, footprint);
	}
	/* One round's worth, not fifty. */
	assert_true(footprint > 0 &&
		    footprint <= 8 * (worst / CHURN_ROUNDS + 4 * KIB));
	pcstock_domain_destroy(d);
}

static void test_free_ignores_foreign_handles(void **state)
{
	struct pcstock_domain *d = domain_new(2);
	size_t a = alloc_ok(d, 16, 0), b = alloc_ok(d, 16, 0);

	pcstock_percpu_free(d, a + 4);		/* inside an object */
	pcstock_percpu_free(d, a + 1);		/* not a granule */
	pcstock_percpu_free(d, 64 * MIB);	/* beyond the region */
	pcstock_percpu_free(d, 4 * KIB);	/* never allocated */
	pcstock_percpu_free(NULL, a);
	assert_int_equal(memory(d).in_use, 2 * 2 * 16);
	pcstock_percpu_free(d, a);
	pcstock_percpu_free(d, a);		/* twice: ignored */
	assert_int_equal(memory(d).in_use, 2 * 16);
	pcstock_percpu_free(d, b);
	assert_int_equal(memory(d).in_use, 0);
	pcstock_domain_destroy(d);
}

/* A region holds its stride; past it, -ENOMEM until something is freed. */
static void test_capacity_limit(void **state)
{
	struct pcstock_domain *d = domain_new(2);
	size_t n = d->arena.stride / PCSTOCK_PERCPU_MAX_SIZE, i, h, last = 0;
	struct pcstock_domain_memory m;

	for (i = 0; i < n; i++) {
		last = alloc_ok(d, PCSTOCK_PERCPU_MAX_SIZE, 0);
		/* The last page of CPU 1 is committed and writable. */
		*(char *)pcstock_percpu_ptr(d, last, 1) = 1;
	}
	m = memory(d);
	assert_int_equal(m.reserved, 2 * d->arena.stride);
	assert_int_equal(pcstock_percpu_alloc(d, 4, 0, &h), -ENOMEM);
	assert_int_equal(memory(d).reserved, m.reserved);
	assert_int_equal(memory(d).in_use, m.in_use);
	pcstock_percpu_free(d, last);
	assert_int_equal(alloc_ok(d, 4, 0), last);
	pcstock_domain_destroy(d);
}

static void test_alloc_enomem_at_every_site(void **state)
{
	struct pcstock_domain *d = domain_new(4);
	struct pcstock_domain_memory before;
	size_t first = alloc_ok(d, PCSTOCK_PERCPU_MAX_SIZE - 8, 0), h;
	unsigned long k;
	int err = -ENOMEM;

	before = memory(d);
	/* 16 bytes do not fit the first page: growth on all four CPUs. */
	for (k = 1; err; k++) {
		h = SIZE_MAX;
		fault_nth = k;
		fault_hits = 0;
		pcstock_fault_hook = fail_nth;
		err = pcstock_percpu_alloc(d, 16, 16, &h);
		pcstock_fault_hook = NULL;
		if (err) {
			assert_int_equal(err, -ENOMEM);
			assert_int_equal(h, SIZE_MAX);
			assert_int_equal(memory(d).reserved, before.reserved);
			assert_int_equal(memory(d).in_use, before.in_use);
		}
	}
	assert_int_equal(k, 4 + 2);
	assert_int_equal(h, PCSTOCK_PERCPU_MAX_SIZE);
	assert_int_equal(memory(d).reserved, 2 * before.reserved);
	for (k = 0; k < 4; k++)
		assert_true(all_zero(pcstock_percpu_ptr(d, h, (unsigned int)k),
				     16));
	pcstock_percpu_free(d, first);
	pcstock_percpu_free(d, h);
	pcstock_domain_destroy(d);
}

/* The largest domain: one mapping, and untouched CPUs cost nothing. */
static void test_max_cpus_domain_allocates(void **state)
{
	struct pcstock_domain *d = domain_new(PCSTOCK_MAX_CPUS);
	unsigned int last = PCSTOCK_MAX_CPUS - 1;
	size_t h = alloc_ok(d, 4, 0);

	assert_true(d->arena.stride >= 64 * KIB);
	assert_int_equal(memory(d).in_use, 4 * (size_t)PCSTOCK_MAX_CPUS);
	assert_int_equal(*(uint32_t *)pcstock_percpu_ptr(d, h, last), 0);
	*(uint32_t *)pcstock_percpu_ptr(d, h, 0) = 1;
	*(uint32_t *)pcstock_percpu_ptr(d, h, last) = 2;
	pcstock_percpu_free(d, h);
	assert_int_equal(alloc_ok(d, 4, 0), h);
	assert_int_equal(*(uint32_t *)pcstock_percpu_ptr(d, h, 0), 0);
	assert_int_equal(*(uint32_t *)pcstock_percpu_ptr(d, h, last), 0);
	pcstock_domain_destroy(d);
}

#define CONC_THREADS 4U
#define CONC_ROUNDS 300U
#define CONC_CPUS 16U

struct conc {
	struct pcstock_domain *d;
	unsigned int id;
	unsigned int errors;
};

/* Allocate, fill with our id on every CPU, check, free: no overlap. */
static void *conc_thread(void *p)
{
	struct conc *c = p;
	size_t h[8];
	unsigned int round, i, cpu;

	for (round = 0; round < CONC_ROUNDS; round++) {
		for (i = 0; i < 8; i++) {
			if (pcstock_percpu_alloc(c->d, 4 * (i + 1), 0, &h[i])) {
				c->errors++;
				return NULL;
			}
			for (cpu = 0; cpu < CONC_CPUS; cpu++)
				memset(pcstock_percpu_ptr(c->d, h[i], cpu),
				       (int)c->id, 4 * (i + 1));
		}
		for (i = 0; i < 8; i++) {
			for (cpu = 0; cpu < CONC_CPUS; cpu++) {
				unsigned char *b;

				b = pcstock_percpu_ptr(c->d, h[i], cpu);

				c->errors += b[0] != c->id || b[4 * i] != c->id;
			}
			pcstock_percpu_free(c->d, h[i]);
		}
	}
	return NULL;
}

static void test_concurrent_alloc_and_free(void **state)
{
	struct pcstock_domain *d = domain_new(CONC_CPUS);
	struct conc c[CONC_THREADS];
	pthread_t tid[CONC_THREADS];
	unsigned int i;

	for (i = 0; i < CONC_THREADS; i++) {
		c[i] = (struct conc){ d, i + 1, 0 };
		assert_int_equal(pthread_create(&tid[i], NULL, conc_thread,
						&c[i]), 0);
	}
	for (i = 0; i < CONC_THREADS; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		assert_int_equal(c[i].errors, 0);
	}
	assert_int_equal(memory(d).in_use, 0);
	pcstock_domain_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_rejects_bad_input),
		cmocka_unit_test(test_layout_4_bytes_per_cpu_and_object),
		cmocka_unit_test(test_alignment_is_honoured),
		cmocka_unit_test(test_memory_is_zeroed_on_reallocation),
		cmocka_unit_test(test_churn_reuses_memory),
		cmocka_unit_test(test_free_ignores_foreign_handles),
		cmocka_unit_test(test_capacity_limit),
		cmocka_unit_test(test_alloc_enomem_at_every_site),
		cmocka_unit_test(test_max_cpus_domain_allocates),
		cmocka_unit_test(test_concurrent_alloc_and_free),
	};

	return cmocka_run_group_tests_name("percpu", tests, NULL, NULL);
}
