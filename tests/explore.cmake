# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The schedule explorer (tests/explore/) and the Spin models (tests/model/).
# Every test here carries the label "explore".

set(EXPLORE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/explore)
set(EXPLORE_SOURCES ${EXPLORE_DIR}/explore.c ${EXPLORE_DIR}/explore_wmm.c
	${EXPLORE_DIR}/explore_source.c
	${EXPLORE_DIR}/explore_registry.c
	${EXPLORE_DIR}/explore_counter.c ${EXPLORE_DIR}/explore_stock.c
	${EXPLORE_DIR}/explore_group.c ${EXPLORE_DIR}/explore_memcg7.c
	${EXPLORE_DIR}/explore_protect.c ${EXPLORE_DIR}/explore_limits.c
	${EXPLORE_DIR}/explore_tree.c ${EXPLORE_DIR}/explore_drain.c
	${EXPLORE_DIR}/explore_shm.c
	${CMAKE_CURRENT_SOURCE_DIR}/memcg7_fake.c)
# Every explorer's library hands its atomics to the weak-memory model
# (src/atomic.h, PCSTOCK_EXPLORE_WMM); --weak turns the model on.  Its RCU
# frees wait for its barrier instead of liburcu's thread (src/rcu.h,
# PCSTOCK_EXPLORE_RCU), which only the explorer's teardown calls: the test
# library's frees, which tests wait for with urcu_bp_barrier(), stay on
# liburcu's thread.
set(EXPLORE_DEFINES PCSTOCK_EXPLORE PCSTOCK_EXPLORE_WMM PCSTOCK_EXPLORE_RCU
	PCSTOCK_FAULT_INJECT)
# PCSTOCK_TESTLIB_MUTANT (tests/CMakeLists.txt) plants its bug here too.
pcstock_add_library(pcstock_explorelib STATIC DEFINES ${EXPLORE_DEFINES}
	${bug})

# The driver's objects, compiled once: they name no planted bug's switch,
# so every explorer binary links the same ones.
add_library(pcstock_explore_driver OBJECT ${EXPLORE_SOURCES}
	${EXPLORE_DIR}/main.c)
