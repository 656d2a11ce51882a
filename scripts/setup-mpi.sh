#!/usr/bin/env bash
# Installs what the MPI crate (crates/phasers-mpi) needs from Debian packages: Open MPI (mpirun and
# the headers and libraries rsmpi links) and libclang for rsmpi's bindgen. Idempotent: when every
# package and command is already there it installs nothing. Needs root, or sudo.
set -euo pipefail

PACKAGES=(openmpi-bin libopenmpi-dev libclang-dev clang pkg-config)
# Commands the build and the tests run; a package can be installed while its command is not on
# PATH (a broken install), so both are checked.
COMMANDS=(mpirun mpicc clang pkg-config)

missing=()
for package in "${PACKAGES[@]}"; do
    if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed'; then
        missing+=("$package")
    fi
done
for command in "${COMMANDS[@]}"; do
    if ! command -v "$command" >/dev/null 2>&1; then
        missing+=("(command $command)")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup-mpi: every package is installed (${PACKAGES[*]}); nothing to do"
else
    echo "setup-mpi: missing: ${missing[*]}; installing ${PACKAGES[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        echo "setup-mpi: installing packages needs root or sudo; run as root, or install: ${PACKAGES[*]}" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${PACKAGES[@]}"
    echo "setup-mpi: installed ${PACKAGES[*]}"
fi

mpirun --version | head -n 1
