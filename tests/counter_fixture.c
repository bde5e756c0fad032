// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * counter_fixture.c - test_counter's fixture (counter_fixture.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "counter_fixture.h"

struct warn_log warns;

static void record_warn(const char *what, const struct pcstock_counter *c,
			long value, unsigned long nr_pages, void *arg)
{
	struct warn_log *log = arg;

	log->calls++;
	log->what = what;
	log->c = c;
	log->value = value;
	log->nr_pages = nr_pages;
}

int setup(void **state)
{
	memset(&warns, 0, sizeof(warns));
	pcstock_set_warn_handler(record_warn, &warns);
	pcstock_warn_reset();
	pcstock_explore_hook = NULL;
	return 0;
}

int teardown(void **state)
{
	pcstock_explore_hook = NULL;
	pcstock_set_warn_handler(NULL, NULL);
	pcstock_warn_reset();
	return 0;
}

void chain_init(struct chain *t)
{
	pcstock_counter_init(&t->r, NULL, true);
	pcstock_counter_init(&t->a, &t->r, true);
	pcstock_counter_init(&t->l, &t->a, true);
}

void assert_usage3(const struct chain *t, unsigned long r, unsigned long a,
		   unsigned long l)
{
	assert_int_equal(pcstock_counter_read(&t->r), r);
	assert_int_equal(pcstock_counter_read(&t->a), a);
	assert_int_equal(pcstock_counter_read(&t->l), l);
}

void assert_peaks(const struct pcstock_counter *c, unsigned long global,
		  unsigned long local)
{
	assert_int_equal(pcstock_counter_watermark(c), global);
	if (LOCAL_WATERMARK)
		assert_int_equal(pcstock_counter_local_watermark(c), local);
}