pcstock_target_flags(pcstock_explore_driver)
target_include_directories(pcstock_explore_driver PRIVATE
	${PROJECT_SOURCE_DIR}/src ${EXPLORE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(pcstock_explore_driver PRIVATE ${EXPLORE_DEFINES})
target_link_libraries(pcstock_explore_driver PRIVATE pcstock_explorelib)

# pcstock_add_explorer(<binary> <library>): the driver over one library
# flavour (the test library, or a variant with a planted bug).  The
# library's documented aborts (pcs_die()) go to the driver, which reports
# them as violations (tests/explore/explore.c: __wrap_pcs_die()).
function(pcstock_add_explorer name lib)
	add_executable(${name} $<TARGET_OBJECTS:pcstock_explore_driver>)
	pcstock_target_flags(${name})
	target_link_options(${name} PRIVATE -Wl,--wrap=pcs_die)
	target_link_libraries(${name} PRIVATE ${lib} Threads::Threads)
endfunction()

pcstock_add_explorer(pcstock-explore pcstock_explorelib)

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

# Library variants with a planted bug each (tests/mutants/: a patch to
# src/, or a weakened order of tests/mutants/orders.txt; docs/mutation.md),
# and an explorer over each.  The weakened orders, and the dropped fences,
# show in weak memory only: only --weak finds them.
# pcstock_add_mutant_explorers(<bug>...): for each, the library with the
# planted bug <bug> and pcstock-explore-<bug, dashed> over it.
function(pcstock_add_mutant_explorers)
	foreach(bug ${ARGN})
		string(REPLACE _ - dashed ${bug})
		pcstock_add_library(pcstock_mut_${bug} STATIC
			DEFINES ${EXPLORE_DEFINES} MUTANT ${bug})
		pcstock_add_explorer(pcstock-explore-${dashed}
			pcstock_mut_${bug})
	endforeach()
endfunction()
pcstock_add_mutant_explorers(plain_refill read_zero_drain no_disable_mark
		relaxed_refill relaxed_max_load
		relaxed_usage_recheck relaxed_publish no_exit_recheck
		m7_no_trylock relaxed_drain relaxed_cpu_release
		no_release_fence m7_no_queue_fence m7_relaxed_unlock
		m7_flush_unlocked relaxed_cpu_own relaxed_name_publish
		relaxed_offline relaxed_online_load relaxed_flush
		relaxed_remark relaxed_usage_add relaxed_max_xchg
		relaxed_unlink exact_no_make_room no_xchg_fence
		m7_drain_key_unlocked_scan disown_release_first
		destroy_offline_after_unlock protection_online_unlocked
		reap_next_once shm_no_recount shm_no_key_freeze
		shm_reap_unfinished)

include(${EXPLORE_DIR}/budget.cmake)
# The clean runs' fixed counts, a tenth under a sanitizer (budget.cmake).
explore_clean_count(clean_2k 2000)
explore_clean_count(shm_clean 5000)
explore_clean_count(clean_20k 20000)

# Clean scenarios of their own, sequentially consistent and in weak
# memory (--weak).
foreach(strategy random pct)
	foreach(scenario counter-tree counter-tight counter-xchg)
		explore_budget(args ${scenario} ${strategy} CLEAN)
		pcstock_add_explore_test(explore_${scenario}_${strategy}
			ARGS ${args})
		pcstock_add_explore_test(explore_${scenario}_weak_${strategy}
			ARGS ${args} --weak)
	endforeach()
endforeach()

# The per-policy scenarios follow the registry of stock policies
# (src/policy.c): the explorer crosses each of its templates (stock-charge,
# group, group-offline, ...) with every registered policy whose properties
# (pcstock_tree_policy_info()) the template applies to, "<template>-<policy
# name>", and its expectations come from those properties.  Which
# scenarios exist is therefore known only to the built explorer, and CTest
# learns them as gtest_discover_tests() learns a test binary's cases:
# after each build of pcstock-explore, discover.cmake runs
# `pcstock-explore --list-per-policy` and writes explore_per_policy.cmake,
# one test per scenario and memory model (explore_<scenario> in SC,
# explore_<scenario>_weak), each running the random walk then PCT, which
# CTest includes when it starts.  A registered policy thus gets its runs
# with no edit here.  (Configure time cannot run the explorer, and a
# policy list parsed from the registry's source would not know which
# templates apply to which policy.)
# EXPLORE_KNOWN_VIOLATIONS: scenarios registered to expect their
# violation, for a bug found and not yet fixed (empty: none now;
# group-offline-memcg7 was one, memcg7's consume serving a group its
# caller saw offline, until policy_memcg7.c read the online flag first).
set(EXPLORE_KNOWN_VIOLATIONS)
set(EXPLORE_PER_POLICY ${CMAKE_CURRENT_BINARY_DIR}/explore_per_policy.cmake)
add_custom_command(TARGET pcstock-explore POST_BUILD
	COMMAND ${CMAKE_COMMAND} -DEXPLORER=$<TARGET_FILE:pcstock-explore>
		-DOUT=${EXPLORE_PER_POLICY}
		"-DKNOWN=${EXPLORE_KNOWN_VIOLATIONS}"
		"-DSANITIZE=${PCSTOCK_SANITIZE}"
		-DTSAN_SUPP=${PROJECT_SOURCE_DIR}/tests/tsan.supp
		-P ${EXPLORE_DIR}/discover.cmake
	BYPRODUCTS ${EXPLORE_PER_POLICY}
	COMMENT "Listing the explorer's per-policy scenarios"
	VERBATIM)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/explore_per_policy_include.cmake
	"if(EXISTS \"${EXPLORE_PER_POLICY}\")\n"
	"  include(\"${EXPLORE_PER_POLICY}\")\n"
	"else()\n"
	"  add_test(explore_per_policy_NOT_BUILT\n"
	"           explore_per_policy_NOT_BUILT)\n"
	"endif()\n")
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES
	${CMAKE_CURRENT_BINARY_DIR}/explore_per_policy_include.cmake)

