# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Hierarchy layer tests: groups and the try_charge_memcg flow on
# every policy, the legacy 7-slot cache (S1-S5, docs/conformance.md), and
# a lifecycle stress run (64 SIM CPUs, every policy).

# Groups and the try_charge_memcg flow on every policy, sequentially, a
# file for each room of src/ they test (tree and groups, the charge flow,
# memory.high, the limit writers, protection) around one fixture
# (hierarchy_fixture.c; cases "case/policy").
foreach(room tree charge high limits protection)
	pcstock_add_test(test_${room} SOURCES test_${room}.c
		hierarchy_fixture.c LABELS unit conformance TIMEOUT 60)
endforeach()
# A tree's destroy reading another thread's over-high record: its checker
# is ThreadSanitizer.  In the TSan build (.ci/run) it must fail on each of
# the three planted order bugs that let the read race with the record's
# group's creation (tests/mutants/orders.txt; the order sweep's only
# bugs no explorer run can see: docs/order-sweep.md).
pcstock_add_test(test_high_race SOURCES test_high_race.c
	LABELS unit TIMEOUT 60)
# A record's group replaced by a load and a store (held out): its second
# case must fail on it, in every build.
pcstock_add_unit_detection_test(high_record_split test_high_race
	"*record_exchange_against_a_drop" SOURCES test_high_race.c)
if(PCSTOCK_SANITIZE MATCHES "thread")
	foreach(bug relaxed_high_record acquire_high_record
		relaxed_high_drop_load)
		# One case: the filter "*" runs it.
		pcstock_add_unit_detection_test(${bug} test_high_race "*"
			SOURCES test_high_race.c)
	endforeach()
endif()
# The registry of policies: every table's invariants, one replaced step.
pcstock_add_test(test_policy SOURCES test_policy.c
	LABELS unit TIMEOUT 60)
pcstock_add_test(test_groups SOURCES test_groups.c
	LABELS unit TIMEOUT 60)
pcstock_add_test(test_cgroupfs SOURCES test_cgroupfs.c
	LABELS unit conformance TIMEOUT 60)
pcstock_add_test(test_memcg7 SOURCES test_memcg7.c memcg7_fake.c
	LABELS unit conformance TIMEOUT 60)
# A tree destroy against its domain's CPU owners idling and exiting,
# 1,000 times each: no cached page is uncharged twice.
add_test(NAME test_memcg7_stress COMMAND test_memcg7 stress)
set_tests_properties(test_memcg7_stress PROPERTIES LABELS stress TIMEOUT 300)
# Lying, slow and asynchronous callbacks: each case returns with its
# documented result; the whole run takes well under a second a case, so a
# TIMEOUT of 20 s catches a hang.
pcstock_add_test(test_hierarchy_callbacks SOURCES test_hierarchy_callbacks.c
	LABELS unit TIMEOUT 20)
# One case per misuse a daemon author hit (root put, double put, NULL
# readers, names, busy domain, leaked pages, pinned tree).
pcstock_add_test(test_hierarchy_misuse SOURCES test_hierarchy_misuse.c
	LABELS unit TIMEOUT 60)
# A daemon author's bad inputs, as a table (at least 190 cases,
# each with its errno and the books unchanged; ASan+UBSan in .ci/run).
pcstock_add_test(test_bad_inputs SOURCES test_bad_inputs.c
	LABELS unit TIMEOUT 60)
pcstock_add_test(test_hierarchy_stress SOURCES test_hierarchy_stress.c
	LABELS stress TIMEOUT 300)
# Reclaim is exact whichever uncharge a callback frees with: every policy, with and without memsw.
pcstock_add_test(test_hierarchy_reclaim SOURCES test_hierarchy_reclaim.c
	LABELS unit conformance TIMEOUT 60)

# Planted bugs this layer's tests once missed (docs/mutation.md, "Held-out
# logic survivors"), each caught by one case
# (pcstock_add_unit_detection_test()).

