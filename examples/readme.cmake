# SPDX-License-Identifier: LGPL-2.1-or-later
#
# cmake -DTOP=<source dir> -P readme.cmake
#
# The README's first program is examples/first.c, word for word (the
# example_first test builds and runs that file), and the README and every
# page under docs/ link only to files inside the repository that exist:
# no URL, no absolute path, nothing above the top directory.

set(readme ${TOP}/README.md)
file(READ ${readme} text)
file(READ ${TOP}/examples/first.c first)
set(marker "<!-- examples/first.c -->\n```c\n")
string(FIND "${text}" "${marker}" at)
if(at LESS 0)
	message(FATAL_ERROR "README.md: no \"<!-- examples/first.c -->\" "
		"followed by a ```c block")
endif()
string(LENGTH "${marker}" len)
math(EXPR at "${at} + ${len}")
string(SUBSTRING "${text}" ${at} -1 rest)
string(FIND "${rest}" "```\n" end)
string(SUBSTRING "${rest}" 0 ${end} block)
if(NOT block STREQUAL first)
	message(FATAL_ERROR "README.md's first program differs from "
		"examples/first.c: copy the file into the README")
endif()

file(GLOB_RECURSE pages RELATIVE ${TOP} ${TOP}/docs/*.md)
set(bad 0)
foreach(page README.md ${pages})
	get_filename_component(dir ${TOP}/${page} DIRECTORY)
	# Brackets, semicolons and backslashes have meanings in CMake lists:
	# hide them.
	file(READ ${TOP}/${page} body)
	string(REPLACE "\\" "/" body "${body}")
	string(REPLACE ";" "," body "${body}")
	string(REPLACE "[" "<" body "${body}")
	string(REPLACE "]" ">" body "${body}")
	string(REPLACE "\n" ";" lines "${body}")
	set(n 0)
	foreach(line IN LISTS lines)
		math(EXPR n "${n} + 1")
		string(REGEX MATCHALL ">\\([^)]*\\)" links "${line}")
		foreach(link IN LISTS links)
			string(REGEX REPLACE "^>\\(([^)#]*).*\\)$" "\\1"
				target "${link}")
			if(target STREQUAL "")
				continue()	# an anchor in the same page
			endif()
			get_filename_component(path ${dir}/${target} ABSOLUTE)
			string(FIND "${path}/" "${TOP}/" inside)
			if(target MATCHES "^[a-z]+:" OR target MATCHES "^/"
			   OR NOT inside EQUAL 0 OR NOT EXISTS ${path})
				message(SEND_ERROR "${page}:${n}: link ${target} "
					"is not a file of the repository")
				set(bad 1)
			endif()
		endforeach()
	endforeach()
endforeach()
if(bad)
	message(FATAL_ERROR "bad links in README.md or docs/")
endif()
