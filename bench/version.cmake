# Run at every build (cmake -P), so that results name the commit the binary was built from even
# when CMake did not reconfigure after a commit: writes version.h from version.h.in, touching it
# only when its text changed (no needless rebuilds).
#   -DPROJECT_SOURCE_DIR=... -DPROJECT_VERSION=... -DOUT=.../version.h
set(ROOFBENCH_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(ROOFBENCH_GIT_COMMIT ${_commit})
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/bench/version.h.in ${OUT}.new @ONLY)
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)
