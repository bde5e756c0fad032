# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The stores behind the line model's store buffer bound are this build's
# (ctest label bench), run as
#   cmake -DBENCH=<pcstock-bench> -DSRC=<source dir> -DOUT=<dir>
#         -DCALIB=<lines.jsonl> -P store_counts.cmake
# sock's replay bounds each design's buffered stores at the calibration's
# buffer size times its traced stores over every store a message makes
# (bench/lines/sbsize.c), and that last count is a table in the source,
# taken with callgrind.  This test counts every store again, with
# scripts/store-buffer-bound (valgrind's callgrind over the bench's own
# sock run), and fails where the table and the build differ by more than
# a fifth: a change to a design's charge path, the rings or the compiler
# that moves the count must move the table with it.  Counts, not time.

cmake_minimum_required(VERSION 3.20)

if(NOT BENCH OR NOT SRC OR NOT OUT OR NOT CALIB)
	message(FATAL_ERROR "usage: cmake -DBENCH=... -DSRC=... -DOUT=... "
		"-DCALIB=<lines.jsonl> -P store_counts.cmake")
endif()

# The table's counts, from a replay under a calibration that read the
# buffer's size (each sock row carries the count its bound took).
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${BENCH}" --lines --quick --reps 1 --cpus 2
	--workload sock --lines-calib "${CALIB}" --out "${OUT}/lines"
	RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "--lines: ${rc}:\n${err}")
endif()
file(STRINGS "${OUT}/lines/lines.jsonl" recs REGEX "\"kind\":\"lines\"")

# A decimal @v in tenths (CMake's math is integer).
function(tenths v var)
	if(NOT v MATCHES "^([0-9]+)([.]([0-9]))?")
		message(FATAL_ERROR "'${v}' is not a count")
	endif()
	set(f "${CMAKE_MATCH_3}")
	if(f STREQUAL "")
		set(f 0)
	endif()
	math(EXPR t "${CMAKE_MATCH_1} * 10 + ${f}")
	set(${var} ${t} PARENT_SCOPE)
endfunction()

execute_process(COMMAND sh "${SRC}/scripts/store-buffer-bound" "${BENCH}"
	"${OUT}/lines/lines.jsonl" RESULT_VARIABLE rc OUTPUT_VARIABLE table
	ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "store-buffer-bound: ${rc}:\n${err}")
endif()

set(checked 0)
foreach(rec IN LISTS recs)
	string(JSON st GET "${rec}" strategy)
	string(JSON every GET "${rec}" store_buffer_every_store_per_op)
	if(every STREQUAL "" OR every STREQUAL "null" OR every MATCHES "NOTFOUND")
		continue()	# no count in the table (plain)
	endif()
	if(NOT table MATCHES "\\| ${st} \\| ([0-9.]+) \\|")
		message(FATAL_ERROR "callgrind counted no stores for ${st}:\n"
			"${table}")
	endif()
	set(cg "${CMAKE_MATCH_1}")
	tenths("${every}" t)
	tenths("${cg}" c)
	math(EXPR d "${c} - ${t}")
	if(d LESS 0)
		math(EXPR d "0 - ${d}")
	endif()
	math(EXPR d5 "${d} * 5")
	if(d5 GREATER t)
		message(FATAL_ERROR "${st}: the table's ${every} stores a message, "
			"callgrind counts ${cg} in this build (more than a fifth "
			"apart): update sb_every in bench/lines/sbsize.c")
	endif()
	message(STATUS "store counts: ${st} table ${every}, callgrind ${cg}")
	math(EXPR checked "${checked} + 1")
endforeach()
if(checked LESS 5)
	message(FATAL_ERROR "${checked} designs checked, want the table's 5")
endif()
