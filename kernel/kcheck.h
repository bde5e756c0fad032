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
	bool migrate;			/* --migrate (oracle.c) */
	const char *replay;		/* --replay: run this file's case */
	const char *repro_out;		/* --repro-out: write the reproducer */
	const char *kunit_out;		/* --kunit-out: and as a KUnit case */
	bool quiet;
	FILE *out;
};

/*
 * Expected deviations: differences between the sides that a tree is known
 * to have, each named, narrowly recognised (oracle.c), counted and
 * reported.  A difference nobody named always fails.
 */
enum kc_dev {
	KC_DEV_PROTECTION_CAP,	/* effective_protection() before 6.12.118 */
	KC_DEV_NR
};

extern const char *const kc_dev_name[KC_DEV_NR];
extern const char *const kc_dev_why[KC_DEV_NR];

/* The like-with-like adjustments the oracle makes on a tree. */
enum kc_adj {
	KC_ADJ_TRACK_FAILCNT,		/* no track_failcnt: all tracked */
	KC_ADJ_PROTECTION_SUPPORT,	/* no opt-in: all propagate */
	KC_ADJ_NO_LOCAL_WATERMARK,	/* not compared, not reset */
	KC_ADJ_NO_CALC_PROTECTION,	/* the protection ops skipped */
	KC_ADJ_PROTECTION_CAP,		/* KC_DEV_PROTECTION_CAP expected */
	KC_ADJ_NR
};

extern const char *const kc_adj_name[KC_ADJ_NR];
extern const char *const kc_adj_why[KC_ADJ_NR];

/* A bit (1U << enum kc_adj) for each adjustment @k's tree needs. */
unsigned int kc_adjustments(const struct kpc_unit *k);

struct kc_result {
	unsigned long ops, cases, parses;
	unsigned long stock_cases;	/* cases run with stocks */
	unsigned long divergences;	/* first one is shrunk and printed */
	unsigned long expected[KC_DEV_NR];	/* expected deviations */
	unsigned int repro_len;		/* ops in the shrunk reproducer */
	unsigned long crashes;		/* of the divergences */
	/* --migrate: operations run inside another, and migrations. */
	unsigned long nested, migrations;
	/* Stock runs: the largest kernel slot, and its counter's batch. */
	long max_slot;
	unsigned int max_slot_batch;
	char *report;			/* the first divergence's, or NULL */
};

/* oracle.c */
int kc_oracle_run(const struct kpc_unit *k, const struct kc_opts *o,
		  struct kc_result *r);
/* parse.c */
int kc_parse_run(const struct kpc_unit *k, const struct kc_opts *o,
		 struct kc_result *r);

double kc_now(void);

#endif /* PCSTOCK_KCHECK_H */
