# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Domains and CPUs (src/cpu.c) and the per-CPU arena (src/percpu.c).
pcstock_add_test(test_cpu SOURCES test_cpu.c LABELS unit TIMEOUT 120)
pcstock_add_test(test_percpu SOURCES test_percpu.c LABELS unit TIMEOUT 120)

# A domain on the real machine sees only the process's CPUs.
add_test(NAME test_cpu_taskset
	COMMAND taskset -c 0 $<TARGET_FILE:test_cpu> taskset)
# Hook registration racing with offlining, for TSan and ASan.
add_test(NAME test_cpu_stress COMMAND test_cpu stress)
set_tests_properties(test_cpu_taskset PROPERTIES LABELS unit TIMEOUT 60)
set_tests_properties(test_cpu_stress PROPERTIES LABELS stress TIMEOUT 120)

# THREAD mode's assignment split into a read and a write (held out,
# docs/mutation.md): thread_mode_assignment_is_one_rmw must fail on it.
# The whole "unit" group runs; only that case can see the bug.
pcstock_add_unit_detection_test(thread_assign_split test_cpu unit
	SOURCES test_cpu.c)
