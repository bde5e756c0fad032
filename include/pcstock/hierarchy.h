/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/hierarchy.h - groups: a memcg-like tree of charged counters.
 *
 * A tree is built over a domain (pcstock/cpu.h) with one stock policy, a
 * batch, optional memsw accounting and two callbacks.  Each group owns a
 * "memory" counter (and a "memsw" one with memsw accounting) whose parent is
 * the parent group's; the root group charges nothing itself, as the root
 * memcg.  Charging follows the kernel's try_charge_memcg() (6.18, with the
 * 2026 stock series for the DEFAULT and V4 policies): stock, memsw then
 * memory with rollback, exact retry when the batch surplus does not fit,
 * max event, reclaim callback, margin check, one synchronous drain of the
 * over-limit group, small-charge retry, 16 reclaim retries, OOM callback,
 * forced charge for callers that cannot fail.
 *
 * RCU.  The tree is walked under liburcu's "bulletproof" flavour (urcu-bp):
 * threads are registered on their first read-side section and unregistered
 * when they exit, so callers have NO duty at all: no registration, no
 * quiescent states, and their own use of any liburcu flavour (including bp)
 * is unaffected.  The library links liburcu-bp privately; a process that
 * forks must not call into pcstock from the child until it exec()s (as for
 * any library with helper threads: urcu-bp starts a call_rcu thread).
 *
 * Lifetime.  Groups are reference counted.  pcstock_group_create() and
 * pcstock_group_lookup() return a reference; pcstock_group_put() drops it.
 * pcstock_group_destroy() takes a group offline (no new charges, stock
 * disabled and drained into the parent chain, unlinked from the tree); the
 * memory is freed after the last reference is put and an RCU grace period.
 * Pages charged to a group keep their group alive only through the
 * reference their holder keeps: hold one while you hold pages.  The root is
 * not reference counted (get and put do nothing on it): it lives until
 * pcstock_tree_destroy().  A put too many is a documented abort (see
 * pcstock_group_put()).
 *
 * NULL.  Every function taking a group or a tree accepts NULL: commands
 * return -EINVAL, readers return 0, false, NULL or a zeroed snapshot (as
 * documented on each), and get, put and drain_all do nothing.
 *
 * Deliberate differences from the kernel (each pinned by a test):
 *  - drain_all (and the v2/v1 limit writers' drains) drain every CPU's slot
 *    of the DEFAULT and V4 stocks, not only online CPUs: a simulated thread
 *    may stay entered on an offline CPU and refill there.
 *  - memcg7: the cache is one per tree.  On exclusive CPUs (PINNED,
 *    COOP; see pcstock/cpu.h) it is the kernel's: owner-only accesses
 *    without a locked instruction, remote drains queued to the owner;
 *    destroy queues a drain of every CPU, isolated ones included, and the
 *    cache keeps one reference on the group until all have run.  On SIM
 *    CPUs, which several threads may share, each CPU's cache has a lock
 *    (the charge path trylocks it and bypasses a busy cache) and the
 *    remote drain "work" runs synchronously in the draining thread;
 *    destroy drains the group's slots on every CPU.  Either way a refill
 *    for an offline group bypasses the cache.  A thread entered on an
 *    offline CPU bypasses memcg7's cache (a dead CPU runs nothing in the
 *    kernel, so its drained cache is never refilled).
 *  - V4 disables and drains a destroyed group's stock at once, as DEFAULT
 *    does (the review's fix); the series as posted only stops the stock
 *    at offline and drains it when the memcg is freed.
 *  - memory.high: over-high pages are recorded per thread and reclaimed by
 *    pcstock_handle_over_high(), which returns the kernel's throttling delay
 *    instead of sleeping; it is never called synchronously from a charge.
 *  - callbacks are not trusted: a reclaim result outside 0..nr_pages and
 *    an unknown OOM result are clamped (and counted).  The loops the
 *    kernel only leaves when reclaim stops making progress or a signal
 *    arrives are bounded: at most PCSTOCK_MAX_PROGRESS_ROUNDS reclaim calls
 *    claiming progress and PCSTOCK_MAX_OOM_CALLS OOM calls per charge,
 *    limit write or pcstock_handle_over_high(); once the progress budget
 *    is spent, claimed progress counts as none.  So a lying, slow or
 *    asynchronous callback cannot hang any of them (see each function for
 *    the result it then gives).
 *  - an OOM callback may report a victim whose pages come later
 *    (enum pcstock_oom_result): the caller then waits for them with the
 *    tree's OOM lock held, as the kernel's chargers wait on oom_lock
 *    rather than kill again while a victim exits, for at most
 *    PCSTOCK_OOM_WAIT_MS polls of one millisecond.
 *  - pcstock_group_uncharge() called inside a reclaim or OOM callback (of
 *    any tree, the mark being per thread) skips the stock, as
 *    pcstock_group_uncharge_direct() does: the kernel's reclaim frees
 *    folios through uncharge_batch(), and pages parked in a stock would
 *    not lower usage, so the limit writers would free more than the
 *    excess (or, v1, give up with -EBUSY).
 *  - there are no tasks: no PF_MEMALLOC, "task is dying" or "already in
 *    OOM" states.  Charges a thread makes while inside a callback are
 *    forced, in any tree (the mark is per thread, as PF_MEMALLOC is), as
 *    the kernel forces charges made from reclaim.
 *  - inside a callback (of any tree, the mark being per thread) the limit
 *    writers that reclaim return -EDEADLK: they would recurse into the
 *    callbacks or wait for the OOM lock the thread holds (the kernel's
 *    writers never run inside its reclaim).
 *  - the reclaim callback is not told whether it may swap (mainline
 *    reclaims without swap when memsw, not memory, was over its limit).
 *  - charging an offline group fails with -ENOENT (the kernel cannot name
 *    an offline memcg in a new charge).
 *  - a destroyed group's cgroup files are gone in the kernel; here every
 *    write to them, through its setters, pcstock_group_write_limit() or
 *    pcstock_group_write(), is -ENODEV (what kernfs answers a write on a
 *    removed file still open), but pcstock_group_read() still shows them.
 *    A limit write already running when destroy comes finishes (the
 *    kernel's removal waits for it first).
 *  - pcstock_group_write_limit() takes a value of any length (no file, so
 *    no kernfs page cap); pcstock_group_write() has the cap (-E2BIG).
 *  - memory.events' "low" and "oom_group_kill" lines are always 0: low
 *    events need reclaim, group kills memory.oom.group, both the
 *    caller's.
 */
#ifndef PCSTOCK_HIERARCHY_H
#define PCSTOCK_HIERARCHY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <pcstock/common.h>
#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/memcg7_stats.h>
#include <pcstock/stock.h>

PCSTOCK_EXTERN_C_BEGIN

struct pcstock_tree;
struct pcstock_group;

/**
 * enum pcstock_tree_policy - which per-CPU stock a tree's groups use
 * @PCSTOCK_TREE_DEFAULT: per-counter stock, PCSTOCK_STOCK_DEFAULT
 * @PCSTOCK_TREE_V4: per-counter stock, PCSTOCK_STOCK_V4 (the posted series)
 * @PCSTOCK_TREE_MEMCG7: the pre-series memcg stock: 7 slots per CPU keyed
 *	by group, round-robin victim (kernel v6.16+)
 * @PCSTOCK_TREE_NONE: no stock: every charge walks the counters
 * @PCSTOCK_TREE_EXACT: per-counter stock, PCSTOCK_STOCK_EXACT: exact at
 *	the limit (ours, no kernel counterpart): stocks as DEFAULT while far
 *	from every max, holds no stock near one, and a charge refused at a
 *	level first drains and switches off every stock under that level,
 *	before the max event, reclaim or failure
 * @PCSTOCK_TREE_PLAIN: a per-group stock whose hit, refill and uncharge
 *	are restartable sequences (rseq(2)) with no locked instruction;
 *	RSEQ domains on x86-64 only (pcstock_tree_create(): -EOPNOTSUPP on
 *	another mode, -ENOSYS without rseq or membarrier), and every
 *	drain_all or group destroy costs one membarrier(2), which interrupts
 *	every CPU running the process (ours)
 * @PCSTOCK_TREE_NR_POLICIES: the number of policies; every value below it
 *	is one
 *
 * The values come from the list of policies, <pcstock/policies.h>, one
 * line each in the order above (DEFAULT is 0): a policy registered later
 * gets the next value, and pcstock_tree_policy_info() tells its
 * properties.
 */
enum pcstock_tree_policy {
#define PCSTOCK_POLICY(id, name) PCSTOCK_TREE_##id,
#include <pcstock/policies.h>
#undef PCSTOCK_POLICY
	PCSTOCK_TREE_NR_POLICIES,
};

/* The longest group name, in bytes (as a file name). */
#define PCSTOCK_GROUP_NAME_MAX 255U
/* The kernel's MEMCG_CHARGE_BATCH, the default batch. */
#define PCSTOCK_DEFAULT_BATCH 64U
/* The kernel's MAX_RECLAIM_RETRIES. */
#define PCSTOCK_MAX_RECLAIM_RETRIES 16
/* Reclaim calls claiming progress one operation may retry on (ours). */
#define PCSTOCK_MAX_PROGRESS_ROUNDS 64
/* OOM callback calls one operation may make (ours). */
#define PCSTOCK_MAX_OOM_CALLS 8
/* Millisecond polls waiting for an asynchronous OOM victim (ours). */
#define PCSTOCK_OOM_WAIT_MS 10

/**
 * typedef pcstock_reclaim_fn - free pages charged to a subtree
 * @g: the group over its limit (or over high); reclaim from its subtree
 * @nr_pages: pages wanted
 * @arg: the tree's callback argument
 *
 * Called from a charging (or limit-writing) thread, with a reference on @g
 * held for the call, outside every lock and RCU section of the library.
 * Free pages by uncharging them, with pcstock_group_uncharge_direct() (the
 * kernel's reclaim frees folios so) or pcstock_group_uncharge(): during
 * the call both go straight to the counters, the per-CPU stock skipped,
 * so usage drops at once and the caller sees exactly the progress made (a
 * memory.max write frees the excess, not more; a v1 limit write stops as
 * soon as the limit fits).  Charges this thread makes during the call, in
 * any tree, are forced.  The limit writers that reclaim
 * (pcstock_group_set_max(), _set_high(), _set_max_strict(),
 * _set_memsw_max()) refuse with -EDEADLK inside a callback, for any tree:
 * they would recurse into the callbacks or wait for the OOM lock the
 * thread holds.
 *
 * Return: the pages freed (uncharged from @g's subtree) during the call.
 * Any value >= 1 counts as progress: the caller retries, at most
 * PCSTOCK_MAX_PROGRESS_ROUNDS times per operation, after which claimed
 * progress counts as none.  0 means no progress.  Values below 0 count as
 * 0 and values above @nr_pages as @nr_pages (both are counted in
 * pcstock_tree_stats()'s callback_clamped).  Pages an asynchronous
 * reclaimer will free later are not progress: return 0 for them.
 */
typedef long (*pcstock_reclaim_fn)(struct pcstock_group *g,
				   unsigned long nr_pages, void *arg);

/**
 * enum pcstock_oom_result - what an OOM callback did
 * @PCSTOCK_OOM_NONE: nothing was killed (no victim left): the charge
 *	fails, a memory.max write stops
 * @PCSTOCK_OOM_KILLED: a victim was killed and its pages uncharged before
 *	the callback returned: an OOM_KILL event, then a retry at once with a
 *	fresh reclaim budget
 * @PCSTOCK_OOM_KILLED_ASYNC: a victim was killed and its pages will be
 *	uncharged later by another thread: an OOM_KILL event, then the caller
 *	waits (see below) and retries with a fresh reclaim budget.  That
 *	thread is outside the callback and may give the pages back with
 *	pcstock_group_uncharge() (into its CPU's stock: the wait drains
 *	the stocks, below) or pcstock_group_uncharge_direct() (straight to
 *	the counters, as the kernel's exiting victim does)
 * @PCSTOCK_OOM_WAIT: no new victim, but an earlier one has not uncharged
 *	its pages yet (the kernel's "victim already exiting" case): the
 *	caller waits and retries with a fresh reclaim budget
 *
 * Waiting means: with the tree's OOM lock held, polling every millisecond
 * until @g has room (a charge: its margin fits the charge; a memory.max
 * write: usage at or below max), at most PCSTOCK_OOM_WAIT_MS times; a
 * poll that finds no room first drains the stocks of @g's subtree
 * (pcstock_group_drain_all()) and looks again, so that pages freed into
 * any CPU's stock count as room.  The kernel has no such wait (its
 * victim's pages go straight to the counters); this one is ours.
 * Other threads that need the OOM callback of the tree meanwhile wait on
 * the lock, and skip the callback if the room is there when they get it:
 * the kernel's mem_cgroup_out_of_memory() check, a margin of 1 << order
 * pages, order = get_order(nr_pages * PAGE_SIZE) for a charge (a margin of
 * 4 pages for a charge of 3), 0 for a memory.max write (a margin of 1
 * page: usage below max, not at it).
 */
enum pcstock_oom_result {
	PCSTOCK_OOM_NONE = 0,
	PCSTOCK_OOM_KILLED = 1,
	PCSTOCK_OOM_KILLED_ASYNC = 2,
	PCSTOCK_OOM_WAIT = 3,
};

/**
 * typedef pcstock_oom_fn - last resort when reclaim failed
 * @g: the group over its limit
 * @arg: the tree's callback argument
 *
 * Context, and uncharges during the call (straight to the counters), as
 * for pcstock_reclaim_fn, and with the tree's OOM lock held:
 * OOM callbacks of one tree never run concurrently.  Called at most
 * PCSTOCK_MAX_OOM_CALLS times per charge or memory.max write.
 *
 * Return: an enum pcstock_oom_result; any other value counts as
 * PCSTOCK_OOM_NONE (and in callback_clamped).
 */
typedef int (*pcstock_oom_fn)(struct pcstock_group *g, void *arg);

/**
 * typedef pcstock_release_fn - a group's user data is no longer reachable
 * @data: the non-NULL @data given to pcstock_group_create_data()
 * @arg: the tree's callback argument
 *
 * Called exactly once for each group created with non-NULL data, when the
 * group's memory is freed: after pcstock_group_destroy(), the last
 * pcstock_group_put() and an RCU grace period, so that no thread can reach
 * the group any more (no reference, no walk or lookup in flight) and no
 * callback or pcstock_group_data() can return @data again.  The usual body
 * frees @data.
 *
 * Context: a liburcu call_rcu thread, not the thread that put the last
 * reference.  It may free memory and put group references; it must not
 * block, wait for other threads or call pcstock_tree_destroy().
 * pcstock_tree_destroy() waits for every pending release of its tree, so
 * none runs after it returned (other than with -EBUSY, when referenced
 * groups remain and are released later).
 */
typedef void (*pcstock_release_fn)(void *data, void *arg);

/**
 * struct pcstock_tree_attr - how to build a tree
 * @policy: enum pcstock_tree_policy
 * @batch: stock batch in pages, 1..PCSTOCK_STOCK_MAX_BATCH (memcg7:
 *	1..127, the kernel's u8 slot counts); 0 means PCSTOCK_DEFAULT_BATCH
 * @memsw: cgroup v1 memory+swap accounting (a second counter per group,
 *	charged first)
 * @recursive_protection: cgroup2's memory_recursiveprot for emin/elow
 * @track_failcnt: count failed charges of the memory counters (cgroup v1's
 *	failcnt; as mainline, memsw failures are not counted)
 * @memcg7_isolated_fix: memcg7 only: clear the per-CPU flushing flag when
 *	drain_all skips an isolated CPU (the proposed 2026 fix); false keeps
 *	the kernel's behaviour, where the flag stays set and later drains skip
 *	that CPU for good
 * @reclaim: reclaim callback, or NULL (reclaims nothing)
 * @oom: OOM callback, or NULL (never makes progress)
 * @cb_arg: passed to every callback
 * @release: called when a group created with data is freed, or NULL (the
 *	data is then the caller's to free once the group is gone: after
 *	pcstock_tree_destroy() returned something other than -EBUSY)
 */
struct pcstock_tree_attr {
	enum pcstock_tree_policy policy;
	unsigned int batch;
	bool memsw;
	bool recursive_protection;
	bool track_failcnt;
	bool memcg7_isolated_fix;
	pcstock_reclaim_fn reclaim;
	pcstock_oom_fn oom;
	void *cb_arg;
	pcstock_release_fn release;
};

/**
 * enum pcstock_event - memory.events counters
 * @PCSTOCK_EVENT_MAX: a charge attempt hit max (raised on the over-limit
 *	group before each reclaim, as the kernel does: a charge refused after
 *	reclaim made no progress counts 2 + PCSTOCK_MAX_RECLAIM_RETRIES)
 * @PCSTOCK_EVENT_HIGH: over-high reclaim ran on the group
 * @PCSTOCK_EVENT_OOM: the OOM callback was invoked for the group
 * @PCSTOCK_EVENT_OOM_KILL: the OOM callback reported progress
 */
enum pcstock_event {
	PCSTOCK_EVENT_MAX = 0,
	PCSTOCK_EVENT_HIGH,
	PCSTOCK_EVENT_OOM,
	PCSTOCK_EVENT_OOM_KILL,
	PCSTOCK_NR_EVENTS,
};

/* Charge flags (pcstock_group_charge()). */
/* Must not block: no callback, no drain; fail at once (GFP_NOWAIT). */
#define PCSTOCK_CHARGE_NOWAIT 0x1U
/* Must not fail: charge over the limit after the attempts (__GFP_NOFAIL). */
#define PCSTOCK_CHARGE_NOFAIL 0x2U
/* Give up after the first reclaim and drain (__GFP_NORETRY). */
#define PCSTOCK_CHARGE_NORETRY 0x4U

/**
 * enum pcstock_limit - which limit pcstock_group_write_limit() sets
 * @PCSTOCK_LIMIT_MAX: pcstock_group_set_max()
 * @PCSTOCK_LIMIT_MAX_STRICT: pcstock_group_set_max_strict()
 * @PCSTOCK_LIMIT_HIGH: pcstock_group_set_high()
 * @PCSTOCK_LIMIT_MIN: pcstock_group_set_min()
 * @PCSTOCK_LIMIT_LOW: pcstock_group_set_low()
 * @PCSTOCK_LIMIT_MEMSW_MAX: pcstock_group_set_memsw_max()
 */
enum pcstock_limit {
	PCSTOCK_LIMIT_MAX = 0,
	PCSTOCK_LIMIT_MAX_STRICT,
	PCSTOCK_LIMIT_HIGH,
	PCSTOCK_LIMIT_MIN,
	PCSTOCK_LIMIT_LOW,
	PCSTOCK_LIMIT_MEMSW_MAX,
};

/**
 * struct pcstock_tree_stats - tree-wide figures
 * @nr_groups: groups allocated, root included (offline ones still
 *	referenced or waiting for their grace period count too)
 * @drain_all: drain_all calls that drained
 * @drain_all_busy: drain_all calls skipped because another was running
 * @callback_clamped: callback results clamped into range
 * @memcg7: the legacy cache (all zero for other policies)
 */
struct pcstock_tree_stats {
	unsigned long nr_groups;
	unsigned long drain_all;
	unsigned long drain_all_busy;
	unsigned long callback_clamped;
	struct pcstock_memcg7_stats memcg7;
};

/**
 * struct pcstock_group_stats - a snapshot of one group
 * @usage: memory usage in pages (stock included, as memory.current)
 * @usage_exact: @usage minus the stock held in the subtree
 * @memsw_usage: memsw usage (0 without memsw)
 * @max: @high: @min: @low: the memory limits
 * @memsw_max: the memsw limit (0 without memsw)
 * @emin: @elow: effective protection from the last
 *	pcstock_group_calculate_protection() over an ancestor
 * @watermark: peak memory usage
 * @failcnt: failed charges (with track_failcnt)
 * @memsw_failcnt: always 0: mainline does not count memsw failures
 * @events: hierarchical events (this group and its descendants), as
 *	memory.events
 * @events_local: events raised on this group itself
 * @stock: statistics of the group's memory stock (DEFAULT, V4)
 * @refused: charges to this group that returned -ENOMEM
 *
 * Fields are read one by one without stopping chargers.
 */
struct pcstock_group_stats {
	unsigned long usage;
	unsigned long usage_exact;
	unsigned long memsw_usage;
	unsigned long max;
	unsigned long high;
	unsigned long min;
	unsigned long low;
	unsigned long memsw_max;
	unsigned long emin;
	unsigned long elow;
	unsigned long watermark;
	unsigned long failcnt;
	unsigned long memsw_failcnt;
	unsigned long events[PCSTOCK_NR_EVENTS];
	unsigned long events_local[PCSTOCK_NR_EVENTS];
	struct pcstock_stock_stats stock;
	unsigned long refused;
};

/**
 * pcstock_tree_create() - create a tree and its root group
 * @d: the domain whose CPUs own the stock; must outlive the tree
 * @attr: the description; NULL means all defaults (DEFAULT policy, batch
 *	64, no memsw, no callbacks)
 * @out: receives the tree; untouched on failure
 *
 * Context: any thread.
 *
 * Return: 0; -EINVAL for a NULL @d or @out, an unknown policy or a batch
 * above PCSTOCK_STOCK_MAX_BATCH (memcg7: above 127); -ENOMEM (nothing is
 * left allocated); for PCSTOCK_TREE_PLAIN, -EOPNOTSUPP when @d is not an
 * RSEQ domain and -ENOSYS when its sequences cannot run here (not x86-64,
 * no rseq area registered by glibc, no membarrier RSEQ commands).
 */
PCSTOCK_API int pcstock_tree_create(struct pcstock_domain *d,
				    const struct pcstock_tree_attr *attr,
				    struct pcstock_tree **out);

/**
 * pcstock_tree_destroy() - free a tree
 * @t: the tree, or NULL
 *
 * Every group but the root must have been destroyed and every reference
 * put.  The over-high records threads hold on the tree's groups (see
 * pcstock_handle_over_high()) are dropped here, whichever thread holds
 * them, so a pool thread that never handles its record does not pin the
 * tree.  Waits for pending RCU frees in a bounded number of grace periods
 * whatever the tree's shape: a group's free puts its parent, which would
 * wait for a grace period of its own (one per level of a chain), so
 * groups whose last reference goes during the destroy are freed by it,
 * together, after one grace period.  Once every group is gone, pages
 * still charged (the root's usage) can only be pages whose holders put
 * their reference without uncharging them: they are reported by the
 * return value, and the tree is freed all the same.
 *
 * Context: no concurrent use of @t.  Not from a callback or RCU section.
 * The domain's CPUs may be used meanwhile: a MEMCG7 tree's per-CPU caches
 * are drained under the domain's lock that exclusive CPUs' owners run
 * their queued work under, so an owner may idle, exit or go offline
 * during the destroy (the drain queued by a group's destroy is run once).
 *
 * Return: 0 (also for NULL); a positive number: the tree is freed, but
 * that many pages (at most INT_MAX) were still charged; -EBUSY if a group
 * other than the root exists or is still referenced (the tree is then left
 * usable).
 */
PCSTOCK_API int pcstock_tree_destroy(struct pcstock_tree *t);

/**
 * pcstock_tree_root() - the root group of @t
 *
 * Return: the root, NULL for a NULL @t.  The root is not reference
 * counted: pcstock_group_get() and pcstock_group_put() leave it alone, and
 * it lives as long as the tree.
 */
PCSTOCK_API struct pcstock_group *pcstock_tree_root(struct pcstock_tree *t);

/** pcstock_tree_domain() - the domain @t was created over (NULL for NULL) */
PCSTOCK_API struct pcstock_domain *
pcstock_tree_domain(const struct pcstock_tree *t);

/**
 * pcstock_tree_policy() - the stock policy of @t
 *
 * Return: the policy; PCSTOCK_TREE_NR_POLICIES (no policy) for NULL.
 */
PCSTOCK_API enum pcstock_tree_policy
pcstock_tree_policy(const struct pcstock_tree *t);

/**
 * pcstock_tree_stats() - tree-wide statistics
 * @t: the tree (NULL fills @st with zeroes)
 * @st: receives them (NULL: nothing is done)
 */
PCSTOCK_API void pcstock_tree_stats(const struct pcstock_tree *t,
				    struct pcstock_tree_stats *st);

/**
 * pcstock_tree_policy_parse() - policy from its name
 * @name: a registered policy's name, as pcstock_tree_policy_name() gives
 *	it: one per line of <pcstock/policies.h> ("default", "v4", "memcg7",
 *	"none", "exact" and "plain" in this release)
 * @out: receives the policy
 *
 * Return: 0; -EINVAL for an unknown name or NULL argument.
 */
PCSTOCK_API int pcstock_tree_policy_parse(const char *name,
					  enum pcstock_tree_policy *out);

/**
 * pcstock_tree_policy_name() - name of a policy
 *
 * Return: a static string, or NULL for an unknown policy.
 */
PCSTOCK_API const char *pcstock_tree_policy_name(enum pcstock_tree_policy p);

/**
 * struct pcstock_policy_info - what a stock policy promises, as properties
 * @name: the policy's name, as pcstock_tree_policy_name() gives it
 * @max_batch: the largest batch a tree of the policy accepts
 * @stocks: the policy keeps pages in per-CPU stock at all (false: every
 *	charge and uncharge reaches the counters, as PCSTOCK_TREE_NONE)
 * @per_counter: its stock is the per-counter stock of <pcstock/stock.h>,
 *	of kind @counter_stock; a group's hit costs one slot atomic
 * @counter_stock: enum pcstock_stock_policy of that stock (valid only
 *	when @per_counter)
 * @group_batch: a charge that misses charges max(batch, nr_pages) at the
 *	counters and keeps the surplus in the policy's stock (memcg7's
 *	MEMCG_CHARGE_BATCH); false: the counters are charged what is asked,
 *	or batch themselves per counter
 * @uncharges_refill: an uncharge of up to a batch stays in the stock
 *	instead of lowering usage at once
 * @exact_at_limit: a charge refused at a level first returns to the
 *	counters every page its subtree holds in stock, before the max
 *	event, reclaim or failure: no charge fails or reclaims for pages
 *	that sit idle in stock
 * @caps_slots: no CPU's stock of a group ever holds more than a batch, so
 *	pcstock_group_stock_bound() bounds the stock at all times; false
 *	for the series' V4 kind, whose racing refills grow a slot past it
 *
 * Tests, explorers and the bench ask these, not the enum value, so a new
 * policy is exercised by them once it is registered.
 */
struct pcstock_policy_info {
	const char *name;
	unsigned int max_batch;
	bool stocks;
	bool per_counter;
	enum pcstock_stock_policy counter_stock;
	bool group_batch;
	bool uncharges_refill;
	bool exact_at_limit;
	bool caps_slots;
};

/**
 * pcstock_tree_policy_info() - the properties of a registered policy
 * @p: the policy; every value below PCSTOCK_TREE_NR_POLICIES is one
 * @out: receives its properties
 *
 * Context: any; reads constant tables only.
 * Return: 0; -EINVAL for a @p that names no policy, or a NULL @out
 * (which is then left untouched).
 */
PCSTOCK_API int pcstock_tree_policy_info(enum pcstock_tree_policy p,
					 struct pcstock_policy_info *out);

/**
 * pcstock_group_create() - create a group under @parent
 * @parent: an online group of the tree
 * @name: 1..PCSTOCK_GROUP_NAME_MAX bytes, not "." or "..", without '/'
 *	or control characters (bytes below 0x20 and 0x7f; other bytes,
 *	UTF-8 included, are fine), unique among @parent's online children
 * @out: receives the new group with one reference for the caller
 *
 * The group starts with no limits (max, high, memsw max = PCSTOCK_COUNTER_MAX,
 * min = low = 0).  A stock that cannot be allocated is not an error: the
 * group then charges its counters directly.
 *
 * Context: any thread; serialised with other topology changes of the tree.
 *
 * Return: 0; -EINVAL (NULL, or a name breaking the rules above); -EEXIST
 * (name taken);
 * -ENOENT (@parent offline); -ENOMEM.
 */
PCSTOCK_API int pcstock_group_create(struct pcstock_group *parent,
				     const char *name,
				     struct pcstock_group **out);

/**
 * pcstock_group_create_data() - pcstock_group_create() with user data
 * @parent: @name: @out: as for pcstock_group_create()
 * @data: stored with the group, returned by pcstock_group_data() (for
 *	example in a reclaim or OOM callback); the library never reads or
 *	writes through it
 *
 * Lifetime of @data: it must stay valid while the group can be reached,
 * that is until the group is freed (destroyed, every reference put, and
 * an RCU grace period).  The tree's release callback (struct
 * pcstock_tree_attr, pcstock_release_fn) is called with @data then,
 * exactly once, and is the place to free it.  Without one, @data may be
 * freed once pcstock_tree_destroy() has returned something other than
 * -EBUSY.  On failure the group does not exist, release is never called
 * for @data and it stays the caller's.
 *
 * Context: as pcstock_group_create().
 *
 * Return: as pcstock_group_create().
 */
PCSTOCK_API int pcstock_group_create_data(struct pcstock_group *parent,
					  const char *name, void *data,
					  struct pcstock_group **out);

/**
 * pcstock_group_data() - the user data given at creation
 * @g: the group, or NULL
 *
 * Context: any thread, including callbacks.
 *
 * Return: the pointer, NULL for NULL @g, the root or a group created
 * without data.
 */
PCSTOCK_API void *pcstock_group_data(const struct pcstock_group *g);

/**
 * pcstock_group_destroy() - take a group offline
 * @g: the group
 *
 * Unlinks @g, refuses new charges, disables its stock and drains it into
 * the parent chain, sets its memory.min and memory.low to 0 (as
 * mem_cgroup_css_offline(): pages it still holds are protected no more,
 * and its siblings' effective protection no longer shares the parent's
 * with it), and drops the tree's reference.  Uncharges by holders of
 * pages keep working; limit writes fail with -ENODEV.  The memory goes
 * after the last reference and a grace period.
 *
 * Context: any thread (not inside a walk callback).
 *
 * Return: 0; -EINVAL (NULL); -EBUSY (the root, or @g has children);
 * -ENOENT (already destroyed).
 */
PCSTOCK_API int pcstock_group_destroy(struct pcstock_group *g);

/**
 * pcstock_group_get() - take a reference on @g (which the caller holds)
 * @g: the group; NULL and the root are left alone
 */
PCSTOCK_API void pcstock_group_get(struct pcstock_group *g);

/**
 * pcstock_group_put() - drop a reference
 * @g: the group; NULL and the root are left alone
 *
 * A put too many is a documented abort ("pcstock: pcstock_group_put():
 * group ... put more often than it was got" on stderr, then abort()) when
 * it is detectable: the count reaching zero while @g is still online (the
 * tree's own reference would be gone), or going below zero before the
 * group's memory is freed.  A put after the memory was freed (one grace
 * period after the last put) is a use after free and cannot be detected.
 *
 * Context: any thread, also inside RCU sections and callbacks.
 */
PCSTOCK_API void pcstock_group_put(struct pcstock_group *g);

/**
 * pcstock_group_lookup() - find a group by path
 * @from: where the path starts
 * @path: names separated by '/', e.g. "tenants/a"; leading and trailing
 *	'/' are ignored; "" is @from itself
 * @out: receives the group with a reference
 *
 * Context: any thread, lock-free (RCU).  Each component is one probe of
 * the tree's name index, whatever the number of siblings.
 *
 * Return: 0; -EINVAL (NULL, empty component); -ENOENT (no such online
 * group).
 */
PCSTOCK_API int pcstock_group_lookup(struct pcstock_group *from,
				     const char *path,
				     struct pcstock_group **out);

/**
 * typedef pcstock_walk_fn - visitor of pcstock_group_walk()
 *
 * Runs inside an RCU read-side section: it must not block, destroy groups,
 * charge with callbacks, or wait for other threads; it may read @g, take a
 * reference and call the readers.  Return non-zero to stop the walk.
 */
typedef int (*pcstock_walk_fn)(struct pcstock_group *g, void *arg);

/**
 * pcstock_group_walk() - visit @root and its descendants in pre-order
 * @root: the subtree
 * @fn: the visitor
 * @arg: its argument
 *
 * Groups created or destroyed during the walk may or may not be visited.
 *
 * Return: the first non-zero value @fn returned, or 0.
 */
PCSTOCK_API int pcstock_group_walk(struct pcstock_group *root,
				   pcstock_walk_fn fn, void *arg);

/**
 * pcstock_group_walk_post() - visit @root's descendants, then @root
 * @root: the subtree
 * @fn: the visitor, under the same rules as for pcstock_group_walk()
 * @arg: its argument
 *
 * Post-order: every group is visited after all of its children, so a
 * visitor can sum a subtree bottom-up or collect groups to destroy
 * (destroy them after the walk, children first, in the order visited).
 *
 * Return: the first non-zero value @fn returned, or 0.
 */
PCSTOCK_API int pcstock_group_walk_post(struct pcstock_group *root,
					pcstock_walk_fn fn, void *arg);

/**
 * pcstock_group_path() - the path of @g from its tree's root
 * @g: the group
 * @buf: destination, may be NULL if @size is 0
 * @size: bytes available in @buf, terminator included
 *
 * "/" for the root, else "/a/b" (a path pcstock_group_lookup() accepts from
 * the root).  Truncates like snprintf().
 *
 * Context: any thread holding a reference on @g.
 *
 * Return: the length of the full path (excluding the terminator), or
 * -EINVAL (NULL @g, NULL @buf with a non-zero @size).
 */
PCSTOCK_API int pcstock_group_path(const struct pcstock_group *g, char *buf,
				   size_t size);

/**
 * pcstock_group_name() - name of @g
 *
 * Return: the name ("" for the root), valid while @g is held; NULL for NULL.
 */
PCSTOCK_API const char *pcstock_group_name(const struct pcstock_group *g);

/**
 * pcstock_group_parent() - parent of @g (no reference taken)
 *
 * Return: the parent; NULL for the root or NULL.
 */
PCSTOCK_API struct pcstock_group *
pcstock_group_parent(const struct pcstock_group *g);

/** pcstock_group_tree() - the tree @g belongs to (NULL for NULL) */
PCSTOCK_API struct pcstock_tree *
pcstock_group_tree(const struct pcstock_group *g);

/** pcstock_group_online() - false once @g was destroyed (and for NULL) */
PCSTOCK_API bool pcstock_group_online(const struct pcstock_group *g);

/**
 * pcstock_group_memory() - the memory counter of @g, for its readers
 *
 * Return: the counter (read it with the pcstock_counter_* readers; change
 * it only through the group functions); NULL for NULL.
 */
PCSTOCK_API const struct pcstock_counter *
pcstock_group_memory(const struct pcstock_group *g);

/**
 * pcstock_group_memsw() - the memsw counter of @g
 *
 * Return: the counter, or NULL without memsw accounting or for NULL.
 */
PCSTOCK_API const struct pcstock_counter *
pcstock_group_memsw(const struct pcstock_group *g);

/**
 * pcstock_group_charge() - charge pages to a group (try_charge_memcg)
 * @g: the group (the caller holds a reference)
 * @nr_pages: pages, 0 (a no-op) .. PCSTOCK_COUNTER_MAX
 * @flags: PCSTOCK_CHARGE_* or 0
 *
 * The kernel's flow, in order, each step as the tree's policy defines it
 * through the properties of its struct pcstock_policy_info
 * (pcstock_tree_policy_info()):
 *  1. a hit in the policy's stock returns at once (per_counter: the
 *     counters' slots on this CPU; else the policy's per-group cache);
 *  2. memsw then memory are charged, memsw rolled back if memory fails:
 *     with group_batch max(batch, @nr_pages), the surplus kept in the
 *     policy's stock, and a batch that fails is tried again for
 *     @nr_pages alone before the steps below (never reclaim for the
 *     surplus); else @nr_pages, through each counter's own stock when
 *     per_counter (which may charge up a batch and keep the surplus);
 *  3. at the first failure, a policy with exact_at_limit returns to the
 *     counters every page the over-limit group's subtree holds in stock
 *     and, if that returned any, retries once, before the steps below
 *     (and before NOWAIT's and NORETRY's exits);
 *  4. a MAX event is raised on the over-limit group, the reclaim callback
 *     asked for @nr_pages, the charge retried if the margin now fits,
 *     then once after a synchronous drain_all of the over-limit group
 *     (nothing to drain without stocks), then (NORETRY stops here) again
 *     while reclaim progresses for charges of at most 8 pages (at most
 *     PCSTOCK_MAX_PROGRESS_ROUNDS times) and PCSTOCK_MAX_RECLAIM_RETRIES
 *     times;
 *  5. then, for at most 8 pages, the OOM callback (enum
 *     pcstock_oom_result), whose progress restarts the retries, at most
 *     PCSTOCK_MAX_OOM_CALLS times.  NOFAIL then charges over the limit.
 *
 * A charge that touched the counters and left a level above its high
 * records the pages for pcstock_handle_over_high().  The root group
 * charges nothing.
 *
 * Context: any thread; may call the callbacks unless NOWAIT.  Never from a
 * walk callback.
 *
 * Return: 0; -ENOMEM (over the limit); -EINVAL (NULL, nr_pages above
 * PCSTOCK_COUNTER_MAX, unknown flags); -ENOENT (@g is offline).
 */
PCSTOCK_API int pcstock_group_charge(struct pcstock_group *g,
				     unsigned long nr_pages, unsigned int flags);

/*
 * Uncharge kinds.  Mainline returns pages in two ways, and so do we:
 *  - folios (anonymous and file pages: munmap, MADV_DONTNEED, truncation)
 *    are gathered and given back by uncharge_batch() with one
 *    page_counter_uncharge() of memory (and memsw) per group, never
 *    through the per-CPU stock: pcstock_group_uncharge_direct();
 *  - kernel memory and socket buffers are given back through the stock:
 *    refill_stock() before the series (memcg7), the counters' stock with
 *    it (DEFAULT refills the slot; V4, as posted, uncharges the counters):
 *    pcstock_group_uncharge().
 * The none policy uncharges the counters either way.
 */

/**
 * pcstock_group_uncharge() - give kmem/socket pages back, through the stock
 * @g: the group they were charged to (also if it is offline)
 * @nr_pages: pages, 0 (a no-op) .. PCSTOCK_COUNTER_MAX
 *
 * The kmem and socket uncharge (mem_cgroup_sk_uncharge(),
 * obj_cgroup_uncharge_pages()): a policy whose struct pcstock_policy_info
 * (pcstock_tree_policy_info()) has uncharges_refill keeps up to a batch in
 * this CPU's stock (per_counter: the counters' slots; else its per-group
 * cache, as the kernel's refill_stock(): oversize goes straight up, a
 * slot over batch is drained); the others uncharge the counters.  Inside
 * a reclaim or OOM callback it uncharges the counters under every policy,
 * as pcstock_group_uncharge_direct() (see pcstock_reclaim_fn).
 *
 * Context: any thread, never blocks (memcg7 on SIM CPUs spins briefly at
 * most).
 *
 * Return: 0; -EINVAL (NULL, too many pages).
 */
PCSTOCK_API int pcstock_group_uncharge(struct pcstock_group *g,
				       unsigned long nr_pages);

/**
 * pcstock_group_uncharge_direct() - give pages back past the stock
 * @g: the group they were charged to (also if it is offline)
 * @nr_pages: pages, 0 (a no-op) .. PCSTOCK_COUNTER_MAX
 *
 * Mainline's uncharge_batch(), which frees a batch of folios: memory (and
 * memsw) are uncharged straight to the counters under every policy; the
 * per-CPU stock is not touched.  Gather the pages a batch of folios frees
 * and call this once.
 *
 * Context: any thread, never blocks.
 *
 * Return: 0; -EINVAL (NULL, too many pages).
 */
PCSTOCK_API int pcstock_group_uncharge_direct(struct pcstock_group *g,
					      unsigned long nr_pages);

/*
 * pcstock_group_uncharge_batch() - the name pcstock_group_uncharge_direct()
 * had until 0.6, where "batch" said "bypass the stock" while it means the
 * stock's batch everywhere else.  Deprecated: the same function, kept for
 * soname 1 only.
 */
PCSTOCK_API int pcstock_group_uncharge_batch(struct pcstock_group *g,
					     unsigned long nr_pages)
	__attribute__((deprecated("use pcstock_group_uncharge_direct()")));

/**
 * pcstock_group_drain_all() - return the stock of a whole subtree
 * @g: the subtree
 *
 * DEFAULT and V4: every CPU's slot of every counter of the subtree.
 * memcg7: every online CPU whose cache holds pages of the subtree, with the
 * kernel's per-CPU flushing flag (isolated CPUs are skipped, see
 * memcg7_isolated_fix); a CPU's whole cache is drained, other groups' slots
 * included.  On exclusive CPUs (PINNED, COOP) the drain of a CPU another
 * thread owns is queued and not waited for, as the kernel's
 * schedule_work_on(): its owner runs it at its next operation, at
 * pcstock_cpu_idle() or when it exits.  Serialised the kernel's way: if
 * another drain_all of the tree is running, this one returns at once.
 *
 * Context: any thread; not inside a walk callback.
 */
PCSTOCK_API void pcstock_group_drain_all(struct pcstock_group *g);

/**
 * pcstock_group_set_max() - cgroup v2 memory.max write
 * @g: a non-root group
 * @nr_pages: the limit, 0..PCSTOCK_COUNTER_MAX
 *
 * Sets the limit unconditionally, then while usage is above it: drains the
 * stock once, reclaims until 16 rounds made no progress (rounds beyond
 * PCSTOCK_MAX_PROGRESS_ROUNDS that claim progress count as none), then
 * raises an OOM event and calls the OOM callback until it stops making
 * progress or was called PCSTOCK_MAX_OOM_CALLS times.  Never fails because
 * of usage: when the callbacks cannot bring usage under the limit it
 * returns 0 with usage still above (as the kernel's write does when a
 * signal interrupts it); read the usage to know.
 *
 * Context: any thread, not from a reclaim or OOM callback (of any tree:
 * -EDEADLK); concurrent chargers fine.
 *
 * Return: 0; -EINVAL (NULL, root, value too large); -ENODEV (@g was
 * destroyed: no reclaim, no OOM); -EDEADLK (called from a callback,
 * nothing changed).
 */
PCSTOCK_API int pcstock_group_set_max(struct pcstock_group *g,
				      unsigned long nr_pages);

/**
 * pcstock_group_set_max_strict() - cgroup v1 limit_in_bytes write
 * @g: a non-root group
 * @nr_pages: the limit
 *
 * Refuses a memory.max above memsw.max (with memsw).  Tries
 * pcstock_counter_set_max(); on -EBUSY drains once, then reclaims one page
 * per round until set_max succeeds or reclaim makes no progress (claimed
 * progress beyond PCSTOCK_MAX_PROGRESS_ROUNDS rounds counts as none).
 *
 * Context: limit writers of the tree are serialised internally.  Not from
 * a reclaim or OOM callback (-EDEADLK).
 *
 * Return: 0; -EINVAL (NULL, root, too large, above memsw.max); -ENODEV
 * (@g was destroyed); -EBUSY (usage could not be brought under
 * @nr_pages); -EDEADLK (called from a callback, nothing changed).
 */
PCSTOCK_API int pcstock_group_set_max_strict(struct pcstock_group *g,
					     unsigned long nr_pages);

/**
 * pcstock_group_set_memsw_max() - cgroup v1 memsw.limit_in_bytes write
 * @g: a non-root group of a memsw tree
 * @nr_pages: the limit
 *
 * As pcstock_group_set_max_strict() on the memsw counter; refuses a value
 * below memory.max.
 *
 * Return: 0; -EINVAL (NULL, root, too large, below memory.max); -ENODEV
 * (@g was destroyed); -EOPNOTSUPP (tree without memsw); -EBUSY; -EDEADLK
 * (called from a reclaim or OOM callback, nothing changed).
 */
PCSTOCK_API int pcstock_group_set_memsw_max(struct pcstock_group *g,
					    unsigned long nr_pages);

/**
 * pcstock_group_set_high() - cgroup v2 memory.high write
 * @g: a non-root group
 * @nr_pages: the threshold
 *
 * Stores it, then while usage is above it: drains once and reclaims until
 * 16 rounds made no progress (claimed progress beyond
 * PCSTOCK_MAX_PROGRESS_ROUNDS rounds counts as none).  No OOM.  Returns 0
 * also when usage stays above the threshold.
 *
 * Context: any thread, not from a reclaim or OOM callback (-EDEADLK).
 *
 * Return: 0; -EINVAL (NULL, root, too large); -ENODEV (@g was
 * destroyed); -EDEADLK (called from a callback, nothing changed).
 */
PCSTOCK_API int pcstock_group_set_high(struct pcstock_group *g,
				       unsigned long nr_pages);

/**
 * pcstock_group_set_min() - memory.min (hard protection)
 * @g: a non-root group
 * @nr_pages: the setting
 *
 * Context: any thread, callbacks included; serialised with
 * pcstock_group_destroy() (which sets it to 0) by the tree's lock.
 *
 * Return: 0; -EINVAL (NULL, root, too large); -ENODEV (@g was destroyed).
 */
PCSTOCK_API int pcstock_group_set_min(struct pcstock_group *g,
				      unsigned long nr_pages);

/**
 * pcstock_group_set_low() - memory.low (best-effort protection)
 * @g: a non-root group
 * @nr_pages: the setting
 *
 * Context: as pcstock_group_set_min().
 *
 * Return: 0; -EINVAL (NULL, root, too large); -ENODEV (@g was destroyed).
 */
PCSTOCK_API int pcstock_group_set_low(struct pcstock_group *g,
				      unsigned long nr_pages);

/**
 * pcstock_group_write_limit() - set a limit from a string
 * @g: the group
 * @which: enum pcstock_limit
 * @buf: e.g. "512M", "max\n"; surrounding whitespace is ignored, then the
 *	kernel's memparse grammar with the "max" keyword (so "" is 0 and
 *	"020000" octal, as for pcstock_group_write())
 *
 * Whitespace is the kernel's strstrip()'s, from its own ctype table
 * whatever the C locale: \t, \n, \v, \f, \r, ' ' and the Latin-1
 * no-break space 0xA0 ("4096\xa0" is one page).  The value may be of any
 * length (leading zeros included).
 *
 * Return: as the setter; -EINVAL also for a string memparse rejects or an
 * unknown @which; -ENODEV (@g was destroyed, checked before @buf).
 */
PCSTOCK_API int pcstock_group_write_limit(struct pcstock_group *g,
					  enum pcstock_limit which,
					  const char *buf);

/**
 * pcstock_group_read() - read one of @g's cgroup memory files
 * @g: the group
 * @file: the file name, e.g. "memory.max" (see below)
 * @buf: destination, may be NULL if @size is 0
 * @size: bytes available in @buf, terminator included
 *
 * The memory controller's files as cgroupfs shows them, values in bytes.
 * A tree whose attributes set track_failcnt is cgroup v1 (the kernel
 * tracks failcnt exactly on v1 hierarchies), any other tree v2.
 * memory.current (and usage_in_bytes) includes the pages in the subtree's
 * per-CPU stocks, as the kernel's: call pcstock_group_drain_all() first for
 * an exact value, or read memory.stat's "charged".
 * v2, non-root groups: memory.current, memory.min, memory.low, memory.high,
 * memory.max ("max" for no limit), memory.peak (the local watermark),
 * memory.events and memory.events.local ("low", "high", "max", "oom",
 * "oom_kill", "oom_group_kill" lines, as v6.17, the series' base;
 * hierarchical and local counts), and with memsw
 * accounting memory.swap.current and memory.swap.max.  v1, every group:
 * memory.usage_in_bytes, memory.limit_in_bytes (a number even for no
 * limit, as v1 prints), memory.max_usage_in_bytes, memory.failcnt, and
 * with memsw accounting the same four as memory.memsw.*.  Both:
 * memory.stat ("charged", "stock", "refused", "stock_hit", "stock_miss",
 * "stock_refill", "stock_drain", "stock_drained", "stock_trim" lines).
 * Each line ends with a newline.
 *
 * Differences from the kernel: memory.peak has no per-open-file state
 * (there are no files): it shows the local watermark that any write
 * resets.  memory.swap.* address the memsw (memory+swap) counter, so
 * their values include memory.  memory.stat has pcstock's own keys, and
 * memory.events' "low" is always 0 (the caller's reclaim decides), as is
 * "oom_group_kill" (there is no memory.oom.group).  A destroyed group's
 * files can still be read (the kernel's are gone).
 *
 * Context: any thread holding a reference on @g; does not stop chargers.
 *
 * Return: the length of the whole text, excluding the terminator (the
 * text is truncated to @size like snprintf()); -EINVAL (NULL @g or @file,
 * NULL @buf with a non-zero @size); -ENOENT (no such file for @g: unknown
 * name, a file of the other cgroup version, a memsw file without memsw,
 * a non-root file on the root).
 */
PCSTOCK_API ssize_t pcstock_group_read(const struct pcstock_group *g,
				       const char *file, char *buf,
				       size_t size);

/**
 * pcstock_group_write() - write one of @g's cgroup memory files
 * @g: the group
 * @file: the file name (see pcstock_group_read())
 * @buf: the text written, e.g. "512M\n"
 *
 * With the kernel's semantics: @buf is the whole write, at most
 * PCSTOCK_PAGE_SIZE bytes (kernfs' limit for cgroup files); the limit
 * files parse it like the kernel's handlers (surrounding whitespace
 * stripped as pcstock_group_write_limit() does, then memparse, so an
 * empty write, "K" and "1k" are 0, sizes are floored to whole pages and
 * "020000" is octal; "max" means no limit on v2, "-1" on v1) and call
 * the group's setter.  Configuration text belongs to the strict
 * pcstock_parse_size() instead; pass its pages to the setter, or write
 * them as pcstock_format_size() prints them.  The files call:
 * memory.max pcstock_group_set_max() (the limit is swapped in, then drain,
 * reclaim and OOM; never -EBUSY), memory.high, memory.min and memory.low
 * theirs, memory.limit_in_bytes pcstock_group_set_max_strict() (-EBUSY
 * when usage cannot be brought under it), memory.memsw.limit_in_bytes and
 * memory.swap.max pcstock_group_set_memsw_max().  Any write to
 * memory.peak resets the local watermark to the current usage, to
 * memory.max_usage_in_bytes both watermarks, to memory.failcnt the
 * failure count (the content is ignored, as in the kernel).
 *
 * Context: as the setter called; not from a callback or walk.
 *
 * Return: 0; -EINVAL (NULL argument, a value the parser refuses, or as
 * the setter); -ENOENT (as for pcstock_group_read()); -E2BIG (@buf longer
 * than PCSTOCK_PAGE_SIZE); -ENODEV (@g was destroyed: its files are gone;
 * nothing is parsed or called); -EACCES (a read-only file); -EBUSY,
 * -EOPNOTSUPP, -EDEADLK (as the setter).
 */
PCSTOCK_API int pcstock_group_write(struct pcstock_group *g, const char *file,
				    const char *buf);

/**
 * pcstock_group_calculate_protection() - compute emin/elow of a subtree
 * @g: the reclaim root (its own values are left alone, as in the kernel)
 *
 * Walks the subtree top-down and stores each descendant's effective min and
 * low (the tree's recursive_protection setting applies).  Read them with
 * pcstock_group_stats().
 *
 * Context: callers serialise calculations over overlapping subtrees.
 */
PCSTOCK_API void pcstock_group_calculate_protection(struct pcstock_group *g);

/**
 * pcstock_group_usage() - memory usage of @g in pages, stock included
 *
 * Return: the usage; 0 for NULL.
 */
PCSTOCK_API unsigned long pcstock_group_usage(const struct pcstock_group *g);

/**
 * pcstock_group_usage_exact() - usage minus the stock of the subtree
 *
 * Return: pages held by callers through @g and its descendants, exact when
 * nothing charges concurrently (clamped at 0 otherwise); 0 for NULL.
 */
PCSTOCK_API unsigned long
pcstock_group_usage_exact(const struct pcstock_group *g);

/** pcstock_group_memsw_usage() - memsw usage, 0 without memsw or for NULL */
PCSTOCK_API unsigned long
pcstock_group_memsw_usage(const struct pcstock_group *g);

/**
 * pcstock_group_stock_pages() - pages in the stock of @g's subtree
 *
 * Return: a snapshot (memory stock; memcg7: the slots of the subtree); 0
 * for NULL.
 */
PCSTOCK_API unsigned long
pcstock_group_stock_pages(const struct pcstock_group *g);

/**
 * pcstock_group_stock_bound() - the most pages the stock of @g's subtree
 *	can hide right now
 * @g: the group (NULL is fine)
 *
 * What the tree's policy (enum pcstock_tree_policy) can hold of the
 * subtree's usage in per-CPU stock in its present state, the figure
 * pcstock_group_stock_pages() stays below: a per-counter policy's
 * nr_cpus x batch per memory counter of the subtree
 * (pcstock_counter_stock_bound(); PCSTOCK_TREE_V4 can exceed it, as that
 * says), PCSTOCK_TREE_EXACT's none for a counter in its exact state (near
 * a max), PCSTOCK_TREE_MEMCG7's 7 slots of a batch per CPU whatever the
 * subtree, PCSTOCK_TREE_NONE's 0.  A snapshot: while charges run, a
 * counter of PCSTOCK_TREE_EXACT may leave its exact state.
 *
 * Context: any thread; O(groups of the subtree).
 * Return: the bound in pages; 0 for NULL.
 */
PCSTOCK_API unsigned long
pcstock_group_stock_bound(const struct pcstock_group *g);

/**
 * pcstock_group_events() - hierarchical event count (memory.events)
 *
 * Return: the count, 0 for an unknown event or a NULL group.
 */
PCSTOCK_API unsigned long pcstock_group_events(const struct pcstock_group *g,
					       enum pcstock_event ev);

/**
 * pcstock_group_stats() - snapshot of a group
 * @g: the group (NULL fills @st with zeroes)
 * @st: receives it (NULL: nothing is done)
 *
 * Context: any thread; does not stop chargers.
 */
PCSTOCK_API void pcstock_group_stats(const struct pcstock_group *g,
				     struct pcstock_group_stats *st);

/**
 * pcstock_handle_over_high() - reclaim the calling thread's over-high pages
 *
 * The kernel's __mem_cgroup_handle_over_high(), called by the user at a
 * safe point (no locks held, e.g. when a request completes).  Takes the
 * pages recorded by this thread's charges, reclaims them from each level
 * of the last charged group above its high (raising HIGH events), and
 * retries while reclaim progresses (at most PCSTOCK_MAX_PROGRESS_ROUNDS
 * times) or 16 times while the throttling delay exceeds 10 ms.  Drops the
 * thread's record (and its group reference); a record that
 * pcstock_tree_destroy() already dropped counts as none.
 *
 * Context: any thread, not from a callback or RCU section.
 *
 * Return: the delay in milliseconds the kernel would sleep (HZ = 1000:
 * penalty = overage² × HZ >> 34, × pages / 64, at most 2000; 0 when at
 * most 10), 0 if nothing was recorded.
 */
PCSTOCK_API unsigned long pcstock_handle_over_high(void);

/**
 * pcstock_over_high_pages() - pages this thread has recorded over high
 *
 * Return: the count pcstock_handle_over_high() would work on; 0 once
 * pcstock_tree_destroy() dropped the record of a destroyed tree.
 */
PCSTOCK_API unsigned long pcstock_over_high_pages(void);

PCSTOCK_EXTERN_C_END

#endif /* PCSTOCK_HIERARCHY_H */
