# Run at every build (cmake -P), so that results name the commit the binary was built from even
# when CMake did not reconfigure after a commit, and whether the tracked files differed from it
# then: writes version.h from version.h.in, touching it only when its text changed (no needless
# rebuilds). A binary run later, elsewhere or after more commits still names its own build.
#   -DPROJECT_SOURCE_DIR=... -DPROJECT_VERSION=... -DOUT=.../version.h
set(ROOFBENCH_GIT_COMMIT "unknown")
set(ROOFBENCH_GIT_DIRTY -1)  # unknown
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                  OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(ROOFBENCH_GIT_COMMIT ${_commit})
    # --no-optional-locks: a build must not take .git/index.lock from under the user's own git.
    execute_process(COMMAND ${GIT_EXECUTABLE} --no-optional-locks status --porcelain --untracked-files=no
                    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                    OUTPUT_VARIABLE _status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0)
      if(_status STREQUAL "")
        set(ROOFBENCH_GIT_DIRTY 0)
      else()
        set(ROOFBENCH_GIT_DIRTY 1)
      endif()
    endif()
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/bench/version.h.in ${OUT}.new @ONLY)
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)
