# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The explorer's clean-run budgets, shared by tests/explore.cmake
# (configure time) and tests/explore/discover.cmake (build time).

# explore_budget(<var> <scenario> <strategy>): the arguments of a clean
# run: a fixed budget per scenario and strategy, fixed seeds.  PCT runs
# about ten times as many schedules per second (few switches).  Group
# schedules build and destroy a tree, about 1,000 to 3,000 per second
# (their grace periods are the explorer's own, src/rcu.h; when liburcu's
# call_rcu thread ran the frees they were about 30 per second, and the
# budgets were 200 and 60), and walk more steps each: a smaller budget.
# stock-disable's random walk takes a few thousand schedules to find a
# weakened drain read.  Under a sanitizer (PCSTOCK_SANITIZE when
# tests/explore.cmake configures, SANITIZE when discover.cmake runs) a
# schedule costs 3 to 10 times as much, and the group budgets are a fifth:
# enough for the sanitizer to watch the code each scenario reaches, while
# the plain build's runs give the schedules' coverage.
function(explore_schedules var scenario strategy)
	if(PCSTOCK_SANITIZE OR SANITIZE)
		set(group_share 5)
	else()
		set(group_share 1)
	endif()
	if(scenario MATCHES "^group-(publish|unlink)")
		math(EXPR n "1000 / ${group_share}")
	elseif(scenario MATCHES "^group-")
		math(EXPR n "300 / ${group_share}")
	elseif(strategy STREQUAL pct OR scenario MATCHES "^stock-disable")
		set(n 10000)
	else()
		set(n 2000)
	endif()
	set(${var} ${n} PARENT_SCOPE)
endfunction()

# explore_clean_schedules(<var> <scenario> <strategy>): the budget of a
# run that expects no violation.  Under a sanitizer the other scenarios'
# budgets are a tenth as well (the group ones stay a fifth): the runs are
# there for the sanitizer to watch the code each scenario reaches, which
# the first hundreds of schedules do, and at the full budgets the two
# sanitizer stages' explorer runs took 1,500 s of CPU time on an AMD EPYC
# of family 26 model 2 (2026-12-05), which put .ci/run over its 30
# minutes.  A run that expects a planted bug's violation keeps the
# budget above, which its first detection is counted against.
# explore_clean_count(<var> <n>): the same for a clean run's fixed count
# <n> of schedules.
function(explore_clean_count var n)
	if(PCSTOCK_SANITIZE OR SANITIZE)
		math(EXPR n "${n} / 10")
	endif()
	set(${var} ${n} PARENT_SCOPE)
endfunction()

function(explore_clean_schedules var scenario strategy)
	explore_schedules(n ${scenario} ${strategy})
	if(NOT scenario MATCHES "^group-")
		explore_clean_count(n ${n})
	endif()
	set(${var} ${n} PARENT_SCOPE)
endfunction()

# explore_budget(<var> <scenario> <strategy> [CLEAN]): the arguments of a
# run; CLEAN: one that expects no violation (explore_clean_schedules()).
function(explore_budget var scenario strategy)
	if(ARGC GREATER 3 AND ARGV3 STREQUAL "CLEAN")
		explore_clean_schedules(n ${scenario} ${strategy})
	else()
		explore_schedules(n ${scenario} ${strategy})
	endif()
	set(args --scenario ${scenario} --strategy ${strategy} --schedules ${n}
		--seed 1)
	if(strategy STREQUAL pct)
		list(APPEND args --depth 3)
	endif()
	set(${var} ${args} PARENT_SCOPE)
endfunction()

# explore_budgets(<var> <scenario>): one clean process, the random walk
# then PCT, each with its clean budget (the same runs as two processes).
function(explore_budgets var scenario)
	explore_clean_schedules(random ${scenario} random)
	explore_clean_schedules(pct ${scenario} pct)
	set(${var} --scenario ${scenario} --strategy random,pct
		--schedules ${random},${pct} --depth 3 --seed 1 PARENT_SCOPE)
endfunction()