# Detection power: each planted bug, and V4's missing cap, must be found
# within the budget by both strategies (fixed seeds: deterministic).
function(pcstock_add_detection_test name binary scenario)
	foreach(strategy random pct)
		pcstock_add_explore_test(explore_detect_${name}_${strategy}
			BINARY ${binary} ARGS --scenario ${scenario}
			--strategy ${strategy} --schedules 2000 --seed 1
			--expect-violation)
	endforeach()
endfunction()
pcstock_add_detection_test(v4_cap pcstock-explore stock-cap-v4)
pcstock_add_detection_test(plain_refill pcstock-explore-plain-refill
	stock-charge-default)
pcstock_add_detection_test(read_zero_drain pcstock-explore-read-zero-drain
	stock-drain-default)
# A refill racing a group's destroy must not strand pages in the offline
# group's slot (without the disable's mark it does); group schedules are
# slow (RCU), so a smaller budget.  Random finds it at schedule 1230 of
# seed 1 since destroy resets min and low (more scheduling points).  A
# run once missed it in a full ctest -j2, blamed on the RCU thread, which
# the explorer does not schedule; not seen since: three processes (ASLR
# on and off) each find it at 1230, and explore_process_replay (below)
# checks that group schedules replay in any process.  The budget leaves
# room for the next find, and costs nothing when the first one is found.
foreach(strategy random pct)
	pcstock_add_explore_test(explore_detect_no_disable_mark_${strategy}
		BINARY pcstock-explore-no-disable-mark
		ARGS --scenario group-default --strategy ${strategy}
		--schedules 5000 --seed 1 --expect-violation TIMEOUT 300)
endforeach()

# exact without make_room (tests/mutants/exact_no_make_room.patch): a
# charge refused at a's max fails (NOWAIT) for pages a1's slots hold.
# group-switch-exact finds it, SC and weak, with the budget of its clean
# runs: at rest a NOWAIT charge of a's room fails (random: schedule 2 of
# seed 1, SC and weak; PCT: schedule 1).
foreach(strategy random pct)
	explore_budget(args group-switch-exact ${strategy})
	pcstock_add_explore_test(explore_detect_exact_no_make_room_${strategy}
		BINARY pcstock-explore-exact-no-make-room
		ARGS ${args} --expect-violation)
	pcstock_add_explore_test(
		explore_detect_exact_no_make_room_weak_${strategy}
		BINARY pcstock-explore-exact-no-make-room
		ARGS ${args} --weak --expect-violation)
endforeach()

# Planted memory-order bugs (a seq_cst or release weakened to relaxed
# where a comment says the order matters): each is found in weak memory by
# both strategies, with the very runs the real code passes above.  The
# report names the schedule of first detection.
function(pcstock_add_weak_detection_test name scenario)
	string(REPLACE _ - dashed ${name})
	foreach(strategy random pct)
		explore_budget(args ${scenario} ${strategy})
		pcstock_add_explore_test(explore_detect_${name}_weak_${strategy}
			BINARY pcstock-explore-${dashed}
			ARGS ${args} --weak --expect-violation)
	endforeach()
