# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The schedule explorer (tests/explore/) and the Spin models (tests/model/).
# Every test here carries the label "explore".

set(EXPLORE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/explore)
set(EXPLORE_SOURCES ${EXPLORE_DIR}/explore.c ${EXPLORE_DIR}/explore_counter.c
	${EXPLORE_DIR}/explore_stock.c)

# pcstock_add_explorer(<binary> <library>): the driver over one library
# flavour (the test library, or a variant with a planted bug).
function(pcstock_add_explorer name lib)
	add_executable(${name} ${EXPLORE_SOURCES} ${EXPLORE_DIR}/main.c)
	pcstock_target_flags(${name})
	target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src
		${EXPLORE_DIR})
	target_compile_definitions(${name} PRIVATE PCSTOCK_EXPLORE
		PCSTOCK_FAULT_INJECT)
	target_link_libraries(${name} PRIVATE ${lib} Threads::Threads)
endfunction()

pcstock_add_explorer(pcstock-explore pcstock_testlib)

# pcstock_add_explore_test(<name> ARGS a... [TIMEOUT s] [BINARY b])
function(pcstock_add_explore_test name)
	cmake_parse_arguments(ARG "" "TIMEOUT;BINARY" "ARGS" ${ARGN})
	if(NOT ARG_BINARY)
		set(ARG_BINARY pcstock-explore)
	endif()
	if(NOT ARG_TIMEOUT)
		set(ARG_TIMEOUT 120)
	endif()
	add_test(NAME ${name} COMMAND ${ARG_BINARY} --quiet ${ARG_ARGS})
	set_tests_properties(${name} PROPERTIES LABELS explore
		TIMEOUT ${ARG_TIMEOUT})
endfunction()

# Clean scenarios: a fixed budget per scenario and strategy, fixed seeds.
foreach(scenario counter-tree counter-tight)
	pcstock_add_explore_test(explore_${scenario}_random
		ARGS --scenario ${scenario} --schedules 3000 --seed 1)
	pcstock_add_explore_test(explore_${scenario}_pct
		ARGS --scenario ${scenario} --strategy pct --depth 3
		--schedules 3000 --seed 1)
endforeach()
