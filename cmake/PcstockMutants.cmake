# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Planted bugs (docs/mutation.md): test-only flavours of the library with
# one bug each that a test must catch.  None is in the sources we ship;
# each lives under tests/mutants/, by name:
#  - a weakened memory order is a line of tests/mutants/orders.txt,
#    "<name> <TAG>=<order>...": the flavour is compiled with
#    -DPCSTOCK_ORDER_<TAG>=<order>, which PCS_ORDER(<TAG>, ...) in src/
#    takes up (src/atomic.h);
#  - any other bug is tests/mutants/<name>.patch, a unified diff against
#    src/ (a/src/..., b/src/...), applied at configure time with patch -p1
#    to a copy of src/ in <build>/mutants/<name>/; the flavour compiles the
#    copy's files instead of src/'s.  A patch that no longer applies stops
#    the configure step, naming itself.
# A flavour compiles again only the sources its bug changes: those naming
# its tags or changed by its patch, and those including one of them,
# directly or through other headers of src/.

set(PCSTOCK_MUTANTS_DIR ${PROJECT_SOURCE_DIR}/tests/mutants CACHE INTERNAL
	"Where the planted bugs are")
set(PCSTOCK_ORDERS PCS_RELAXED PCS_ACQUIRE PCS_RELEASE PCS_ACQ_REL
	PCS_SEQ_CST CACHE INTERNAL "The orders of src/atomic.h")

