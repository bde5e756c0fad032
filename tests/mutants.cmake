# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Boundary cases a mutation study found untested (docs/mutation.md): each
# fails on a mutant of the code named in its comment.

# memcg7's owner variant where a key dies, and where a remote reader
# dereferences a slot's key (tests/explore/explore_memcg7.c:
# memcg7-key-death, memcg7-publish; docs/mutation.md O12, O13, O14, N35),
# clean in SC and in weak memory (memcg7-key-death in SC also pins reap()'s
# single load of each done_epoch), and four planted order bugs that only
# --weak finds: the owner's take of the queued work relaxed, or the
# requester's store of it (the owner reads a stale epoch, and nobody ever
# drops the dead key's reference); the owner's done_epoch stored relaxed
# (a reaper frees the key before it sees the owner's drain); a slot's
# install relaxed (a reader finds the key but not its contents).
pcstock_add_mutant_explorers(m7_relaxed_work m7_relaxed_queue m7_relaxed_done
	m7_relaxed_install)
foreach(strategy random pct)
	set(args --strategy ${strategy} --schedules 10000 --seed 1)
	if(strategy STREQUAL pct)
		list(APPEND args --depth 3)
	endif()
	# memcg7-publish only in weak memory: in SC every reader sees the
	# key written.
	pcstock_add_explore_test(explore_memcg7-key-death_${strategy}
		ARGS --scenario memcg7-key-death ${args})
	foreach(scenario memcg7-key-death memcg7-publish)
		pcstock_add_explore_test(explore_${scenario}_weak_${strategy}
			ARGS --scenario ${scenario} ${args} --weak)
	endforeach()
	foreach(case "m7_relaxed_work;memcg7-key-death"
		"m7_relaxed_queue;memcg7-key-death"
		"m7_relaxed_done;memcg7-key-death"
		"m7_relaxed_install;memcg7-publish")
		list(GET case 0 name)
		list(GET case 1 scenario)
		string(REPLACE _ - dashed ${name})
		pcstock_add_explore_test(
			explore_detect_${name}_weak_${strategy}
			BINARY pcstock-explore-${dashed}
			ARGS --scenario ${scenario} ${args} --weak
			--expect-violation)
	endforeach()
endforeach()

# A group's put with its decrement relaxed (src/tree.c, relaxed_put;
# docs/mutation.md O19): a last put by a thread that did not destroy the
# group may still see it online and abort ("put more often than it was
# got"), which the explorer reports as the violation.  group-last-put
# (tests/explore/explore_group.c; its clean runs are per-policy, from
# discover.cmake) finds it in weak memory only, within its clean runs'
# budget (seed 1: random at schedule 13, PCT at 9, of 60); in SC it
# passes.
pcstock_add_mutant_explorers(relaxed_put)
pcstock_add_weak_detection_test(relaxed_put group-last-put-default)

# An EXACT stock's charge that fails, drains every slot, finds pages and
# does not try again (src/stock_ctl.c, exact_no_retry; docs/mutation.md
# Q10): stock-retry-exact (tests/explore/explore_stock.c; its clean runs
# from discover.cmake) finds it, SC and weak, with the budget of its clean
# runs: a charge of 9 fails while a switch to exact has marked the slots
# and not yet drained them, and its own drain takes the 3 stocked pages
# (seed 1: random at schedule 407, PCT at 2).
pcstock_add_mutant_explorers(exact_no_retry)
foreach(strategy random pct)
	explore_budget(args stock-retry-exact ${strategy})
	pcstock_add_explore_test(explore_detect_exact_no_retry_${strategy}
		BINARY pcstock-explore-exact-no-retry
		ARGS ${args} --expect-violation)
	pcstock_add_explore_test(explore_detect_exact_no_retry_weak_${strategy}
		BINARY pcstock-explore-exact-no-retry
		ARGS ${args} --weak --expect-violation)
endforeach()

# A charge's load of online relaxed (src/charge.c, relaxed_charge_online;
# docs/mutation.md Q5): a charger that learnt of the destroy from a
# charge's -ENOENT may still read the hit key the destroy cleared, and its
# next charge hits the dead group's stock.  group-enoent checks that
# charge.  Rare: the charge must land between the destroy's release of
# online and its drain, and read the key stale twice.  In weak memory,
# seed 1, random finds it at schedule 232 and PCT at 117, past the clean
# runs' budget of 60: budgets of their own (about 5 s and 3 s).  The real
# code is clean over the same runs, SC and weak.
pcstock_add_mutant_explorers(relaxed_charge_online)
foreach(case "random;400" "pct;200")
	list(GET case 0 strategy)
	list(GET case 1 n)
	set(args --scenario group-enoent-default --strategy ${strategy}
		--schedules ${n} --seed 1)
	if(strategy STREQUAL pct)
		list(APPEND args --depth 3)
	endif()
	pcstock_add_explore_test(
		explore_detect_relaxed_charge_online_weak_${strategy}
		BINARY pcstock-explore-relaxed-charge-online
		ARGS ${args} --weak --expect-violation)
endforeach()
# The name index's rebuild publishing its new table relaxed (src/names.c,
# relaxed_name_rebuild; docs/mutation.md Q32): a lookup that reads the
# new table may see its slots empty and miss a group that exists
# (group-rebuild, weak memory only).
pcstock_add_mutant_explorers(relaxed_name_rebuild)
pcstock_add_weak_detection_test(relaxed_name_rebuild group-rebuild-default)

# plain's drain without its membarrier (src/policy_plain.c,
# plain_no_membarrier): a restartable sequence of CPU 0 that loaded the
# slot before the drain closed it is not restarted, and its commit stores
# the stale value after the drain took the pages, which are then counted
# twice (usage below held + stock).  group-drain-plain
# (tests/explore/explore_drain.c; its clean runs from discover.cmake)
# finds it, seed 1: random at schedule 13 (weak: 3), PCT at 65 (weak: 7),
# so PCT in SC gets a budget of its own past the clean runs' 60.
pcstock_add_mutant_explorers(plain_no_membarrier)
foreach(case "random;60;" "random;60;--weak" "pct;200;" "pct;60;--weak")
	list(GET case 0 strategy)
	list(GET case 1 n)
	list(GET case 2 weak)
	set(args --scenario group-drain-plain --strategy ${strategy}
		--schedules ${n} --seed 1 ${weak})
	if(strategy STREQUAL pct)
		list(APPEND args --depth 3)
	endif()
	string(REPLACE "--" "_" suffix "${weak}")
	pcstock_add_explore_test(
		explore_detect_plain_no_membarrier${suffix}_${strategy}
		BINARY pcstock-explore-plain-no-membarrier
		ARGS ${args} --expect-violation)
endforeach()
