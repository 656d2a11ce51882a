# phasersConfig.cmake: the CMake package of the phasers C, C++ and Fortran interfaces, installed by
# scripts/install-capi.sh in PREFIX/lib/cmake/phasers.
#
#     find_package(phasers 0.1 REQUIRED)                   # CMAKE_PREFIX_PATH=PREFIX if needed
#     target_link_libraries(app PRIVATE phasers::phasers)  # phasers.h, phasers.hpp, libphasers.so
#
# Imported targets:
#   phasers::phasers  libphasers.so, with PREFIX/include (phasers.h, and phasers.hpp for C++17).
#   phasers::static   libphasers.a, with the system libraries a static link needs.
#   phasers::fortran  the Fortran module (phasers.mod and libphasers_fortran.a), with
#                     phasers::phasers. Only when the install built it: ask for it with
#                     find_package(phasers REQUIRED COMPONENTS fortran). The install's compiler
#                     (FC, else gfortran, else gfortran-NN) wrote phasers.mod, and only it reads
#                     it: configure with FC set to it where it is not plain gfortran.
# An install made with `scripts/install-capi.sh --mpi` (it has include/phasers_mpi.h) adds two
# components, which find MPI (find_dependency(MPI), FindMPI's MPI::MPI_C and MPI::MPI_Fortran):
#   phasers::mpi          phasers::phasers with MPI::MPI_C: phasers_mpi.h and mpi.h, libphasers.so
#                         and MPI's library. find_package(phasers REQUIRED COMPONENTS mpi); the
#                         project enables C.
#   phasers::mpi_fortran  the Fortran module phasers_mpi (libphasers_mpi_fortran.a) with
#                         phasers::fortran and MPI::MPI_Fortran. COMPONENTS mpi_fortran; the
#                         project enables Fortran.
# Such an install's libphasers.a needs MPI too: ask for the mpi component, and phasers::static
# links MPI::MPI_C.
# Variables: phasers_VERSION, phasers_INCLUDE_DIR, phasers_fortran_FOUND, phasers_mpi_FOUND,
# phasers_mpi_fortran_FOUND.
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

# The MPI components: MPI is searched only when one is asked for, in the languages asked for
# (FindMPI finds a language's MPI only where the project enables that language).
set(phasers_mpi_FOUND FALSE)
set(phasers_mpi_fortran_FOUND FALSE)
set(_phasers_mpi_languages "")
if("mpi" IN_LIST phasers_FIND_COMPONENTS)
    list(APPEND _phasers_mpi_languages C)
endif()
if("mpi_fortran" IN_LIST phasers_FIND_COMPONENTS AND phasers_fortran_FOUND
        AND EXISTS "${_phasers_prefix}/lib/fortran/modules/phasers_mpi.mod"
        AND EXISTS "${_phasers_prefix}/lib/libphasers_mpi_fortran.a")
    list(APPEND _phasers_mpi_languages Fortran)
endif()
if(_phasers_mpi_languages AND EXISTS "${phasers_INCLUDE_DIR}/phasers_mpi.h")
    if(phasers_FIND_REQUIRED_mpi OR phasers_FIND_REQUIRED_mpi_fortran)
        # Not found: phasers is not found either, with find_dependency's message.
        include(CMakeFindDependencyMacro)
        find_dependency(MPI COMPONENTS ${_phasers_mpi_languages})
    else()
        # Optional components: a missing MPI leaves them not found, and phasers found.
        find_package(MPI QUIET COMPONENTS ${_phasers_mpi_languages})
    endif()
    if(MPI_C_FOUND AND "C" IN_LIST _phasers_mpi_languages)
        set(phasers_mpi_FOUND TRUE)
        if(NOT TARGET phasers::mpi)
            add_library(phasers::mpi INTERFACE IMPORTED)
            set_target_properties(phasers::mpi PROPERTIES
                INTERFACE_LINK_LIBRARIES "phasers::phasers;MPI::MPI_C")
            # This install's libphasers.a calls MPI.
            set_property(TARGET phasers::static APPEND PROPERTY
                INTERFACE_LINK_LIBRARIES MPI::MPI_C)
        endif()
    endif()
    if(MPI_Fortran_FOUND AND "Fortran" IN_LIST _phasers_mpi_languages)
        set(phasers_mpi_fortran_FOUND TRUE)
        if(NOT TARGET phasers::mpi_fortran)
            add_library(phasers::mpi_fortran STATIC IMPORTED)
            set_target_properties(phasers::mpi_fortran PROPERTIES
                IMPORTED_LOCATION "${_phasers_prefix}/lib/libphasers_mpi_fortran.a"
                IMPORTED_LINK_INTERFACE_LANGUAGES "Fortran"
                INTERFACE_INCLUDE_DIRECTORIES "${_phasers_prefix}/lib/fortran/modules"
                INTERFACE_LINK_LIBRARIES "phasers::fortran;MPI::MPI_Fortran")
        endif()
    endif()
endif()

foreach(_phasers_component IN LISTS phasers_FIND_COMPONENTS)
    if(NOT _phasers_component MATCHES "^(fortran|mpi|mpi_fortran)$")
        set(phasers_FOUND FALSE)
        set(phasers_NOT_FOUND_MESSAGE
            "phasers has no component '${_phasers_component}' (the optional components are 'fortran', 'mpi' and 'mpi_fortran')")
    elseif(NOT phasers_${_phasers_component}_FOUND
            AND phasers_FIND_REQUIRED_${_phasers_component})
        set(phasers_FOUND FALSE)
        if(_phasers_component STREQUAL "fortran")
            set(phasers_NOT_FOUND_MESSAGE
                "the phasers Fortran module is not installed under ${_phasers_prefix}: install gfortran (or set FC) and rerun scripts/install-capi.sh")
        elseif(NOT EXISTS "${phasers_INCLUDE_DIR}/phasers_mpi.h")
            set(phasers_NOT_FOUND_MESSAGE
                "phasers under ${_phasers_prefix} was installed without its MPI entry points: rerun scripts/install-capi.sh --mpi (needs MPI: scripts/setup-mpi.sh)")
        elseif(_phasers_component STREQUAL "mpi")
            set(phasers_NOT_FOUND_MESSAGE
                "the phasers component mpi needs MPI for C: enable C in project() and install MPI (FindMPI found none)")
        elseif(NOT phasers_fortran_FOUND
                OR NOT EXISTS "${_phasers_prefix}/lib/fortran/modules/phasers_mpi.mod")
            set(phasers_NOT_FOUND_MESSAGE
                "the phasers Fortran module phasers_mpi is not installed under ${_phasers_prefix}: install gfortran (or set FC) and rerun scripts/install-capi.sh --mpi")
        else()
            set(phasers_NOT_FOUND_MESSAGE
                "the phasers component mpi_fortran needs MPI for Fortran: enable Fortran in project() and install MPI's Fortran bindings (FindMPI found none)")
        endif()
    endif()
endforeach()

unset(_phasers_component)
unset(_phasers_mpi_languages)
unset(_phasers_file)
unset(_phasers_prefix)
