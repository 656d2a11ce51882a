#!/usr/bin/env bash
# Builds the C interface of phasers in release mode and installs it under PREFIX (default
# /usr/local): PREFIX/lib/libphasers.so and libphasers.a, PREFIX/include/phasers.h and
# PREFIX/lib/pkgconfig/phasers.pc. DESTDIR is honoured for staged installs (packaging).
#
#     scripts/install-capi.sh [PREFIX]
#     cc prog.c $(pkg-config --cflags --libs phasers)
set -euo pipefail

prefix="${1:-/usr/local}"
case "$prefix" in
    /*) ;;
    *) echo "install-capi.sh: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cargo build --release -p phasers-capi

# Cargo resolves a relative CARGO_TARGET_DIR against the directory it runs in: the workspace root.
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in
    /*) ;;
    *) target_dir="$root/$target_dir" ;;
esac
built="$target_dir/release"
for file in libphasers.so libphasers.a; do
    if [ ! -f "$built/$file" ]; then
        echo "install-capi.sh: $built/$file was not built" >&2
        exit 1
    fi
done

# `cargo pkgid` prints e.g. path+file:///.../crates/phasers-capi#phasers-capi@0.1.0
version="$(cargo pkgid -p phasers-capi)"
version="${version##*[#@]}"

dest="${DESTDIR:-}$prefix"
install -d "$dest/lib" "$dest/lib/pkgconfig" "$dest/include"
install -m 755 "$built/libphasers.so" "$dest/lib/libphasers.so"
install -m 644 "$built/libphasers.a" "$dest/lib/libphasers.a"
install -m 644 crates/phasers-capi/include/phasers.h "$dest/include/phasers.h"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" \
    crates/phasers-capi/phasers.pc.in > "$dest/lib/pkgconfig/phasers.pc"
chmod 644 "$dest/lib/pkgconfig/phasers.pc"

echo "installed phasers $version under $dest"
echo "compile with: cc prog.c \$(pkg-config --cflags --libs phasers)"
if [ "$prefix" != /usr ] && [ "$prefix" != /usr/local ]; then
    echo "(set PKG_CONFIG_PATH=$prefix/lib/pkgconfig and, for running, LD_LIBRARY_PATH=$prefix/lib or -Wl,-rpath,$prefix/lib)"
fi
