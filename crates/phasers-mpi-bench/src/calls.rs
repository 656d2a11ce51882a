//! One call of a collective, by a hybrid team member and by an MPI rank (the baseline), on the
//! buffers of `expect::Call`. Reductions and scans sum (`Op::Sum`, `MPI_SUM`); rooted
//! collectives use member or rank [`ROOT`].

use phasers::Op;
use phasers_mpi::mpi::collective::SystemOperation;
use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::{Communicator, CommunicatorCollectives, Root};
use phasers_mpi::HybridMember;

use crate::collective::Collective;
use crate::expect::{Call, Value, ROOT};

/// The hybrid member's call of `collective`.
pub fn hybrid<T: Value>(
    member: &mut HybridMember,
    collective: Collective,
    call: &mut Call<T>,
) -> phasers_mpi::Result<()> {
    let (input, output) = (&call.input[..], &mut call.output[..]);
    match collective {
        Collective::Barrier => member.barrier(),
        Collective::Broadcast => member.broadcast(ROOT, output),
        Collective::Reduce => member.reduce(ROOT, input, output, Op::Sum),
        Collective::Allreduce => member.allreduce(input, output, Op::Sum),
        Collective::Gather => member.gather(ROOT, input, output),
        Collective::Scatter => member.scatter(ROOT, input, output),
        Collective::Allgather => member.allgather(input, output),
        Collective::Alltoall => member.alltoall(input, output),
        Collective::ScanInclusive => member.scan_inclusive(input, output, Op::Sum),
        Collective::ScanExclusive => member.scan_exclusive(input, output, Op::Sum),
    }
}

/// The same through MPI on `comm` (rsmpi aborts the job on an MPI error, so there is nothing to
/// return).
pub fn mpi<T: Value>(comm: &SimpleCommunicator, collective: Collective, call: &mut Call<T>) {
    let (input, output) = (&call.input[..], &mut call.output[..]);
    let root = comm.process_at_rank(ROOT as i32);
    let at_root = comm.rank() as usize == ROOT;
    let sum = SystemOperation::sum();
    match collective {
        Collective::Barrier => comm.barrier(),
        Collective::Broadcast => root.broadcast_into(output),
        Collective::Reduce if at_root => root.reduce_into_root(input, output, sum),
        Collective::Reduce => root.reduce_into(input, sum),
        Collective::Allreduce => comm.all_reduce_into(input, output, sum),
        Collective::Gather if at_root => root.gather_into_root(input, output),
        Collective::Gather => root.gather_into(input),
        Collective::Scatter if at_root => root.scatter_into_root(input, output),
        Collective::Scatter => root.scatter_into(output),
        Collective::Allgather => comm.all_gather_into(input, output),
        Collective::Alltoall => comm.all_to_all_into(input, output),
        Collective::ScanInclusive => comm.scan_into(input, output, sum),
        Collective::ScanExclusive => comm.exclusive_scan_into(input, output, sum),
    }
}
