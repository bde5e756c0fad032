/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * disable.pml - Spin model of the stock's disable mark (src/stock.c).
 *
 * Two CPUs, one slot each.  Two owners share CPU 0, a third process on
 * CPU 1 charges and drains CPU 0's slot remotely, and a
 * disabler disables the stock (the state, then the mark on every slot)
 * and drains both CPUs, as a group's destroy does.  As slot.pml: every
 * C11 read-modify-write is one atomic block, a plain load or store a
 * statement of its own, and Spin's interleavings are sequentially
 * consistent (the model is about atomicity; memory orders are the
 * explorer's --weak business).
 *
 * The protocol: a disable adds MARK (negative, below any batch of pages)
 * to every slot and keeps the pages.  The hit takes n only if slot - n >=
 * 0; a DEFAULT refill adds with a CAS only to a slot that is not negative,
 * else sends its pages up; a V4 refill adds unconditionally and, if the
 * value it added to was marked, drains the slot; a drain exchanges 0 (or
 * MARK if it saw a mark) and, if it took a marked value after writing 0,
 * puts the mark back with another exchange, taking what came in between.
 * A disabled stock's pages are still consumed, the mark kept.
 *
 * Variants (spin -D...):
 *   (none)       DEFAULT.
 *   V4           the series' refill (add) and drain (exchange, no read).
 *   NO_MARK      the disable does not mark: a refill that read the stock on
 *                before the disable lands after its drains.
 *   NO_REMARK    a drain that took a marked value leaves the slot at 0.
 *
 * The scripts are short: with MEMLIM=1024 the exhaustive search of the
 * DEFAULT variant stores about 7.2 million states.
 *
 * Properties: in every state usage >= 0 and no slot's pages are negative;
 * at the end every slot's pages are 0 (nothing stranded in a disabled
 * stock), every slot is still marked, and usage == held.
 */

#define BATCH 3
#define MAX   12
#define MARK  (-64)

short usage;
short slot[2];
short held;
byte finished;
bool stock_on = true;

/* The pages a slot's value stands for. */
inline pages(v, p)
{
	p = (v < 0 -> v - MARK : v)
}

inline hier_try_charge(n, ok)
{
	atomic {
		if
		:: usage + (n) <= MAX -> usage = usage + (n); ok = true
		:: else -> ok = false
		fi
	}
}

inline hier_uncharge(n)
{
	atomic { usage = usage - (n) }
}

/* The hit: a CAS loop that needs slot - n >= 0. */
inline consume(cpu, n, ok)
{
	ok = false;
	old = slot[cpu];
	do
	:: old - (n) < 0 -> break
	:: else ->
		atomic {
			if
			:: slot[cpu] == old -> slot[cpu] = old - (n); ok = true
			:: else -> old = slot[cpu]
			fi
		}
		if
		:: ok -> break
		:: else -> skip
		fi
	od
}

/* A disabled stock's leftovers, from the miss path: the mark kept. */
inline take_marked(cpu, n, ok)
{
	ok = false;
	old = slot[cpu];
	do
	:: old < 0 && old - MARK >= (n) ->
		atomic {
			if
			:: slot[cpu] == old -> slot[cpu] = old - (n); ok = true
			:: else -> old = slot[cpu]
			fi
		}
		if
		:: ok -> break
		:: else -> skip
		fi
	:: else -> break
	od
}

/* Empty a slot last seen as @seen, keeping its mark; uncharge its pages. */
inline drain_slot(cpu, seen)
{
	atomic { v = slot[cpu]; slot[cpu] = (seen < 0 -> MARK : 0) };
	pages(v, p);
#ifndef NO_REMARK
	if
	:: v < 0 && seen >= 0 ->
		atomic { v = slot[cpu]; slot[cpu] = MARK };
		pages(v, q);
		p = p + q
	:: else -> skip
	fi;
#endif
	if
	:: p != 0 -> hier_uncharge(p)
	:: else -> skip
	fi
}

