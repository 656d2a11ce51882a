! phasers.f90: the Fortran 2008 interface to the phasers synchronization library (libphasers),
! through iso_c_binding. It wraps the C interface of include/phasers.h, which documents every call.
!
! Build: compile this module once with the compiler of your program (a .mod file is specific to
! one compiler and version), then link libphasers:
!
!     gfortran -std=f2008 -c phasers.f90                 # phasers.mod + phasers.o
!     gfortran -fopenmp prog.f90 phasers.o -L$PREFIX/lib -lphasers -o prog
!
! scripts/install-capi.sh does this with gfortran when it is installed: PREFIX/lib/fortran/modules/
! phasers.mod, PREFIX/lib/libphasers_fortran.a (the module's code), and the source in
! PREFIX/share/phasers/fortran/ for other compilers; in CMake, link phasers::fortran.
!
! Conventions:
!   - Objects are derived types holding the C handle (type(c_ptr)): phasers_barrier, phasers_phaser,
!     phasers_registration, phasers_reduction, phasers_team, phasers_member. Every operation is a
!     subroutine named after the C function, taking the object first, and also a type-bound
!     procedure: call phasers_barrier_wait(barrier, rank) is call barrier%wait(rank).
!   - Ranks and roots count from 0, as in C and as omp_get_thread_num() does.
!   - Errors: every subroutine takes an optional integer `stat`. With stat, it is set to PHASERS_OK
!     (0) or the PHASERS_E* code, and phasers_last_error() gives the message. Without stat, a
!     failure writes "phasers: <C function>: <message>" to error_unit and stops with error stop
!     (Fortran 2008 allows only a constant stop code, so the message goes first). A timeout is a
!     failure (PHASERS_ETIMEDOUT): pass stat to the *_timeout calls. Sizes that C cannot see are
!     checked here (PHASERS_EINVAL).
!   - Timeouts are in seconds, real(c_double) (as omp_get_wtime returns). Episodes and phases are
!     integer(c_int64_t).
!   - Objects are not finalized automatically: call destroy (or drop, for a registration) when
!     every thread is done with the object. Like the C handles, each barrier rank, registration
!     and member is used by one thread at a time.
!   - Arrays: the collectives take a scalar or a contiguous rank-1 array of real(c_double),
!     real(c_float), integer(c_int32_t) or integer(c_int64_t) (real64, real32, int32 and int64).
!     For a multi-dimensional array, pass a rank-1 pointer to it (p(1:size(a)) => a).
module phasers
    use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_double, c_f_pointer, c_float, &
        c_int, c_int32_t, c_int64_t, c_loc, c_null_ptr, c_ptr, c_size_t
    use, intrinsic :: iso_fortran_env, only: error_unit
    implicit none
    private

    ! Status codes (phasers.h).
    integer, parameter, public :: PHASERS_OK = 0, PHASERS_EINVAL = 1, PHASERS_ENULL = 2, &
        PHASERS_EDESTROYED = 3, PHASERS_ETIMEDOUT = 4, PHASERS_EBROKEN = 5, &
        PHASERS_EUNSUPPORTED = 6, PHASERS_ECAPABILITY = 7, PHASERS_ETERMINATED = 8, &
        PHASERS_EBUSY = 9, PHASERS_EPANIC = 10, PHASERS_EMISMATCH = 11
    ! Barrier algorithms.
    integer, parameter, public :: PHASERS_ALGORITHM_AUTO = 0, PHASERS_ALGORITHM_SENSE_REVERSING = 1, &
        PHASERS_ALGORITHM_COUNTING = 2, PHASERS_ALGORITHM_TICKET = 3, &
        PHASERS_ALGORITHM_COMBINING_TREE = 4, PHASERS_ALGORITHM_MCS_TREE = 5, &
        PHASERS_ALGORITHM_DISSEMINATION = 6, PHASERS_ALGORITHM_TOURNAMENT = 7
    ! Phaser registration modes.
    integer, parameter, public :: PHASERS_MODE_SIG = 0, PHASERS_MODE_WAIT = 1, &
        PHASERS_MODE_SIG_WAIT = 2, PHASERS_MODE_SIG_WAIT_SINGLE = 3
    ! Element types and operators.
    integer, parameter, public :: PHASERS_TYPE_I32 = 0, PHASERS_TYPE_I64 = 1, PHASERS_TYPE_U32 = 2, &
        PHASERS_TYPE_U64 = 3, PHASERS_TYPE_F32 = 4, PHASERS_TYPE_F64 = 5
    integer, parameter, public :: PHASERS_OP_SUM = 0, PHASERS_OP_PRODUCT = 1, PHASERS_OP_MIN = 2, &
        PHASERS_OP_MAX = 3, PHASERS_OP_AND = 4, PHASERS_OP_OR = 5, PHASERS_OP_XOR = 6
    ! Reduction algorithms.
    integer, parameter, public :: PHASERS_REDUCE_AUTO = 0, PHASERS_REDUCE_LINEAR = 1, &
        PHASERS_REDUCE_STATIC_TREE = 2, PHASERS_REDUCE_DYNAMIC_PAIRS = 3, &
        PHASERS_REDUCE_DYNAMIC_GROUP = 4

    ! A barrier of a fixed number of parties; each thread waits with its own rank.
    type, public :: phasers_barrier
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: create => phasers_barrier_create
        procedure :: parties => phasers_barrier_parties
        procedure :: wait => phasers_barrier_wait
        procedure :: wait_timeout => phasers_barrier_wait_timeout
        procedure :: destroy => phasers_barrier_destroy
    end type phasers_barrier

    ! A phaser; phasers_phaser_create also returns the creator's registration.
    type, public :: phasers_phaser
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: create => phasers_phaser_create
        procedure :: create_tree => phasers_phaser_create_tree
        procedure :: phase => phasers_phaser_phase
        procedure :: terminate => phasers_phaser_terminate
        procedure :: destroy => phasers_phaser_destroy
    end type phasers_phaser

    ! One task's membership of a phaser, used by one thread at a time.
    type, public :: phasers_registration
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: register => phasers_registration_register
        procedure :: next => phasers_registration_next
        procedure :: next_timeout => phasers_registration_next_timeout
        procedure :: signal => phasers_registration_signal
        procedure :: wait => phasers_registration_wait
        procedure :: drop => phasers_registration_drop
    end type phasers_registration
    ! An array reduction over `parties` ranks, of one element type (PHASERS_TYPE_F64, F32, I32 or
    ! I64) and one operator.
    type, public :: phasers_reduction
        type(c_ptr) :: handle = c_null_ptr
        integer :: element = -1, root = 0
    contains
        procedure :: create => phasers_reduction_create
        procedure :: parties => phasers_reduction_parties
        procedure :: destroy => phasers_reduction_destroy
        procedure, private :: reduction_allreduce_f64_0, reduction_allreduce_f64_1, &
            reduction_allreduce_f32_0, reduction_allreduce_f32_1, reduction_allreduce_i32_0, &
            reduction_allreduce_i32_1, reduction_allreduce_i64_0, reduction_allreduce_i64_1
        generic :: allreduce => reduction_allreduce_f64_0, reduction_allreduce_f64_1, &
            reduction_allreduce_f32_0, reduction_allreduce_f32_1, reduction_allreduce_i32_0, &
            reduction_allreduce_i32_1, reduction_allreduce_i64_0, reduction_allreduce_i64_1
        procedure, private :: reduction_reduce_f64_0, reduction_reduce_f64_1, &
            reduction_reduce_f32_0, reduction_reduce_f32_1, reduction_reduce_i32_0, &
            reduction_reduce_i32_1, reduction_reduce_i64_0, reduction_reduce_i64_1
        generic :: reduce => reduction_reduce_f64_0, reduction_reduce_f64_1, &
            reduction_reduce_f32_0, reduction_reduce_f32_1, reduction_reduce_i32_0, &
            reduction_reduce_i32_1, reduction_reduce_i64_0, reduction_reduce_i64_1
    end type phasers_reduction

    ! A team; it hands out one member per rank.
    type, public :: phasers_team
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: create => phasers_team_create
        procedure :: parties => phasers_team_parties
        procedure :: member => phasers_team_member
        procedure :: destroy => phasers_team_destroy
    end type phasers_team

    ! One rank's handle on a team, used by one thread at a time. Destroying a member while others
    ! still need it breaks the team for them (PHASERS_EBROKEN).
    type, public :: phasers_member
        type(c_ptr) :: handle = c_null_ptr
    contains
        procedure :: rank => phasers_member_rank
        procedure :: parties => phasers_member_parties
        procedure :: barrier => phasers_member_barrier
        procedure :: destroy => phasers_member_destroy
        procedure, private :: member_broadcast_f64_0, member_broadcast_f64_1, &
            member_broadcast_f32_0, member_broadcast_f32_1, member_broadcast_i32_0, &
            member_broadcast_i32_1, member_broadcast_i64_0, member_broadcast_i64_1
        generic :: broadcast => member_broadcast_f64_0, member_broadcast_f64_1, &
            member_broadcast_f32_0, member_broadcast_f32_1, member_broadcast_i32_0, &
            member_broadcast_i32_1, member_broadcast_i64_0, member_broadcast_i64_1
        procedure, private :: member_allreduce_f64_0, member_allreduce_f64_1, &
            member_allreduce_f32_0, member_allreduce_f32_1, member_allreduce_i32_0, &
            member_allreduce_i32_1, member_allreduce_i64_0, member_allreduce_i64_1
        generic :: allreduce => member_allreduce_f64_0, member_allreduce_f64_1, &
            member_allreduce_f32_0, member_allreduce_f32_1, member_allreduce_i32_0, &
            member_allreduce_i32_1, member_allreduce_i64_0, member_allreduce_i64_1
    end type phasers_member

    ! The collectives under the C names, resolved by the kind and rank of the arrays.
    interface phasers_reduction_allreduce
        module procedure reduction_allreduce_f64_0, reduction_allreduce_f64_1, &
            reduction_allreduce_f32_0, reduction_allreduce_f32_1, reduction_allreduce_i32_0, &
            reduction_allreduce_i32_1, reduction_allreduce_i64_0, reduction_allreduce_i64_1
    end interface phasers_reduction_allreduce
    interface phasers_reduction_reduce
        module procedure reduction_reduce_f64_0, reduction_reduce_f64_1, &
            reduction_reduce_f32_0, reduction_reduce_f32_1, reduction_reduce_i32_0, &
            reduction_reduce_i32_1, reduction_reduce_i64_0, reduction_reduce_i64_1
    end interface phasers_reduction_reduce
    interface phasers_member_broadcast
        module procedure member_broadcast_f64_0, member_broadcast_f64_1, &
            member_broadcast_f32_0, member_broadcast_f32_1, member_broadcast_i32_0, &
            member_broadcast_i32_1, member_broadcast_i64_0, member_broadcast_i64_1
    end interface phasers_member_broadcast
    interface phasers_member_allreduce
        module procedure member_allreduce_f64_0, member_allreduce_f64_1, &
            member_allreduce_f32_0, member_allreduce_f32_1, member_allreduce_i32_0, &
            member_allreduce_i32_1, member_allreduce_i64_0, member_allreduce_i64_1
    end interface phasers_member_allreduce
    public :: phasers_reduction_create, phasers_reduction_parties, phasers_reduction_destroy, &
        phasers_reduction_allreduce, phasers_reduction_reduce
    public :: phasers_team_create, phasers_team_parties, phasers_team_member, phasers_team_destroy, &
        phasers_member_rank, phasers_member_parties, phasers_member_barrier, &
        phasers_member_destroy, phasers_member_broadcast, phasers_member_allreduce

    public :: phasers_strerror, phasers_last_error, phasers_algorithm_name
    public :: phasers_barrier_create, phasers_barrier_parties, phasers_barrier_wait, &
        phasers_barrier_wait_timeout, phasers_barrier_destroy
    public :: phasers_phaser_create, phasers_phaser_create_tree, phasers_phaser_phase, &
        phasers_phaser_terminate, phasers_phaser_destroy
    public :: phasers_registration_register, phasers_registration_next, &
        phasers_registration_next_timeout, phasers_registration_signal, &
        phasers_registration_wait, phasers_registration_drop

    ! phasers_wait_result
    type, bind(c) :: c_wait_result
        integer(c_int64_t) :: episode
        integer(c_int) :: is_leader
    end type c_wait_result

    ! The C functions (phasers.h); uint64_t arguments are integer(c_int64_t), the same bits.
    interface
        function c_strlen(s) bind(c, name='strlen') result(n)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: s
            integer(c_size_t) :: n
        end function c_strlen
        function c_strerror(code) bind(c, name='phasers_strerror') result(text)
            import :: c_int, c_ptr
            integer(c_int), value :: code
            type(c_ptr) :: text
        end function c_strerror
        function c_last_error() bind(c, name='phasers_last_error') result(text)
            import :: c_ptr
            type(c_ptr) :: text
        end function c_last_error
        function c_algorithm_name(algorithm) bind(c, name='phasers_algorithm_name') result(text)
            import :: c_int, c_ptr
            integer(c_int), value :: algorithm
            type(c_ptr) :: text
        end function c_algorithm_name

        function c_barrier_create(parties, algorithm, out) bind(c, name='phasers_barrier_create') &
                result(code)
            import :: c_int, c_ptr, c_size_t
            integer(c_size_t), value :: parties
            integer(c_int), value :: algorithm
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_barrier_create
        function c_barrier_parties(barrier, out) bind(c, name='phasers_barrier_parties') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: barrier
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_barrier_parties
        function c_barrier_wait(barrier, rank, out) bind(c, name='phasers_barrier_wait') result(code)
            import :: c_int, c_ptr, c_size_t, c_wait_result
            type(c_ptr), value :: barrier
            integer(c_size_t), value :: rank
            type(c_wait_result), intent(out) :: out
            integer(c_int) :: code
        end function c_barrier_wait
        function c_barrier_timedwait(barrier, rank, timeout_ns, out) &
                bind(c, name='phasers_barrier_timedwait') result(code)
            import :: c_int, c_int64_t, c_ptr, c_size_t, c_wait_result
            type(c_ptr), value :: barrier
            integer(c_size_t), value :: rank
            integer(c_int64_t), value :: timeout_ns
            type(c_wait_result), intent(out) :: out
            integer(c_int) :: code
        end function c_barrier_timedwait
        function c_barrier_destroy(barrier) bind(c, name='phasers_barrier_destroy') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: barrier
            integer(c_int) :: code
        end function c_barrier_destroy

        function c_phaser_create(mode, phaser, creator) bind(c, name='phasers_phaser_create') &
                result(code)
            import :: c_int, c_ptr
            integer(c_int), value :: mode
            type(c_ptr), intent(out) :: phaser, creator
            integer(c_int) :: code
        end function c_phaser_create
        function c_phaser_create_tree(mode, tiers, degree, phaser, creator) &
                bind(c, name='phasers_phaser_create_tree') result(code)
            import :: c_int, c_ptr, c_size_t
            integer(c_int), value :: mode
            integer(c_size_t), value :: tiers, degree
            type(c_ptr), intent(out) :: phaser, creator
            integer(c_int) :: code
        end function c_phaser_create_tree
        function c_phaser_phase(phaser, out) bind(c, name='phasers_phaser_phase') result(code)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: phaser
            integer(c_int64_t), intent(out) :: out
            integer(c_int) :: code
        end function c_phaser_phase
        function c_phaser_terminate(phaser) bind(c, name='phasers_phaser_terminate') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: phaser
            integer(c_int) :: code
        end function c_phaser_terminate
        function c_phaser_destroy(phaser) bind(c, name='phasers_phaser_destroy') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: phaser
            integer(c_int) :: code
        end function c_phaser_destroy

        function c_registration_register(parent, mode, out) &
                bind(c, name='phasers_registration_register') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: parent
            integer(c_int), value :: mode
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_registration_register
        function c_registration_signal(registration) bind(c, name='phasers_registration_signal') &
                result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: registration
            integer(c_int) :: code
        end function c_registration_signal
        function c_registration_wait(registration, phase) bind(c, name='phasers_registration_wait') &
                result(code)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: registration
            integer(c_int64_t), intent(out) :: phase
            integer(c_int) :: code
        end function c_registration_wait
        function c_registration_next(registration, phase) bind(c, name='phasers_registration_next') &
                result(code)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: registration
            integer(c_int64_t), intent(out) :: phase
            integer(c_int) :: code
        end function c_registration_next
        function c_registration_next_timeout(registration, timeout_ns, phase) &
                bind(c, name='phasers_registration_next_timeout') result(code)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: registration
            integer(c_int64_t), value :: timeout_ns
            integer(c_int64_t), intent(out) :: phase
            integer(c_int) :: code
        end function c_registration_next_timeout
        function c_registration_drop(registration) bind(c, name='phasers_registration_drop') &
                result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: registration
            integer(c_int) :: code
        end function c_registration_drop

        function c_reduction_create(parties, type, op, algorithm, root, out) &
                bind(c, name='phasers_reduction_create') result(code)
            import :: c_int, c_ptr, c_size_t
            integer(c_size_t), value :: parties
            integer(c_int), value :: type, op, algorithm
            integer(c_size_t), value :: root
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_reduction_create
        function c_reduction_parties(reduction, out) bind(c, name='phasers_reduction_parties') &
                result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: reduction
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_reduction_parties
        function c_reduction_reduce(reduction, rank, input, output, count, has_result) &
                bind(c, name='phasers_reduction_reduce') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: reduction
            integer(c_size_t), value :: rank
            type(c_ptr), value :: input, output
            integer(c_size_t), value :: count
            integer(c_int), intent(out) :: has_result
            integer(c_int) :: code
        end function c_reduction_reduce
        function c_reduction_allreduce(reduction, rank, input, output, count) &
                bind(c, name='phasers_reduction_allreduce') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: reduction
            integer(c_size_t), value :: rank
            type(c_ptr), value :: input, output
            integer(c_size_t), value :: count
            integer(c_int) :: code
        end function c_reduction_allreduce
        function c_reduction_destroy(reduction) bind(c, name='phasers_reduction_destroy') &
                result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: reduction
            integer(c_int) :: code
        end function c_reduction_destroy

        function c_team_create(parties, checked, out) bind(c, name='phasers_team_create') &
                result(code)
            import :: c_int, c_ptr, c_size_t
            integer(c_size_t), value :: parties
            integer(c_int), value :: checked
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_team_create
        function c_team_parties(team, out) bind(c, name='phasers_team_parties') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: team
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_team_parties
        function c_team_member(team, rank, out) bind(c, name='phasers_team_member') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: team
            integer(c_size_t), value :: rank
            type(c_ptr), intent(out) :: out
            integer(c_int) :: code
        end function c_team_member
        function c_team_destroy(team) bind(c, name='phasers_team_destroy') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: team
            integer(c_int) :: code
        end function c_team_destroy
        function c_member_rank(member, out) bind(c, name='phasers_member_rank') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: member
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_member_rank
        function c_member_parties(member, out) bind(c, name='phasers_member_parties') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: member
            integer(c_size_t), intent(out) :: out
            integer(c_int) :: code
        end function c_member_parties
        function c_member_destroy(member) bind(c, name='phasers_member_destroy') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: member
            integer(c_int) :: code
        end function c_member_destroy
        function c_member_barrier(member) bind(c, name='phasers_member_barrier') result(code)
            import :: c_int, c_ptr
            type(c_ptr), value :: member
            integer(c_int) :: code
        end function c_member_barrier
        function c_member_broadcast(member, type, buffer, count, root) &
                bind(c, name='phasers_member_broadcast') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: member
            integer(c_int), value :: type
            type(c_ptr), value :: buffer
            integer(c_size_t), value :: count, root
            integer(c_int) :: code
        end function c_member_broadcast
        function c_member_allreduce(member, type, op, input, output, count) &
                bind(c, name='phasers_member_allreduce') result(code)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: member
            integer(c_int), value :: type, op
            type(c_ptr), value :: input, output
            integer(c_size_t), value :: count
            integer(c_int) :: code
        end function c_member_allreduce
    end interface

contains

    ! ---- errors and strings ----------------------------------------------------------------------

    ! A C string as a Fortran string ('' for NULL).
    function from_c(text) result(string)
        type(c_ptr), intent(in) :: text
        character(len=:), allocatable :: string
        character(kind=c_char), pointer :: chars(:)
        integer :: i, n
        if (.not. c_associated(text)) then
            string = ''
            return
        end if
        n = int(c_strlen(text))
        call c_f_pointer(text, chars, [n])
        allocate (character(len=n) :: string)
        do i = 1, n
            string(i:i) = chars(i)
        end do
    end function from_c

    ! The description of a status code (phasers_strerror).
    function phasers_strerror(code) result(text)
        integer, intent(in) :: code
        character(len=:), allocatable :: text
        text = from_c(c_strerror(int(code, c_int)))
    end function phasers_strerror

    ! The calling thread's last error message, '' after a success (phasers_last_error).
    function phasers_last_error() result(text)
        character(len=:), allocatable :: text
        text = from_c(c_last_error())
    end function phasers_last_error

    ! The name of a PHASERS_ALGORITHM_* ('counting', 'mcs', ...), '' for another value.
    function phasers_algorithm_name(algorithm) result(text)
        integer, intent(in) :: algorithm
        character(len=:), allocatable :: text
        text = from_c(c_algorithm_name(int(algorithm, c_int)))
    end function phasers_algorithm_name

    ! Hands `code` to the caller's stat, or stops the program on a failure when there is none.
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

    ! ---- barriers --------------------------------------------------------------------------------

    ! Creates a barrier of `parties` ranks; `algorithm` defaults to PHASERS_ALGORITHM_AUTO.
    subroutine phasers_barrier_create(barrier, parties, algorithm, stat)
        class(phasers_barrier), intent(out) :: barrier
        integer, intent(in) :: parties
        integer, intent(in), optional :: algorithm
        integer, intent(out), optional :: stat
        integer(c_int) :: which
        which = PHASERS_ALGORITHM_AUTO
        if (present(algorithm)) which = int(algorithm, c_int)
        call check(c_barrier_create(int(parties, c_size_t), which, barrier%handle), &
            'phasers_barrier_create', stat)
    end subroutine phasers_barrier_create

    function phasers_barrier_parties(barrier) result(parties)
        class(phasers_barrier), intent(in) :: barrier
        integer :: parties
        integer(c_size_t) :: n
        n = 0
        call check(c_barrier_parties(barrier%handle, n), 'phasers_barrier_parties')
        parties = int(n)
    end function phasers_barrier_parties

    ! Arrives as `rank` (0 .. parties-1) and waits for every rank. is_leader: one rank per episode.
    subroutine phasers_barrier_wait(barrier, rank, is_leader, episode, stat)
        class(phasers_barrier), intent(in) :: barrier
        integer, intent(in) :: rank
        logical, intent(out), optional :: is_leader
        integer(c_int64_t), intent(out), optional :: episode
        integer, intent(out), optional :: stat
        type(c_wait_result) :: result
        result = c_wait_result(-1, 0)
        call check(c_barrier_wait(barrier%handle, int(rank, c_size_t), result), &
            'phasers_barrier_wait', stat)
        if (present(is_leader)) is_leader = result%is_leader /= 0
        if (present(episode)) episode = result%episode
    end subroutine phasers_barrier_wait

    ! As phasers_barrier_wait, giving up after `timeout` seconds with PHASERS_ETIMEDOUT; the
    ! arrival stays, so waiting again completes the same episode.
    subroutine phasers_barrier_wait_timeout(barrier, rank, timeout, is_leader, episode, stat)
        class(phasers_barrier), intent(in) :: barrier
        integer, intent(in) :: rank
        real(c_double), intent(in) :: timeout
        logical, intent(out), optional :: is_leader
        integer(c_int64_t), intent(out), optional :: episode
        integer, intent(out), optional :: stat
        type(c_wait_result) :: result
        result = c_wait_result(-1, 0)
        call check(c_barrier_timedwait(barrier%handle, int(rank, c_size_t), to_ns(timeout), result), &
            'phasers_barrier_timedwait', stat)
        if (present(is_leader)) is_leader = result%is_leader /= 0
        if (present(episode)) episode = result%episode
    end subroutine phasers_barrier_wait_timeout

    ! Destroys the barrier (after every thread is done with it).
    subroutine phasers_barrier_destroy(barrier, stat)
        class(phasers_barrier), intent(inout) :: barrier
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_barrier_destroy(barrier%handle)
        if (code == PHASERS_OK) barrier%handle = c_null_ptr
        call check(code, 'phasers_barrier_destroy', stat)
    end subroutine phasers_barrier_destroy

    ! ---- phasers and registrations ---------------------------------------------------------------

    ! Creates a flat phaser and registers its creator with `mode` (default PHASERS_MODE_SIG_WAIT).
    subroutine phasers_phaser_create(phaser, creator, mode, stat)
        class(phasers_phaser), intent(out) :: phaser
        type(phasers_registration), intent(out) :: creator
        integer, intent(in), optional :: mode
        integer, intent(out), optional :: stat
        integer(c_int) :: m
        m = PHASERS_MODE_SIG_WAIT
        if (present(mode)) m = int(mode, c_int)
        call check(c_phaser_create(m, phaser%handle, creator%handle), 'phasers_phaser_create', stat)
    end subroutine phasers_phaser_create

    ! As phasers_phaser_create, with a tree of `tiers` levels and `degree` children per sub-phaser.
    subroutine phasers_phaser_create_tree(phaser, creator, mode, tiers, degree, stat)
        class(phasers_phaser), intent(out) :: phaser
        type(phasers_registration), intent(out) :: creator
        integer, intent(in) :: mode, tiers, degree
        integer, intent(out), optional :: stat
        call check(c_phaser_create_tree(int(mode, c_int), int(tiers, c_size_t), &
            int(degree, c_size_t), phaser%handle, creator%handle), 'phasers_phaser_create_tree', stat)
    end subroutine phasers_phaser_create_tree

    ! The phase in progress: the number of phases completed.
    function phasers_phaser_phase(phaser) result(phase)
        class(phasers_phaser), intent(in) :: phaser
        integer(c_int64_t) :: phase
        phase = -1
        call check(c_phaser_phase(phaser%handle, phase), 'phasers_phaser_phase')
    end function phasers_phaser_phase

    ! Terminates the phaser: every wait returns PHASERS_ETERMINATED.
    subroutine phasers_phaser_terminate(phaser, stat)
        class(phasers_phaser), intent(in) :: phaser
        integer, intent(out), optional :: stat
        call check(c_phaser_terminate(phaser%handle), 'phasers_phaser_terminate', stat)
    end subroutine phasers_phaser_terminate

    ! Destroys this handle; the phaser lives on while registrations use it.
    subroutine phasers_phaser_destroy(phaser, stat)
        class(phasers_phaser), intent(inout) :: phaser
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_phaser_destroy(phaser%handle)
        if (code == PHASERS_OK) phaser%handle = c_null_ptr
        call check(code, 'phasers_phaser_destroy', stat)
    end subroutine phasers_phaser_destroy

    ! Registers a child task with `mode`, no stronger than the parent's.
    subroutine phasers_registration_register(parent, child, mode, stat)
        class(phasers_registration), intent(in) :: parent
        type(phasers_registration), intent(out) :: child
        integer, intent(in) :: mode
        integer, intent(out), optional :: stat
        call check(c_registration_register(parent%handle, int(mode, c_int), child%handle), &
            'phasers_registration_register', stat)
    end subroutine phasers_registration_register

    ! Advances to the next phase (signal, then wait); `phase` is the phase completed.
    subroutine phasers_registration_next(registration, phase, stat)
        class(phasers_registration), intent(in) :: registration
        integer(c_int64_t), intent(out), optional :: phase
        integer, intent(out), optional :: stat
        integer(c_int64_t) :: p
        p = -1
        call check(c_registration_next(registration%handle, p), 'phasers_registration_next', stat)
        if (present(phase)) phase = p
    end subroutine phasers_registration_next

    ! As phasers_registration_next, giving up after `timeout` seconds (PHASERS_ETIMEDOUT); the
    ! signal stays in place.
    subroutine phasers_registration_next_timeout(registration, timeout, phase, stat)
        class(phasers_registration), intent(in) :: registration
        real(c_double), intent(in) :: timeout
        integer(c_int64_t), intent(out), optional :: phase
        integer, intent(out), optional :: stat
        integer(c_int64_t) :: p
        p = -1
        call check(c_registration_next_timeout(registration%handle, to_ns(timeout), p), &
            'phasers_registration_next_timeout', stat)
        if (present(phase)) phase = p
    end subroutine phasers_registration_next_timeout

    ! Split phase: signals the current phase without waiting; phasers_registration_wait later.
    subroutine phasers_registration_signal(registration, stat)
        class(phasers_registration), intent(in) :: registration
        integer, intent(out), optional :: stat
        call check(c_registration_signal(registration%handle), 'phasers_registration_signal', stat)
    end subroutine phasers_registration_signal

    ! Waits for the phase this registration is in; `phase` is that phase.
    subroutine phasers_registration_wait(registration, phase, stat)
        class(phasers_registration), intent(in) :: registration
        integer(c_int64_t), intent(out), optional :: phase
        integer, intent(out), optional :: stat
        integer(c_int64_t) :: p
        p = -1
        call check(c_registration_wait(registration%handle, p), 'phasers_registration_wait', stat)
        if (present(phase)) phase = p
    end subroutine phasers_registration_wait

    ! Deregisters: later phases no longer wait for this task.
    subroutine phasers_registration_drop(registration, stat)
        class(phasers_registration), intent(inout) :: registration
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_registration_drop(registration%handle)
        if (code == PHASERS_OK) registration%handle = c_null_ptr
        call check(code, 'phasers_registration_drop', stat)
    end subroutine phasers_registration_drop

    ! ---- reductions ------------------------------------------------------------------------------

    ! Creates a reduction of `parties` ranks for element type `type` (PHASERS_TYPE_F64, F32, I32,
    ! I64) with operator `op`; `algorithm` defaults to PHASERS_REDUCE_AUTO, `root` (the rank that
    ! gets phasers_reduction_reduce's result) to 0.
    subroutine phasers_reduction_create(reduction, parties, type, op, algorithm, root, stat)
        class(phasers_reduction), intent(out) :: reduction
        integer, intent(in) :: parties, type, op
        integer, intent(in), optional :: algorithm, root
        integer, intent(out), optional :: stat
        integer(c_int) :: which
        which = PHASERS_REDUCE_AUTO
        if (present(algorithm)) which = int(algorithm, c_int)
        reduction%element = type
        reduction%root = 0
        if (present(root)) reduction%root = root
        call check(c_reduction_create(int(parties, c_size_t), int(type, c_int), int(op, c_int), &
            which, int(reduction%root, c_size_t), reduction%handle), 'phasers_reduction_create', stat)
    end subroutine phasers_reduction_create

    function phasers_reduction_parties(reduction) result(parties)
        class(phasers_reduction), intent(in) :: reduction
        integer :: parties
        integer(c_size_t) :: n
        n = 0
        call check(c_reduction_parties(reduction%handle, n), 'phasers_reduction_parties')
        parties = int(n)
    end function phasers_reduction_parties

    subroutine phasers_reduction_destroy(reduction, stat)
        class(phasers_reduction), intent(inout) :: reduction
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_reduction_destroy(reduction%handle)
        if (code == PHASERS_OK) reduction%handle = c_null_ptr
        call check(code, 'phasers_reduction_destroy', stat)
    end subroutine phasers_reduction_destroy

    ! ---- teams -----------------------------------------------------------------------------------

    ! Creates a team of `parties` members; `checked` (default .true.) makes calls that differ
    ! between members fail with PHASERS_EMISMATCH on every member.
    subroutine phasers_team_create(team, parties, checked, stat)
        class(phasers_team), intent(out) :: team
        integer, intent(in) :: parties
        logical, intent(in), optional :: checked
        integer, intent(out), optional :: stat
        integer(c_int) :: flag
        flag = 1
        if (present(checked)) then
            if (.not. checked) flag = 0
        end if
        call check(c_team_create(int(parties, c_size_t), flag, team%handle), 'phasers_team_create', &
            stat)
    end subroutine phasers_team_create

    function phasers_team_parties(team) result(parties)
        class(phasers_team), intent(in) :: team
        integer :: parties
        integer(c_size_t) :: n
        n = 0
        call check(c_team_parties(team%handle, n), 'phasers_team_parties')
        parties = int(n)
    end function phasers_team_parties

    ! The member of `rank`; each rank is handed out once.
    subroutine phasers_team_member(team, rank, member, stat)
        class(phasers_team), intent(in) :: team
        integer, intent(in) :: rank
        type(phasers_member), intent(out) :: member
        integer, intent(out), optional :: stat
        call check(c_team_member(team%handle, int(rank, c_size_t), member%handle), &
            'phasers_team_member', stat)
    end subroutine phasers_team_member

    ! Destroys the team, after its members (PHASERS_EBUSY while members exist).
    subroutine phasers_team_destroy(team, stat)
        class(phasers_team), intent(inout) :: team
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_team_destroy(team%handle)
        if (code == PHASERS_OK) team%handle = c_null_ptr
        call check(code, 'phasers_team_destroy', stat)
    end subroutine phasers_team_destroy

    function phasers_member_rank(member) result(rank)
        class(phasers_member), intent(in) :: member
        integer :: rank
        integer(c_size_t) :: n
        n = 0
        call check(c_member_rank(member%handle, n), 'phasers_member_rank')
        rank = int(n)
    end function phasers_member_rank

    function phasers_member_parties(member) result(parties)
        class(phasers_member), intent(in) :: member
        integer :: parties
        integer(c_size_t) :: n
        n = 0
        call check(c_member_parties(member%handle, n), 'phasers_member_parties')
        parties = int(n)
    end function phasers_member_parties

    ! Waits for every member of the team.
    subroutine phasers_member_barrier(member, stat)
        class(phasers_member), intent(in) :: member
        integer, intent(out), optional :: stat
        call check(c_member_barrier(member%handle), 'phasers_member_barrier', stat)
    end subroutine phasers_member_barrier

    ! Destroys the member; while the others still need it, that breaks the team for them.
    subroutine phasers_member_destroy(member, stat)
        class(phasers_member), intent(inout) :: member
        integer, intent(out), optional :: stat
        integer(c_int) :: code
        code = c_member_destroy(member%handle)
        if (code == PHASERS_OK) member%handle = c_null_ptr
        call check(code, 'phasers_member_destroy', stat)
    end subroutine phasers_member_destroy

    ! ---- the collectives, one specific procedure per kind (real64, real32, int32, int64) and rank
    ! (scalar, contiguous rank-1 array) ---------------------------------------------------------

    ! phasers_reduction_allreduce(reduction, rank, input, output [, stat]): every rank gets the
    ! reduction of the inputs in `output`, the size of `input` (they must not overlap).
    ! phasers_reduction_reduce(reduction, rank, input, output [, has_result] [, stat]): the root's
    ! `output` gets it (other ranks' outputs are not written); has_result is .true. at the root.
    ! phasers_member_broadcast(member, buffer, root [, stat]): the root's buffer to every member.
    ! phasers_member_allreduce(member, input, output, op [, stat]): as a reduction's allreduce, with
    ! the operator given per call.

    subroutine reduction_allreduce_f64_0(self, rank, input, output, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        real(c_double), intent(in), target :: input
        real(c_double), intent(inout), target :: output
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        if (self%element /= PHASERS_TYPE_F64) then
            call refuse('phasers_reduction_allreduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        p_input = c_loc(input)
        p_output = c_loc(output)
        call check(c_reduction_allreduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(1, c_size_t)), 'phasers_reduction_allreduce', stat)
    end subroutine reduction_allreduce_f64_0

    subroutine reduction_allreduce_f64_1(self, rank, input, output, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        real(c_double), intent(in), target, contiguous :: input(:)
        real(c_double), intent(inout), target, contiguous :: output(:)
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        real(c_double), target :: none(1)
        if (self%element /= PHASERS_TYPE_F64) then
            call refuse('phasers_reduction_allreduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        if (size(output) /= size(input)) then
            call refuse('phasers_reduction_allreduce', 'output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_reduction_allreduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(size(input), c_size_t)), 'phasers_reduction_allreduce', stat)
    end subroutine reduction_allreduce_f64_1

    subroutine reduction_allreduce_f32_0(self, rank, input, output, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        real(c_float), intent(in), target :: input
        real(c_float), intent(inout), target :: output
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        if (self%element /= PHASERS_TYPE_F32) then
            call refuse('phasers_reduction_allreduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        p_input = c_loc(input)
        p_output = c_loc(output)
        call check(c_reduction_allreduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(1, c_size_t)), 'phasers_reduction_allreduce', stat)
    end subroutine reduction_allreduce_f32_0

    subroutine reduction_allreduce_f32_1(self, rank, input, output, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        real(c_float), intent(in), target, contiguous :: input(:)
        real(c_float), intent(inout), target, contiguous :: output(:)
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        real(c_float), target :: none(1)
        if (self%element /= PHASERS_TYPE_F32) then
            call refuse('phasers_reduction_allreduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        if (size(output) /= size(input)) then
            call refuse('phasers_reduction_allreduce', 'output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_reduction_allreduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(size(input), c_size_t)), 'phasers_reduction_allreduce', stat)
    end subroutine reduction_allreduce_f32_1

    subroutine reduction_allreduce_i32_0(self, rank, input, output, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        integer(c_int32_t), intent(in), target :: input
        integer(c_int32_t), intent(inout), target :: output
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        if (self%element /= PHASERS_TYPE_I32) then
            call refuse('phasers_reduction_allreduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        p_input = c_loc(input)
        p_output = c_loc(output)
        call check(c_reduction_allreduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(1, c_size_t)), 'phasers_reduction_allreduce', stat)
    end subroutine reduction_allreduce_i32_0

    subroutine reduction_allreduce_i32_1(self, rank, input, output, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        integer(c_int32_t), intent(in), target, contiguous :: input(:)
        integer(c_int32_t), intent(inout), target, contiguous :: output(:)
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int32_t), target :: none(1)
        if (self%element /= PHASERS_TYPE_I32) then
            call refuse('phasers_reduction_allreduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        if (size(output) /= size(input)) then
            call refuse('phasers_reduction_allreduce', 'output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_reduction_allreduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(size(input), c_size_t)), 'phasers_reduction_allreduce', stat)
    end subroutine reduction_allreduce_i32_1

    subroutine reduction_allreduce_i64_0(self, rank, input, output, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        integer(c_int64_t), intent(in), target :: input
        integer(c_int64_t), intent(inout), target :: output
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        if (self%element /= PHASERS_TYPE_I64) then
            call refuse('phasers_reduction_allreduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        p_input = c_loc(input)
        p_output = c_loc(output)
        call check(c_reduction_allreduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(1, c_size_t)), 'phasers_reduction_allreduce', stat)
    end subroutine reduction_allreduce_i64_0

    subroutine reduction_allreduce_i64_1(self, rank, input, output, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        integer(c_int64_t), intent(in), target, contiguous :: input(:)
        integer(c_int64_t), intent(inout), target, contiguous :: output(:)
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int64_t), target :: none(1)
        if (self%element /= PHASERS_TYPE_I64) then
            call refuse('phasers_reduction_allreduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        if (size(output) /= size(input)) then
            call refuse('phasers_reduction_allreduce', 'output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_reduction_allreduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(size(input), c_size_t)), 'phasers_reduction_allreduce', stat)
    end subroutine reduction_allreduce_i64_1

    subroutine reduction_reduce_f64_0(self, rank, input, output, has_result, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        real(c_double), intent(in), target :: input
        real(c_double), intent(inout), target :: output
        logical, intent(out), optional :: has_result
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int) :: got
        if (self%element /= PHASERS_TYPE_F64) then
            call refuse('phasers_reduction_reduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        p_input = c_loc(input)
        p_output = c_loc(output)
        got = 0
        call check(c_reduction_reduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(1, c_size_t), got), 'phasers_reduction_reduce', stat)
        if (present(has_result)) has_result = got /= 0
    end subroutine reduction_reduce_f64_0

    subroutine reduction_reduce_f64_1(self, rank, input, output, has_result, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        real(c_double), intent(in), target, contiguous :: input(:)
        real(c_double), intent(inout), target, contiguous :: output(:)
        logical, intent(out), optional :: has_result
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int) :: got
        real(c_double), target :: none(1)
        if (self%element /= PHASERS_TYPE_F64) then
            call refuse('phasers_reduction_reduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        if (rank == self%root .and. size(output) /= size(input)) then
            call refuse('phasers_reduction_reduce', 'the root''s output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        got = 0
        call check(c_reduction_reduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(size(input), c_size_t), got), 'phasers_reduction_reduce', stat)
        if (present(has_result)) has_result = got /= 0
    end subroutine reduction_reduce_f64_1

    subroutine reduction_reduce_f32_0(self, rank, input, output, has_result, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        real(c_float), intent(in), target :: input
        real(c_float), intent(inout), target :: output
        logical, intent(out), optional :: has_result
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int) :: got
        if (self%element /= PHASERS_TYPE_F32) then
            call refuse('phasers_reduction_reduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        p_input = c_loc(input)
        p_output = c_loc(output)
        got = 0
        call check(c_reduction_reduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(1, c_size_t), got), 'phasers_reduction_reduce', stat)
        if (present(has_result)) has_result = got /= 0
    end subroutine reduction_reduce_f32_0

    subroutine reduction_reduce_f32_1(self, rank, input, output, has_result, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        real(c_float), intent(in), target, contiguous :: input(:)
        real(c_float), intent(inout), target, contiguous :: output(:)
        logical, intent(out), optional :: has_result
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int) :: got
        real(c_float), target :: none(1)
        if (self%element /= PHASERS_TYPE_F32) then
            call refuse('phasers_reduction_reduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        if (rank == self%root .and. size(output) /= size(input)) then
            call refuse('phasers_reduction_reduce', 'the root''s output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        got = 0
        call check(c_reduction_reduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(size(input), c_size_t), got), 'phasers_reduction_reduce', stat)
        if (present(has_result)) has_result = got /= 0
    end subroutine reduction_reduce_f32_1

    subroutine reduction_reduce_i32_0(self, rank, input, output, has_result, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        integer(c_int32_t), intent(in), target :: input
        integer(c_int32_t), intent(inout), target :: output
        logical, intent(out), optional :: has_result
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int) :: got
        if (self%element /= PHASERS_TYPE_I32) then
            call refuse('phasers_reduction_reduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        p_input = c_loc(input)
        p_output = c_loc(output)
        got = 0
        call check(c_reduction_reduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(1, c_size_t), got), 'phasers_reduction_reduce', stat)
        if (present(has_result)) has_result = got /= 0
    end subroutine reduction_reduce_i32_0

    subroutine reduction_reduce_i32_1(self, rank, input, output, has_result, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        integer(c_int32_t), intent(in), target, contiguous :: input(:)
        integer(c_int32_t), intent(inout), target, contiguous :: output(:)
        logical, intent(out), optional :: has_result
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int) :: got
        integer(c_int32_t), target :: none(1)
        if (self%element /= PHASERS_TYPE_I32) then
            call refuse('phasers_reduction_reduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        if (rank == self%root .and. size(output) /= size(input)) then
            call refuse('phasers_reduction_reduce', 'the root''s output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        got = 0
        call check(c_reduction_reduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(size(input), c_size_t), got), 'phasers_reduction_reduce', stat)
        if (present(has_result)) has_result = got /= 0
    end subroutine reduction_reduce_i32_1

    subroutine reduction_reduce_i64_0(self, rank, input, output, has_result, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        integer(c_int64_t), intent(in), target :: input
        integer(c_int64_t), intent(inout), target :: output
        logical, intent(out), optional :: has_result
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int) :: got
        if (self%element /= PHASERS_TYPE_I64) then
            call refuse('phasers_reduction_reduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        p_input = c_loc(input)
        p_output = c_loc(output)
        got = 0
        call check(c_reduction_reduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(1, c_size_t), got), 'phasers_reduction_reduce', stat)
        if (present(has_result)) has_result = got /= 0
    end subroutine reduction_reduce_i64_0

    subroutine reduction_reduce_i64_1(self, rank, input, output, has_result, stat)
        class(phasers_reduction), intent(in) :: self
        integer, intent(in) :: rank
        integer(c_int64_t), intent(in), target, contiguous :: input(:)
        integer(c_int64_t), intent(inout), target, contiguous :: output(:)
        logical, intent(out), optional :: has_result
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int) :: got
        integer(c_int64_t), target :: none(1)
        if (self%element /= PHASERS_TYPE_I64) then
            call refuse('phasers_reduction_reduce', 'the arrays are not of the reduction''s type', stat)
            return
        end if
        if (rank == self%root .and. size(output) /= size(input)) then
            call refuse('phasers_reduction_reduce', 'the root''s output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        got = 0
        call check(c_reduction_reduce(self%handle, int(rank, c_size_t), p_input, p_output, &
            int(size(input), c_size_t), got), 'phasers_reduction_reduce', stat)
        if (present(has_result)) has_result = got /= 0
    end subroutine reduction_reduce_i64_1

    subroutine member_broadcast_f64_0(self, buffer, root, stat)
        class(phasers_member), intent(in) :: self
        real(c_double), intent(inout), target :: buffer
        integer, intent(in) :: root
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_buffer
        p_buffer = c_loc(buffer)
        call check(c_member_broadcast(self%handle, int(PHASERS_TYPE_F64, c_int), p_buffer, &
            int(1, c_size_t), int(root, c_size_t)), 'phasers_member_broadcast', stat)
    end subroutine member_broadcast_f64_0

    subroutine member_broadcast_f64_1(self, buffer, root, stat)
        class(phasers_member), intent(in) :: self
        real(c_double), intent(inout), target, contiguous :: buffer(:)
        integer, intent(in) :: root
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_buffer
        real(c_double), target :: none(1)
        p_buffer = c_loc(none)
        if (size(buffer) > 0) p_buffer = c_loc(buffer)
        call check(c_member_broadcast(self%handle, int(PHASERS_TYPE_F64, c_int), p_buffer, &
            int(size(buffer), c_size_t), int(root, c_size_t)), 'phasers_member_broadcast', stat)
    end subroutine member_broadcast_f64_1

    subroutine member_broadcast_f32_0(self, buffer, root, stat)
        class(phasers_member), intent(in) :: self
        real(c_float), intent(inout), target :: buffer
        integer, intent(in) :: root
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_buffer
        p_buffer = c_loc(buffer)
        call check(c_member_broadcast(self%handle, int(PHASERS_TYPE_F32, c_int), p_buffer, &
            int(1, c_size_t), int(root, c_size_t)), 'phasers_member_broadcast', stat)
    end subroutine member_broadcast_f32_0

    subroutine member_broadcast_f32_1(self, buffer, root, stat)
        class(phasers_member), intent(in) :: self
        real(c_float), intent(inout), target, contiguous :: buffer(:)
        integer, intent(in) :: root
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_buffer
        real(c_float), target :: none(1)
        p_buffer = c_loc(none)
        if (size(buffer) > 0) p_buffer = c_loc(buffer)
        call check(c_member_broadcast(self%handle, int(PHASERS_TYPE_F32, c_int), p_buffer, &
            int(size(buffer), c_size_t), int(root, c_size_t)), 'phasers_member_broadcast', stat)
    end subroutine member_broadcast_f32_1

    subroutine member_broadcast_i32_0(self, buffer, root, stat)
        class(phasers_member), intent(in) :: self
        integer(c_int32_t), intent(inout), target :: buffer
        integer, intent(in) :: root
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_buffer
        p_buffer = c_loc(buffer)
        call check(c_member_broadcast(self%handle, int(PHASERS_TYPE_I32, c_int), p_buffer, &
            int(1, c_size_t), int(root, c_size_t)), 'phasers_member_broadcast', stat)
    end subroutine member_broadcast_i32_0

    subroutine member_broadcast_i32_1(self, buffer, root, stat)
        class(phasers_member), intent(in) :: self
        integer(c_int32_t), intent(inout), target, contiguous :: buffer(:)
        integer, intent(in) :: root
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_buffer
        integer(c_int32_t), target :: none(1)
        p_buffer = c_loc(none)
        if (size(buffer) > 0) p_buffer = c_loc(buffer)
        call check(c_member_broadcast(self%handle, int(PHASERS_TYPE_I32, c_int), p_buffer, &
            int(size(buffer), c_size_t), int(root, c_size_t)), 'phasers_member_broadcast', stat)
    end subroutine member_broadcast_i32_1

    subroutine member_broadcast_i64_0(self, buffer, root, stat)
        class(phasers_member), intent(in) :: self
        integer(c_int64_t), intent(inout), target :: buffer
        integer, intent(in) :: root
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_buffer
        p_buffer = c_loc(buffer)
        call check(c_member_broadcast(self%handle, int(PHASERS_TYPE_I64, c_int), p_buffer, &
            int(1, c_size_t), int(root, c_size_t)), 'phasers_member_broadcast', stat)
    end subroutine member_broadcast_i64_0

    subroutine member_broadcast_i64_1(self, buffer, root, stat)
        class(phasers_member), intent(in) :: self
        integer(c_int64_t), intent(inout), target, contiguous :: buffer(:)
        integer, intent(in) :: root
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_buffer
        integer(c_int64_t), target :: none(1)
        p_buffer = c_loc(none)
        if (size(buffer) > 0) p_buffer = c_loc(buffer)
        call check(c_member_broadcast(self%handle, int(PHASERS_TYPE_I64, c_int), p_buffer, &
            int(size(buffer), c_size_t), int(root, c_size_t)), 'phasers_member_broadcast', stat)
    end subroutine member_broadcast_i64_1

    subroutine member_allreduce_f64_0(self, input, output, op, stat)
        class(phasers_member), intent(in) :: self
        real(c_double), intent(in), target :: input
        real(c_double), intent(inout), target :: output
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        p_input = c_loc(input)
        p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_F64, c_int), int(op, c_int), p_input, &
            p_output, int(1, c_size_t)), 'phasers_member_allreduce', stat)
    end subroutine member_allreduce_f64_0

    subroutine member_allreduce_f64_1(self, input, output, op, stat)
        class(phasers_member), intent(in) :: self
        real(c_double), intent(in), target, contiguous :: input(:)
        real(c_double), intent(inout), target, contiguous :: output(:)
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        real(c_double), target :: none(1)
        if (size(output) /= size(input)) then
            call refuse('phasers_member_allreduce', 'output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_F64, c_int), int(op, c_int), p_input, &
            p_output, int(size(input), c_size_t)), 'phasers_member_allreduce', stat)
    end subroutine member_allreduce_f64_1

    subroutine member_allreduce_f32_0(self, input, output, op, stat)
        class(phasers_member), intent(in) :: self
        real(c_float), intent(in), target :: input
        real(c_float), intent(inout), target :: output
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        p_input = c_loc(input)
        p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_F32, c_int), int(op, c_int), p_input, &
            p_output, int(1, c_size_t)), 'phasers_member_allreduce', stat)
    end subroutine member_allreduce_f32_0

    subroutine member_allreduce_f32_1(self, input, output, op, stat)
        class(phasers_member), intent(in) :: self
        real(c_float), intent(in), target, contiguous :: input(:)
        real(c_float), intent(inout), target, contiguous :: output(:)
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        real(c_float), target :: none(1)
        if (size(output) /= size(input)) then
            call refuse('phasers_member_allreduce', 'output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_F32, c_int), int(op, c_int), p_input, &
            p_output, int(size(input), c_size_t)), 'phasers_member_allreduce', stat)
    end subroutine member_allreduce_f32_1

    subroutine member_allreduce_i32_0(self, input, output, op, stat)
        class(phasers_member), intent(in) :: self
        integer(c_int32_t), intent(in), target :: input
        integer(c_int32_t), intent(inout), target :: output
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        p_input = c_loc(input)
        p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_I32, c_int), int(op, c_int), p_input, &
            p_output, int(1, c_size_t)), 'phasers_member_allreduce', stat)
    end subroutine member_allreduce_i32_0

    subroutine member_allreduce_i32_1(self, input, output, op, stat)
        class(phasers_member), intent(in) :: self
        integer(c_int32_t), intent(in), target, contiguous :: input(:)
        integer(c_int32_t), intent(inout), target, contiguous :: output(:)
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int32_t), target :: none(1)
        if (size(output) /= size(input)) then
            call refuse('phasers_member_allreduce', 'output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_I32, c_int), int(op, c_int), p_input, &
            p_output, int(size(input), c_size_t)), 'phasers_member_allreduce', stat)
    end subroutine member_allreduce_i32_1

    subroutine member_allreduce_i64_0(self, input, output, op, stat)
        class(phasers_member), intent(in) :: self
        integer(c_int64_t), intent(in), target :: input
        integer(c_int64_t), intent(inout), target :: output
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        p_input = c_loc(input)
        p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_I64, c_int), int(op, c_int), p_input, &
            p_output, int(1, c_size_t)), 'phasers_member_allreduce', stat)
    end subroutine member_allreduce_i64_0

    subroutine member_allreduce_i64_1(self, input, output, op, stat)
        class(phasers_member), intent(in) :: self
        integer(c_int64_t), intent(in), target, contiguous :: input(:)
        integer(c_int64_t), intent(inout), target, contiguous :: output(:)
        integer, intent(in) :: op
        integer, intent(out), optional :: stat
        type(c_ptr) :: p_input, p_output
        integer(c_int64_t), target :: none(1)
        if (size(output) /= size(input)) then
            call refuse('phasers_member_allreduce', 'output and input differ in size', stat)
            return
        end if
        p_input = c_loc(none)
        if (size(input) > 0) p_input = c_loc(input)
        p_output = c_loc(none)
        if (size(output) > 0) p_output = c_loc(output)
        call check(c_member_allreduce(self%handle, int(PHASERS_TYPE_I64, c_int), int(op, c_int), p_input, &
            p_output, int(size(input), c_size_t)), 'phasers_member_allreduce', stat)
    end subroutine member_allreduce_i64_1
end module phasers
