// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_source.c - where the explorer's scheduling decisions (and the
 * moments of its deaths) come from: a seeded generator, so that a seed
 * names one interleaving, or a fuzzer's bytes (explore.h).
 */
#include <stdint.h>
#include <string.h>

#include "explore.h"

/* splitmix64: a full-period generator, plenty for scheduling choices. */
static uint64_t prng_pick(struct explore_source *src, uint64_t bound)
{
	uint64_t z = (src->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z % bound;
}

void explore_source_seed(struct explore_source *src, uint64_t seed)
{
	memset(src, 0, sizeof(*src));
	src->pick = prng_pick;
	src->state = seed;
}

/* One byte per decision; an exhausted input keeps choosing 0. */
static uint64_t bytes_pick(struct explore_source *src, uint64_t bound)
{
	if (src->pos >= src->len)
		return 0;
	return src->bytes[src->pos++] % bound;
}

void explore_source_bytes(struct explore_source *src, const uint8_t *bytes,
			  size_t len)
{
	memset(src, 0, sizeof(*src));
	src->pick = bytes_pick;
	src->bytes = bytes;
	src->len = len;
}
