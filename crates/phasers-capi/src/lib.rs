//! The C ABI of phasers: `libphasers.so` and `libphasers.a`, declared by `include/phasers.h`.
//!
//! Every function returns `PHASERS_OK` (0) or a positive `PHASERS_E*` code, and writes its results
//! through pointers; `phasers_last_error` gives the full message of a thread's last failure.
//! Objects are reached through handles (see [`handle`]) that every call checks, and no panic
//! unwinds into C: every entry point runs inside `catch_unwind`. The header is the C user's
//! reference; this crate's docs say how it works inside. See README.md for building and linking.
//!
//! The cargo feature `mpi` adds the entry points of `include/phasers_mpi.h` (module [`mpi`]):
//! `phasers-mpi`'s objects built from an `MPI_Comm`.

pub mod accumulator;
pub mod barrier;
pub mod barrier_object;
mod c_words;
mod collective_args;
pub mod collectives;
mod entry;
pub mod enums;
pub mod handle;
pub mod last_error;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod phaser;
pub mod reduction;
pub mod registration;
pub mod request;
pub mod status;
pub mod team;

/// Handles are shared between C threads with no help from Rust's type system: every object
/// behind one must be safe to use from any thread.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<barrier_object::BarrierObject>();
    shareable::<phasers_core::Phaser>();
    shareable::<registration::RegistrationObject>();
    shareable::<accumulator::AnyAccumulator>();
    shareable::<reduction::ReductionObject>();
    shareable::<team::TeamObject>();
    shareable::<team::MemberObject>();
    shareable::<request::RequestObject>();
};

/// The same for the MPI objects.
#[cfg(feature = "mpi")]
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<mpi::barrier::MpiBarrierObject>();
    shareable::<mpi::combined::MpiCombinedObject>();
    shareable::<mpi::team::MpiTeamObject>();
    shareable::<mpi::team::MpiMemberObject>();
};

#[cfg(test)]
mod c_message_audit;
#[cfg(test)]
mod header_values;
