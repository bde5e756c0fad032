// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm_handles.c - a process's handles on shared trees: every one it made,
 * kept after detach (a detached handle used again is -EBADF, not a use
 * after free), and marked in a fork()'s child, which must take a record
 * of its own.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shm.h"

/*
 * Every handle this process made, so that a fork()'s child can mark its
 * copies.  Handles are never freed once given out (detach marks them).
 */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pcstock_shm *handles;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void mark_forked(void)
{
	/* The child has one thread: no lock can be held by another. */
	for (struct pcstock_shm *s = handles; s; s = s->next_handle) {
		s->forked = true;
		s->ok = false;
		s->fast_lim = 0;
	}
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, mark_forked);
}

static size_t nr_handles;

struct pcstock_shm *shm_handle_new(void)
{
	/* Aligned: the fast paths' fields are one cache line (shm.h). */
	size_t size = (sizeof(struct pcstock_shm) + 63) / 64 * 64;
	struct pcstock_shm *s = aligned_alloc(64, size);

	if (!s)
		return NULL;
	memset(s, 0, size);
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&handles_lock);
	s->next_handle = handles;
	handles = s;
	nr_handles++;
	pthread_mutex_unlock(&handles_lock);
	s->state = HANDLE_DETACHED;
	s->fd = -1;
	return s;
}

void shm_handle_discard(struct pcstock_shm *s)
{
	pthread_mutex_lock(&handles_lock);
	for (struct pcstock_shm **p = &handles; *p; p = &(*p)->next_handle)
		if (*p == s) {
			*p = s->next_handle;
			nr_handles--;
			break;
		}
	pthread_mutex_unlock(&handles_lock);
	free(s->recount_buf);
	free(s);
}

size_t shm_handles(void)
{
	size_t n;

	pthread_mutex_lock(&handles_lock);
	n = nr_handles;
	pthread_mutex_unlock(&handles_lock);
	return n;
}
