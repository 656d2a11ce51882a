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
# and, when a Fortran compiler is found ($FC, else gfortran), the module built with it:
#   PREFIX/lib/fortran/modules/phasers.mod        (.mod files belong to one compiler and version,
#                                                  so they stay out of include/)
#   PREFIX/lib/libphasers_fortran.a               the module's code
# DESTDIR is honoured for staged installs (packaging); the CMake package finds its files relative
# to itself, so a staged or moved tree works as it is.
#
#     scripts/install-capi.sh [PREFIX]
#     cc prog.c $(pkg-config --cflags --libs phasers)
#
# PHASERS_CAPI_PROFILE=dev installs the debug build instead (the tests use it, to install what
# they already built); any other Cargo profile name works too.
set -euo pipefail

prefix="${1:-/usr/local}"
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
"$cargo" build "${profile_flag[@]}" -p phasers-capi

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
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" \
    "$capi/phasers.pc.in" > "$dest/lib/pkgconfig/phasers.pc"
chmod 644 "$dest/lib/pkgconfig/phasers.pc"
install -m 644 "$capi/cmake/phasersConfig.cmake" "$dest/lib/cmake/phasers/phasersConfig.cmake"
sed -e "s|@VERSION@|$version|g" "$capi/cmake/phasersConfigVersion.cmake.in" \
    > "$dest/lib/cmake/phasers/phasersConfigVersion.cmake"
chmod 644 "$dest/lib/cmake/phasers/phasersConfigVersion.cmake"
install -m 644 "$capi/fortran/phasers.f90" "$dest/share/phasers/fortran/phasers.f90"

# The Fortran module, with the first compiler found. A stale module from an earlier install
# would not match this version: remove it when there is no compiler to rebuild it.
fc="${FC:-gfortran}"
if command -v "$fc" >/dev/null 2>&1; then
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    "$fc" -O2 -fPIC -J "$scratch" -c "$capi/fortran/phasers.f90" -o "$scratch/phasers.o"
    ar rcs "$scratch/libphasers_fortran.a" "$scratch/phasers.o"
    install -d "$dest/lib/fortran/modules"
    install -m 644 "$scratch/phasers.mod" "$dest/lib/fortran/modules/phasers.mod"
    install -m 644 "$scratch/libphasers_fortran.a" "$dest/lib/libphasers_fortran.a"
    fortran="built with $fc: $prefix/lib/fortran/modules/phasers.mod, $prefix/lib/libphasers_fortran.a"
else
    rm -f "$dest/lib/fortran/modules/phasers.mod" "$dest/lib/libphasers_fortran.a"
    fortran="not built (no $fc; set FC to a Fortran compiler, or compile $prefix/share/phasers/fortran/phasers.f90 yourself)"
fi

echo "installed phasers $version under $dest"
echo "compile with: cc prog.c \$(pkg-config --cflags --libs phasers)"
echo "CMake: find_package(phasers REQUIRED), target_link_libraries(app phasers::phasers)"
echo "Fortran module: $fortran"
if [ "$prefix" != /usr ] && [ "$prefix" != /usr/local ]; then
    echo "(set PKG_CONFIG_PATH=$prefix/lib/pkgconfig, CMAKE_PREFIX_PATH=$prefix and, for running, LD_LIBRARY_PATH=$prefix/lib or -Wl,-rpath,$prefix/lib)"
fi
