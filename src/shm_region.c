// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm_region.c - a shared tree's region: its layout, creation, the checks
 * an attach makes before trusting a byte of it, and process records (the
 * handles are shm_handles.c's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pcstock/shared.h>
#include <pcstock/stock.h>

#include "shm.h"

#define DEFAULT_GROUPS 4096U
#define DEFAULT_PROCS 64U
#define REGION_PAGE 4096UL

/* ---- processes ---------------------------------------------------------------- */

uint64_t shm_pid_start(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	const char *p;
	char st;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command may hold spaces and parentheses: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c", &st) != 1)
		return 0;
	if (st == 'Z' || st == 'X' || st == 'x')
		return 0;
	/* Field 3 is the state; starttime is field 22. */
	for (field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	/* A starttime of 0 is a real boot-time process; keep 0 for "gone". */
	return start ? start : 1;
}

#ifdef PCSTOCK_EXPLORE
struct pcstock_shm_sim pcstock_shm_sim;
#endif

bool shm_proc_gone(const struct pcstock_shm *s, unsigned int p)
{
	const struct shm_proc *r = shm_proc(s, p);
	uint64_t start;

#ifdef PCSTOCK_EXPLORE
	if (pcstock_shm_sim.gone)
		return pcstock_shm_sim.gone(p);
#endif
	start = shm_pid_start(r->pid);

	return !start || start != r->start;
}

static bool membarrier_register(void)
{
	/* The explorer's simulated processes are threads of one. */
	if (shm_simulated())
		return true;
	return syscall(SYS_membarrier,
		       MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

/* Take a FREE record (tree lock held). */
static int claim_record(struct pcstock_shm *s)
{
	uint64_t start = shm_pid_start(getpid());

	for (unsigned int i = 0; i < s->max_procs; i++) {
		struct shm_proc *r = shm_proc(s, i);

		if (pcs_load(&r->state, PCS_RELAXED) != PROC_FREE)
			continue;
		pcs_store(&r->active, 0, PCS_RELAXED);
		r->pid = (int32_t)getpid();
		r->start = start;
		r->fenced = s->fence;
		/* Release: pid and start before the record counts as live. */
		pcs_store(&r->state, PROC_LIVE, PCS_RELEASE);
		s->self = i;
		s->me = r;
		s->figures = shm_figure(s, i, 0);
		s->active = &r->active;
		return 0;
	}
	return -EUSERS;
}

/* ---- the layout ------------------------------------------------------------------ */

static uint64_t fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t shm_layout_sum(const struct shm_layout *l)
{
	return fnv1a(l, offsetof(struct shm_layout, sum));
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int plan(const struct pcstock_shm_attr *attr, struct shm_layout *l)
{
	struct pcstock_shm_attr a = { 0 };
	long cpus;
	uint64_t off, buckets;

	if (attr)
		a = *attr;
	if (!a.max_groups)
		a.max_groups = DEFAULT_GROUPS;
	if (!a.max_procs)
		a.max_procs = DEFAULT_PROCS;
	if (!a.nr_cpus) {
		cpus = sysconf(_SC_NPROCESSORS_CONF);
		a.nr_cpus = cpus > 0 ? (unsigned int)cpus : 1;
		if (a.nr_cpus > SHM_MAX_CPUS)
			a.nr_cpus = SHM_MAX_CPUS;
	}
	if (!a.batch)
		a.batch = PCSTOCK_DEFAULT_BATCH;
	else if (a.batch == PCSTOCK_SHM_NO_STOCK)
		a.batch = 0;
	if (a.max_groups < 2 || a.max_groups > SHM_MAX_GROUPS ||
	    a.max_procs > SHM_MAX_PROCS || a.nr_cpus > SHM_MAX_CPUS ||
	    a.batch > PCSTOCK_STOCK_MAX_BATCH || (a.mode & ~0777U))
		return -EINVAL;

	memset(l, 0, sizeof(*l));
	memcpy(l->magic, SHM_MAGIC, sizeof(l->magic));
	l->abi = PCSTOCK_SHM_ABI;
	l->page_shift = PCSTOCK_PAGE_SHIFT;
	l->max_groups = a.max_groups;
	l->max_procs = a.max_procs;
	l->nr_cpus = a.nr_cpus;
	l->batch = a.batch;
	l->exact = a.exact;
	l->track_failcnt = a.track_failcnt;
	for (buckets = 1; buckets < 2ULL * a.max_groups; buckets <<= 1)
		;
	l->name_mask = (uint32_t)(buckets - 1);

	off = round_up(sizeof(struct shm_hdr), REGION_PAGE);
	l->off_procs = off + SHM_PROCS_COLOR;
	off = round_up(l->off_procs + (uint64_t)(a.max_procs + 1) *
		       sizeof(struct shm_proc), REGION_PAGE);
	l->off_groups = off;
	off = round_up(off + (uint64_t)a.max_groups * sizeof(struct shm_group),
		       REGION_PAGE);
	l->off_names = off;
	off = round_up(off + buckets * sizeof(uint64_t), REGION_PAGE);
	l->off_keys = off + SHM_KEYS_COLOR;
	off = round_up(l->off_keys + (uint64_t)a.max_groups * sizeof(uint64_t),
		       REGION_PAGE);
	l->off_charged = off + SHM_FIGURES_COLOR;
	/*
	 * Every record's row on lines of its own (two adjacent lines: the
	 * prefetcher pairs them), so that no two processes' figures for one
	 * group share a line, however few the groups.
	 */
	l->figure_stride = round_up((uint64_t)a.max_groups * sizeof(long), 128);
	off = round_up(l->off_charged + (uint64_t)(a.max_procs + 1) *
		       l->figure_stride, REGION_PAGE);
	l->off_slots = off + SHM_SLOTS_COLOR;
	/* A power of two, so that a hit finds its row with a shift. */
	for (l->slot_stride = REGION_PAGE;
	     l->slot_stride < (uint64_t)a.max_groups * sizeof(unsigned int);
	     l->slot_stride <<= 1)
		;
	l->size = round_up(l->off_slots + l->slot_stride * a.nr_cpus,
			   REGION_PAGE);
	l->sum = shm_layout_sum(l);
	return 0;
}

/* Check a header before trusting it (@avail: the bytes behind the fd). */
static int check_layout(const struct shm_layout *l, uint64_t avail)
{
	struct shm_layout want;
	struct pcstock_shm_attr a = { 0 };

	if (memcmp(l->magic, SHM_MAGIC, sizeof(l->magic)))
		return -EBADMSG;
	if (shm_layout_sum(l) != l->sum)
		return -EBADMSG;
	if (l->abi != PCSTOCK_SHM_ABI || l->page_shift != PCSTOCK_PAGE_SHIFT)
		return -EPROTONOSUPPORT;
	/* Every offset must be the one this ABI computes from the shape. */
	a.max_groups = l->max_groups;
	a.max_procs = l->max_procs;
	a.nr_cpus = l->nr_cpus;
	a.batch = l->batch ? l->batch : PCSTOCK_SHM_NO_STOCK;
	a.exact = l->exact != 0;
	a.track_failcnt = l->track_failcnt != 0;
	if (!l->max_procs || !l->nr_cpus || plan(&a, &want) ||
	    memcmp(&want, l, sizeof(want)))
		return -EBADMSG;
	if (avail < l->size)
		return -EMSGSIZE;
	return 0;
}

/* ---- locks --------------------------------------------------------------------- */

static int init_robust(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int err;

	pthread_mutexattr_init(&a);
	err = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (!err)
		err = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (!err)
		err = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -err;
}

/* ---- create / attach / detach ------------------------------------------------------ */

static void init_root(struct pcstock_shm *s)
{
	struct shm_group *root = shm_group(s, 0);

	pcstock_counter_init(&root->memory, NULL, true);
	pcstock_counter_set_high(&root->memory, PCSTOCK_COUNTER_MAX);
	pcstock_counter_set_track_failcnt(&root->memory,
					  s->h->l.track_failcnt != 0);
	root->parent_rel = 0;
	root->parent = SHM_NO_INDEX;
	pcs_store(&root->first_child, SHM_NO_INDEX, PCS_RELAXED);
	pcs_store(&root->next_sibling, SHM_NO_INDEX, PCS_RELAXED);
	pcs_store(&root->gen, shm_gid_gen(PCSTOCK_SHM_ROOT), PCS_RELAXED);
	pcs_store(&root->state, GROUP_ONLINE, PCS_RELAXED);
	pcs_store(shm_key_of(s, 0),
		  shm_key(shm_gid_gen(PCSTOCK_SHM_ROOT), 0, true), PCS_RELAXED);
}

static void fill_handle(struct pcstock_shm *s, char *base, int fd)
{
	s->base = base;
	s->h = (struct shm_hdr *)(void *)base;
	s->size = s->h->l.size;
	s->fd = fd;
	s->max_groups = s->h->l.max_groups;
	s->max_procs = s->h->l.max_procs;
	s->nr_cpus = s->h->l.nr_cpus;
	s->batch = s->h->l.batch;
	s->exact = s->h->l.exact != 0;
	s->rseq = __rseq_size != 0;
	s->rseq_off = __rseq_offset;
	s->frozen = &s->h->frozen;
	s->groups = (struct shm_group *)(void *)(base + s->h->l.off_groups);
	s->slots = (atomic_uint *)(void *)(base + s->h->l.off_slots);
	s->keys = (atomic_ulong *)(void *)(base + s->h->l.off_keys);
	s->slot_shift = (unsigned int)__builtin_ctzll(s->h->l.slot_stride /
						       sizeof(unsigned int));
	s->fence = !membarrier_register();
	if (s->fence)
		pcs_store(&s->h->fenced, 1, PCS_RELAXED);
	s->fast_lim = 0;	/* until the handle is live */
}

int pcstock_shm_create(const char *name, const struct pcstock_shm_attr *attr,
		       struct pcstock_shm **out)
{
	struct shm_layout l;
	struct pcstock_shm *s;
	struct shm_hdr *h;
	unsigned int mode = attr && attr->mode ? attr->mode : 0600;
	char *base;
	int fd, err;

	if (!out || (name && (name[0] != '/' || !name[1] ||
			      strchr(name + 1, '/'))))
		return -EINVAL;
	err = plan(attr, &l);
	if (err)
		return err;
	if (name)
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			      (mode_t)mode);
	else
		fd = memfd_create("pcstock-shm", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)l.size)) {
		err = -errno;
		goto fail_fd;
	}
	base = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		goto fail_fd;
	}
	s = shm_handle_new();
	if (!s) {
		err = -ENOMEM;
		goto fail_map;
	}
	h = (struct shm_hdr *)(void *)base;
	h->l = l;
	h->creator_pid = (int32_t)getpid();
	h->creator_start = shm_pid_start(getpid());
	err = init_robust(&h->tree_lock);
	if (!err)
		err = init_robust(&h->recover_lock);
	if (err)
		goto fail_handle;
	fill_handle(s, base, fd);
	init_root(s);
	h->next_free = 1;
	for (uint32_t i = 0; i <= l.name_mask; i++)
		pcs_store(&shm_names(s)[i], 0, PCS_RELAXED);
	err = claim_record(s);
	if (err)
		goto fail_handle;
	s->creator = true;
	s->state = HANDLE_LIVE;
	s->ok = true;
	s->fast_lim = s->rseq && !s->fence ? s->max_groups - 1 : 0;
	/* Release: the whole region before anyone may attach to it. */
	pcs_store(&h->state, SHM_READY, PCS_RELEASE);
	*out = s;
	return 0;

fail_handle:
	shm_handle_discard(s);
fail_map:
	munmap(base, l.size);
fail_fd:
	close(fd);
	if (name)
		shm_unlink(name);
	return err;
}

int pcstock_shm_attach_fd(int fd, struct pcstock_shm **out)
{
	struct shm_layout l;
	struct pcstock_shm *s;
	struct stat st;
	char *base;
	int err, own;

	if (!out || fd < 0)
		return -EINVAL;
	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < sizeof(l))
		return -EBADMSG;
	if (pread(fd, &l, sizeof(l), 0) != (ssize_t)sizeof(l))
		return -EBADMSG;
	err = check_layout(&l, (uint64_t)st.st_size);
	if (err)
		return err;
	own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return -errno;
	base = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		close(own);
		return err;
	}
	/* The mapped header must still be the one checked. */
	if (memcmp(base, &l, sizeof(l))) {
		err = -EBADMSG;
		goto fail;
	}
	{
		struct shm_hdr *h = (struct shm_hdr *)(void *)base;
		uint64_t start = shm_pid_start(h->creator_pid);

		if (pcs_load(&h->state, PCS_ACQUIRE) != SHM_READY ||
		    !start || start != h->creator_start) {
			err = -EOWNERDEAD;
			goto fail;
		}
	}
	s = shm_handle_new();
	if (!s) {
		err = -ENOMEM;
		goto fail;
	}
	fill_handle(s, base, own);
	err = shm_tree_lock_unrepaired(s);
	if (err)
		goto fail_handle;
	err = claim_record(s);
	shm_tree_unlock(s);
	if (err)
		goto fail_handle;
	s->state = HANDLE_LIVE;
	s->ok = true;
	s->fast_lim = s->rseq && !s->fence ? s->max_groups - 1 : 0;
	/*
	 * A dead holder found above is repaired now that we have a record
	 * (a failure leaves needs_repair set, for the next to try).
	 */
	if (pcs_load(&s->h->needs_repair, PCS_ACQUIRE))
		pcstock_shm_recover(s, NULL);
	*out = s;
	return 0;