# The registry's range check letting PCSTOCK_TREE_NR_POLICIES through
# (src/policy.c): the read one past the registry finds a NULL in our
# layout, which the table check refuses, so only a bounds-checked build
# sees it.  The flavour compiles the file it changes with UBSan's bounds
# check, fatal, where the compiler and its runtime offer it.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=bounds -fno-sanitize-recover=bounds")
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=bounds)
check_c_source_compiles("int a[2]; int main(int c, char **v) { return a[c]; }"
	PCSTOCK_HAVE_BOUNDS_SANITIZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(PCSTOCK_HAVE_BOUNDS_SANITIZER)
	pcstock_add_unit_detection_test(policy_bound_off_by_one test_policy
		test_values_past_the_last_policy_refused SOURCES test_policy.c)
	target_compile_options(pcstock_mut_policy_bound_off_by_one PRIVATE
		-fsanitize=bounds -fno-sanitize-recover=bounds)
	target_link_options(test_policy_mut_policy_bound_off_by_one PRIVATE
		-fsanitize=bounds)
else()
	message(STATUS "pcstock: no -fsanitize=bounds: "
		"test_policy_mut_policy_bound_off_by_one not built")
endif()

# The exact policy's make_room switching only the memory counters' stocks
# (src/policy_exact.c): a charge refused at a memsw.max for pages in a
# sibling's memsw stock reclaims before drain_all finds them.
pcstock_add_unit_detection_test(exact_room_memory_only test_charge
	test_sibling_memsw_stock_costs_no_reclaim/exact
	SOURCES test_charge.c hierarchy_fixture.c)

# The OOM re-check wanting more than 1 << order pages (src/reclaim.c): a
# thread that finds exactly the room another thread's OOM call made calls
# the callback again.
pcstock_add_unit_detection_test(oom_recheck_strict test_hierarchy_callbacks
	test_oom_recheck_skips_at_the_order_pages
	SOURCES test_hierarchy_callbacks.c)
# The same check made before the OOM lock is taken (held out): the same
# case, which has the second charger queue on the lock, must fail on it.
pcstock_add_unit_detection_test(oom_check_unlocked test_hierarchy_callbacks
	test_oom_recheck_skips_at_the_order_pages
	SOURCES test_hierarchy_callbacks.c)

# A memory.min or memory.low write storing after it dropped the tree lock
# (src/limits.c): a destroy between its online check and its store leaves
# the offline group protecting what was written.
pcstock_add_unit_detection_test(protection_store_unlocked test_protection
	test_protection_write_racing_destroy
	SOURCES test_protection.c hierarchy_fixture.c)

# A lookup's reference taken by a test and a separate increment (held
# out): lookup_does_not_revive_a_dead_group must fail on it.
pcstock_add_unit_detection_test(tryget_not_from_zero test_tree
	"*lookup_does_not_revive_a_dead_group"
	SOURCES test_tree.c hierarchy_fixture.c)

# The plain policy's own: its sequences' restart against a drain (the
# model's, on SIM CPUs), its hits following the OS CPU and a race of
# preempted sequences against drain_all (the machine code, on RSEQ CPUs).
pcstock_add_test(test_plain SOURCES test_plain.c LABELS unit TIMEOUT 120)
# Against the library as installed: plain refuses every domain mode but
# RSEQ, and runs there where rseq does.
pcstock_add_test(test_plain_modes SOURCES test_plain_modes.c
	LIBS pcstock LABELS unit TIMEOUT 60)
# The drain without its membarrier (tests/mutants/plain_no_membarrier.patch)
# makes the model's restart case fail, every time.
pcstock_add_library(pcstock_mut_plain_no_membarrier_unit STATIC
	DEFINES PCSTOCK_FAULT_INJECT PCSTOCK_EXPLORE
	MUTANT plain_no_membarrier)
pcstock_add_test(test_plain_mut_plain_no_membarrier SOURCES test_plain.c
	LIBS pcstock_mut_plain_no_membarrier_unit ARGS abort LABELS unit
	TIMEOUT 60)
set_tests_properties(test_plain_mut_plain_no_membarrier PROPERTIES
	WILL_FAIL TRUE)