# _pcstock_src_scan(): once per configure, every file of src/ (each a
# configure dependency), the headers of src/ it includes and the tags of
# its PCS_ORDER() sites with the order each spells (an order passed in,
# such as stock_hit.h's mo_ok, as its parameter's name), in global
# properties.  A tag that names two sites is an error: a planted order
# would weaken both.
function(_pcstock_src_scan)
	get_property(done GLOBAL PROPERTY _pcstock_src_names SET)
	if(done)
		return()
	endif()
	file(GLOB files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.c
		${PROJECT_SOURCE_DIR}/src/*.h)
	set(names)
	set(all)
	foreach(f ${files})
		get_filename_component(n ${f} NAME)
		list(APPEND names ${n})
		file(READ ${f} text)
		set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
			${f})
		string(REGEX MATCHALL "#include \"[^\"]+\"" incs "${text}")
		list(TRANSFORM incs REPLACE "#include \"([^\"]+)\"" "\\1")
		set_property(GLOBAL PROPERTY _pcstock_inc_${n} ${incs})
		if(n STREQUAL "atomic.h")
			continue()	# defines PCS_ORDER(), names no site
		endif()
		string(REGEX MATCHALL "PCS_ORDER\\([A-Z0-9_]+,[ \t\r\n]*[A-Za-z_]+"
			sites "${text}")
		foreach(site ${sites})
			string(REGEX MATCH "\\(([A-Z0-9_]+),[ \t\r\n]*(.*)"
				site "${site}")
			set(tag ${CMAKE_MATCH_1})
			get_property(other GLOBAL PROPERTY _pcstock_site_${tag})
			if(other)
				message(FATAL_ERROR "src/: the order tag ${tag} "
					"names two sites (in ${other} and ${n}); "
					"tags are unique (src/atomic.h)")
			endif()
			set_property(GLOBAL PROPERTY _pcstock_site_${tag} ${n})
			set_property(GLOBAL PROPERTY _pcstock_order_${tag}
				${CMAKE_MATCH_2})
			list(APPEND all ${tag})
		endforeach()
	endforeach()
	list(SORT all)
	set_property(GLOBAL PROPERTY _pcstock_src_names ${names})
	set_property(GLOBAL PROPERTY _pcstock_site_tags ${all})
endfunction()

# _pcstock_src_affected(<out> <name>...): the names of src/'s files that
# are among <name>... or include one of them, directly or through others.
function(_pcstock_src_affected out)
	get_property(names GLOBAL PROPERTY _pcstock_src_names)
	set(affected ${ARGN})
	set(grew TRUE)
	while(grew)
		set(grew FALSE)
		foreach(n ${names})
			if(n IN_LIST affected)
				continue()
			endif()
			get_property(incs GLOBAL PROPERTY _pcstock_inc_${n})
			foreach(i ${incs})
				if(i IN_LIST affected)
					list(APPEND affected ${n})
					set(grew TRUE)
					break()
				endif()
			endforeach()
		endforeach()
	endwhile()
	set(${out} ${affected} PARENT_SCOPE)
endfunction()

# _pcstock_mutant_stage(<name> <patch> <changed-var>): lay out
# <build>/mutants/<name>/src, src/ with <patch> applied (once per
# configure; a file is rewritten only when its text changes, so that a
# configure step rebuilds nothing that did not change); <changed-var>
# gets the names of the files the patch changes.
function(_pcstock_mutant_stage name patch changed)
	set(rel tests/mutants/${name}.patch)
	file(STRINGS ${patch} targets REGEX "^\\+\\+\\+ ")
	list(TRANSFORM targets REPLACE "^\\+\\+\\+ ([^\t ]+).*" "\\1")
	set(names)
	foreach(t ${targets})
		if(NOT t MATCHES "^b/src/([^/]+)$")
			message(FATAL_ERROR "${rel}: changes ${t}; a planted bug "
				"changes files of src/ only (b/src/<file>)")
		endif()
		list(APPEND names ${CMAKE_MATCH_1})
	endforeach()
	if(NOT names)
		message(FATAL_ERROR "${rel}: no file changed (not a unified "
			"diff against src/?)")
	endif()
	set(${changed} ${names} PARENT_SCOPE)
	get_property(staged GLOBAL PROPERTY _pcstock_staged_${name} SET)
	if(staged)
		return()
	endif()
	set_property(GLOBAL PROPERTY _pcstock_staged_${name} TRUE)
	set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
		${patch})

	find_program(PCSTOCK_PATCH patch)
	if(NOT PCSTOCK_PATCH)
		message(FATAL_ERROR "patch(1) is needed to plant ${rel} "
			"(scripts/deps.sh installs it)")
	endif()
	set(dir ${PROJECT_BINARY_DIR}/mutants/${name})
	set(tmp ${dir}.tmp)
	file(REMOVE_RECURSE ${tmp})
	file(GLOB files ${PROJECT_SOURCE_DIR}/src/*.c
		${PROJECT_SOURCE_DIR}/src/*.h)
	file(COPY ${files} DESTINATION ${tmp}/src)
	execute_process(COMMAND ${PCSTOCK_PATCH} -p1 --batch --forward
			--no-backup-if-mismatch --reject-file=- -i ${patch}
		WORKING_DIRECTORY ${tmp} RESULT_VARIABLE rc
		OUTPUT_VARIABLE log ERROR_VARIABLE log)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "${rel} no longer applies to src/: "
			"refresh it (docs/mutation.md, \"Planted bugs\").\n"
			"${log}")
	endif()
	if(log MATCHES "fuzz")
		message(WARNING "${rel} applies only with fuzz: refresh it "
			"(docs/mutation.md, \"Planted bugs\").\n${log}")
	endif()
	foreach(f ${files})
		get_filename_component(n ${f} NAME)
		file(READ ${tmp}/src/${n} new)
		set(old "")
		if(EXISTS ${dir}/src/${n})
			file(READ ${dir}/src/${n} old)
		endif()
		if(NOT new STREQUAL old)
			file(WRITE ${dir}/src/${n} "${new}")
		endif()
	endforeach()
	file(REMOVE_RECURSE ${tmp})
endfunction()

# _pcstock_mutant_orders(<name> <defines-var> <changed-var>): the order
# bug <name>, one of pcstock_order_sweep() or a line of
# tests/mutants/orders.txt: its definitions, and the names of the files of
# its sites.
function(_pcstock_mutant_orders name defines changed)
	get_property(fields GLOBAL PROPERTY _pcstock_orders_${name})
	if(NOT fields)
		set(table ${PCSTOCK_MUTANTS_DIR}/orders.txt)
		set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
			${table})
		file(STRINGS ${table} lines REGEX "^${name}[ \t]")
		list(LENGTH lines n)
		if(n EQUAL 0)
			message(FATAL_ERROR "No planted bug ${name}: neither "
				"tests/mutants/${name}.patch nor a line of "
				"tests/mutants/orders.txt")
		elseif(n GREATER 1)
			message(FATAL_ERROR "tests/mutants/orders.txt: ${n} "
				"lines for ${name}")
		endif()
		string(REGEX REPLACE "[ \t]+" ";" fields "${lines}")
		list(POP_FRONT fields)
	endif()
	string(REPLACE ";" ", " orders "${PCSTOCK_ORDERS}")
	set(defs)
	set(names)
	foreach(field ${fields})
		if(NOT field MATCHES "^([A-Z0-9_]+)=(PCS_[A-Z_]+)$" OR
		   NOT CMAKE_MATCH_2 IN_LIST PCSTOCK_ORDERS)
			message(FATAL_ERROR "tests/mutants/orders.txt, ${name}: "
				"\"${field}\" is no <TAG>=<order> (orders: "
				"${orders})")
		endif()
		get_property(site GLOBAL PROPERTY
			_pcstock_site_${CMAKE_MATCH_1})
		if(NOT site)
			message(FATAL_ERROR "tests/mutants/orders.txt, ${name}: "
				"no PCS_ORDER(${CMAKE_MATCH_1}, ...) in src/")
		endif()
		list(APPEND defs PCSTOCK_ORDER_${field})
		list(APPEND names ${site})
	endforeach()
	set(${defines} ${defs} PARENT_SCOPE)
	set(${changed} ${names} PARENT_SCOPE)
endfunction()

# pcstock_order_sweep(<names-var> <table-file>): the order sweep's bugs
# (scripts/order-sweep, docs/order-sweep.md), one weakening of one site
# each: every tag whose order is not relaxed given relaxed
# (sweep_<tag>), an acq_rel's also acquire and release
# (sweep_<tag>_acquire, sweep_<tag>_release; lower case).  A CAS's
# failure tag <TAG>_FAIL is a site of its own, and is weakened to relaxed
# with <TAG> wherever <TAG> loses its acquire.  An order passed in as a
# parameter (stock_hit.h's HIT_TAKE) is taken to be stronger than
# relaxed.  <names-var> gets the bugs' names, each known to
# pcstock_mutant() from then on; <table-file> the sites and the bugs, for
# the script: "site <TAG> <order> <file>" and "bug <name> <TAG>=<order>...",
# one a line.
function(pcstock_order_sweep names file)
	_pcstock_src_scan()
	get_property(tags GLOBAL PROPERTY _pcstock_site_tags)
	set(bugs)
	string(CONCAT table "# Generated by pcstock_order_sweep() "
		"(cmake/PcstockMutants.cmake): do not edit.\n")
	foreach(tag ${tags})
		get_property(order GLOBAL PROPERTY _pcstock_order_${tag})
		get_property(n GLOBAL PROPERTY _pcstock_site_${tag})
		string(APPEND table "site ${tag} ${order} ${n}\n")
		if(order STREQUAL PCS_RELAXED)
			continue()
		endif()
		get_property(fail GLOBAL PROPERTY _pcstock_site_${tag}_FAIL)
		set(weaker PCS_RELAXED)
		if(order STREQUAL PCS_ACQ_REL)
			list(APPEND weaker PCS_ACQUIRE PCS_RELEASE)
		endif()
		foreach(to ${weaker})
			string(TOLOWER sweep_${tag} bug)
			if(NOT to STREQUAL PCS_RELAXED)
				string(REPLACE PCS_ "" suffix ${to})
				string(TOLOWER ${bug}_${suffix} bug)
			endif()
			set(fields ${tag}=${to})
			if(fail AND NOT to STREQUAL PCS_ACQUIRE)
				list(APPEND fields ${tag}_FAIL=PCS_RELAXED)
			endif()
			set_property(GLOBAL PROPERTY _pcstock_orders_${bug}
				${fields})
			list(APPEND bugs ${bug})
			string(JOIN " " line bug ${bug} ${fields})
			string(APPEND table "${line}\n")
		endforeach()
	endforeach()
	file(WRITE ${file} "${table}")
	set(${names} ${bugs} PARENT_SCOPE)
endfunction()

# pcstock_mutant(<name> <defines-var> <sources-var>): the planted bug
# <name>.  <defines-var> gets the compile definitions that plant it,
# <sources-var> the library's sources (PCSTOCK_SOURCES) it changes, as
# the files to compile in their place: for a patch, its copy's.
function(pcstock_mutant name defines sources)
	if(NOT name MATCHES "^[a-z0-9_]+$")
		message(FATAL_ERROR "Planted bug \"${name}\": a name is "
			"lower case, digits and _")
	endif()
	_pcstock_src_scan()
	set(patch ${PCSTOCK_MUTANTS_DIR}/${name}.patch)
	set(defs)
	if(EXISTS ${patch})
		_pcstock_mutant_stage(${name} ${patch} changed)
		set(dir ${PROJECT_BINARY_DIR}/mutants/${name}/src)
	else()
		_pcstock_mutant_orders(${name} defs changed)
		set(dir ${PROJECT_SOURCE_DIR}/src)
	endif()
	_pcstock_src_affected(affected ${changed})
	set(result)
	foreach(src ${PCSTOCK_SOURCES})
		get_filename_component(n ${src} NAME)
		if(n IN_LIST affected)
			list(APPEND result ${dir}/${n})
		endif()
	endforeach()
	if(NOT result)
		message(FATAL_ERROR "Planted bug ${name}: it changes "
			"${changed}, which no source of the library includes")
	endif()
	set(${defines} ${defs} PARENT_SCOPE)
	set(${sources} ${result} PARENT_SCOPE)
endfunction()

# pcstock_mutant_swap(<out> <mutant-sources> <source>...): <source>...
# with each that <mutant-sources> (from pcstock_mutant()) replaces by a
# file of the same name swapped for it.
function(pcstock_mutant_swap out mutated)
	set(result)
	foreach(src ${ARGN})
		get_filename_component(n ${src} NAME)
		foreach(m ${mutated})
			get_filename_component(mn ${m} NAME)
			if(mn STREQUAL n)
				set(src ${m})
				break()
			endif()
		endforeach()
		list(APPEND result ${src})
	endforeach()
	set(${out} ${result} PARENT_SCOPE)
endfunction()

# pcstock_mutant_plant(<name> <sources-var> <flags-var>): for a target
# compiled by hand rather than by pcstock_add_library() (the fuzzers):
# the files of <sources-var> that the planted bug <name> changes swapped
# for its own, and <flags-var> the -D flags that plant it.
function(pcstock_mutant_plant name sources flags)
	pcstock_mutant(${name} defines mutated)
	pcstock_mutant_swap(swapped "${mutated}" ${${sources}})
	list(TRANSFORM defines PREPEND -D)
	set(${sources} ${swapped} PARENT_SCOPE)
	set(${flags} ${defines} PARENT_SCOPE)
endfunction()