fail_handle:
	shm_handle_discard(s);
fail:
	munmap(base, l.size);
	close(own);
	return err;
}

int pcstock_shm_attach(const char *name, struct pcstock_shm **out)
{
	int fd, err;

	if (!name || !out)
		return -EINVAL;
	fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = pcstock_shm_attach_fd(fd, out);
	close(fd);
	return err;
}

int pcstock_shm_detach(struct pcstock_shm *s)
{
	bool charged = false;
	int err = shm_check(s);

	if (err == -ECHILD) {
		/* A fork()'s copy: drop the mapping, leave the parent's record. */
		munmap(s->base, s->size);
		close(s->fd);
		free(s->recount_buf);
		s->recount_buf = NULL;
		s->state = HANDLE_DETACHED;
		s->ok = false;
		s->fast_lim = 0;
		return err;
	}
	if (err)
		return err;
	for (uint32_t i = 0; i < s->max_groups && !charged; i++)
		charged = pcs_load(&s->figures[i], PCS_RELAXED) != 0;
	if (shm_tree_lock(s) == 0) {
		pcs_store(&s->me->state, charged ? PROC_LEFT : PROC_FREE,
			  PCS_RELEASE);
		if (s->creator)
			pcs_store(&s->h->state, SHM_CLOSED, PCS_RELEASE);
		shm_tree_unlock(s);
	}
	s->ok = false;
	s->fast_lim = 0;
	munmap(s->base, s->size);
	close(s->fd);
	free(s->recount_buf);
	s->recount_buf = NULL;
	s->state = HANDLE_DETACHED;
	s->base = NULL;
	return 0;
}

