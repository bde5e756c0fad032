/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * shm_bench.h - what the --shm rows' two files share (shm.c: the hit
 * pair, N processes against N threads, the mode; shm_recover.c: the
 * recovery rows): the two trees, figures and the run.
 */
#ifndef PCSTOCK_BENCH_SHM_H
#define PCSTOCK_BENCH_SHM_H

#include <stdbool.h>

#include <pcstock/pcstock.h>

#include "bench.h"

#define SMALL_GROUPS 10U
#define BIG_GROUPS 10000U
#define REC_PROCS 64U		/* records of the recovery's regions */

/* Private: the default policy on an RSEQ domain, leaves under root or mid. */
struct priv {
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *mid;
	struct pcstock_group **leaf;
	unsigned int nr_leaves;
};

/* Shared: the same shape in a region of its own (the creator's handle). */
struct shared {
	struct pcstock_shm *s;
	pcstock_shm_gid mid;
	pcstock_shm_gid *leaf;
	unsigned int nr_leaves;
};

struct spread {
	double med, lo, hi;
};

struct shm_run {
	const struct opts *o;
	unsigned long pairs;		/* per hit-pair round */
	char model[128];
	bool bad;			/* a conservation check failed */
};

void priv_free(struct priv *t);
int priv_build(struct priv *t, unsigned int batch, bool mid,
	       unsigned int nr_leaves);
void shared_free(struct shared *t);
int shared_build(struct shared *t, const struct pcstock_shm_attr *a,
		 bool mid, unsigned int nr_leaves);
unsigned long shared_stock(struct shared *t);
int shared_check(struct shared *t, char *why, size_t len);
int priv_check(struct priv *t, char *why, size_t len);
/* Median and range of @v (sorted in place). */
struct spread spread_of(double *v, unsigned int n);
double load1(void);
/* The recovery rows (shm_recover.c). */
int shm_recovery(struct shm_run *run);

#endif /* PCSTOCK_BENCH_SHM_H */
