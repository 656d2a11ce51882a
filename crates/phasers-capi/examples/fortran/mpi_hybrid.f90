! An MPI program in Fortran with 2 OpenMP threads per rank, through the modules phasers and
! phasers_mpi: a process barrier on MPI_COMM_WORLD, a combined barrier across every thread of every
! rank, and a hybrid team on a communicator split from the world in reverse rank order, whose
! allreduce is checked against the program's own MPI_Allreduce. Communicators come from mpi_f08:
! the phasers_mpi calls take their Fortran handle, comm%MPI_VAL (with the mpi module, pass the
! INTEGER itself). Needs libphasers installed with `scripts/install-capi.sh --mpi`:
!
!     mpifort -fopenmp -I PREFIX/lib/fortran/modules mpi_hybrid.f90 -L PREFIX/lib \
!         -lphasers_mpi_fortran -lphasers_fortran -lphasers -Wl,-rpath,PREFIX/lib -o mpi_hybrid
!     mpirun -np 2 ./mpi_hybrid
!
! Prints "fortran mpi_hybrid ok on N ranks" on rank 0; a failure stops with error stop.
program mpi_hybrid
    use, intrinsic :: iso_c_binding, only: c_double, c_int64_t
    use mpi_f08
    use omp_lib, only: omp_get_thread_num
    use phasers
    use phasers_mpi
    implicit none
    integer, parameter :: threads = 2, rounds = 20
    type(MPI_Comm) :: reversed
    type(phasers_mpi_barrier) :: barrier
    type(phasers_mpi_combined) :: combined
    type(phasers_mpi_team) :: team
    type(phasers_mpi_member) :: members(0:threads - 1)
    integer :: provided, rank, size, reversed_rank, reversed_size, t, round, stat, failures, total
    integer :: leaders(0:threads - 1)
    integer(c_int64_t) :: episode, e
    real(c_double) :: sums(0:threads - 1), expected(2), mine(2)

    call MPI_Init_thread(MPI_THREAD_SERIALIZED, provided)
    if (provided < MPI_THREAD_SERIALIZED) error stop 'this MPI provides no MPI_THREAD_SERIALIZED'
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, size)
    failures = 0

    ! A process barrier among the ranks of the world: episodes count from 0 on every rank.
    call barrier%create(MPI_COMM_WORLD%MPI_VAL, PHASERS_MPI_ALGORITHM_DISSEMINATION)
    if (barrier%rank() /= rank .or. barrier%parties() /= size) failures = failures + 1
    do e = 0, rounds - 1
        call barrier%wait(episode)
        if (episode /= e) failures = failures + 1
    end do
    call barrier%destroy()

    ! A combined barrier of every thread of every rank: one leader per rank and episode.
    call combined%create(MPI_COMM_WORLD%MPI_VAL, threads, PHASERS_MPI_ALGORITHM_LIBRARY)
    if (combined%parties() /= size * threads) failures = failures + 1
    leaders = 0
    !$omp parallel num_threads(threads) private(round, t)
    t = omp_get_thread_num()
    do round = 1, rounds
        block
            logical :: leader
            call combined%wait(t, is_leader=leader)
            if (leader) leaders(t) = leaders(t) + 1
        end block
    end do
    !$omp end parallel
    call combined%destroy()
    if (sum(leaders) /= rounds) failures = failures + 1

    ! A hybrid team on the world split into halves, in reverse rank order: members are ranked by
    ! their rank in that communicator, then by thread.
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), size - rank, reversed)
    call MPI_Comm_rank(reversed, reversed_rank)
    call MPI_Comm_size(reversed, reversed_size)
    call team%create(reversed%MPI_VAL, threads)
    do t = 0, threads - 1
        call team%member(t, members(t))
        if (members(t)%rank() /= reversed_rank * threads + t) failures = failures + 1
    end do
    !$omp parallel num_threads(threads) private(t)
    t = omp_get_thread_num()
    block
        real(c_double) :: values(2), totals(2)
        values = [real(members(t)%rank() + 1, c_double), 1.0_c_double]
        call members(t)%allreduce(values, totals, PHASERS_OP_SUM)
        sums(t) = totals(1)
        if (nint(totals(2)) /= reversed_size * threads) sums(t) = -1
        call members(t)%barrier()
    end block
    !$omp end parallel
    ! The same sum by MPI: this rank's threads contribute their member ranks + 1.
    mine = [real(2 * reversed_rank * threads + threads + 1, c_double) * threads / 2, 0.0_c_double]
    call MPI_Allreduce(mine, expected, 2, MPI_DOUBLE_PRECISION, MPI_SUM, reversed)
    do t = 0, threads - 1
        ! Whole numbers, exact in real64: compared as integers.
        if (nint(sums(t)) /= nint(expected(1))) failures = failures + 1
        call members(t)%destroy()
    end do
    call team%destroy()

    ! A null communicator is refused (PHASERS_EINVAL), on every rank alike.
    call team%create(MPI_COMM_NULL%MPI_VAL, 1, stat=stat)
    if (stat /= PHASERS_EINVAL) failures = failures + 1
    if (index(phasers_last_error(), 'MPI_COMM_NULL') == 0) failures = failures + 1

    call MPI_Comm_free(reversed)
    call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (rank == 0) then
        if (total /= 0) then
            print '(a, i0, a)', 'fortran mpi_hybrid FAILED: ', total, ' failed checks'
        else
            print '(a, i0, a, f0.0)', 'fortran mpi_hybrid ok on ', size, &
                ' ranks: allreduce sum of rank 0''s half ', expected(1)
        end if
    end if
    call MPI_Finalize()
    if (total /= 0) error stop 'fortran mpi_hybrid failed'
end program mpi_hybrid
