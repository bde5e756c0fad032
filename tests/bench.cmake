# SPDX-License-Identifier: LGPL-2.1-or-later
#
# pcstock-bench smoke tests (label bench): every workload with tiny
# durations, output validated (bench/smoke.cmake), and --opcount's
# counts; then the CPU modes
# other than sim on the tenants workload.  They check output and
# conservation, never speed (pinned threads on a loaded machine can be
# slow: the timeouts are generous).  bench/ is added after tests/, so test the option, not the
# target (the generator expressions resolve once both exist).

if(PCSTOCK_BUILD_BENCH AND EXISTS ${PROJECT_SOURCE_DIR}/bench/CMakeLists.txt)
	add_test(NAME bench_smoke COMMAND ${CMAKE_COMMAND}
		-DBENCH=$<TARGET_FILE:pcstock-bench>
		-DOUT=${CMAKE_CURRENT_BINARY_DIR}/bench-smoke
		-DOPCOUNT=1
		-P ${PROJECT_SOURCE_DIR}/bench/smoke.cmake)
	set_tests_properties(bench_smoke PROPERTIES LABELS bench TIMEOUT 300)
	foreach(mode pinned rseq thread)
		add_test(NAME bench_mode_${mode} COMMAND ${CMAKE_COMMAND}
			-DBENCH=$<TARGET_FILE:pcstock-bench>
			-DOUT=${CMAKE_CURRENT_BINARY_DIR}/bench-${mode}
			-DWORKLOADS=tenants
			-DARGS=--cpu-mode=${mode}
			-P ${PROJECT_SOURCE_DIR}/bench/smoke.cmake)
		set_tests_properties(bench_mode_${mode} PROPERTIES
			LABELS bench TIMEOUT 300)
	endforeach()
	# local, not in the default set: runs, conserves, and its key
	# figures print (bench/local_smoke.cmake).
	add_test(NAME bench_local COMMAND ${CMAKE_COMMAND}
		-DBENCH=$<TARGET_FILE:pcstock-bench>
		-DOUT=${CMAKE_CURRENT_BINARY_DIR}/bench-local
		-P ${PROJECT_SOURCE_DIR}/bench/local_smoke.cmake)
	set_tests_properties(bench_local PROPERTIES LABELS bench TIMEOUT 120)
	# --shm: the shared tree's rows print, and every run conserves
	# (bench/shm_smoke.cmake).
	add_test(NAME bench_shm COMMAND ${CMAKE_COMMAND}
		-DBENCH=$<TARGET_FILE:pcstock-bench>
		-P ${PROJECT_SOURCE_DIR}/bench/shm_smoke.cmake)
	set_tests_properties(bench_shm PROPERTIES LABELS bench TIMEOUT 300)
	# Runs and conserves (every group destroyed, the tree too).
	add_test(NAME bench_siblings_smoke
		COMMAND $<TARGET_FILE:pcstock-siblings> 10 2000)
	set_tests_properties(bench_siblings_smoke PROPERTIES LABELS bench
		TIMEOUT 120)
endif()

# The cache-line model (pcstock-bench --lines, bench/lines/): sane output,
# and a planted cost bug caught (bench/lines_smoke.cmake).
if(PCSTOCK_BUILD_BENCH AND EXISTS ${PROJECT_SOURCE_DIR}/bench/lines/lines.c)
	add_test(NAME bench_lines COMMAND ${CMAKE_COMMAND}
		-DBENCH=$<TARGET_FILE:pcstock-bench>
		-DPLANTED=$<TARGET_FILE:pcstock-bench-lines-planted>
		-DOUT=${CMAKE_CURRENT_BINARY_DIR}/bench-lines
		-DXEON=${PROJECT_SOURCE_DIR}/docs/lines/lines.jsonl
		-DAMD=${PROJECT_SOURCE_DIR}/bench/lines_calib_amd.jsonl
		-DF25M17=${PROJECT_SOURCE_DIR}/bench/lines_calib_f25m17.jsonl
		-DCOMPILER=${CMAKE_C_COMPILER_ID}
		-P ${PROJECT_SOURCE_DIR}/bench/lines_smoke.cmake)
	set_tests_properties(bench_lines PROPERTIES LABELS bench TIMEOUT 300)
	# When the store and drain readings give a share (lines_readings.cmake).
	add_test(NAME bench_lines_readings COMMAND ${CMAKE_COMMAND}
		-DBENCH=$<TARGET_FILE:pcstock-bench>
		-DOUT=${CMAKE_CURRENT_BINARY_DIR}/bench-lines-readings
		-DNEAR=${PROJECT_SOURCE_DIR}/docs/lines/validation/amd-epyc-f25-m17.jsonl
		-DFAR=${PROJECT_SOURCE_DIR}/bench/lines_calib_f26m2_far.jsonl
		-P ${PROJECT_SOURCE_DIR}/bench/lines_readings.cmake)
	set_tests_properties(bench_lines_readings PROPERTIES LABELS bench
		TIMEOUT 300)
	# The every-store counts of the store buffer bound are this build's
	# (store_counts.cmake): callgrind, so not under a sanitizer.
	find_program(PCSTOCK_VALGRIND valgrind)
	if(PCSTOCK_VALGRIND AND PCSTOCK_SANITIZE STREQUAL "")
		add_test(NAME bench_lines_store_counts COMMAND ${CMAKE_COMMAND}
			-DBENCH=$<TARGET_FILE:pcstock-bench>
			-DSRC=${PROJECT_SOURCE_DIR}
			-DOUT=${CMAKE_CURRENT_BINARY_DIR}/bench-lines-store-counts
			-DCALIB=${PROJECT_SOURCE_DIR}/bench/lines_calib_f26m2_far.jsonl
			-P ${PROJECT_SOURCE_DIR}/bench/store_counts.cmake)
		set_tests_properties(bench_lines_store_counts PROPERTIES
			LABELS bench TIMEOUT 300)
	endif()
endif()