endfunction()
pcstock_add_weak_detection_test(relaxed_refill stock-lifecycle-default)
pcstock_add_weak_detection_test(relaxed_max_load counter-tight)
pcstock_add_weak_detection_test(relaxed_usage_recheck counter-tight)
# One side of set_max()'s store buffering weakened: the charge's add to
# usage, or the setter's exchange of max (a seq_cst access is no fence in
# the model, so the other side's seq_cst load may miss a relaxed one).
pcstock_add_weak_detection_test(relaxed_usage_add counter-tight)
pcstock_add_weak_detection_test(relaxed_max_xchg counter-tight)
# pcstock_counter_xchg_max()'s promise: a charge that read the old limit
# is seen by a usage read after the exchange; without the fence after
# it, a relaxed read may miss the charge (counter-xchg).
pcstock_add_weak_detection_test(no_xchg_fence counter-xchg)
pcstock_add_weak_detection_test(relaxed_publish group-publish-default)
# The name index's publication weakened: a lookup finds a group whose
# memory.high it does not yet see (group-publish's seen()).
pcstock_add_weak_detection_test(relaxed_name_publish group-publish-default)
# A group's online flag, its release in the destroy or the acquire in
# pcstock_group_online() weakened: a charge made after its caller saw the
# group offline hits with the stale key (group-offline-default).
pcstock_add_weak_detection_test(relaxed_offline group-offline-default)
pcstock_add_weak_detection_test(relaxed_online_load group-offline-default)

# memcg7's two variants, each clean over 20,000 schedules of both
# strategies and caught with its planted bug: the owner-exclusive one (a
# drain queued to an owner on its way out is never lost; without exit's
# second look it is) and the locked one on SIM CPUs (two threads of one
# CPU and a remote drain_all keep every page; with the charge path's
# trylock dropped they do not).
function(pcstock_add_memcg7_tests scenario bug)
	foreach(strategy random pct)
		pcstock_add_explore_test(explore_${scenario}_${strategy}
			ARGS --scenario ${scenario} --strategy ${strategy}
			--schedules ${clean_20k} --seed 1)
	endforeach()
	string(REPLACE _ - dashed ${bug})
	pcstock_add_detection_test(${bug} pcstock-explore-${dashed}
		${scenario})
endfunction()
pcstock_add_memcg7_tests(memcg7-owner no_exit_recheck)
pcstock_add_memcg7_tests(memcg7-locked m7_no_trylock)
# The locked variant's drain of a dying key against two refills of one CPU
# (memcg7-key-death-locked): it takes each CPU's lock before it looks at
# the slots; looking first, it misses a refill that holds the lock between
# its test of online and its install (held out, caught by both strategies
# within the detection budget).
pcstock_add_memcg7_tests(memcg7-key-death-locked m7_drain_key_unlocked_scan)
# memory.min and memory.low written while the group is destroyed
# (group-protect-destroy, tests/explore/explore_limits.c; the tree lock is
# a mutex the model knows): an offline group protects nothing.  Two
# held-out bugs in the handshake, each found by both strategies within
# the detection budget: the destroy's store of online after it drops the
# lock, and the setter's test of online before it takes the lock (a
# third, its store after it drops the lock, is test_protection's:
# tests/hierarchy.cmake).
foreach(strategy random pct)
	foreach(weak "" _weak)
		string(REPLACE _ -- wflag "${weak}")
		pcstock_add_explore_test(
			explore_group-protect-destroy${weak}_${strategy}
			ARGS --scenario group-protect-destroy
			--strategy ${strategy} --schedules ${clean_20k} --seed 1
			${wflag})
	endforeach()
endforeach()
foreach(bug destroy_offline_after_unlock protection_online_unlocked)
	string(REPLACE _ - dashed ${bug})
	pcstock_add_detection_test(${bug} pcstock-explore-${dashed}
		group-protect-destroy)
endforeach()

# Two last puts while the tree is destroyed (tree-reap,
# tests/explore/explore_tree.c): the reap list's push links the group to
# the head it swaps out on every turn of its loop; linking once before
# the loop, a push that had to retry loses the other (held out).
foreach(strategy random pct)
	foreach(weak "" _weak)
		string(REPLACE _ -- wflag "${weak}")
		pcstock_add_explore_test(explore_tree-reap${weak}_${strategy}
			ARGS --scenario tree-reap --strategy ${strategy}
			--schedules ${clean_20k} --seed 1 ${wflag})
	endforeach()