inline drain(cpu)
{
#ifdef V4
	drain_slot(cpu, 0)
#else
	seen = slot[cpu];	/* read first */
	pages(seen, p);
	if
	:: p == 0 -> skip
	:: else -> drain_slot(cpu, seen)
	fi
#endif
}

/* Put nr charged pages into the slot. */
inline refill(cpu, nr)
{
#ifdef V4
	atomic { old = slot[cpu]; slot[cpu] = slot[cpu] + (nr) };
	if
	:: old < 0 -> drain_slot(cpu, old)
	:: else -> skip
	fi
#else
	old = slot[cpu];
	do
	:: old < 0 -> hier_uncharge(nr); break
	:: else ->
		want = old + (nr);
		new = (want > BATCH -> 0 : want);
		atomic {
			if
			:: slot[cpu] == old -> slot[cpu] = new; ok = true
			:: else -> old = slot[cpu]; ok = false
			fi
		}
		if
		:: ok ->
			if
			:: want > new -> hier_uncharge(want - new)
			:: else -> skip
			fi;
			break
		:: else -> skip
		fi
	od
#endif
}

inline charge(cpu, n)
{
	consume(cpu, n, ok);
	if
	:: !ok && !stock_on -> take_marked(cpu, n, ok)
	:: !ok && stock_on && n < BATCH ->
		hier_try_charge(BATCH, ok);
		if
		:: ok -> refill(cpu, BATCH - n); ok = true
		:: else -> skip
		fi
	:: else -> skip
	fi;
	if
	:: !ok -> hier_try_charge(n, ok)
	:: else -> skip
	fi;
	if
	:: ok -> atomic { held = held + n; mine = mine + n }
	:: else -> skip
	fi
}

inline uncharge(cpu, n)
{
	if
	:: mine >= n ->
		atomic { held = held - n; mine = mine - n };
#ifdef V4
		hier_uncharge(n)
#else
		if
		:: stock_on -> refill(cpu, n)
		:: else -> hier_uncharge(n)
		fi
#endif
	:: else -> skip
	fi
}

#define LOCALS short old, want, new, v, p, q, seen, mine; bool ok

/* Between operations the scratch locals are dead: zero them, so that
 * states differing only in them are one (a smaller search). */
#define DONE skip; d_step { old = 0; want = 0; new = 0; v = 0; p = 0; q = 0; \
		      seen = 0; ok = false }

proctype owner_a()
{
	LOCALS;

	charge(0, 1); DONE; uncharge(0, 1); DONE; charge(0, 2); DONE;
	atomic { finished++ }
}

proctype owner_b()
{
	LOCALS;

	charge(0, 1); DONE;
	atomic { finished++ }
}

proctype remote()
{
	LOCALS;

	charge(1, 1); DONE; drain(0); DONE;
	atomic { finished++ }
}

proctype disabler()
{
	LOCALS;

	stock_on = false;
#ifndef NO_MARK
	atomic { slot[0] = slot[0] + MARK };
	atomic { slot[1] = slot[1] + MARK };
#endif
	drain(0); DONE; drain(1); DONE;
	atomic { finished++ }
}

/* Runs once, at any point of any interleaving: checks every state. */
proctype monitor()
{
	short p0, p1;

	atomic {
		pages(slot[0], p0);
		pages(slot[1], p1);
		assert(usage >= 0 && p0 >= 0 && p1 >= 0)
	}
}

init
{
	short p0, p1;

	atomic {
		run owner_a(); run owner_b(); run remote(); run disabler();
		run monitor()
	};
	finished == 4;
	pages(slot[0], p0);
	pages(slot[1], p1);
	assert(p0 == 0 && p1 == 0);
#ifndef NO_MARK
	assert(slot[0] < 0 && slot[1] < 0);
#endif
	assert(usage == held)
}
