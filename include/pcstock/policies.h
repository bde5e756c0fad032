/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/policies.h - the registered stock policies, one line each
 * (no include guard: included once per use, with PCSTOCK_POLICY defined).
 *
 * PCSTOCK_POLICY(ID, name) registers the policy whose table
 * pcs_policy_<name> is defined in src/policy_*.c as
 * enum pcstock_tree_policy's PCSTOCK_TREE_<ID> (<pcstock/hierarchy.h>),
 * and the library's registry (src/policy.c).  The order is the ABI: a
 * line's place is its enum value, so a new policy goes at the end.
 * What each is: enum pcstock_tree_policy's comment.  PLAIN, the one with
 * no locked instruction on its hit, runs on RSEQ domains only (x86-64),
 * and each of its drains (drain_all, a group's destroy, a CPU offline)
 * costs a membarrier(2) that interrupts every CPU running the process.
 */
PCSTOCK_POLICY(DEFAULT, default)
PCSTOCK_POLICY(V4, v4)
PCSTOCK_POLICY(MEMCG7, memcg7)
PCSTOCK_POLICY(NONE, none)
PCSTOCK_POLICY(EXACT, exact)
PCSTOCK_POLICY(PLAIN, plain)
