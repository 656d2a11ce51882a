! phasers_mpi.f90: the Fortran 2008 interface to the MPI entry points of libphasers (the C
! interface's cargo feature `mpi`, include/phasers_mpi.h, which documents every call), through
! iso_c_binding: process barriers, combined barriers across every thread of every rank, and hybrid
! teams with their barrier and allreduce, built on an MPI communicator the program already has.
!
! Build: it uses the module phasers (fortran/phasers.f90), so compile that first, with the same
! compiler (a .mod file is specific to one compiler and version); this module itself needs no MPI
! module to compile. The program links libphasers built with `--features mpi`, and MPI:
!
!     gfortran -std=f2008 -c phasers.f90 phasers_mpi.f90     # phasers.mod, phasers_mpi.mod
!     mpifort prog.f90 phasers_mpi.o phasers.o -L$PREFIX/lib -lphasers -o prog
!
! `scripts/install-capi.sh --mpi` does this with gfortran when it is installed: PREFIX/lib/fortran/
! modules/phasers_mpi.mod, PREFIX/lib/libphasers_mpi_fortran.a (the module's code), the source in
! PREFIX/share/phasers/fortran/; in CMake, link phasers::mpi_fortran.
!
! Communicators: every create takes `comm`, the communicator's Fortran handle: an INTEGER from the
! mpi module (MPI_COMM_WORLD, or one MPI_Comm_split or MPI_Comm_dup returned), or comm%MPI_VAL of a
! type(MPI_Comm) from mpi_f08. The C library converts it with MPI_Comm_f2c. It must name a
! communicator MPI returned and has not freed; MPI_COMM_NULL gives PHASERS_EINVAL, and so does any
! other integer under Open MPI (whose MPI_Comm_f2c maps it to a null handle). Under MPICH an
! invalid integer becomes an invalid communicator, which is MPI's error (by default MPI aborts).
! Create is collective over comm, duplicates it and never frees it: the program may free comm as
! soon as create returns.
!
! MPI is the program's: it calls MPI_Init_thread first (MPI_THREAD_SERIALIZED or better for more
! than one thread per rank) and MPI_Finalize after the last destroy; a create before or after gives
! PHASERS_EINVAL. Under MPI_THREAD_SERIALIZED the program must not call MPI while another of its
! threads is inside a phasers_mpi call.
!
! Conventions are those of the module phasers: derived types holding the C handle, every operation
! a subroutine named after the C function and a type-bound procedure (call barrier%wait()), an
! optional `stat` (without it a failure writes "phasers: <C function>: <message>" to error_unit and
! stops with error stop), threads and ranks counted from 0, timeouts in seconds (real(c_double)),
! episodes integer(c_int64_t), no finalization (call destroy). The status codes, PHASERS_TYPE_*,
! PHASERS_OP_* and phasers_last_error() come from `use phasers`.
module phasers_mpi
    use, intrinsic :: iso_c_binding, only: c_double, c_float, c_int, c_int32_t, c_int64_t, c_loc, &
        c_null_ptr, c_ptr, c_size_t
    use, intrinsic :: iso_fortran_env, only: error_unit
    use phasers, only: PHASERS_OK, PHASERS_EINVAL, PHASERS_TYPE_F64, PHASERS_TYPE_F32, &
        PHASERS_TYPE_I32, PHASERS_TYPE_I64, phasers_last_error
    implicit none
    private

    ! How the ranks of a communicator meet (phasers_mpi.h).
    integer, parameter, public :: PHASERS_MPI_ALGORITHM_DISSEMINATION = 0, &
        PHASERS_MPI_ALGORITHM_MCS_TREE = 1, PHASERS_MPI_ALGORITHM_LIBRARY = 2, &
        PHASERS_MPI_ALGORITHM_NODE_SHM = 3, PHASERS_MPI_ALGORITHM_AUTO = 4

    ! This rank's side of a barrier among the ranks of a communicator; one thread at a time uses it.
    type, public :: phasers_mpi_barrier
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: create => phasers_mpi_barrier_create
        procedure :: rank => phasers_mpi_barrier_rank
        procedure :: parties => phasers_mpi_barrier_parties
        procedure :: wait => phasers_mpi_barrier_wait
        procedure :: wait_timeout => phasers_mpi_barrier_wait_timeout
        procedure :: destroy => phasers_mpi_barrier_destroy
    end type phasers_mpi_barrier

    ! This rank's side of a barrier across every thread of every rank; each thread waits with its
    ! own number, 0 to this rank's count - 1 (omp_get_thread_num()).
    type, public :: phasers_mpi_combined
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: create => phasers_mpi_combined_create
        procedure :: parties => phasers_mpi_combined_parties
        procedure :: wait => phasers_mpi_combined_wait
        procedure :: wait_timeout => phasers_mpi_combined_wait_timeout
        procedure :: destroy => phasers_mpi_combined_destroy
    end type phasers_mpi_combined

    ! A team of every thread of every rank; it hands out this rank's members, one per thread.
    type, public :: phasers_mpi_team
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: create => phasers_mpi_team_create
        procedure :: parties => phasers_mpi_team_parties
        procedure :: member => phasers_mpi_team_member
        procedure :: destroy => phasers_mpi_team_destroy
    end type phasers_mpi_team

    ! One thread's member of a hybrid team, used by one thread at a time. Destroying it while the
    ! others still need it breaks the team for them (PHASERS_EBROKEN).
    type, public :: phasers_mpi_member
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: rank => phasers_mpi_member_rank
        procedure :: parties => phasers_mpi_member_parties
        procedure :: barrier => phasers_mpi_member_barrier
        procedure :: destroy => phasers_mpi_member_destroy
        procedure, private :: member_allreduce_f64_0, member_allreduce_f64_1, &
            member_allreduce_f32_0, member_allreduce_f32_1, member_allreduce_i32_0, &
            member_allreduce_i32_1, member_allreduce_i64_0, member_allreduce_i64_1
        generic :: allreduce => member_allreduce_f64_0, member_allreduce_f64_1, &
            member_allreduce_f32_0, member_allreduce_f32_1, member_allreduce_i32_0, &
            member_allreduce_i32_1, member_allreduce_i64_0, member_allreduce_i64_1
    end type phasers_mpi_member

    ! The allreduce under its C name, resolved by the kind and rank of the arrays.
    interface phasers_mpi_member_allreduce
        module procedure member_allreduce_f64_0, member_allreduce_f64_1, &
            member_allreduce_f32_0, member_allreduce_f32_1, member_allreduce_i32_0, &
            member_allreduce_i32_1, member_allreduce_i64_0, member_allreduce_i64_1
    end interface phasers_mpi_member_allreduce

    public :: phasers_mpi_barrier_create, phasers_mpi_barrier_rank, phasers_mpi_barrier_parties, &
        phasers_mpi_barrier_wait, phasers_mpi_barrier_wait_timeout, phasers_mpi_barrier_destroy
    public :: phasers_mpi_combined_create, phasers_mpi_combined_parties, &
        phasers_mpi_combined_wait, phasers_mpi_combined_wait_timeout, phasers_mpi_combined_destroy
    public :: phasers_mpi_team_create, phasers_mpi_team_parties, phasers_mpi_team_member, &
        phasers_mpi_team_destroy, phasers_mpi_member_rank, phasers_mpi_member_parties, &
        phasers_mpi_member_barrier, phasers_mpi_member_allreduce, phasers_mpi_member_destroy

    ! phasers_wait_result
    type, bind(c) :: c_wait_result
        integer(c_int64_t) :: episode
        integer(c_int) :: is_leader
    end type c_wait_result

    ! The C functions (phasers_mpi.h). The communicator is an MPI_Fint, a C int in Open MPI and
    ! MPICH, as the default INTEGER of MPI's Fortran bindings is; uint64_t is integer(c_int64_t),
    ! the same bits.
    interface
        function c_barrier_create(comm, algorithm, out) &
                bind(c, name='phasers_mpi_barrier_create_fcomm') result(code)
            import :: c_int, c_ptr
            integer(c_int), value :: comm, algorithm
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_barrier_create
        function c_barrier_rank(barrier, out) bind(c, name='phasers_mpi_barrier_rank') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: barrier
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_barrier_rank
        function c_barrier_parties(barrier, out) bind(c, name='phasers_mpi_barrier_parties') &
                result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: barrier
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_barrier_parties
        function c_barrier_wait(barrier, episode) bind(c, name='phasers_mpi_barrier_wait') &
                result(code)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: barrier
            integer(c_int64_t), intent(out) :: episode
            integer(c_int) :: code
        end function c_barrier_wait
        function c_barrier_timedwait(barrier, timeout_ns, episode) &
                bind(c, name='phasers_mpi_barrier_timedwait') result(code)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: barrier
            integer(c_int64_t), value :: timeout_ns
            integer(c_int64_t), intent(out) :: episode
            integer(c_int) :: code
        end function c_barrier_timedwait
        function c_barrier_destroy(barrier) bind(c, name='phasers_mpi_barrier_destroy') &
                result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: barrier
            integer(c_int) :: code
        end function c_barrier_destroy

        function c_combined_create(comm, threads, process_algorithm, out) &
                bind(c, name='phasers_mpi_combined_create_fcomm') result(code)
            import :: c_int, c_ptr, c_size_t
            integer(c_int), value :: comm
            integer(c_size_t), value :: threads
            integer(c_int), value :: process_algorithm
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_combined_create
        function c_combined_parties(barrier, out) bind(c, name='phasers_mpi_combined_parties') &
                result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: barrier
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_combined_parties
        function c_combined_wait(barrier, thread, out) bind(c, name='phasers_mpi_combined_wait') &
                result(code)
            import :: c_int, c_ptr, c_size_t, c_wait_result
            type(c_ptr), value :: barrier
            integer(c_size_t), value :: thread
            type(c_wait_result), intent(out) :: out
            integer(c_int) :: code
        end function c_combined_wait
        function c_combined_timedwait(barrier, thread, timeout_ns, out) &
                bind(c, name='phasers_mpi_combined_timedwait') result(code)
            import :: c_int, c_int64_t, c_ptr, c_size_t, c_wait_result
            type(c_ptr), value :: barrier
            integer(c_size_t), value :: thread
            integer(c_int64_t), value :: timeout_ns
            type(c_wait_result), intent(out) :: out
            integer(c_int) :: code
        end function c_combined_timedwait
        function c_combined_destroy(barrier) bind(c, name='phasers_mpi_combined_destroy') &
                result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: barrier
            integer(c_int) :: code
        end function c_combined_destroy

        function c_team_create(comm, threads, checked, out) &
                bind(c, name='phasers_mpi_team_create_fcomm') result(code)
            import :: c_int, c_ptr, c_size_t
            integer(c_int), value :: comm
            integer(c_size_t), value :: threads
            integer(c_int), value :: checked
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_team_create
        function c_team_parties(team, out) bind(c, name='phasers_mpi_team_parties') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: team
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_team_parties
        function c_team_member(team, thread, out) bind(c, name='phasers_mpi_team_member') &
                result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: team
            integer(c_size_t), value :: thread
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_team_member
        function c_team_destroy(team) bind(c, name='phasers_mpi_team_destroy') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: team
            integer(c_int) :: code
        end function c_team_destroy
        function c_member_rank(member, out) bind(c, name='phasers_mpi_member_rank') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: member
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_member_rank
        function c_member_parties(member, out) bind(c, name='phasers_mpi_member_parties') &
                result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: member
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_member_parties
        function c_member_barrier(member) bind(c, name='phasers_mpi_member_barrier') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: member
            integer(c_int) :: code
        end function c_member_barrier
        function c_member_allreduce(member, type, op, input, output, count) &
                bind(c, name='phasers_mpi_member_allreduce') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: member
            integer(c_int), value :: type, op
            type(c_ptr), value :: input, output
            integer(c_size_t), value :: count
            integer(c_int) :: code
        end function c_member_allreduce
        function c_member_destroy(member) bind(c, name='phasers_mpi_member_destroy') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: member
            integer(c_int) :: code
        end function c_member_destroy
    end interface

contains

    ! Hands `code` to the caller's stat, or stops the program on a failure when there is none (as
    ! the module phasers does; its helper is private to it).
    subroutine check(code, function, stat)
        integer(c_int), intent(in) :: code
        character(len=*), intent(in) :: function
        integer, intent(out), optional :: stat
        if (present(stat)) then
            stat = int(code)
        else if (code /= PHASERS_OK) then
            write (error_unit, '(a)') 'phasers: ' // function // ': ' // phasers_last_error()
            flush (error_unit)
            error stop 'phasers: a call failed (message above); pass stat= to handle errors'
        end if
    end subroutine check

    ! A failure found here (sizes): PHASERS_EINVAL, with `why` written when there is no stat.
    subroutine refuse(function, why, stat)
        character(len=*), intent(in) :: function, why
        integer, intent(out), optional :: stat
        if (present(stat)) then
            stat = PHASERS_EINVAL
        else
            write (error_unit, '(a)') 'phasers: ' // function // ': ' // why
            flush (error_unit)
            error stop 'phasers: a call failed (message above); pass stat= to handle errors'
        end if
    end subroutine refuse

    ! Seconds as the C timeouts' nanoseconds: not positive is 0, beyond 292 years is 2^63 - 1.
    pure function to_ns(seconds) result(ns)
        real(c_double), intent(in) :: seconds
        integer(c_int64_t) :: ns
        if (.not. (seconds > 0.0_c_double)) then
            ns = 0
        else if (seconds >= 9.2e9_c_double) then
            ns = huge(ns)
        else
            ns = int(seconds * 1.0e9_c_double, c_int64_t)
        end if
    end function to_ns

    ! ---- process barriers ------------------------------------------------------------------------

    ! Collective over comm: this rank's side of a barrier among its ranks; `algorithm`
    ! (PHASERS_MPI_ALGORITHM_*) defaults to PHASERS_MPI_ALGORITHM_AUTO.
    subroutine phasers_mpi_barrier_create(barrier, comm, algorithm, stat)
        class(phasers_mpi_barrier), intent(out) :: barrier
        integer, intent(in) :: comm
        integer, intent(in), optional :: algorithm
        integer, intent(out), optional :: stat
        integer(c_int) :: which
        which = PHASERS_MPI_ALGORITHM_AUTO
        if (present(algorithm)) which = int(algorithm, c_int)
        call check(c_barrier_create(int(comm, c_int), which, barrier%handle), &
            'phasers_mpi_barrier_create_fcomm', stat)
    end subroutine phasers_mpi_barrier_create

    ! This rank's rank in comm.
    function phasers_mpi_barrier_rank(barrier) result(rank)
        class(phasers_mpi_barrier), intent(in) :: barrier
        integer :: rank
        integer(c_size_t) :: n
        n = 0
        call check(c_barrier_rank(barrier%handle, n), 'phasers_mpi_barrier_rank')
        rank = int(n)
    end function phasers_mpi_barrier_rank

    ! The number of ranks of comm.
    function phasers_mpi_barrier_parties(barrier) result(parties)
        class(phasers_mpi_barrier), intent(in) :: barrier
        integer :: parties
        integer(c_size_t) :: n
        n = 0
        call check(c_barrier_parties(barrier%handle, n), 'phasers_mpi_barrier_parties')
        parties = int(n)
    end function phasers_mpi_barrier_parties

    ! Waits until every rank has arrived; `episode`: the one that completed, from 0.
    subroutine phasers_mpi_barrier_wait(barrier, episode, stat)
        class(phasers_mpi_barrier), intent(in) :: barrier
        integer(c_int64_t), intent(out), optional :: episode
        integer, intent(out), optional :: stat
        integer(c_int64_t) :: completed
        completed = -1
        call check(c_barrier_wait(barrier%handle, completed), 'phasers_mpi_barrier_wait', stat)
        if (present(episode)) episode = completed
    end subroutine phasers_mpi_barrier_wait

    ! As phasers_mpi_barrier_wait, giving up after `timeout` seconds with PHASERS_ETIMEDOUT; the
    ! arrival stays, so waiting again completes the same episode.
    subroutine phasers_mpi_barrier_wait_timeout(barrier, timeout, episode, stat)
        class(phasers_mpi_barrier), intent(in) :: barrier
        real(c_double), intent(in) :: timeout
        integer(c_int64_t), intent(out), optional :: episode
        integer, intent(out), optional :: stat
        integer(c_int64_t) :: completed
        completed = -1
        call check(c_barrier_timedwait(barrier%handle, to_ns(timeout), completed), &
            'phasers_mpi_barrier_timedwait', stat)
        if (present(episode)) episode = completed
    end subroutine phasers_mpi_barrier_wait_timeout

    ! Destroys this rank's side (PHASERS_EBUSY while a thread waits on it).
    subroutine phasers_mpi_barrier_destroy(barrier, stat)
        class(phasers_mpi_barrier), intent(inout) :: barrier
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_barrier_destroy(barrier%handle)
        if (code == PHASERS_OK) barrier%handle = c_null_ptr
        call check(code, 'phasers_mpi_barrier_destroy', stat)
    end subroutine phasers_mpi_barrier_destroy

    ! ---- combined barriers -----------------------------------------------------------------------

    ! Collective over comm: this rank's side of a barrier of `threads` threads here (each rank
    ! passes its own count) and every thread of the other ranks; the process step runs
    ! `process_algorithm`, default PHASERS_MPI_ALGORITHM_AUTO.
    subroutine phasers_mpi_combined_create(barrier, comm, threads, process_algorithm, stat)
        class(phasers_mpi_combined), intent(out) :: barrier
        integer, intent(in) :: comm, threads
        integer, intent(in), optional :: process_algorithm
        integer, intent(out), optional :: stat
        integer(c_int) :: which
        if (threads < 0) then
            call refuse('phasers_mpi_combined_create_fcomm', &
                'threads is negative: pass this rank''s number of threads, 1 or more', stat)
            return
        end if
        which = PHASERS_MPI_ALGORITHM_AUTO
        if (present(process_algorithm)) which = int(process_algorithm, c_int)
        call check(c_combined_create(int(comm, c_int), int(threads, c_size_t), which, &
            barrier%handle), 'phasers_mpi_combined_create_fcomm', stat)
    end subroutine phasers_mpi_combined_create

    ! The number of threads over every rank.
    function phasers_mpi_combined_parties(barrier) result(parties)
        class(phasers_mpi_combined), intent(in) :: barrier
        integer :: parties
        integer(c_size_t) :: n
        n = 0
        call check(c_combined_parties(barrier%handle, n), 'phasers_mpi_combined_parties')
        parties = int(n)
    end function phasers_mpi_combined_parties

    ! Arrives as `thread` and waits for every thread of every rank. is_leader: one thread per rank
    ! and episode, the one that ran the process step.
    subroutine phasers_mpi_combined_wait(barrier, thread, is_leader, episode, stat)
        class(phasers_mpi_combined), intent(in) :: barrier
        integer, intent(in) :: thread
        logical, intent(out), optional :: is_leader
        integer(c_int64_t), intent(out), optional :: episode
        integer, intent(out), optional :: stat
        type(c_wait_result) :: result
        if (thread < 0) then
            call refuse('phasers_mpi_combined_wait', &
                'thread is negative: threads count from 0 (omp_get_thread_num())', stat)
            return
        end if
        result = c_wait_result(-1, 0)
        call check(c_combined_wait(barrier%handle, int(thread, c_size_t), result), &
            'phasers_mpi_combined_wait', stat)
        if (present(is_leader)) is_leader = result%is_leader /= 0
        if (present(episode)) episode = result%episode
    end subroutine phasers_mpi_combined_wait

    ! As phasers_mpi_combined_wait, giving up after `timeout` seconds with PHASERS_ETIMEDOUT; the
    ! arrival stays.
    subroutine phasers_mpi_combined_wait_timeout(barrier, thread, timeout, is_leader, episode, stat)
        class(phasers_mpi_combined), intent(in) :: barrier
        integer, intent(in) :: thread
        real(c_double), intent(in) :: timeout
        logical, intent(out), optional :: is_leader
        integer(c_int64_t), intent(out), optional :: episode
        integer, intent(out), optional :: stat
        type(c_wait_result) :: result
        if (thread < 0) then
            call refuse('phasers_mpi_combined_timedwait', &
                'thread is negative: threads count from 0 (omp_get_thread_num())', stat)
            return
        end if
        result = c_wait_result(-1, 0)
        call check(c_combined_timedwait(barrier%handle, int(thread, c_size_t), to_ns(timeout), &
            result), 'phasers_mpi_combined_timedwait', stat)
        if (present(is_leader)) is_leader = result%is_leader /= 0
        if (present(episode)) episode = result%episode
    end subroutine phasers_mpi_combined_wait_timeout

    ! Destroys this rank's side, after joining the threads (PHASERS_EBUSY while one waits).
    subroutine phasers_mpi_combined_destroy(barrier, stat)
        class(phasers_mpi_combined), intent(inout) :: barrier
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_combined_destroy(barrier%handle)
        if (code == PHASERS_OK) barrier%handle = c_null_ptr
        call check(code, 'phasers_mpi_combined_destroy', stat)
    end subroutine phasers_mpi_combined_destroy

    ! ---- hybrid teams ----------------------------------------------------------------------------

    ! Collective over comm: a team of `threads` members here (each rank passes its own count) and
    ! every member of the other ranks; `checked` (default .true.) makes calls that differ between
    ! members fail with PHASERS_EMISMATCH on every member instead of hanging.
    subroutine phasers_mpi_team_create(team, comm, threads, checked, stat)
        class(phasers_mpi_team), intent(out) :: team
        integer, intent(in) :: comm, threads
        logical, intent(in), optional :: checked
        integer, intent(out), optional :: stat
        integer(c_int) :: flag
        if (threads < 0) then
            call refuse('phasers_mpi_team_create_fcomm', &
                'threads is negative: pass this rank''s number of threads, 1 or more', stat)
            return
        end if
        flag = 1
        if (present(checked)) then
            if (.not. checked) flag = 0
        end if
        call check(c_team_create(int(comm, c_int), int(threads, c_size_t), flag, team%handle), &
            'phasers_mpi_team_create_fcomm', stat)
    end subroutine phasers_mpi_team_create

    ! The number of members over every rank.
    function phasers_mpi_team_parties(team) result(parties)
        class(phasers_mpi_team), intent(in) :: team
        integer :: parties
        integer(c_size_t) :: n
        n = 0
        call check(c_team_parties(team%handle, n), 'phasers_mpi_team_parties')
        parties = int(n)
    end function phasers_mpi_team_parties

    ! The member of this rank's `thread`; each is handed out once. Members are ranked by their rank
    ! in comm, then by thread.
    subroutine phasers_mpi_team_member(team, thread, member, stat)
        class(phasers_mpi_team), intent(in) :: team
        integer, intent(in) :: thread
        type(phasers_mpi_member), intent(out) :: member
        integer, intent(out), optional :: stat
        if (thread < 0) then
            call refuse('phasers_mpi_team_member', &
                'thread is negative: threads count from 0 (omp_get_thread_num())', stat)
            return
        end if
        call check(c_team_member(team%handle, int(thread, c_size_t), member%handle), &
            'phasers_mpi_team_member', stat)
    end subroutine phasers_mpi_team_member

    ! Destroys the team, after its members (PHASERS_EBUSY while member handles exist).
    subroutine phasers_mpi_team_destroy(team, stat)
        class(phasers_mpi_team), intent(inout) :: team
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_team_destroy(team%handle)
        if (code == PHASERS_OK) team%handle = c_null_ptr
        call check(code, 'phasers_mpi_team_destroy', stat)
    end subroutine phasers_mpi_team_destroy

    ! The member's rank in the team, over every rank.
    function phasers_mpi_member_rank(member) result(rank)
        class(phasers_mpi_member), intent(in) :: member
        integer :: rank
        integer(c_size_t) :: n
        n = 0
        call check(c_member_rank(member%handle, n), 'phasers_mpi_member_rank')
        rank = int(n)
    end function phasers_mpi_member_rank

    ! The number of members of the member's team.
    function phasers_mpi_member_parties(member) result(parties)
        class(phasers_mpi_member), intent(in) :: member
        integer :: parties
        integer(c_size_t) :: n
        n = 0
        call check(c_member_parties(member%handle, n), 'phasers_mpi_member_parties')
        parties = int(n)
    end function phasers_mpi_member_parties

    ! Waits until every member, on every rank, has called it.
    subroutine phasers_mpi_member_barrier(member, stat)
        class(phasers_mpi_member), intent(in) :: member
        integer, intent(out), optional :: stat
        call check(c_member_barrier(member%handle), 'phasers_mpi_member_barrier', stat)
    end subroutine phasers_mpi_member_barrier

    ! Destroys the member; while the others still need it, that breaks the team for them.
    subroutine phasers_mpi_member_destroy(member, stat)
        class(phasers_mpi_member), intent(inout) :: member
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_member_destroy(member%handle)
        if (code == PHASERS_OK) member%handle = c_null_ptr
        call check(code, 'phasers_mpi_member_destroy', stat)
    end subroutine phasers_mpi_member_destroy

    ! phasers_mpi_member_allreduce(member, input, output, op [, stat]): every member's input
    ! reduced with op (PHASERS_OP_*) into every member's output; scalars or contiguous rank-1
    ! arrays of one size, of real(c_double), real(c_float), integer(c_int32_t) or
    ! integer(c_int64_t).

    subroutine member_allreduce_f64_0(self, input, output, op, stat)
        class(phasers_mpi_member), intent(in) :: self
        real(c_double), intent(in), target :: input
        real(c_double), intent(inout), target :: output
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_F64, c_int), int(op, c_int), &
            c_loc(input), c_loc(output), 1_c_size_t), 'phasers_mpi_member_allreduce', stat)
    end subroutine member_allreduce_f64_0

    subroutine member_allreduce_f64_1(self, input, output, op, stat)
        class(phasers_mpi_member), intent(in) :: self
        real(c_double), intent(in), target, contiguous :: input(:)
        real(c_double), intent(inout), target, contiguous :: output(:)
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        real(c_double), target :: none(1)
        if (size(output) /= size(input)) then
            call refuse('phasers_mpi_member_allreduce', 'output and input differ in size', stat)
            return
        end if
        ! c_loc of a zero-sized array is not allowed: C ignores the pointer for 0 elements.
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_F64, c_int), int(op, c_int), &
            p_input, p_output, int(size(input), c_size_t)), 'phasers_mpi_member_allreduce', stat)
    end subroutine member_allreduce_f64_1

    subroutine member_allreduce_f32_0(self, input, output, op, stat)
        class(phasers_mpi_member), intent(in) :: self
        real(c_float), intent(in), target :: input
        real(c_float), intent(inout), target :: output
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_F32, c_int), int(op, c_int), &
            c_loc(input), c_loc(output), 1_c_size_t), 'phasers_mpi_member_allreduce', stat)
    end subroutine member_allreduce_f32_0

    subroutine member_allreduce_f32_1(self, input, output, op, stat)
        class(phasers_mpi_member), intent(in) :: self
        real(c_float), intent(in), target, contiguous :: input(:)
        real(c_float), intent(inout), target, contiguous :: output(:)
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        real(c_float), target :: none(1)
        if (size(output) /= size(input)) then
            call refuse('phasers_mpi_member_allreduce', 'output and input differ in size', stat)
            return
        end if
        ! c_loc of a zero-sized array is not allowed: C ignores the pointer for 0 elements.
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_F32, c_int), int(op, c_int), &
            p_input, p_output, int(size(input), c_size_t)), 'phasers_mpi_member_allreduce', stat)
    end subroutine member_allreduce_f32_1

    subroutine member_allreduce_i32_0(self, input, output, op, stat)
        class(phasers_mpi_member), intent(in) :: self
        integer(c_int32_t), intent(in), target :: input
        integer(c_int32_t), intent(inout), target :: output
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_I32, c_int), int(op, c_int), &
            c_loc(input), c_loc(output), 1_c_size_t), 'phasers_mpi_member_allreduce', stat)
    end subroutine member_allreduce_i32_0

    subroutine member_allreduce_i32_1(self, input, output, op, stat)
        class(phasers_mpi_member), intent(in) :: self
        integer(c_int32_t), intent(in), target, contiguous :: input(:)
        integer(c_int32_t), intent(inout), target, contiguous :: output(:)
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int32_t), target :: none(1)
        if (size(output) /= size(input)) then
            call refuse('phasers_mpi_member_allreduce', 'output and input differ in size', stat)
            return
        end if
        ! c_loc of a zero-sized array is not allowed: C ignores the pointer for 0 elements.
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_I32, c_int), int(op, c_int), &
            p_input, p_output, int(size(input), c_size_t)), 'phasers_mpi_member_allreduce', stat)
    end subroutine member_allreduce_i32_1

    subroutine member_allreduce_i64_0(self, input, output, op, stat)
        class(phasers_mpi_member), intent(in) :: self
        integer(c_int64_t), intent(in), target :: input
        integer(c_int64_t), intent(inout), target :: output
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_I64, c_int), int(op, c_int), &
            c_loc(input), c_loc(output), 1_c_size_t), 'phasers_mpi_member_allreduce', stat)
    end subroutine member_allreduce_i64_0

    subroutine member_allreduce_i64_1(self, input, output, op, stat)
        class(phasers_mpi_member), intent(in) :: self
        integer(c_int64_t), intent(in), target, contiguous :: input(:)
        integer(c_int64_t), intent(inout), target, contiguous :: output(:)
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int64_t), target :: none(1)
        if (size(output) /= size(input)) then
            call refuse('phasers_mpi_member_allreduce', 'output and input differ in size', stat)
            return
        end if
        ! c_loc of a zero-sized array is not allowed: C ignores the pointer for 0 elements.
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_I64, c_int), int(op, c_int), &
            p_input, p_output, int(size(input), c_size_t)), 'phasers_mpi_member_allreduce', stat)
    end subroutine member_allreduce_i64_1

end module phasers_mpi
