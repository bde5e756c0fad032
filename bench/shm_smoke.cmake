# SPDX-License-Identifier: LGPL-2.1-or-later
#
# pcstock-bench --shm's smoke test (ctest label bench), run as
#   cmake -DBENCH=<pcstock-bench> -P shm_smoke.cmake
# One short run as a table and one as JSON Lines, checked for what they
# print, never for how fast: exit status 0 (every conservation check held:
# the workers' runs, and every recovery after a SIGKILL), the three
# tables with a row for every configuration, and records that parse, one
# per row, each naming the CPU, every pair of the hit pair a hit.

cmake_minimum_required(VERSION 3.20)

if(NOT BENCH)
	message(FATAL_ERROR "usage: cmake -DBENCH=... -P shm_smoke.cmake")
endif()

# Workers 1 and 2: processes and threads alike; 4 configurations each.
set(args --shm --quick --ops 1000 --reps 1 --threads 1,2 --duration 0.005)
set(nr_nvn 8)

function(run_shm out)
	execute_process(COMMAND "${BENCH}" ${args} ${ARGN}
		RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "pcstock-bench ${args} ${ARGN} exited with "
			"${rc}:\n${text}\n${err}")
	endif()
	set(${out} "${text}" PARENT_SCOPE)
endfunction()

run_shm(table)
foreach(want "## pcstock-bench --shm: .*, [^\n]+"
	     "\\| private \\(default policy, RSEQ domain\\) \\| [0-9.]+ \\|"
	     "\\| shared \\(pcstock_shm_charge\\) \\| [0-9.]+ \\|"
	     "\\*\\*shared / private\\*\\* .*\\| \\*\\*[0-9.]+x\\*\\*"
	     "every pair a hit: yes"
	     "### N processes against N threads"
	     "### Recovery after a SIGKILL"
	     "\n\\| 10 \\| [^\n]+ \\| yes \\|"
	     "\n\\| 10000 \\| [^\n]+ \\| yes \\|")
	if(NOT table MATCHES "${want}")
		message(FATAL_ERROR "--shm: no '${want}' in:\n${table}")
	endif()
endforeach()
string(REGEX MATCHALL "\n\\| (tenants|scale) \\|" rows "${table}")
list(LENGTH rows n)
if(NOT n EQUAL nr_nvn)
	message(FATAL_ERROR "--shm: ${n} N-against-N rows, not ${nr_nvn}:\n"
		"${table}")
endif()

run_shm(json --json)
string(STRIP "${json}" json)
string(REPLACE "\n" ";" lines "${json}")
set(seen "")
foreach(line IN LISTS lines)
	string(JSON kind ERROR_VARIABLE jerr GET "${line}" kind)
	if(jerr)
		message(FATAL_ERROR "--shm --json: '${line}' does not parse: "
			"${jerr}")
	endif()
	string(JSON model ERROR_VARIABLE jerr GET "${line}" cpu_model)
	if(jerr OR model STREQUAL "")
		message(FATAL_ERROR "--shm --json: no cpu_model: ${line}")
	endif()
	list(APPEND seen ${kind})
	if(kind STREQUAL "shm_hit")
		string(JSON hits GET "${line}" all_hits)
		string(JSON ratio GET "${line}" ratio)
		if(NOT hits OR NOT ratio GREATER 0)
			message(FATAL_ERROR "--shm --json: the hit pair: ${line}")
		endif()
	elseif(kind STREQUAL "shm_nvn" OR kind STREQUAL "shm_recover")
		string(JSON ok GET "${line}" cons_ok)
		if(NOT ok)
			message(FATAL_ERROR "--shm --json: cons_ok false: ${line}")
		endif()
	else()
		message(FATAL_ERROR "--shm --json: unknown kind: ${line}")
	endif()
endforeach()
foreach(kind_n "shm_hit;1" "shm_nvn;${nr_nvn}" "shm_recover;2")
	list(GET kind_n 0 kind)
	list(GET kind_n 1 want)
	set(k ${seen})
	list(FILTER k INCLUDE REGEX "^${kind}$")
	list(LENGTH k n)
	if(NOT n EQUAL want)
		message(FATAL_ERROR "--shm --json: ${n} ${kind} records, not "
			"${want}:\n${json}")
	endif()
endforeach()
message(STATUS "pcstock-bench --shm smoke: ${table}")
