/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kcase.h - one case of pcstock-kcheck's counter differential: a tree of
 * counters and the operations run on it (oracle.c), and what a
 * reproducer is made of when written to a file, replayed or emitted as
 * a KUnit test case (repro.c).
 */
#ifndef PCSTOCK_KCASE_H
#define PCSTOCK_KCASE_H

#include <stdbool.h>
#include <stdio.h>

#include "kpc.h"

#define KC_MAX_NODES 48
#define KC_CASE_OPS 96
#define KC_CPUS 4

enum kc_kind {
	K_CHARGE,
	K_TRY,
	K_CANCEL,
	K_UNCHARGE,
	K_SET_MAX,
	K_XCHG_MAX,
	K_SET_MIN,
	K_SET_LOW,
	K_SET_HIGH,
	K_RESET_WM,
	K_RESET_LOCAL_WM,
	K_RESET_FAILCNT,
	K_CALC_PROT,
	K_EFF_PROT,
	K_CPU,			/* stock runs: switch to CPU v[0] */
	K_STOCK_CHARGE,		/* try_charge_stock */
	K_DRAIN,		/* drain CPU v[1]'s slot */
	K_ALLOC_STOCK,		/* flag: alloc_percpu() fails */
	K_FREE_STOCK,
	K_NR
};

extern const char *const kc_kind_name[K_NR];

/*
 * How v[0] is meant: as given, or relative to the node's state when the
 * operation runs (usage + v[0], or the room below max + v[0], wrapping),
 * so that a shrunk reproducer keeps the relation that made it diverge.
 */
enum kc_rel { R_ABS, R_USAGE, R_ROOM, R_HELD };	/* R_HELD: at most held */

struct kc_op {
	unsigned char kind;
	unsigned char node;
	unsigned char rel;		/* enum kc_rel */
	bool flag;			/* recursive protection */
	/*
	 * --migrate: @at > 0 runs this operation inside the one before it,
	 * at that one's @at-th preemption point, on CPU @cpu_in; the
	 * interrupted operation then resumes on CPU @cpu_back.  At a point
	 * where preemption is disabled another CPU runs it and the
	 * interrupted one stays.  @ran: where it ran (printing).
	 */
	unsigned char at, cpu_in, cpu_back;
	unsigned char ran;		/* 0 alone, 1 inside, 2 migrated */
	unsigned long v[5];		/* pages, or effective_protection's */
	unsigned long ret;		/* pcstock's result (frozen replay) */
};

struct kc_case {
	unsigned int n;
	int parent[KC_MAX_NODES];
	bool prot[KC_MAX_NODES];
	bool track[KC_MAX_NODES];
	unsigned int batch;		/* stock runs: 0 for none */
	bool stocked[KC_MAX_NODES];	/* stock runs: stocked at first */
	struct kc_op ops[KC_CASE_OPS];
	unsigned int nops;
};

/*
 * A field that differs after a reproducer's last operation: the kernel's
 * value and pcstock's, the one a KUnit case expects.
 */
struct kc_expect {
	unsigned int node;
	const char *field;	/* struct page_counter's, or "usage" */
	unsigned long kernel, pcstock;
};

/* repro.c */
/* Which nodes a reproducer shows: those named, their ancestors, walks. */
void kc_case_shown(const struct kc_case *cs, const struct kc_op *ops,
		   unsigned int n, bool *shown);
void kc_repro_write(FILE *f, const struct kpc_unit *k,
		    const struct kc_case *cs, const struct kc_op *ops,
		    unsigned int n, bool migrate, const char *what);
int kc_repro_read(FILE *f, struct kc_case *cs, bool *migrate);
bool kc_kunit_write(FILE *f, const struct kpc_unit *k,
		    const struct kc_case *cs, const struct kc_op *ops,
		    unsigned int n, const struct kc_expect *ex,
		    unsigned int nex, const char *what);

#endif /* PCSTOCK_KCASE_H */