endforeach()
pcstock_add_detection_test(reap_next_once pcstock-explore-reap-next-once
	tree-reap)

# A shared tree's process killed at a scheduled point of a charge, an
# uncharge, a drain or a destroy (shm-death, tests/explore/explore_shm.c):
# recovery must conserve every page at every level.  Sequential
# consistency only (the windows' fence is a membarrier(2), not modelled).
# A recovery that trusts the counters instead of deriving them again from
# the figures and slots keeps a dead miss's surplus for good.
foreach(strategy random pct)
	pcstock_add_explore_test(explore_shm-death_${strategy}
		ARGS --scenario shm-death --strategy ${strategy}
		--schedules ${shm_clean} --seed 1)
endforeach()
pcstock_add_detection_test(shm_no_recount pcstock-explore-shm-no-recount
	shm-death)

# A recovery's pause against a live process's fast paths (shm-pause): the
# pause marks every group's key, the fast paths' one load, so that no hit
# or uncharge uses a slot while the recount reads.  Without the mark
# (tests/mutants/shm_no_key_freeze.patch) random finds usage off by a hit
# at schedule 1 of seed 1; PCT needs depth 5 (schedule 2324; depth 4 finds
# nothing in 5000), so both PCT runs use it.
# shm-recoverer-death: the recoverer dies at a drawn point of its pause
# or of the two reaps after it, and the supervisor's recovery must finish
# its work.  A reap left between its two stores and not finished
# (tests/mutants/shm_reap_unfinished.patch) reaps a figure twice: random
# finds it at schedule 588 of seed 1, PCT (depth 5) at 440.
foreach(strategy random pct)
	pcstock_add_explore_test(explore_shm-pause_${strategy}
		ARGS --scenario shm-pause --strategy ${strategy} --depth 5
		--schedules ${shm_clean} --seed 1)
	pcstock_add_explore_test(explore_shm-recoverer-death_${strategy}
		ARGS --scenario shm-recoverer-death --strategy ${strategy}
		--depth 5 --schedules ${shm_clean} --seed 1)
	pcstock_add_explore_test(explore_detect_shm_no_key_freeze_${strategy}
		BINARY pcstock-explore-shm-no-key-freeze
		ARGS --scenario shm-pause --strategy ${strategy} --depth 5
		--schedules 5000 --seed 1 --expect-violation)
	pcstock_add_explore_test(
		explore_detect_shm_reap_unfinished_${strategy}
		BINARY pcstock-explore-shm-reap-unfinished
		ARGS --scenario shm-recoverer-death --strategy ${strategy}
		--depth 5 --schedules 3000 --seed 1 --expect-violation)
endforeach()

# An owner's exit hands its CPU over to a thread waiting for it
# (memcg7-handover): the work queued to the owner runs before the CPU is
# given up; after, the new owner's plain writes race the drain (held out:
# random finds it at schedule 11, PCT needs depth 4, at schedule 87).
foreach(strategy random pct)
	pcstock_add_explore_test(explore_memcg7-handover_${strategy}
		ARGS --scenario memcg7-handover --strategy ${strategy}
		--schedules ${clean_20k} --seed 1)
	pcstock_add_explore_test(
		explore_detect_disown_release_first_${strategy}
		BINARY pcstock-explore-disown-release-first
		ARGS --scenario memcg7-handover --strategy ${strategy}
		--depth 4 --schedules 2000 --seed 1 --expect-violation)
endforeach()

