#!/usr/bin/env bash
# Builds the C interface of phasers in release mode and installs it under PREFIX (default
# /usr/local):
#   PREFIX/lib/libphasers.so and libphasers.a     the library
#   PREFIX/include/phasers.h                      C (and C++) header
#   PREFIX/include/phasers.hpp                    header-only C++17 layer
#   PREFIX/lib/pkgconfig/phasers.pc               pkg-config
#   PREFIX/lib/cmake/phasers/                     CMake package: find_package(phasers), targets
#                                                 phasers::phasers, phasers::static, phasers::fortran
#   PREFIX/share/phasers/fortran/phasers.f90      the Fortran module's source
# and, when a Fortran compiler is found ($FC, else gfortran, else the newest gfortran-NN on PATH,
# as Debian's versioned packages install it), the module built with it:
#   PREFIX/lib/fortran/modules/phasers.mod        (.mod files belong to one compiler and version,
#                                                  so they stay out of include/)
#   PREFIX/lib/libphasers_fortran.a               the module's code
# DESTDIR is honoured for staged installs (packaging); the CMake package finds its files relative
# to itself, so a staged or moved tree works as it is.
#
#     scripts/install-capi.sh [--mpi] [PREFIX]
#     cc prog.c $(pkg-config --cflags --libs phasers) -Wl,-rpath,$(pkg-config --variable=libdir phasers)
#
# Into a directory the dynamic loader searches (/usr/local/lib, /usr/lib, any in /etc/ld.so.conf),
# without DESTDIR, the script runs ldconfig, so that programs find libphasers.so with or without
# an rpath. Elsewhere a program needs -Wl,-rpath,PREFIX/lib (CMake's targets add it) or
# LD_LIBRARY_PATH=PREFIX/lib.
#
# --mpi builds the library with its cargo feature `mpi` (the MPI entry points; needs Open MPI or
# MPICH, and libclang: scripts/setup-mpi.sh) and installs, besides the above:
#   PREFIX/include/phasers_mpi.h                  the MPI entry points (includes <mpi.h>)
#   PREFIX/lib/pkgconfig/phasers-mpi.pc           pkg-config: Requires phasers and MPI's own module
#                                                 (ompi-c, else mpich; PHASERS_MPI_PKG=name picks
#                                                 another); phasers.pc gets it as Requires.private,
#                                                 since this libphasers.a needs MPI
#   PREFIX/share/phasers/fortran/phasers_mpi.f90  the Fortran module phasers_mpi's source
#   PREFIX/lib/fortran/modules/phasers_mpi.mod    with a Fortran compiler: the module phasers_mpi
#   PREFIX/lib/libphasers_mpi_fortran.a           and its code
# and the CMake package offers the components mpi (target phasers::mpi: phasers::phasers with
# MPI::MPI_C, after find_dependency(MPI)) and mpi_fortran (phasers::mpi_fortran: the module
# phasers_mpi with phasers::fortran and MPI::MPI_Fortran):
#     cc prog.c $(pkg-config --cflags --libs phasers-mpi) -pthread
#     find_package(phasers REQUIRED COMPONENTS mpi)   target_link_libraries(app PRIVATE phasers::mpi)
# Without --mpi, an install removes the MPI files an earlier --mpi install left under PREFIX (the
# library it installs has no MPI entry points).
#
# PHASERS_CAPI_PROFILE=dev installs the debug build instead (the tests use it, to install what
# they already built); any other Cargo profile name works too.
set -euo pipefail

usage() {
    # The comment block above, without its '#'.
    sed -n '2,/^set -euo pipefail/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

mpi=0
prefix=
while [ $# -gt 0 ]; do
    case "$1" in
        --mpi) mpi=1 ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "install-capi.sh: unknown option '$1' (the options are --mpi and --help)" >&2; exit 2 ;;
        *)
            if [ -n "$prefix" ]; then
                echo "install-capi.sh: one PREFIX only, got '$prefix' and '$1'" >&2
                exit 2
            fi
            prefix="$1"
            ;;
    esac
    shift
