# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The explorer's clean-run budgets, shared by tests/explore.cmake
# (configure time) and tests/explore/discover.cmake (build time).

# explore_budget(<var> <scenario> <strategy>): the arguments of a clean
# run: a fixed budget per scenario and strategy, fixed seeds.  PCT runs
# about ten times as many schedules per second (few switches).  Group
# schedules build and destroy a tree, whose RCU grace periods (the call_rcu
# thread polls) make them about 30 per second on an idle machine, far fewer
# on a loaded one: a small budget.  stock-disable's random walk takes a
# few thousand schedules to find a weakened drain read.
function(explore_schedules var scenario strategy)
	if(scenario MATCHES "^group-(publish|unlink)")
		set(n 200)
	elseif(scenario MATCHES "^group-")
		set(n 60)
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