# The memcg7 scenarios in weak memory too (and memcg7-reenter, an owner
# that leaves and enters again), clean, and with a planted order bug each
# that only --weak finds: the owner's release of its CPU weakened (a
# borrower drains stale slots) or its fence dropped, the requester's fence
# after queueing dropped (either way a queued drain is lost: store
# buffering), the locked variant's unlock weakened, the new owner's
# acquire weakened (it serves pages a borrower drained).
foreach(strategy random pct)
	pcstock_add_explore_test(explore_memcg7-reenter_${strategy}
		ARGS --scenario memcg7-reenter --strategy ${strategy}
		--schedules ${clean_20k} --seed 1)
	foreach(scenario memcg7-owner memcg7-locked memcg7-reenter
		memcg7-key-death-locked memcg7-handover)
		pcstock_add_explore_test(explore_${scenario}_weak_${strategy}
			ARGS --scenario ${scenario} --strategy ${strategy}
			--schedules ${clean_20k} --seed 1 --weak)
	endforeach()
endforeach()
pcstock_add_weak_detection_test(relaxed_cpu_release memcg7-owner)
pcstock_add_weak_detection_test(no_release_fence memcg7-owner)
pcstock_add_weak_detection_test(m7_no_queue_fence memcg7-owner)
pcstock_add_weak_detection_test(m7_relaxed_unlock memcg7-locked)
pcstock_add_weak_detection_test(relaxed_cpu_own memcg7-reenter)

# A drain's exchange acquires the refill: stock-protect-default
# (tests/explore/explore_protect.c; its clean runs are per-policy, above)
# sees a weakened one through the min_usage its uncharge publishes, which
# usage's seq_cst RMWs cannot show.  The weakened refill is caught there
# too.
pcstock_add_weak_detection_test(relaxed_drain stock-protect-default)
# stock-protect needs uncharges that refill; stock-drain-watermark, run on
# every per-counter policy, sees a weakened drain through the peak instead
# (a policy's own drain step, whatever its uncharges do).  Pinned on V4,
# whose uncharges do not refill, with the same planted bug.
foreach(strategy random pct)
	explore_budget(args stock-drain-watermark-v4 ${strategy})
	pcstock_add_explore_test(
		explore_detect_relaxed_drain_watermark_weak_${strategy}
		BINARY pcstock-explore-relaxed-drain
		ARGS ${args} --weak --expect-violation)
endforeach()

# Two more removals that must acquire the refill, seen through the peak
# the refiller stores between its charge and its slot addition: the flush
# of an overflowing slot (pcs_refill_capped()'s CAS) and a V4 drain's
# re-marking exchange.  Weakened, the charge that follows the removal may
# overwrite the peak with a lower value (docs/mutation.md O1, O2).
foreach(strategy random pct)
	foreach(scenario stock-flush-watermark stock-remark-watermark)
		explore_budget(args ${scenario} ${strategy} CLEAN)
		pcstock_add_explore_test(explore_${scenario}_${strategy}
			ARGS ${args})
		pcstock_add_explore_test(explore_${scenario}_weak_${strategy}
			ARGS ${args} --weak)
	endforeach()
endforeach()
pcstock_add_weak_detection_test(relaxed_flush stock-flush-watermark)
pcstock_add_weak_detection_test(relaxed_remark stock-remark-watermark)
# The unlink of a head child weakened: a walker that reads the new head
# link sees the next sibling uninitialised.  PCT finds it (schedule 13 of
# seed 1); the random walk not within 1,500 schedules.
explore_budget(args group-unlink-default pct)
pcstock_add_explore_test(explore_detect_relaxed_unlink_weak_pct
	BINARY pcstock-explore-relaxed-unlink
	ARGS ${args} --weak --expect-violation)
foreach(strategy random pct)
	explore_budget(args stock-protect-default ${strategy})
	pcstock_add_explore_test(
		explore_detect_relaxed_refill_protect_weak_${strategy}
		BINARY pcstock-explore-relaxed-refill
		ARGS ${args} --weak --expect-violation)
endforeach()