int pcstock_shm_unlink(const char *name)
{
	if (!name)
		return -EINVAL;
	return shm_unlink(name) ? -errno : 0;
}

int pcstock_shm_fd(const struct pcstock_shm *s)
{
	/*
	 * The one call a handle inherited across fork() answers: fork()
	 * copied the descriptor too, and attaching on it is how the child
	 * takes a record of its own (pcstock_shm_attach_fd()).
	 */
	if (!s || s->state != HANDLE_LIVE)
		return -EBADF;
	return s->fd;
}

int pcstock_shm_self(const struct pcstock_shm *s)
{
	int err = shm_check(s);

	return err ? err : (int)s->self;
}

int pcstock_shm_set_callbacks(struct pcstock_shm *s,
			      const struct pcstock_shm_callbacks *cb)
{
	int err = shm_check(s);

	if (err)
		return err;
	if (cb)
		s->cb = *cb;
	else
		memset(&s->cb, 0, sizeof(s->cb));
	return 0;
}

unsigned int pcstock_shm_max_procs(const struct pcstock_shm *s)
{
	return shm_check(s) ? 0 : s->max_procs;
}

int pcstock_shm_proc_state(struct pcstock_shm *s, unsigned int proc)
{
	int err = shm_check(s);

	if (err)
		return err;
	if (proc >= s->max_procs)
		return -EINVAL;
	return (int)pcs_load(&shm_proc(s, proc)->state, PCS_ACQUIRE);
}

