// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_explore.c - libFuzzer drives the schedule explorer: each input's
 * bytes are the scheduling decisions of one schedule (one byte per
 * decision, modulo the number of live threads; past the end the first live
 * thread runs), so coverage feedback steers the search towards new
 * interleavings of the library's code.
 *
 * The scenario comes from PCSTOCK_EXPLORE_SCENARIO (default
 * stock-charge-default): the worker threads enter the scenario's CPUs once,
 * so one process explores one scenario.  A violation prints the
 * interleaving and aborts, which libFuzzer reports with the input.
 */
#include <stdio.h>
#include <stdlib.h>

#include "explore.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct explore_options opt = {
	.strategy = EXPLORE_BYTES,
	.max_steps = 100000,
	.abort_on_fail = true,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *name = getenv("PCSTOCK_EXPLORE_SCENARIO");
	const struct explore_scenario *s;

	(void)argc;
	(void)argv;
	s = explore_find(name ? name : "stock-charge-default");
	if (!s || explore_start(s)) {
		fprintf(stderr, "fuzz_explore: cannot start scenario %s\n",
			name ? name : "stock-charge-default");
		exit(2);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct explore_source src;

	explore_source_bytes(&src, data, size);
	explore_run_source(&opt, &src);
	return 0;
}
