# `cpack -G DEB` in the build folder: one package with the CLI, libroofbench, its headers and its
# CMake package, installed under /usr. Its Depends are the Debian packages that hold the shared
# libraries this build linked (found with dpkg-query on this machine, at their versions here or
# later). The CUDA toolkit's libraries (CUPTI, cuBLAS) do not come from Debian: the package
# recommends NVIDIA's packages of them and its description says so.
set(CPACK_PACKAGE_NAME roofbench)
set(CPACK_PACKAGE_VENDOR "roofbench")
set(CPACK_PACKAGE_CONTACT "roofbench developers <roofbench@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Kernel benchmarks on a roofline measured in the same run")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_STRIP_FILES OFF)

function(roofbench_debian_package_of file out)  # the Debian package that holds `file`, ">= its version"
  set(${out} "" PARENT_SCOPE)
  find_program(DPKG_QUERY dpkg-query)
  if(NOT DPKG_QUERY OR NOT EXISTS "${file}")
    return()
  endif()
  file(REAL_PATH "${file}" real)
  foreach(candidate "${real}" "${file}")  # the runtime package holds the real file
    execute_process(COMMAND ${DPKG_QUERY} -S "${candidate}" OUTPUT_VARIABLE owner ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      break()
    endif()
  endforeach()
  if(NOT rc EQUAL 0)
    return()
  endif()
  string(REGEX REPLACE ":.*" "" pkg "${owner}")  # "libfmt9:amd64: /usr/lib/..." -> libfmt9
  execute_process(COMMAND ${DPKG_QUERY} -W "-f=\${Version}" ${pkg} OUTPUT_VARIABLE version ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${out} "${pkg} (>= ${version})" PARENT_SCOPE)
endfunction()

# The shared libraries libroofbench links that a Debian package provides (the -dev packages hold
# only the .so link; the runtime package holds what the link resolves to).
set(_libs ${ROOFBENCH_BLAS_LIBRARIES} ${ROOFBENCH_SLEEF})
foreach(tgt benchmark::benchmark fmt::fmt ZLIB::ZLIB LibLZMA::LibLZMA)
  get_target_property(_loc ${tgt} LOCATION)
  list(APPEND _libs ${_loc})
endforeach()
find_library(_gomp NAMES gomp libgomp.so.1 PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} NO_CACHE)
list(APPEND _libs ${_gomp})
set(_depends "")
foreach(lib ${_libs})
  roofbench_debian_package_of("${lib}" dep)
  if(dep)
    list(APPEND _depends "${dep}")
  else()
    message(STATUS "roofbench: no Debian package holds ${lib}; the .deb does not name it")
  endif()
endforeach()
list(REMOVE_DUPLICATES _depends)
list(JOIN _depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
message(STATUS "roofbench: .deb Depends: ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake (>= 3.25), g++")
set(_desc "Verifies kernels, times them, measures the machine's bandwidth and compute ceilings in the same run and places every kernel on a roofline; results as JSON, SVG, HTML and Markdown, and a regression check. Link roofbench::roofbench to benchmark your own kernels.")
if(ROOFBENCH_HAVE_CUDA)
  string(REPLACE "." "-" _cuda_pkg_version "${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR}")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "cuda-cupti-${_cuda_pkg_version}, libcublas-${_cuda_pkg_version}")
  string(APPEND _desc " Built with the CUDA backend: needs the NVIDIA driver and the CUDA ${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR} toolkit's CUPTI and cuBLAS libraries, which Debian does not ship.")
endif()
set(CPACK_PACKAGE_DESCRIPTION "${_desc}")
include(CPack)
