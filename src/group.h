/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * group.h - what the group layer (hierarchy.c) shares with the cgroup file
 * interface (cgroupfs.c).  Private.
 */
#ifndef PCSTOCK_GROUP_H
#define PCSTOCK_GROUP_H

#include <stdbool.h>

#include <pcstock/hierarchy.h>

/* @g's memory counter, or its memsw one (@memsw; NULL without memsw). */
struct pcstock_counter *pcs_group_counter(struct pcstock_group *g,
					  bool memsw);

/*
 * pcstock_group_write_limit() with the kernel's "no limit" keyword of the
 * interface: "max" for cgroup v2, "-1" for v1.
 */
int pcs_group_write_limit(struct pcstock_group *g, enum pcstock_limit which,
			  const char *buf, const char *max_keyword);

#endif /* PCSTOCK_GROUP_H */