done
prefix="${prefix:-/usr/local}"
case "$prefix" in
    /*) ;;
    *) echo "install-capi.sh: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cargo="${CARGO:-cargo}"
profile="${PHASERS_CAPI_PROFILE:-release}"
case "$profile" in
    dev | debug) profile_flag=(--profile dev); profile_dir=debug ;;
    *) profile_flag=(--profile "$profile"); profile_dir="$profile" ;;
esac
features=()
if [ "$mpi" = 1 ]; then
    features=(--features mpi)
    # MPI's pkg-config module, for phasers-mpi.pc's Requires: checked before the build, so that a
    # wrong PHASERS_MPI_PKG fails at once.
    mpi_pc=
    if ! command -v pkg-config >/dev/null 2>&1; then
        mpi_pc_missing="pkg-config is not installed (apt-get install pkg-config)"
    elif [ -n "${PHASERS_MPI_PKG:-}" ]; then
        if ! pkg-config --exists "$PHASERS_MPI_PKG" 2>/dev/null; then
            echo "install-capi.sh: PHASERS_MPI_PKG=$PHASERS_MPI_PKG is not a pkg-config module here (pkg-config --exists fails); set it to MPI's module (ompi-c, mpich), or unset it" >&2
            exit 2
        fi
        mpi_pc="$PHASERS_MPI_PKG"
    else
        for candidate in ompi-c mpich; do
            if pkg-config --exists "$candidate" 2>/dev/null; then
                mpi_pc="$candidate"
                break
            fi
        done
        mpi_pc_missing="pkg-config knows neither ompi-c nor mpich (set PHASERS_MPI_PKG to MPI's pkg-config module and rerun)"
    fi
fi

# The Fortran compiler for the module, found before the build so that a wrong FC fails at once.
# tests/support/tools.rs looks in the same order, so that the tests build with this compiler.
fc=
if [ -n "${FC:-}" ]; then
    if ! command -v "$FC" >/dev/null 2>&1; then
        echo "install-capi.sh: FC=$FC is not a command on PATH; set FC to your Fortran compiler, or unset it to look for gfortran" >&2
        exit 2
    fi
    fc="$FC"
elif command -v gfortran >/dev/null 2>&1; then
    fc=gfortran
else
    # Debian's gfortran-12 package installs gfortran-12 alone; `gfortran` comes with the package
    # gfortran. The newest version wins.
    fc="$(compgen -c gfortran- | grep -E '^gfortran-[0-9]+$' | sort -u -t- -k2,2nr | head -n 1 || true)"
fi

"$cargo" build "${profile_flag[@]}" -p phasers-capi "${features[@]}"

# Cargo resolves a relative CARGO_TARGET_DIR against the directory it runs in: the workspace root.
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in
    /*) ;;
    *) target_dir="$root/$target_dir" ;;
esac
built="$target_dir/$profile_dir"
for file in libphasers.so libphasers.a; do
    if [ ! -f "$built/$file" ]; then
        echo "install-capi.sh: $built/$file was not built" >&2
        exit 1
    fi
done

# `cargo pkgid` prints e.g. path+file:///.../crates/phasers-capi#phasers-capi@0.1.0
version="$("$cargo" pkgid -p phasers-capi)"
version="${version##*[#@]}"

capi=crates/phasers-capi
dest="${DESTDIR:-}$prefix"
install -d "$dest/lib" "$dest/lib/pkgconfig" "$dest/include" "$dest/lib/cmake/phasers" \
    "$dest/share/phasers/fortran"
install -m 755 "$built/libphasers.so" "$dest/lib/libphasers.so"
install -m 644 "$built/libphasers.a" "$dest/lib/libphasers.a"
install -m 644 "$capi/include/phasers.h" "$dest/include/phasers.h"
install -m 644 "$capi/include/phasers.hpp" "$dest/include/phasers.hpp"
# An MPI build's libphasers.a needs MPI's library: `pkg-config --static` adds it.
pc_mpi=()
if [ "$mpi" = 1 ] && [ -n "$mpi_pc" ]; then
    pc_mpi=(-e "/^Libs.private:/a Requires.private: $mpi_pc")
fi
# The substitutions skip comment lines: the file's own comment names the placeholders.
sed -e "/^#/!s|@PREFIX@|$prefix|g" -e "/^#/!s|@VERSION@|$version|g" "${pc_mpi[@]}" \
    "$capi/phasers.pc.in" > "$dest/lib/pkgconfig/phasers.pc"
chmod 644 "$dest/lib/pkgconfig/phasers.pc"
install -m 644 "$capi/cmake/phasersConfig.cmake" "$dest/lib/cmake/phasers/phasersConfig.cmake"
sed -e "s|@VERSION@|$version|g" "$capi/cmake/phasersConfigVersion.cmake.in" \
    > "$dest/lib/cmake/phasers/phasersConfigVersion.cmake"
chmod 644 "$dest/lib/cmake/phasers/phasersConfigVersion.cmake"
install -m 644 "$capi/fortran/phasers.f90" "$dest/share/phasers/fortran/phasers.f90"

mpi_files=(include/phasers_mpi.h lib/pkgconfig/phasers-mpi.pc share/phasers/fortran/phasers_mpi.f90
    lib/fortran/modules/phasers_mpi.mod lib/libphasers_mpi_fortran.a)
if [ "$mpi" = 1 ]; then
    install -m 644 "$capi/include/phasers_mpi.h" "$dest/include/phasers_mpi.h"
    install -m 644 "$capi/fortran/phasers_mpi.f90" "$dest/share/phasers/fortran/phasers_mpi.f90"
    if [ -n "$mpi_pc" ]; then
        sed -e "/^#/!s|@PREFIX@|$prefix|g" -e "/^#/!s|@VERSION@|$version|g" \
            -e "/^#/!s|@MPI_PC@|$mpi_pc|g" \
            "$capi/phasers-mpi.pc.in" > "$dest/lib/pkgconfig/phasers-mpi.pc"
        chmod 644 "$dest/lib/pkgconfig/phasers-mpi.pc"
        mpi_pkgconfig="$prefix/lib/pkgconfig/phasers-mpi.pc (Requires: phasers, $mpi_pc)"
    else
        # Without MPI's module a phasers-mpi.pc could not bring MPI in: better none than one
        # that compiles nothing.
        rm -f "$dest/lib/pkgconfig/phasers-mpi.pc"
        mpi_pkgconfig="not installed: $mpi_pc_missing; compile with mpicc meanwhile"
        echo "install-capi.sh: phasers-mpi.pc $mpi_pkgconfig" >&2
    fi
else
    # A library without the MPI entry points: the MPI files of an earlier --mpi install would
    # declare functions it lacks.
    for file in "${mpi_files[@]}"; do
        rm -f "$dest/$file"
    done
fi

# The Fortran module, built with the compiler found above. A stale module from an earlier install
# would not match this version: remove it when there is no compiler to rebuild it.
if [ -n "$fc" ]; then
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    "$fc" -O2 -fPIC -J "$scratch" -c "$capi/fortran/phasers.f90" -o "$scratch/phasers.o"
    ar rcs "$scratch/libphasers_fortran.a" "$scratch/phasers.o"
    install -d "$dest/lib/fortran/modules"
    install -m 644 "$scratch/phasers.mod" "$dest/lib/fortran/modules/phasers.mod"
    install -m 644 "$scratch/libphasers_fortran.a" "$dest/lib/libphasers_fortran.a"
    fortran="built with $fc: $prefix/lib/fortran/modules/phasers.mod, $prefix/lib/libphasers_fortran.a"
    if [ "$mpi" = 1 ]; then
        # It uses the module phasers, just written to $scratch; it needs no MPI module itself.
        "$fc" -O2 -fPIC -J "$scratch" -I "$scratch" -c "$capi/fortran/phasers_mpi.f90" \
            -o "$scratch/phasers_mpi.o"
        ar rcs "$scratch/libphasers_mpi_fortran.a" "$scratch/phasers_mpi.o"
        install -m 644 "$scratch/phasers_mpi.mod" "$dest/lib/fortran/modules/phasers_mpi.mod"
        install -m 644 "$scratch/libphasers_mpi_fortran.a" "$dest/lib/libphasers_mpi_fortran.a"
        fortran="$fortran, $prefix/lib/fortran/modules/phasers_mpi.mod, $prefix/lib/libphasers_mpi_fortran.a"
    fi
else
    rm -f "$dest/lib/fortran/modules/phasers.mod" "$dest/lib/libphasers_fortran.a" \
        "$dest/lib/fortran/modules/phasers_mpi.mod" "$dest/lib/libphasers_mpi_fortran.a"
    fortran="not built (no Fortran compiler: neither gfortran nor gfortran-NN is on PATH; apt-get install gfortran, or set FC to your compiler, and rerun; or compile $prefix/share/phasers/fortran/phasers.f90 yourself)"
    if [ "$mpi" = 1 ]; then
        fortran="$fortran; nor phasers_mpi.f90, which uses it"
    fi
fi

# The dynamic loader's directories, as ldconfig lists them (/etc/ld.so.conf's, then the built-in
# ones; -N -X: list only, change nothing), resolved: on a merged /usr it lists /lib for /usr/lib.
# /sbin is not on a user's PATH on Debian.
ldconfig_cmd="$(command -v ldconfig || echo /sbin/ldconfig)"
loader_dirs() {
    "$ldconfig_cmd" -v -N -X 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p' | while read -r dir; do
        realpath -m "$dir"
    done
}
libdir_resolved="$(realpath -m "$prefix/lib")"
if [ -z "${DESTDIR:-}" ] && [ -x "$ldconfig_cmd" ] \
    && loader_dirs | grep -xF "$libdir_resolved" >/dev/null; then
    # A system prefix: without a fresh cache, a program linked without an rpath would not start
    # (libphasers.so: cannot open shared object file) until someone ran ldconfig.
    if "$ldconfig_cmd"; then
        loader="$prefix/lib is a directory the loader searches, and ldconfig ran: programs find libphasers.so"
    else
        loader="ldconfig failed: as root, run ldconfig, or programs linked without -Wl,-rpath,$prefix/lib will not find libphasers.so"
        echo "install-capi.sh: $loader" >&2
    fi
elif [ -n "${DESTDIR:-}" ]; then
    loader="staged under DESTDIR, so no ldconfig here: where $prefix/lib is a directory the loader searches, run ldconfig after installing the files there"
else
    loader="$prefix/lib is not a directory the loader searches: link with -Wl,-rpath,$prefix/lib (CMake's targets do), or run with LD_LIBRARY_PATH=$prefix/lib"
fi

echo "installed phasers $version under $dest"
echo "compile with: cc prog.c \$(pkg-config --cflags --libs phasers) -Wl,-rpath,\$(pkg-config --variable=libdir phasers)"
echo "run: $loader"
echo "CMake: find_package(phasers REQUIRED), target_link_libraries(app phasers::phasers)"
echo "Fortran module: $fortran"
if [ "$mpi" = 1 ]; then
    echo "MPI (feature mpi): $prefix/include/phasers_mpi.h; pkg-config: $mpi_pkgconfig"
    if [ -n "$mpi_pc" ]; then
        echo "compile with: cc prog.c \$(pkg-config --cflags --libs phasers-mpi) -Wl,-rpath,\$(pkg-config --variable=libdir phasers) -pthread"
    fi
    echo "CMake: find_package(phasers REQUIRED COMPONENTS mpi), target_link_libraries(app phasers::mpi)"
fi
if [ "$prefix" != /usr ] && [ "$prefix" != /usr/local ]; then
    echo "(set PKG_CONFIG_PATH=$prefix/lib/pkgconfig and CMAKE_PREFIX_PATH=$prefix so that pkg-config and CMake find it)"
fi
if [ -n "$fc" ] && [ "$fc" != gfortran ]; then
    echo "(Fortran: compile with $fc, which wrote phasers.mod: export FC=$fc, which CMake also reads)"
fi