pid_t pcstock_shm_proc_pid(struct pcstock_shm *s, unsigned int proc)
{
	if (shm_check(s) || proc >= s->max_procs ||
	    pcs_load(&shm_proc(s, proc)->state, PCS_ACQUIRE) == PROC_FREE)
		return 0;
	return shm_proc(s, proc)->pid;
}

int pcstock_shm_proc_pidfd(struct pcstock_shm *s, unsigned int proc)
{
	int err = shm_check(s), fd;

	if (err)
		return err;
	if (proc >= s->max_procs ||
	    pcs_load(&shm_proc(s, proc)->state, PCS_ACQUIRE) == PROC_FREE)
		return -EINVAL;
	fd = (int)syscall(SYS_pidfd_open, shm_proc(s, proc)->pid, 0);
	if (fd < 0)
		return -errno;
	/* Opened first, checked after: the pid cannot be reused between. */
	if (shm_proc_gone(s, proc)) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

long pcstock_shm_proc_charged(struct pcstock_shm *s, unsigned int proc,
			      pcstock_shm_gid g)
{
	uint32_t i = shm_gid_index(g);

	if (shm_check(s) || i >= s->max_groups)
		return 0;
	if (proc == PCSTOCK_SHM_ORPHAN)
		proc = s->max_procs;
	else if (proc >= s->max_procs)
		return 0;
	return pcs_load(shm_figure(s, proc, i), PCS_RELAXED);
}

unsigned long pcstock_shm_recoveries(const struct pcstock_shm *s)
{
	return shm_check(s) ? 0 : pcs_load(&s->h->recoveries, PCS_RELAXED);
}
