# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The benchmark's smoke test (ctest label bench), run as
#   cmake -DBENCH=<pcstock-bench> -DOUT=<dir> [-DARGS="<extra args>"]
#         [-DWORKLOADS=<w,...>] [-DOPCOUNT=1] -P smoke.cmake
# Runs pcstock-bench --quick and checks what it wrote, not how fast it was:
# exit status 0 (so conservation held in every run), every JSON Lines
# record parses, every rep record says cons_ok, every workload has a
# summary for every strategy that takes part in it, every policy the
# library registers is in the default set and in the output (table and
# records), the CSV has its columns, meta.json names the machine, and the
# table, the gnuplot script and (when gnuplot exists) the plots are there.
# Which strategies and policies there are, and which workloads each takes
# part in, is asked of the binary (--list-strategies, --list-policies), so
# that a newly registered policy is checked with no edit here.

cmake_minimum_required(VERSION 3.20)

if(NOT BENCH OR NOT OUT)
	message(FATAL_ERROR "usage: cmake -DBENCH=... -DOUT=... -P smoke.cmake")
endif()
if(NOT WORKLOADS)
	set(WORKLOADS fault,fault-stock,tenants,sock,scale,depth,drain)
	string(APPEND WORKLOADS ",tight,strand,nearmax")
endif()
set(wl_arg "${WORKLOADS}")
string(REPLACE "," ";" WORKLOADS "${WORKLOADS}")
separate_arguments(ARGS UNIX_COMMAND "${ARGS}")

# The library's registry, and the bench's strategies: name, set, policy
# properties, workloads (tab-separated, see bench/main.c); one list item a
# line.
function(ask_bench option out)
	execute_process(COMMAND "${BENCH}" ${option} RESULT_VARIABLE rc
		OUTPUT_VARIABLE text ERROR_VARIABLE err)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "pcstock-bench ${option}: ${rc}:\n${err}")
	endif()
	string(STRIP "${text}" text)
	string(REPLACE "\n" ";" text "${text}")
	set(${out} "${text}" PARENT_SCOPE)
endfunction()
ask_bench(--list-policies policies)
list(LENGTH policies nr_policies)
if(nr_policies LESS 1)
	message(FATAL_ERROR "pcstock-bench --list-policies listed none")
endif()
ask_bench(--list-strategies listing)
set(defaults "")
set(exact_policies "")
foreach(row IN LISTS listing)
	string(REPLACE "\t" ";" row "${row}")
	list(LENGTH row nf)
	if(NOT nf EQUAL 4)
		message(FATAL_ERROR "--list-strategies: bad line '${row}'")
	endif()
	list(GET row 0 name)
	list(GET row 1 in_set)
	list(GET row 2 props)
	list(GET row 3 wls)
	if(NOT in_set STREQUAL "default")
		continue()
	endif()
	list(APPEND defaults ${name})
	# Which strategies take part in which workload (the bench's needs).
	string(REPLACE "," ";" wls "${wls}")
	foreach(w IN LISTS wls)
		list(APPEND want_${w} ${name})
	endforeach()
	string(REPLACE "," ";" props "${props}")
	if("exact_at_limit" IN_LIST props)
		list(APPEND exact_policies ${name})
	endif()
endforeach()
foreach(d IN LISTS policies)
	if(NOT d IN_LIST defaults)
		message(FATAL_ERROR "policy ${d} is registered but not in the "
			"bench's default set (--list-strategies)")
	endif()
endforeach()

# Run the bench with the arguments after @regex; exit 0 and a table on
# stdout matching @regex, which is left in @out.
function(run_bench out regex)
	execute_process(COMMAND "${BENCH}" ${ARGN}
		RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "pcstock-bench ${ARGN} exited with "
			"${rc}:\n${err}")
	endif()
	if(NOT text MATCHES "${regex}")
		message(FATAL_ERROR "no table on stdout:\n${text}")
	endif()
	set(${out} "${text}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${OUT}")
run_bench(table "### Key figures" --quick --reps 2 --workload ${wl_arg}
	--out "${OUT}" ${ARGS})

file(STRINGS "${OUT}/bench.jsonl" lines)
list(LENGTH lines nr)
if(nr LESS 2)
	message(FATAL_ERROR "bench.jsonl has ${nr} lines")
