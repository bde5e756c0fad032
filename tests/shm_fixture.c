// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm_fixture.c - what the shared tree's tests share (shm_fixture.h).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm_fixture.h"

struct pcstock_shm *create(unsigned int groups, unsigned int procs,
				  unsigned int batch)
{
	struct pcstock_shm_attr a = { .max_groups = groups, .max_procs = procs,
				      .nr_cpus = 2,
				      .batch = batch ? batch :
						       PCSTOCK_SHM_NO_STOCK };
	struct pcstock_shm *s = NULL;

	assert_int_equal(pcstock_shm_create(NULL, &a, &s), 0);
	return s;
}

pcstock_shm_gid mkgroup(struct pcstock_shm *s, pcstock_shm_gid parent,
			       const char *name)
{
	pcstock_shm_gid g = 0;

	assert_int_equal(pcstock_shm_group_create(s, parent, name, &g), 0);
	return g;
}

void run_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* A machine with one CPU still runs every case, on CPU 0. */
	if (sched_setaffinity(0, sizeof(set), &set))
		CPU_ZERO(&set);
}

void run_anywhere(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* @g's @file reads @want. */
void assert_file(struct pcstock_shm *s, pcstock_shm_gid g,
			const char *file, const char *want)
{
	char buf[64];

	assert_true(pcstock_shm_read(s, g, file, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, want);
}

pid_t fork_checked(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	return pid;
}

int wait_child(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
