# SPDX-License-Identifier: LGPL-2.1-or-later
# Compile a translation unit that includes only pcstock/${HEADER}.h, as C11
# with strict warnings, to prove the header is self-contained.
file(MAKE_DIRECTORY ${WORK})
set(src ${WORK}/${HEADER}.c)
file(WRITE ${src} "#include <pcstock/${HEADER}.h>\nint pcstock_header_alone_${HEADER};\n")
execute_process(
	COMMAND ${CC} -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only
		-I${SRC} -I${GEN} ${src}
	RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "pcstock/${HEADER}.h does not compile alone:\n${out}")
endif()
message(STATUS "pcstock/${HEADER}.h compiles alone")