endif()
set(n 0)
set(seen "")
foreach(line IN LISTS lines)
	math(EXPR n "${n} + 1")
	string(JSON kind ERROR_VARIABLE jerr GET "${line}" kind)
	if(jerr)
		message(FATAL_ERROR "bench.jsonl:${n} does not parse: ${jerr}")
	endif()
	if(n EQUAL 1 AND NOT kind STREQUAL "meta")
		message(FATAL_ERROR "bench.jsonl:1 is not the meta record")
	endif()
	if(kind STREQUAL "rep")
		string(JSON ok GET "${line}" cons_ok)
		string(JSON value GET "${line}" value)
		if(NOT ok)
			message(FATAL_ERROR "bench.jsonl:${n}: cons_ok false")
		endif()
		# A policy exact at the limit drains before it reclaims:
		# near max, with the pages in use below it, no reclaim call
		# and no failure (its property, whatever its name).
		string(JSON w GET "${line}" workload)
		string(JSON s GET "${line}" strategy)
		if(w STREQUAL "nearmax" AND s IN_LIST exact_policies)
			string(JSON f GET "${line}" "failed charges")
			if(NOT value EQUAL 0 OR NOT f EQUAL 0)
				message(FATAL_ERROR "bench.jsonl:${n}: ${s} "
					"near max: ${value} reclaim calls, "
					"${f} failed charges")
			endif()
		endif()
		# sock's receivers batch: a pass that got any message got 1
		# to 8 (ring_pop's bound), and a receiver made at least one
		# pass per 8 messages.
		if(w STREQUAL "sock")
			string(JSON b GET "${line}" "msgs/receiving pass")
			string(JSON p GET "${line}" "passes/msg")
			if(NOT b GREATER_EQUAL 1 OR b GREATER 8 OR
			   NOT p GREATER_EQUAL 0.125)
				message(FATAL_ERROR "bench.jsonl:${n}: sock ${s}: "
					"${b} messages a receiving pass, ${p} "
					"passes a message")
			endif()
		endif()
	elseif(kind STREQUAL "summary")
		string(JSON w GET "${line}" workload)
		string(JSON s GET "${line}" strategy)
		list(APPEND seen "${w}/${s}")
	elseif(kind STREQUAL "pair")
		# --reps 2: every ratio is too short to be stable, and says so.
		string(JSON stable ERROR_VARIABLE jerr GET "${line}" stable)
		string(JSON why ERROR_VARIABLE jerr2 GET "${line}" stable_why)
		if(jerr OR stable OR jerr2 OR NOT why MATCHES "repetitions")
			message(FATAL_ERROR "bench.jsonl:${n}: a pair of 2 "
				"repetitions not marked unstable: ${line}")
		endif()
	endif()
endforeach()
foreach(w IN LISTS WORKLOADS)
	foreach(s IN LISTS want_${w})
		if(NOT "${w}/${s}" IN_LIST seen)
			message(FATAL_ERROR "no summary for ${s} on ${w}")
		endif()
	endforeach()
endforeach()
# Every registered policy ran and has a column in the table.
foreach(d IN LISTS policies)
	if(NOT seen MATCHES "(^|;)[^;/]+/${d}(;|$)")
		message(FATAL_ERROR "policy ${d} has no record in the default "
			"run (bench.jsonl)")
	endif()
	if(NOT table MATCHES "\\| ${d} \\|")
		message(FATAL_ERROR "policy ${d} has no column in the table")
	endif()
endforeach()

file(STRINGS "${OUT}/bench.csv" csv LIMIT_COUNT 1)
foreach(col kind workload config strategy rep value median min max cov
	    ratio_vs_baseline baseline cons_ok)
	if(NOT ",${csv}," MATCHES ",${col},")
		message(FATAL_ERROR "bench.csv lacks column ${col}: ${csv}")
	endif()
endforeach()
file(STRINGS "${OUT}/bench.csv" csv_rows)
list(LENGTH csv_rows nr_csv)
if(nr_csv LESS 2)
	message(FATAL_ERROR "bench.csv has no rows")
endif()

