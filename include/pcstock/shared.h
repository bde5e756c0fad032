/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/shared.h - one hierarchy shared by many processes.
 *
 * A supervisor creates a tree in a shared memory region (a memfd, or a
 * named POSIX shared memory object); forked workers, or unrelated
 * processes given the name or the file descriptor, attach to it.  Every
 * process charges the same counters, as every process charges one
 * page_counter hierarchy in the kernel, with the kernel's per-CPU stock:
 * the slot of CPU c belongs to whichever process runs on c, so the stock
 * memory is CPUs x groups whatever the number of processes.
 *
 * The region
 *   Position-independent: groups, parents, names and slots are found by
 *   offsets from the region's start, so each process may map it anywhere.
 *   Its header carries a magic, PCSTOCK_SHM_ABI, the page size, its size
 *   and its layout, under a checksum that pcstock_shm_attach*() checks
 *   before touching anything else.  Its size is fixed at creation (from
 *   max_groups, max_procs and nr_cpus); the pages are those of a shared
 *   file, allocated by the kernel when first touched.
 *
 * Groups are named by a pcstock_shm_gid: an index and a generation.  A
 *   gid stays valid until its group is destroyed; after that every call
 *   given it returns -ENOENT, even once the index holds a new group.
 *   PCSTOCK_SHM_ROOT is the root's.  As in a private tree, the root
 *   charges nothing (a charge or uncharge of it is a no-op that returns
 *   0, as one of 0 pages is) and has no limits.
 *
 * Semantics are the private tree's default policy (pcstock/hierarchy.h)
 *   on a memory counter per group: the kernel's page_counter walks
 *   (counter_walk.h, the same code as pcstock/counter.h's), a stock slot
 *   per CPU and group refilled by misses and uncharges (one that would go
 *   above the batch empties the slot up the tree, as refill_stock()),
 *   and, as the kernel's try_charge_memcg(), a charge that fails calls
 *   the reclaim callback, then drains every CPU's slots of the over-limit
 *   group's subtree once, retries, and at last calls the OOM callback,
 *   with the private tree's counts (events, reclaim calls, failures).
 *   No memsw counter, no memory.high throttling, no other policy yet;
 *   the OOM step has no lock across processes (two processes may each
 *   call their OOM callback at once; each first looks at the margin), and
 *   pcstock_shm_drain() covers one group, not its subtree
 *   (docs/deviations.md).
 *
 * Callbacks and data belong to each process.  Function pointers do not
 *   cross address spaces, so a shared region holds none: each attached
 *   process registers its own (pcstock_shm_set_callbacks()).  A charge in
 *   a process without a reclaim callback reclaims nothing; without an OOM
 *   callback, no victim is killed: after the drains and retries it fails
 *   with -ENOMEM (or, with PCSTOCK_CHARGE_NOFAIL, charges over the limit).
 *   There is no per-group data pointer: a process that needs one keeps its
 *   own map from gid to data.
 *
 * A process killed at any instruction
 *   loses nothing.  Each attached process has a record in the region: its
 *   pid, its start time (so that a reused pid is not taken for it) and,
 *   for every group, the pages it charged minus those it uncharged ("its
 *   figure").  The library keeps one invariant at every level: usage is
 *   the figures of every recorded process (and the balance of reaped
 *   negative ones, pcstock_shm_reap()) plus the slots of every CPU, plus
 *   the children's usage.  Every operation moves pages between a
 *   slot, the counters and the caller's figure inside a window that the
 *   process marks in its record (two plain stores; no lock, no fence: see
 *   pcstock_shm_recover()).  A death inside a window can leave the
 *   counters off by one operation; pcstock_shm_recover() pauses the
 *   windows of every live process and derives every level's usage again
 *   from the figures and the slots, which is the dead process's last
 *   operation rolled forward if its figure recorded it and back if not.
 *   The tree's structure (groups, names) is guarded by a robust,
 *   process-shared mutex; a holder's death is repaired by the next holder
 *   from the group table, which every step keeps consistent.
 *
 *   What a dead process charged and never uncharged is its caller's, as
 *   in the kernel pages belong to whoever holds them: the supervisor reads
 *   the figures (pcstock_shm_proc_charged()) and gives them back in one
 *   call (pcstock_shm_reap()), as PostgreSQL's postmaster resets after a
 *   backend crash.
 *
 *   Death is noticed by whoever looks: the supervisor, typically from a
 *   pidfd or SIGCHLD (pcstock_shm_proc_pid() names each record's process),
 *   calls pcstock_shm_recover(); a process that finds the structure lock's
 *   holder dead repairs it.  No operation polls for deaths.
 *
 * Bad input gets an error, never a crash:
 *   -EBADMSG      a region that is not a pcstock region, or whose header
 *                 is corrupted or truncated (magic, checksum, layout);
 *   -EPROTONOSUPPORT  a region of another ABI version or page size;
 *   -EMSGSIZE     a region smaller than its header says;
 *   -EOWNERDEAD   attaching after the creator died (or detached);
 *   -EEXIST       creating a name that exists (two supervisors);
 *   -EBADF        a detached handle used again (the handle's memory is
 *                 kept, under 512 bytes per attach, so that this is an
 *                 error and not a use after free);
 *   -ECHILD       a handle inherited across fork() (a child attaches on
 *                 its own: pcstock_shm_attach_fd(pcstock_shm_fd(h)));
 *   -ENOENT       a gid whose group was destroyed, or never existed;
 *   -EUSERS       more attached processes than max_procs;
 *   -ENOSPC       more groups than max_groups.
 *
 * Threads: a handle is used by one thread at a time.  Its window mark
 *   and its figures have one writer each and are plain stores (which is
 *   what keeps a hit at one CAS): two threads at once on one handle lose
 *   figure updates and may close each other's window.  Threads that
 *   charge at the same time attach a handle each (a record each; a
 *   record costs a line and a row of figures, max_procs counts them).  A
 *   charge's callbacks run on the charging thread and may use its handle.
 *
 * Processes must share the recoverer's pid namespace: a record names its
 *   process by pid and start time, read from /proc.
 *
 * TSan cannot follow processes; the fork tests, the kill soak (under
 * ASan) and the explorer's process-death scenario stand in for it
 * (docs/using.md, "Shared trees").
 */
#ifndef PCSTOCK_SHARED_H
#define PCSTOCK_SHARED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <pcstock/common.h>
#include <pcstock/hierarchy.h>

PCSTOCK_EXTERN_C_BEGIN

/* The region layout's version; a region of another refuses to attach. */
#define PCSTOCK_SHM_ABI 4

/* The longest group name, without its terminating NUL. */
#define PCSTOCK_SHM_NAME_MAX 63

/* A group: (generation << 32) | index. */
typedef uint64_t pcstock_shm_gid;

/* The root group's gid. */
#define PCSTOCK_SHM_ROOT ((pcstock_shm_gid)1 << 32)

/*
 * pcstock_shm_proc_charged(): the balance of reaped negative figures, less
 * the positive ones reaped since (never above 0).
 */
#define PCSTOCK_SHM_ORPHAN UINT32_MAX

struct pcstock_shm;

/**
 * struct pcstock_shm_attr - how to build a shared tree
 * @max_groups: groups the region can hold, the root included, 2..2^20
 *	(0: 4096)
 * @max_procs: processes that can be attached at once, 1..4096 (0: 64)
 * @nr_cpus: stock slots per group, one per CPU; a CPU numbered beyond
 *	them shares slot (cpu % nr_cpus) (0: the machine's configured CPUs)
 * @batch: the stock batch in pages, 0..PCSTOCK_STOCK_MAX_BATCH
 *	(0: PCSTOCK_DEFAULT_BATCH); PCSTOCK_SHM_NO_STOCK for none
 * @mode: the permission bits of a named region (0: 0600)
 * @exact: exact at the limit, as the private `exact` policy promises: a
 *	charge that finds its group (or an ancestor) at max first takes
 *	back every page the over-limit subtree holds in any CPU's slot and
 *	retries once, before anything else (before a NOWAIT or NORETRY
 *	charge gives up): no charge fails while the pages it needs sit in a
 *	stock.  Without it, as the kernel, a NOWAIT charge fails at once.
 * @track_failcnt: count each group's failed charges, as a private tree
 *	with the same attribute (cgroup v1's memory.failcnt, the level at
 *	which a charge failed counting one); without it the count stays 0,
 *	as on cgroup v2
 */
struct pcstock_shm_attr {
	unsigned int max_groups;
	unsigned int max_procs;
	unsigned int nr_cpus;
	unsigned int batch;
	unsigned int mode;
	bool exact;
	bool track_failcnt;
};

/* @batch: no stock, every charge goes to the counters. */
#define PCSTOCK_SHM_NO_STOCK UINT32_MAX

/**
 * pcstock_shm_create() - create a shared tree and attach to it
 * @name: a POSIX shared memory name ("/name", see shm_open(3)), created
 *	exclusively; or NULL for an anonymous memfd (share it by fork() and
 *	pcstock_shm_fd(), or by passing the descriptor)
 * @attr: the shape, or NULL for every default
 * @out: the creator's handle
 *
 * The creator is the region's supervisor: while it lives (and has not
 * detached) other processes may attach.  Only the root exists.
 *
 * Return: 0; -EINVAL (bad @attr or @name); -EEXIST (@name exists);
 * -ENOMEM; another negative errno from shm_open(), memfd_create(),
 * ftruncate() or mmap().
 */
PCSTOCK_API int pcstock_shm_create(const char *name,
				   const struct pcstock_shm_attr *attr,
				   struct pcstock_shm **out);

/**
 * pcstock_shm_attach() - attach to a named shared tree
 * pcstock_shm_attach_fd() - attach to the shared tree behind @fd
 * @name: the name given to pcstock_shm_create()
 * @fd: a descriptor of the region (pcstock_shm_fd() of another handle);
 *	duplicated, the caller keeps @fd
 * @out: the handle
 *
 * Checks the header (see the file comment for each error), that the
 * creator is alive, then takes a process record.  A process may attach
 * more than once (each handle is a record of its own) and may hold
 * private trees at the same time.
 *
 * Return: 0 or the negative errno listed in the file comment; -ENOENT
 * (no such name).
 */
PCSTOCK_API int pcstock_shm_attach(const char *name, struct pcstock_shm **out);
PCSTOCK_API int pcstock_shm_attach_fd(int fd, struct pcstock_shm **out);

/**
 * pcstock_shm_detach() - leave a shared tree
 * @s: the handle
 *
 * Unmaps the region.  A record whose figures are all 0 is freed; one that
 * still holds charges stays, as a dead process's would, for
 * pcstock_shm_reap().  The creator's detach closes the region to new
 * attachments (-EOWNERDEAD); attached processes go on.  A named region's
 * name stays until pcstock_shm_unlink().
 *
 * Return: 0; -EBADF (already detached); -ECHILD (inherited across fork:
 * the child's copy is marked detached, the parent's record untouched).
 */
PCSTOCK_API int pcstock_shm_detach(struct pcstock_shm *s);

/** pcstock_shm_unlink() - remove a named region's name (shm_unlink()) */
PCSTOCK_API int pcstock_shm_unlink(const char *name);

/**
 * pcstock_shm_fd() - the region's descriptor (owned by @s), or -EBADF
 *
 * Also of a handle inherited across fork(), which answers nothing else:
 * the child attaches with pcstock_shm_attach_fd(pcstock_shm_fd(h)).
 */
PCSTOCK_API int pcstock_shm_fd(const struct pcstock_shm *s);

/** pcstock_shm_self() - @s's process record, or a negative errno */
PCSTOCK_API int pcstock_shm_self(const struct pcstock_shm *s);

/**
 * struct pcstock_shm_callbacks - this process's callbacks
 * @reclaim: asked for pages when a charge of this process finds its group
 *	over max; returns the pages it freed (it uncharges them itself, with
 *	pcstock_shm_uncharge()), or NULL
 * @oom: last resort, an enum pcstock_oom_result, or NULL
 * @arg: passed to both
 */
struct pcstock_shm_callbacks {
	unsigned long (*reclaim)(struct pcstock_shm *s, pcstock_shm_gid g,
				 unsigned long nr_pages, void *arg);
	int (*oom)(struct pcstock_shm *s, pcstock_shm_gid g, void *arg);
	void *arg;
};

/** pcstock_shm_set_callbacks() - register this process's callbacks (NULL: none) */
PCSTOCK_API int pcstock_shm_set_callbacks(struct pcstock_shm *s,
					  const struct pcstock_shm_callbacks *cb);

/* ---- groups ------------------------------------------------------------ */

/**
 * pcstock_shm_group_create() - create a child group
 * @s: the handle
 * @parent: the parent's gid
 * @name: 1..PCSTOCK_SHM_NAME_MAX bytes, no '/', not "." or ".."
 * @out: the new group's gid
 *
 * Return: 0; -EINVAL; -ENAMETOOLONG; -EEXIST (@parent has a child of that
 * name); -ENOENT (@parent destroyed); -ENOSPC; -EBADF; -ECHILD.
 */
PCSTOCK_API int pcstock_shm_group_create(struct pcstock_shm *s,
					 pcstock_shm_gid parent,
					 const char *name,
					 pcstock_shm_gid *out);

/**
 * pcstock_shm_group_lookup() - find a group by path (lock-free)
 * @parent: where @path starts
 * @path: a child's name, or names joined by '/' ("tenant-a/web"), as
 *	pcstock_group_lookup() takes them; no empty component, no leading
 *	or trailing '/', no "." or ".."
 *
 * Return: 0; -ENOENT (a component missing, or @parent destroyed);
 * -EINVAL; -ENAMETOOLONG; -EBADF; -ECHILD.
 */
PCSTOCK_API int pcstock_shm_group_lookup(struct pcstock_shm *s,
					 pcstock_shm_gid parent,
					 const char *path,
					 pcstock_shm_gid *out);

/**
 * pcstock_shm_group_destroy() - take a group offline
 *
 * The group must have no online child.  Its slots are drained at once,
 * its name disappears, later charges get -ENOENT.  Pages still charged to
 * it stay on its counter (and its ancestors') until their holders
 * uncharge them, which they may do with the old gid; its index is reused
 * once its usage is 0 and no process's figure mentions it.
 *
 * Return: 0; -ENOENT; -EBUSY (an online child); -EINVAL (the root).
 */
PCSTOCK_API int pcstock_shm_group_destroy(struct pcstock_shm *s,
					  pcstock_shm_gid g);

/** pcstock_shm_group_parent() - @g's parent's gid, or 0 (root, or bad @g) */
PCSTOCK_API pcstock_shm_gid pcstock_shm_group_parent(struct pcstock_shm *s,
						      pcstock_shm_gid g);

/* ---- charging ------------------------------------------------------------ */

/**
 * pcstock_shm_charge() - charge @nr_pages to @g and its ancestors
 * @nr_pages: pages, 0 (a no-op) .. PCSTOCK_COUNTER_MAX
 * @flags: PCSTOCK_CHARGE_NOWAIT, _NOFAIL, _NORETRY (pcstock/hierarchy.h)
 *
 * The flow of pcstock_group_charge() for the default policy: a hit in
 * this CPU's slot; else a batch charged up the tree, its surplus kept in
 * the slot; at the first failure (with the exact attribute, first a drain
 * of the over-limit subtree and one retry) a MAX event on the over-limit
 * group, this process's reclaim callback, once a drain of the subtree's
 * slots on every CPU, retries (PCSTOCK_MAX_RECLAIM_RETRIES), then, for at
 * most 8 pages, its OOM callback (PCSTOCK_MAX_OOM_CALLS; after
 * PCSTOCK_OOM_KILLED_ASYNC the charge waits up to PCSTOCK_OOM_WAIT_MS
 * polls of a millisecond for room, draining every CPU's slots of the
 * subtree before each look).  The pages are added to this process's
 * figure for @g.
 *
 * Return: 0; -ENOMEM; -EINVAL; -ENOENT (@g offline); -EBADF; -ECHILD.
 */
PCSTOCK_API int pcstock_shm_charge(struct pcstock_shm *s, pcstock_shm_gid g,
				   unsigned long nr_pages, unsigned int flags);

/**
 * pcstock_shm_uncharge() - return @nr_pages charged to @g
 * @nr_pages: pages, 0 (a no-op) .. PCSTOCK_COUNTER_MAX
 *
 * Into this CPU's slot; an uncharge that would take the slot above the
 * batch empties it up the tree with the new pages, as mainline's
 * refill_stock() (and the private default policy) do.  Straight to the
 * counters, the slot kept, for more than a batch (as the private default
 * policy), on a destroyed group, and from inside a callback.  Subtracted from this
 * process's figure for @g, which goes negative if this process frees
 * pages another charged: the figures are net, only their sum is the
 * group's usage.
 *
 * Return: 0; -EINVAL; -ENOENT (the gid's index was reused); -EBADF;
 * -ECHILD.
 */
PCSTOCK_API int pcstock_shm_uncharge(struct pcstock_shm *s, pcstock_shm_gid g,
				     unsigned long nr_pages);

/**
 * pcstock_shm_drain() - return every CPU's slot of @g to the counters
 * Return: the pages returned, or a negative errno.
 */
PCSTOCK_API long pcstock_shm_drain(struct pcstock_shm *s, pcstock_shm_gid g);

/* ---- limits and readers ---------------------------------------------------- */

/**
 * pcstock_shm_set_limit() - set max, high, min or low of @g
 * @which: PCSTOCK_LIMIT_MAX (the kernel's page_counter_set_max(): -EBUSY
 *	if usage is above, after draining @g's subtree's slots once),
 *	PCSTOCK_LIMIT_HIGH, PCSTOCK_LIMIT_MIN or PCSTOCK_LIMIT_LOW
 *
 * Return: 0; -EBUSY; -EINVAL (the root, or above PCSTOCK_COUNTER_MAX);
 * -EOPNOTSUPP (another enum pcstock_limit); -ENOENT; -EBADF; -ECHILD.
 */
PCSTOCK_API int pcstock_shm_set_limit(struct pcstock_shm *s,
				      pcstock_shm_gid g,
				      enum pcstock_limit which,
				      unsigned long nr_pages);

/**
 * pcstock_shm_read() - a memory file of @g, as text
 * @file: cgroup v2's "memory.current", "memory.min", "memory.low",
 *	"memory.high", "memory.max", "memory.peak", "memory.events",
 *	"memory.events.local"; v1's
 *	"memory.usage_in_bytes", "memory.limit_in_bytes",
 *	"memory.max_usage_in_bytes", "memory.failcnt"
 *
 * Formatted as the kernel formats them: bytes, "max" for no limit in v2's
 * memory.min, .low, .high and .max (v1 prints the bytes), memory.events'
 * lines, the subtree's in memory.events and the group's own in
 * memory.events.local, as a private tree's ("low" is never raised: there
 * is no reclaim of our own; nor is "oom_group_kill").  The root has v1's files only, as a private v2
 * tree's root has none of v2's.  memory.peak
 * shows the local watermark, which a write to it resets (as a private
 * tree's: there is no per-open-file state), memory.max_usage_in_bytes the
 * global one.  The failure count is tracked if the region was created
 * with track_failcnt, else 0 (a write of "0" to memory.failcnt zeroes it).
 *
 * Return: the length written (without the NUL), -ERANGE if @size is too
 * small, -ENOENT (no such file, a v2 file of the root, or @g destroyed),
 * -EINVAL, -EBADF, -ECHILD.
 */
PCSTOCK_API ssize_t pcstock_shm_read(struct pcstock_shm *s, pcstock_shm_gid g,
				     const char *file, char *buf, size_t size);

/**
 * pcstock_shm_write() - write a memory file of @g
 * @buf: as the kernel parses it (memparse(): "100M", "max" in v2, "-1" in
 *	v1), surrounding whitespace ignored
 *
 * memory.max and memory.limit_in_bytes call pcstock_shm_set_limit()'s
 * PCSTOCK_LIMIT_MAX, which is v1's strict write (-EBUSY when usage stays
 * above after a drain): v2's memory.max, which swaps the limit in and
 * then reclaims, needs a reclaimer in the writing process and is not
 * offered (a named difference, docs/deviations.md).  memory.high,
 * memory.min and memory.low set theirs.  A write to memory.peak resets
 * the local watermark, to memory.max_usage_in_bytes both watermarks, to
 * memory.failcnt the count (the content ignored, as in the kernel).
 *
 * Return: 0; -EINVAL; -ENOENT; -EACCES (a read-only file); -EBUSY;
 * -EBADF; -ECHILD.
 */
PCSTOCK_API int pcstock_shm_write(struct pcstock_shm *s, pcstock_shm_gid g,
				  const char *file, const char *buf);

/**
 * pcstock_shm_calculate_protection() - emin and elow below @g
 * @recursive: cgroup2's memory_recursiveprot
 *
 * As pcstock_group_calculate_protection(): walks @g's subtree top-down
 * and stores each descendant's effective min and low (@g's own are left
 * alone, as the kernel leaves the reclaim root's).  Callers serialise
 * calculations over overlapping subtrees.
 *
 * Return: 0; -ENOENT; -EBADF; -ECHILD.
 */
PCSTOCK_API int pcstock_shm_calculate_protection(struct pcstock_shm *s,
						 pcstock_shm_gid g,
						 bool recursive);

/** pcstock_shm_effective_protection() - @g's emin and elow, last computed */
PCSTOCK_API int pcstock_shm_effective_protection(struct pcstock_shm *s,
						 pcstock_shm_gid g,
						 unsigned long *emin,
						 unsigned long *elow);

/** pcstock_shm_usage() - @g's memory usage in pages (0 for a bad @g) */
PCSTOCK_API unsigned long pcstock_shm_usage(struct pcstock_shm *s,
					    pcstock_shm_gid g);

/** pcstock_shm_events() - one of @g's memory.events counters */
PCSTOCK_API unsigned long pcstock_shm_events(struct pcstock_shm *s,
					     pcstock_shm_gid g,
					     enum pcstock_event ev);

/**
 * pcstock_shm_stock_pages() - pages in @g's slots on every CPU
 *
 * The stranding bound: at most nr_cpus x batch, as in a private tree, and
 * a slot is the CPU's, not a process's, so a process's death strands
 * nothing more.  A failing charge takes back the over-limit subtree's
 * slots before it gives up (pcstock_shm_charge()).
 */
PCSTOCK_API unsigned long pcstock_shm_stock_pages(struct pcstock_shm *s,
						  pcstock_shm_gid g);

/* ---- processes and recovery -------------------------------------------------- */

/* What pcstock_shm_proc_state() says of a record. */
enum pcstock_shm_proc_state {
	PCSTOCK_SHM_PROC_FREE = 0,	/* unused */
	PCSTOCK_SHM_PROC_LIVE,		/* attached (its process may be dead
					 * and not yet recovered) */
	PCSTOCK_SHM_PROC_DEAD,		/* recovered: figures wait for reap */
	PCSTOCK_SHM_PROC_LEFT,		/* detached with charges: ditto */
};

/** pcstock_shm_max_procs() - the number of process records */
PCSTOCK_API unsigned int pcstock_shm_max_procs(const struct pcstock_shm *s);

/** pcstock_shm_proc_state() - a record's state, or a negative errno */
PCSTOCK_API int pcstock_shm_proc_state(struct pcstock_shm *s, unsigned int proc);

/** pcstock_shm_proc_pid() - the pid of a record's process (0 if free) */
PCSTOCK_API pid_t pcstock_shm_proc_pid(struct pcstock_shm *s, unsigned int proc);

/**
 * pcstock_shm_proc_pidfd() - a pidfd (pidfd_open(2)) of a record's process
 *
 * For a supervisor that did not fork the process itself: poll(2) the
 * descriptor for POLLIN, which comes when the process exits, then call
 * pcstock_shm_recover().  The process's start time is checked after the
 * descriptor is opened, so a reused pid is never watched in its place.
 * The caller closes it.
 *
 * Return: the descriptor; -ESRCH (the process is gone already: recover);
 * -EINVAL (a free record); -EBADF; -ECHILD; another errno of pidfd_open().
 */
PCSTOCK_API int pcstock_shm_proc_pidfd(struct pcstock_shm *s, unsigned int proc);

/**
 * pcstock_shm_proc_charged() - pages @proc charged to @g, net
 * @proc: a record, or PCSTOCK_SHM_ORPHAN
 *
 * A snapshot: a live process changes it as it charges.  Negative when
 * the process freed more than it charged.
 */
PCSTOCK_API long pcstock_shm_proc_charged(struct pcstock_shm *s,
					  unsigned int proc,
					  pcstock_shm_gid g);

/**
 * pcstock_shm_recover() - notice dead processes and repair after them
 * @s: any attached handle
 * @nr_dead: out, the records found dead this call (may be NULL)
 *
 * Finds each LIVE record whose process is gone (its pid gone, or reused
 * by a process that started later), then, if any, pauses the tree: sets
 * the tree's frozen mark (and marks every group's key, which is what the
 * fast paths load), makes every attached process see it
 * (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED); a process that could not
 * register for it uses a fence in every window instead), waits for every
 * live process to leave its window (a window is a few dozen instructions,
 * but a process stopped inside one, by SIGSTOP or a debugger, holds the
 * pause until it runs again), and derives every level's usage and
 * protected usage again from the figures and the slots.  The dead
 * records become PCSTOCK_SHM_PROC_DEAD.  Operations of other processes
 * that start meanwhile wait for the pause to end (a futex).  Serialised
 * with other recoveries and reaps by a robust mutex: a recoverer killed
 * midway is finished by the next.
 *
 * Callbacks run outside every window and lock: a callback may call it.
 *
 * Return: 0; -EBADF; -ECHILD; -ENOMEM (the recount's stack, allocated
 * by a handle's first call before it looks at anything: then nothing was
 * changed, call again).
 */
PCSTOCK_API int pcstock_shm_recover(struct pcstock_shm *s, unsigned int *nr_dead);

/**
 * pcstock_shm_reap() - give back what a dead or departed process charged
 * @proc: a PCSTOCK_SHM_PROC_DEAD or _LEFT record
 * @pages: out, the pages uncharged (may be NULL)
 *
 * Moves each negative figure to the PCSTOCK_SHM_ORPHAN balance: the pages
 * the process freed for others are still in the figures of the processes
 * that charged them.  Each positive figure first cancels against a
 * negative balance (those pages left the counters when they were freed),
 * and what is left is uncharged from its group.  Then frees the record.
 * A positive figure whose pages a live process freed (its figure is
 * negative) cannot be told apart: it is uncharged whole, and the counter
 * clamps at 0; reap such a process after the freer has left.  A reaper
 * killed midway is finished by the next holder of the recovery lock,
 * which also pauses the tree once to recount.
 *
 * Return: 0; -EINVAL (no such record); -EBUSY (the record is LIVE: call
 * pcstock_shm_recover() first); -EBADF; -ECHILD.
 */
PCSTOCK_API int pcstock_shm_reap(struct pcstock_shm *s, unsigned int proc,
				 unsigned long *pages);

/** pcstock_shm_recoveries() - pauses this region has had (a counter) */
PCSTOCK_API unsigned long pcstock_shm_recoveries(const struct pcstock_shm *s);

PCSTOCK_EXTERN_C_END

#endif /* PCSTOCK_SHARED_H */
