! The phasers Fortran module over teams: members handed to OpenMP threads, barrier, broadcast
! and allreduce of every kind (scalars and arrays), calls that differ (PHASERS_EMISMATCH on every
! member), destroy order, and a member destroyed early: the others get PHASERS_EBROKEN.
program team
    use, intrinsic :: iso_c_binding, only: c_double, c_float, c_int32_t, c_int64_t
    use omp_lib, only: omp_get_thread_num
    use phasers
    implicit none

    integer, parameter :: threads = 3

    call collectives(.true.)
    call collectives(.false.)
    call errors()
    call broken()
    print '(a)', 'fortran team ok'

contains

    subroutine require(condition, what)
        logical, intent(in) :: condition
        character(len=*), intent(in) :: what
        if (.not. condition) then
            print '(a)', 'check failed: ' // what // ' (last error: ' // phasers_last_error() // ')'
            error stop 1
        end if
    end subroutine require

    subroutine collectives(checked)
        logical, intent(in) :: checked
        type(phasers_team) :: t
        type(phasers_member) :: members(0:threads - 1)
        integer :: rank
        call t%create(threads, checked)
        call require(t%parties() == threads, 'team parties')
        do rank = 0, threads - 1
            call t%member(rank, members(rank))
        end do
        !$omp parallel num_threads(threads) default(none) shared(members)
        block
            integer :: me, i
            real(c_double) :: d(4), d_sum(4), scalar
            real(c_float) :: f(2)
            integer(c_int32_t) :: k(3), k_max(3)
            integer(c_int64_t) :: l, l_sum
            me = omp_get_thread_num()
            associate (m => members(me))
                if (m%rank() /= me) error stop 'rank'
                if (m%parties() /= threads) error stop 'parties'
                call m%barrier()
                ! Broadcasts from each root in turn, of every kind.
                d = real(me, c_double)
                call m%broadcast(d, 1)
                if (any(nint(d) /= 1)) error stop 'broadcast real64'
                f = real(me, c_float)
                call phasers_member_broadcast(m, f, 2)
                if (any(nint(f) /= 2)) error stop 'broadcast real32'
                k = int(me, c_int32_t)
                call m%broadcast(k, 0)
                if (any(k /= 0)) error stop 'broadcast int32'
                l = int(me, c_int64_t) * 10
                call m%broadcast(l, 2)
                if (l /= 20) error stop 'broadcast int64 scalar'
                ! allreduce.
                do i = 1, 4
                    d(i) = real(me * i, c_double)
                end do
                call m%allreduce(d, d_sum, PHASERS_OP_SUM)
                if (any(nint(d_sum) /= [3, 6, 9, 12])) error stop 'allreduce real64'
                call m%allreduce(real(me, c_double) + 0.5_c_double, scalar, PHASERS_OP_MAX)
                if (nint(scalar * 2) /= 5) error stop 'allreduce real64 scalar'
                k = [int(me, c_int32_t), -int(me, c_int32_t), 7_c_int32_t]
                call m%allreduce(k, k_max, PHASERS_OP_MAX)
                if (any(k_max /= [2, 0, 7])) error stop 'allreduce int32'
                call phasers_member_allreduce(m, int(me + 1, c_int64_t), l_sum, PHASERS_OP_PRODUCT)
                if (l_sum /= 6) error stop 'allreduce int64 product'
                call m%allreduce(d, d_sum(1:3), PHASERS_OP_SUM, stat=i)
                if (i /= PHASERS_EINVAL) error stop 'sizes are checked here'
                call m%barrier()  ! this member did not take part; the others did not either
            end associate
        end block
        !$omp end parallel
        ! The members go first.
        do rank = 0, threads - 1
            call members(rank)%destroy()
        end do
        call t%destroy()
    end subroutine collectives

    subroutine errors()
        type(phasers_team) :: t
        type(phasers_member) :: members(0:1), again
        integer :: stat, codes(0:1), rank
        call t%create(0, stat=stat)
        call require(stat == PHASERS_EINVAL, 'a team of 0')
        call t%create(2)
        call t%member(0, members(0))
        call t%member(1, members(1))
        call t%member(1, again, stat=stat)
        call require(stat == PHASERS_EINVAL, 'each rank is handed out once')
        call t%destroy(stat=stat)
        call require(stat == PHASERS_EBUSY, 'the team outlives its members')
        ! Lengths that differ: every member is told, and the team stays usable.
        !$omp parallel num_threads(2) default(none) shared(members, codes)
        block
            integer :: me
            real(c_double), allocatable :: in(:), out(:)
            me = omp_get_thread_num()
            allocate (in(me + 1), out(me + 1))
            in = 1.0_c_double
            call members(me)%allreduce(in, out, PHASERS_OP_SUM, stat=codes(me))
            call members(me)%barrier()
        end block
        !$omp end parallel
        call require(all(codes == PHASERS_EMISMATCH), 'a mismatch reaches every member')
        do rank = 0, 1
            call members(rank)%destroy()
        end do
        call members(0)%destroy(stat=stat)
        call require(stat == PHASERS_ENULL .or. stat == PHASERS_EDESTROYED, 'second destroy')
        call t%destroy()
    end subroutine errors

    ! Member 0 leaves (as a failing thread's cleanup would): the others are released with
    ! PHASERS_EBROKEN instead of waiting for it.
    subroutine broken()
        type(phasers_team) :: t
        type(phasers_member) :: members(0:threads - 1)
        integer :: codes(0:threads - 1), rank
        call t%create(threads)
        do rank = 0, threads - 1
            call t%member(rank, members(rank))
        end do
        codes = -1
        !$omp parallel num_threads(threads) default(none) shared(members, codes)
        block
            integer :: me, step
            me = omp_get_thread_num()
            do step = 1, 100
                if (me == 0 .and. step == 5) then
                    call members(0)%destroy()
                    exit
                end if
                call members(me)%barrier(stat=codes(me))
                if (codes(me) /= PHASERS_OK) exit
            end do
        end block
        !$omp end parallel
        call require(all(codes(1:) == PHASERS_EBROKEN), 'the others see the team broken')
        do rank = 1, threads - 1
            call members(rank)%destroy()
        end do
        call t%destroy()
    end subroutine broken
end program team
