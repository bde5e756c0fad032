/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kcheck.h - pcstock-kcheck's parts: the counter differential (oracle.c)
 * and the parse differential (parse.c), both against a kernel unit
 * (kpc.h), both seeded and replayable.
 */
#ifndef PCSTOCK_KCHECK_H
#define PCSTOCK_KCHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kpc.h"

/* xorshift64*: the one random source; a seed replays a run exactly. */
static inline uint64_t kc_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static inline unsigned long kc_below(uint64_t *s, unsigned long n)
{
	return n ? (unsigned long)(kc_rand(s) % n) : 0;
}

struct kc_opts {
	uint64_t seed;
	unsigned long ops;		/* differential operations, at least */
	unsigned long parses;		/* parse comparisons, at least */
	double seconds;			/* or run this long (0: counts only) */
	unsigned int max_repro;		/* --expect-divergence: at most */
	bool quiet;
	FILE *out;
};

struct kc_result {
	unsigned long ops, cases, parses;
	unsigned long stock_cases;	/* cases run with stocks */
	unsigned long divergences;	/* first one is shrunk and printed */
	unsigned int repro_len;		/* ops in the shrunk reproducer */
};

/* oracle.c */
int kc_oracle_run(const struct kpc_unit *k, const struct kc_opts *o,
		  struct kc_result *r);
/* parse.c */
int kc_parse_run(const struct kpc_unit *k, const struct kc_opts *o,
		 struct kc_result *r);

double kc_now(void);

#endif /* PCSTOCK_KCHECK_H */
