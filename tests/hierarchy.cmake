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
if(PCSTOCK_SANITIZE MATCHES "thread")
	foreach(bug relaxed_high_record acquire_high_record
		relaxed_high_drop_load)
		pcstock_add_library(pcstock_mut_${bug} STATIC
			DEFINES PCSTOCK_FAULT_INJECT PCSTOCK_EXPLORE
			MUTANT ${bug})
		pcstock_add_test(test_high_race_mut_${bug}
			SOURCES test_high_race.c LIBS pcstock_mut_${bug}
			LABELS unit TIMEOUT 60)
		set_tests_properties(test_high_race_mut_${bug} PROPERTIES
			WILL_FAIL TRUE)
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
