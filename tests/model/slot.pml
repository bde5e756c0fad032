/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * slot.pml - Spin model of pcstock's per-CPU stock slot protocol.
 *
 * Two CPUs, one slot each.  Two owners share CPU 0 (preemption: the only
 * way two refills of one slot can race); a third process on CPU 1 charges,
 * uncharges and drains CPU 0's slot remotely.  Pages live in three places:
 * usage (the hierarchy), the slots, and the callers (held).  Every C11
 * read-modify-write of the library is one atomic block here; a plain load
 * or store is a statement of its own.  Spin interleaves statements, i.e.
 * sequential consistency: the model is about atomicity, not ordering.
 *
 * Variants (spin -D...):
 *   (none)            DEFAULT: CAS consume; CAS refill that never takes a
 *                     slot above BATCH (an overflowing refill empties the
 *                     slot and uncharges its pages with the new ones, as
 *                     src/stock.c); uncharges of <= BATCH refill the local
 *                     slot; drains read before they exchange.
 *   V4                the posted series: atomic add refill without cap,
 *                     uncharges straight to usage, unconditional exchange.
 *   PLAIN_REFILL      DEFAULT, but the refill is a load and a store.
 *   READ_ZERO_DRAIN   DEFAULT, but the drain is a load and a store of 0.
 *   CHECK_CAP         also assert slot <= BATCH in every state.
 *
 * Properties: in every state no slot and no usage is negative (and, with
 * CHECK_CAP, no slot above BATCH); at the end usage == held + stock, and
 * after draining every slot usage == held.
 */

#define BATCH 3
#define MAX   12

short usage;
short slot[2];
short held;
byte finished;

/* The hierarchy's try_charge: one RMW plus a limit check, as one step. */
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

/* Take n pages from the slot if it holds that many (CAS loop). */
inline consume(cpu, n, ok)
{
	ok = false;
	old = slot[cpu];
	do
	:: old < n -> break
	:: else ->
		atomic {
			if
			:: slot[cpu] == old -> slot[cpu] = old - n; ok = true
			:: else -> old = slot[cpu]
			fi
		}
		if
		:: ok -> break
		:: else -> skip
		fi
	od
}

/* Put nr pages (charged by us or held by us) into the slot. */
inline refill(cpu, nr)
{
#if defined(V4)
	atomic { slot[cpu] = slot[cpu] + (nr) }
#elif defined(PLAIN_REFILL)
	old = slot[cpu];
	want = old + (nr);
	new = (want > BATCH -> 0 : want);
	slot[cpu] = new;
	if
	:: want > new -> hier_uncharge(want - new)
	:: else -> skip
	fi
#else
	old = slot[cpu];
	do
	:: want = old + (nr);
	   new = (want > BATCH -> 0 : want);
	   atomic {
		if
		:: slot[cpu] == old -> slot[cpu] = new; ok = true
		:: else -> old = slot[cpu]; ok = false
		fi
	   }
	   if
	   :: ok -> break
	   :: else -> skip
	   fi
	od;
	if
	:: want > new -> hier_uncharge(want - new)
	:: else -> skip
	fi
#endif
}

inline charge(cpu, n)
{
	consume(cpu, n, ok);
	if
	:: !ok && n < BATCH ->
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

/* Give back n pages this process holds (skipped if it holds fewer). */
inline uncharge(cpu, n)
{
	if
	:: mine >= n ->
		atomic { held = held - n; mine = mine - n };
#ifdef V4
		hier_uncharge(n)
#else
		refill(cpu, n)
#endif
	:: else -> skip
	fi
}

inline drain(cpu)
{
	v = 0;
#ifndef V4
	if
	:: slot[cpu] == 0 -> skip	/* read first: empty slots cost no RMW */
	:: else ->
#endif
#ifdef READ_ZERO_DRAIN
		v = slot[cpu];
		slot[cpu] = 0;
#else
		atomic { v = slot[cpu]; slot[cpu] = 0 };
#endif
		if
		:: v != 0 -> hier_uncharge(v)
		:: else -> skip
		fi
#ifndef V4
	fi
#endif
}

proctype owner_a()
{
	short old, want, new, v, mine;
	bool ok;

	charge(0, 1); charge(0, 2); uncharge(0, 1); charge(0, 1);
	atomic { finished++ }
}

proctype owner_b()
{
	short old, want, new, v, mine;
	bool ok;

	charge(0, 2); uncharge(0, 2); charge(0, 1);
	atomic { finished++ }
}

proctype remote()
{
	short old, want, new, v, mine;
	bool ok;

	charge(1, 1); drain(0); uncharge(1, 1); drain(0); charge(1, 2);
	atomic { finished++ }
}

/* Runs once, at any point of any interleaving: checks every state. */
proctype monitor()
{
	atomic {
		assert(usage >= 0 && slot[0] >= 0 && slot[1] >= 0);
#ifdef CHECK_CAP
		assert(slot[0] <= BATCH && slot[1] <= BATCH)
#endif
	}
}

init
{
	short v;

	atomic { run owner_a(); run owner_b(); run remote(); run monitor() };
	finished == 3;
	assert(usage == held + slot[0] + slot[1]);
	atomic { v = slot[0] + slot[1]; slot[0] = 0; slot[1] = 0; usage = usage - v };
	assert(usage == held)
}