# A tree destroy's flush against an owner that idles or exits, running the
# drain a drain_all queued to it: no page is uncharged twice.  Without the
# flush's work lock (m7_flush_unlocked) the random walk finds the double
# drain at once; PCT cannot: the owner waits for the drain to be queued,
# and its yields leave it below the flushing thread until that is done.
# The owner's wait spins 64 times at most: random schedules run at about
# 1,000 a second, hence the smaller budget.  In weak memory too: the work
# lock is a mutex the model knows (tests/explore/explore_memcg7.c).
foreach(scenario memcg7-destroy-idle memcg7-destroy-exit)
	foreach(weak "" _weak)
		set(w)
		if(weak)
			set(w --weak)
		endif()
		pcstock_add_explore_test(explore_${scenario}${weak}_random
			ARGS --scenario ${scenario} --strategy random
			--schedules ${clean_2k} --seed 1 ${w})
		pcstock_add_explore_test(explore_${scenario}${weak}_pct
			ARGS --scenario ${scenario} --strategy pct
			--schedules ${clean_20k} --seed 1 ${w})
	endforeach()
	pcstock_add_explore_test(explore_detect_m7_flush_unlocked_${scenario}
		BINARY pcstock-explore-m7-flush-unlocked
		ARGS --scenario ${scenario} --strategy random
		--schedules 2000 --seed 1 --expect-violation)
endforeach()

# A violation's printed seed replays to the identical interleaving: V4's
# real cap violation and a planted bug, with both strategies.
foreach(strategy random pct)
	foreach(case "v4_cap;pcstock-explore;stock-cap-v4"
		"read_zero_drain;pcstock-explore-read-zero-drain;stock-charge-default")
		list(GET case 0 name)
		list(GET case 1 binary)
		list(GET case 2 scenario)
		add_test(NAME explore_replay_${name}_${strategy}
			COMMAND ${EXPLORE_DIR}/replay-check.sh
			$<TARGET_FILE:${binary}> --scenario ${scenario}
			--strategy ${strategy} --schedules 2000 --seed 7)
		set_tests_properties(explore_replay_${name}_${strategy}
			PROPERTIES LABELS explore TIMEOUT 120)
	endforeach()
endforeach()

# A seed names the same run in every process: the same command, run in
# three processes with the heap, stack and libraries at other addresses
# (ASLR, a larger environment, setarch -R), prints the same report, every
# interleaving included (tests/explore/process-replay.sh: every
# group-<policy> scenario, others that free through the call_rcu thread,
# memcg7, stock and counter ones, SC and weak).
add_test(NAME explore_process_replay
	COMMAND ${EXPLORE_DIR}/process-replay.sh
	$<TARGET_FILE:pcstock-explore>)
set_tests_properties(explore_process_replay PROPERTIES LABELS explore
	TIMEOUT 120)

# Spin models of the slot protocol (slot.pml) and of the disable mark
# (disable.pml): the correct ones verify, the buggy ones must fail with an
# assertion violation.  Skipped without spin.
set(MODEL_DIR ${CMAKE_CURRENT_SOURCE_DIR}/model)
function(pcstock_add_model_test name expect)
	if(name MATCHES "^disable")
		set(model disable.pml)
	else()
		set(model slot.pml)
	endif()
	add_test(NAME model_${name}
		COMMAND ${MODEL_DIR}/run-spin.sh ${MODEL_DIR}/${model} ${expect}
		${ARGN})
	set_tests_properties(model_${name} PROPERTIES LABELS explore
		TIMEOUT 120 SKIP_RETURN_CODE 77
		ENVIRONMENT CC=${CMAKE_C_COMPILER})
endfunction()
pcstock_add_model_test(slot_default verify -DCHECK_CAP)
pcstock_add_model_test(slot_v4 verify -DV4)
pcstock_add_model_test(slot_v4_cap violate -DV4 -DCHECK_CAP)
pcstock_add_model_test(slot_plain_refill violate -DPLAIN_REFILL)
pcstock_add_model_test(slot_read_zero_drain violate -DREAD_ZERO_DRAIN)
pcstock_add_model_test(disable_default verify)
pcstock_add_model_test(disable_v4 verify -DV4)
pcstock_add_model_test(disable_no_mark violate -DNO_MARK)
pcstock_add_model_test(disable_no_remark violate -DNO_REMARK)
pcstock_add_model_test(disable_v4_no_remark violate -DV4 -DNO_REMARK)

