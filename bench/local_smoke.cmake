# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The local strategy's smoke test (ctest label bench), run as
#   cmake -DBENCH=<pcstock-bench> -DOUT=<dir> -P local_smoke.cmake
# local is not in the default set, so bench_smoke never runs it: one short
# scale run of floor, local and plain, checked for what it prints, never
# for how fast.  Exit status 0 (every repetition's conservation check
# held), a record per repetition of local with cons_ok true, and the two
# key figures that take local (its cost against floor's, and plain's
# against its own) printed.

cmake_minimum_required(VERSION 3.20)

if(NOT BENCH OR NOT OUT)
	message(FATAL_ERROR "usage: cmake -DBENCH=... -DOUT=... -P "
		"local_smoke.cmake")
endif()

file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${BENCH}" --quick --reps 2 --workload scale
	--threads 1 --strategy floor,local,plain --out "${OUT}"
	RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "pcstock-bench exited with ${rc}:\n${text}\n${err}")
endif()
foreach(want "local cost / floor cost" "plain cost / local cost")
	if(NOT text MATCHES "\\* [^\n]*${want}[^\n]*T=1 own [0-9.]+x")
		message(FATAL_ERROR "no key figure '${want}' with a value:\n"
			"${text}")
	endif()
endforeach()

file(STRINGS "${OUT}/bench.jsonl" lines)
set(reps 0)
foreach(line IN LISTS lines)
	string(JSON kind GET "${line}" kind)
	if(NOT kind STREQUAL "rep")
		continue()
	endif()
	string(JSON s GET "${line}" strategy)
	if(NOT s STREQUAL "local")
		continue()
	endif()
	string(JSON ok GET "${line}" cons_ok)
	if(NOT ok)
		message(FATAL_ERROR "local: cons_ok false: ${line}")
	endif()
	math(EXPR reps "${reps} + 1")
endforeach()
# Two repetitions of each of the two configurations (own, shared).
if(reps LESS 4)
	message(FATAL_ERROR "local: ${reps} repetition records, want 4")
endif()
