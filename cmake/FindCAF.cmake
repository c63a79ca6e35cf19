# Finds the C++ Actor Framework (Debian 12 ships CAF 0.17.6 without a CMake config).
# Defines CAF_FOUND, CAF_VERSION and the imported targets CAF::core, CAF::io, CAF::openssl (the
# latter two only when present; SeatFlow links CAF::core alone).
# -DCAF_ROOT=<prefix> picks a CAF installed there (headers and libraries both, never mixed with the
# system's), e.g. the ThreadSanitizer build of scripts/caf-tsan.sh.
include(FindPackageHandleStandardArgs)
find_package(Threads REQUIRED)

# A build directory configured against another CAF_ROOT, or against a CAF since moved or deleted,
# must not keep the old cached paths (they would point the build at a missing or wrong CAF).
if(NOT "${CAF_ROOT}" STREQUAL "${SEATFLOW_CAF_ROOT_FOUND_UNDER}"
   OR (CAF_INCLUDE_DIR AND NOT EXISTS "${CAF_INCLUDE_DIR}/caf/all.hpp")
   OR (CAF_CORE_LIBRARY AND NOT EXISTS "${CAF_CORE_LIBRARY}"))
  foreach(_caf_var CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY CAF_OPENSSL_LIBRARY)
    unset(${_caf_var} CACHE)
  endforeach()
endif()
set(SEATFLOW_CAF_ROOT_FOUND_UNDER "${CAF_ROOT}" CACHE INTERNAL "CAF_ROOT of the cached CAF paths")

if(CAF_ROOT)
  set(_caf_hints HINTS "${CAF_ROOT}" NO_DEFAULT_PATH)
else()
  set(_caf_hints)
endif()
find_path(CAF_INCLUDE_DIR NAMES caf/all.hpp PATH_SUFFIXES include ${_caf_hints})
find_library(CAF_CORE_LIBRARY NAMES caf_core PATH_SUFFIXES lib ${_caf_hints})
find_library(CAF_IO_LIBRARY NAMES caf_io PATH_SUFFIXES lib ${_caf_hints})
find_library(CAF_OPENSSL_LIBRARY NAMES caf_openssl PATH_SUFFIXES lib ${_caf_hints})

if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" _caf_version_num "${_caf_version_line}")
  math(EXPR _caf_major "${_caf_version_num} / 10000")
  math(EXPR _caf_minor "(${_caf_version_num} / 100) % 100")
  math(EXPR _caf_patch "${_caf_version_num} % 100")
  set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
endif()

find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR CAF_CORE_LIBRARY
  VERSION_VAR CAF_VERSION)

if(CAF_FOUND)
  foreach(_comp core io openssl)
    string(TOUPPER ${_comp} _up)
    if(CAF_${_up}_LIBRARY AND NOT TARGET CAF::${_comp})
      add_library(CAF::${_comp} UNKNOWN IMPORTED)
      set_target_properties(CAF::${_comp} PROPERTIES
        IMPORTED_LOCATION "${CAF_${_up}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
        INTERFACE_LINK_LIBRARIES Threads::Threads)
    endif()
  endforeach()
  if(TARGET CAF::io)
    set_property(TARGET CAF::io APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::core)
  endif()
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY CAF_OPENSSL_LIBRARY)
