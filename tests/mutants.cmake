# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Boundary cases a mutation study found untested (docs/mutation.md): each
# fails on a mutant of the code named in its comment.
pcstock_add_test(test_mutants_stock SOURCES test_mutants_stock.c
	LABELS unit TIMEOUT 60)
pcstock_add_test(test_mutants_groups SOURCES test_mutants_groups.c
	LABELS unit TIMEOUT 60)
pcstock_add_test(test_mutants_memcg7 SOURCES test_mutants_memcg7.c
	LABELS unit TIMEOUT 60)

# memcg7's owner variant where a key dies, and where a remote reader
# dereferences a slot's key (tests/explore/explore_memcg7.c:
# memcg7-key-death, memcg7-publish), clean in SC and in weak memory.
# memcg7-key-death fails at once (SC, both strategies) with reap() loading
# a done_epoch twice.
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
endforeach()
