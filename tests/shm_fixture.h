// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm_fixture.h - what the shared tree's tests (test_shm.c,
 * test_shm_parity.c) share: a region, groups, CPUs, children.
 */
#ifndef PCSTOCK_TESTS_SHM_FIXTURE_H
#define PCSTOCK_TESTS_SHM_FIXTURE_H

#include <sys/types.h>

#include <pcstock/shared.h>

/* An anonymous region on 2 CPUs (@batch 0: no stock). */
struct pcstock_shm *create(unsigned int groups, unsigned int procs,
			   unsigned int batch);
pcstock_shm_gid mkgroup(struct pcstock_shm *s, pcstock_shm_gid parent,
			const char *name);
/* Pin the thread to @cpu (on a machine with one CPU, CPU 0); unpin. */
void run_on_cpu(int cpu);
void run_anywhere(void);
/* @g's @file reads @want. */
void assert_file(struct pcstock_shm *s, pcstock_shm_gid g, const char *file,
		 const char *want);
pid_t fork_checked(void);
/* The child's exit status, or 128 + the signal that killed it. */
int wait_child(pid_t pid);

#endif
