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

function(explore_budget var scenario strategy)
	explore_schedules(n ${scenario} ${strategy})
	set(args --scenario ${scenario} --strategy ${strategy} --schedules ${n}
		--seed 1)
	if(strategy STREQUAL pct)
		list(APPEND args --depth 3)
	endif()
	set(${var} ${args} PARENT_SCOPE)
endfunction()

# explore_budgets(<var> <scenario>): one process, the random walk then
# PCT, each with its budget above (the same runs as two processes).
function(explore_budgets var scenario)
	explore_schedules(random ${scenario} random)
	explore_schedules(pct ${scenario} pct)
	set(${var} --scenario ${scenario} --strategy random,pct
		--schedules ${random},${pct} --depth 3 --seed 1 PARENT_SCOPE)
endfunction()