file(READ "${OUT}/meta.json" meta)
foreach(key commit compiler kernel glibc cpu_model pus cores numa_nodes
	    cpu_mode pcstock liburcu hwloc)
	string(JSON v ERROR_VARIABLE jerr GET "${meta}" ${key})
	if(jerr)
		message(FATAL_ERROR "meta.json lacks ${key}: ${jerr}")
	endif()
endforeach()

foreach(f table.md plots.gp)
	if(NOT EXISTS "${OUT}/${f}")
		message(FATAL_ERROR "${OUT}/${f} is missing")
	endif()
endforeach()
find_program(GNUPLOT gnuplot)
file(GLOB pngs "${OUT}/*.png")
if(GNUPLOT AND NOT pngs)
	message(FATAL_ERROR "gnuplot is installed but no plot was drawn")
endif()
message(STATUS "pcstock-bench smoke: ${nr} JSON records, ${nr_csv} CSV rows")

# -DOPCOUNT=1: --opcount too (bench/opcount.c), checked for what it counts,
# never for its ns: it exits 0, every record parses, the lock_cost record
# is there, every registered policy has a row for every configuration, no
# charge failed, the none policy's operation (a charge and an uncharge,
# each walking both levels of the tree, no stock) has at least one locked
# instruction a level each way, and memcg7 on COOP CPUs (the kernel's
# owner-exclusive hit) has none at N=1.
if(OPCOUNT)
	run_bench(table "\\| locked ns/op \\|" --opcount --quick
		--out "${OUT}/opcount")
	file(STRINGS "${OUT}/opcount/opcount.jsonl" lines)
	set(rows "")
	set(have_cost FALSE)
	foreach(line IN LISTS lines)
		string(JSON kind ERROR_VARIABLE jerr GET "${line}" kind)
		if(jerr)
			message(FATAL_ERROR "opcount.jsonl: ${line}: ${jerr}")
		endif()
		if(kind STREQUAL "lock_cost")
			set(have_cost TRUE)
			# The sequence's commit chains: a time on x86-64,
			# null elsewhere, never JSON's missing nan.
			foreach(k call_movl_ns call_movslq_ns call_lock_ns)
				string(JSON t TYPE "${line}" ${k})
				if(NOT t MATCHES "^(NUMBER|NULL)$" OR
				   (CMAKE_HOST_SYSTEM_PROCESSOR MATCHES
				    "x86_64|AMD64" AND NOT t STREQUAL "NUMBER"))
					message(FATAL_ERROR "opcount: ${k} "
						"is ${t}: ${line}")
				endif()
			endforeach()
			continue()
		endif()
		string(JSON w GET "${line}" workload)
		string(JSON c GET "${line}" config)
		string(JSON s GET "${line}" strategy)
		string(JSON m GET "${line}" cpu_mode)
		string(JSON locked GET "${line}" locked_per_op)
		string(JSON fails GET "${line}" fails)
		list(APPEND rows "${w} ${c}/${s}")
		if(NOT fails EQUAL 0)
			message(FATAL_ERROR "opcount: ${w} ${c} ${s}: ${fails} "
				"failed charges")
		endif()
		if(s STREQUAL "none" AND w STREQUAL "scale" AND
		   locked LESS 4)
			message(FATAL_ERROR "opcount: none on ${c}: ${locked} "
				"locked instructions per operation, < 2 levels "
				"x charge and uncharge")
		endif()
		if(s STREQUAL "memcg7" AND m STREQUAL "coop" AND
		   c MATCHES "^N=1 " AND NOT locked EQUAL 0)
			message(FATAL_ERROR "opcount: memcg7 owner-exclusive "
				"at N=1: ${locked} locked instructions per "
				"operation, not 0")
		endif()
	endforeach()
	if(NOT have_cost)
		message(FATAL_ERROR "opcount.jsonl has no lock_cost record")
	endif()
	foreach(cfg "tenants N=1 T=2" "tenants N=64 T=2" "scale T=1 own")
		foreach(d IN LISTS policies)
			if(NOT "${cfg}/${d}" IN_LIST rows)
				message(FATAL_ERROR "opcount: no row for ${d} "
					"on ${cfg}")
			endif()
		endforeach()
	endforeach()
	list(LENGTH rows nr_rows)
	message(STATUS "pcstock-bench --opcount: ${nr_rows} rows")
endif()