# libFuzzer drives the scheduling decisions (tests/explore/fuzz_explore.c).
# As the counter fuzzers (tests/counter.cmake, which finds clang and probes
# libFuzzer), it is compiled by clang directly from the library's sources,
# with PCSTOCK_EXPLORE_SCENARIO choosing the scenario at run time.
if(PCSTOCK_HAVE_LIBFUZZER AND PCSTOCK_SANITIZE STREQUAL "")
	# fuzz_explore_<name> [MUTANT bug]: one fuzzer over one flavour.
	function(pcstock_add_explore_fuzzer name)
		cmake_parse_arguments(ARG "" "MUTANT" "" ${ARGN})
		set(out ${CMAKE_CURRENT_BINARY_DIR}/fuzz/fuzz_explore_${name})
		set(library ${PCSTOCK_SOURCES})
		set(defines)
		if(ARG_MUTANT)
			pcstock_mutant_plant(${ARG_MUTANT} library defines)
		endif()
		set(sources ${library} ${EXPLORE_SOURCES}
			${EXPLORE_DIR}/fuzz_explore.c)
		add_custom_command(OUTPUT ${out}
			COMMAND ${PCSTOCK_CLANG} -std=gnu11 -g -O1
				-fsanitize=fuzzer,address,undefined
				-fno-sanitize-recover=undefined
				-DPCSTOCK_EXPLORE -DPCSTOCK_FAULT_INJECT
				-DPCSTOCK_BUILDING_LIBRARY ${defines}
				-I${PROJECT_SOURCE_DIR}/include
				-I${PROJECT_BINARY_DIR}/include
				-I${PROJECT_SOURCE_DIR}/src -I${EXPLORE_DIR}
				-I${CMAKE_CURRENT_SOURCE_DIR}
				${URCU_CFLAGS} ${HWLOC_CFLAGS} ${sources}
				${URCU_LDFLAGS} ${HWLOC_LDFLAGS} -lpthread
				-Wl,--wrap=pcs_die -o ${out}
			DEPENDS ${sources} ${EXPLORE_DIR}/explore.h
				${CMAKE_CURRENT_SOURCE_DIR}/memcg7_fake.h
			COMMENT "Building libFuzzer target fuzz_explore_${name}"
			VERBATIM)
		add_custom_target(fuzz_explore_${name} ALL DEPENDS ${out})
	endfunction()
	pcstock_add_explore_fuzzer(clean)
	pcstock_add_explore_fuzzer(read_zero_drain MUTANT read_zero_drain)

	# fuzz tests: bounded, seeded runs through the counter fuzzers' driver.
	function(pcstock_add_explore_fuzz_test name fuzzer scenario expect)
		add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E env
			PCSTOCK_EXPLORE_SCENARIO=${scenario} ${CMAKE_COMMAND}
			-DFUZZER=${CMAKE_CURRENT_BINARY_DIR}/fuzz/${fuzzer}
			-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/fuzz/run-${name}
			-DRUNS=10000 -DSEED=1 -DEXPECT=${expect}
			-P ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzzer.cmake)
		set_tests_properties(${name} PROPERTIES LABELS "explore;fuzz"
			TIMEOUT 120)
	endfunction()
	pcstock_add_explore_fuzz_test(explore_fuzz_stock fuzz_explore_clean
		stock-drain-default clean)
	pcstock_add_explore_fuzz_test(explore_fuzz_finds_v4_cap
		fuzz_explore_clean stock-cap-v4 divergence)
	pcstock_add_explore_fuzz_test(explore_fuzz_finds_read_zero_drain
		fuzz_explore_read_zero_drain stock-drain-default divergence)
endif()
