# phasersConfig.cmake: the CMake package of the phasers C, C++ and Fortran interfaces, installed by
# scripts/install-capi.sh in PREFIX/lib/cmake/phasers.
#
#     find_package(phasers 0.1 REQUIRED)                   # CMAKE_PREFIX_PATH=PREFIX if needed
#     target_link_libraries(app PRIVATE phasers::phasers)  # phasers.h, phasers.hpp, libphasers.so
#
# Imported targets:
#   phasers::phasers  libphasers.so, with PREFIX/include (phasers.h, and phasers.hpp for C++17).
#   phasers::static   libphasers.a, with the system libraries a static link needs.
#   phasers::fortran  the Fortran module (phasers.mod, compiled by the installer's gfortran, and
#                     libphasers_fortran.a), with phasers::phasers. Only when the install built
#                     it: ask for it with find_package(phasers REQUIRED COMPONENTS fortran).
# Variables: phasers_VERSION, phasers_INCLUDE_DIR, phasers_fortran_FOUND.
#
# The package finds its files relative to this file, so an installed tree may be moved (or staged
# with DESTDIR) as a whole.

get_filename_component(_phasers_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(phasers_INCLUDE_DIR "${_phasers_prefix}/include")

foreach(_phasers_file "${_phasers_prefix}/lib/libphasers.so" "${_phasers_prefix}/lib/libphasers.a"
        "${phasers_INCLUDE_DIR}/phasers.h" "${phasers_INCLUDE_DIR}/phasers.hpp")
    if(NOT EXISTS "${_phasers_file}")
        set(phasers_FOUND FALSE)
        set(phasers_NOT_FOUND_MESSAGE
            "${_phasers_file} is missing: reinstall with scripts/install-capi.sh")
        return()
    endif()
endforeach()

if(NOT TARGET phasers::phasers)
    add_library(phasers::phasers SHARED IMPORTED)
    # libphasers.so has no soname: link it as -lphasers, not by its path.
    set_target_properties(phasers::phasers PROPERTIES
        IMPORTED_LOCATION "${_phasers_prefix}/lib/libphasers.so"
        IMPORTED_NO_SONAME TRUE
        INTERFACE_INCLUDE_DIRECTORIES "${phasers_INCLUDE_DIR}")
endif()

if(NOT TARGET phasers::static)
    add_library(phasers::static STATIC IMPORTED)
    # What `pkg-config --static --libs phasers` adds: the Rust runtime's system libraries.
    set_target_properties(phasers::static PROPERTIES
        IMPORTED_LOCATION "${_phasers_prefix}/lib/libphasers.a"
        IMPORTED_LINK_INTERFACE_LANGUAGES "C"
        INTERFACE_INCLUDE_DIRECTORIES "${phasers_INCLUDE_DIR}"
        INTERFACE_LINK_LIBRARIES "pthread;${CMAKE_DL_LIBS};m")
endif()

set(phasers_fortran_FOUND FALSE)
if(EXISTS "${_phasers_prefix}/lib/fortran/modules/phasers.mod"
        AND EXISTS "${_phasers_prefix}/lib/libphasers_fortran.a")
    set(phasers_fortran_FOUND TRUE)
    if(NOT TARGET phasers::fortran)
        add_library(phasers::fortran STATIC IMPORTED)
        set_target_properties(phasers::fortran PROPERTIES
            IMPORTED_LOCATION "${_phasers_prefix}/lib/libphasers_fortran.a"
            IMPORTED_LINK_INTERFACE_LANGUAGES "Fortran"
            INTERFACE_INCLUDE_DIRECTORIES "${_phasers_prefix}/lib/fortran/modules"
            INTERFACE_LINK_LIBRARIES phasers::phasers)
    endif()
endif()

foreach(_phasers_component IN LISTS phasers_FIND_COMPONENTS)
    if(NOT _phasers_component STREQUAL "fortran")
        set(phasers_FOUND FALSE)
        set(phasers_NOT_FOUND_MESSAGE
            "phasers has no component '${_phasers_component}' (the one optional component is 'fortran')")
    elseif(NOT phasers_fortran_FOUND AND phasers_FIND_REQUIRED_fortran)
        set(phasers_FOUND FALSE)
        set(phasers_NOT_FOUND_MESSAGE
            "the phasers Fortran module is not installed under ${_phasers_prefix}: install gfortran (or set FC) and rerun scripts/install-capi.sh")
    endif()
endforeach()

unset(_phasers_component)
unset(_phasers_file)
unset(_phasers_prefix)
