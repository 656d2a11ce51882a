! The phasers Fortran module over reductions: allreduce and reduce of real64, real32, int32 and
! int64 scalars and arrays across OpenMP threads for every algorithm, has_result at the root,
! sizes checked before the C call, calls that differ between ranks (PHASERS_EMISMATCH).
program reduction
    use, intrinsic :: iso_c_binding, only: c_double, c_float, c_int32_t, c_int64_t
    use omp_lib, only: omp_get_thread_num
    use phasers
    implicit none

    integer, parameter :: threads = 3, count = 37
    integer :: algorithm

    do algorithm = PHASERS_REDUCE_AUTO, PHASERS_REDUCE_DYNAMIC_GROUP
        call sums(algorithm)
    end do
    call errors()
    call mismatch()
    print '(a)', 'fortran reduction ok'

contains

    subroutine require(condition, what)
        logical, intent(in) :: condition
        character(len=*), intent(in) :: what
        if (.not. condition) then
            print '(a)', 'check failed: ' // what // ' (last error: ' // phasers_last_error() // ')'
            error stop 1
        end if
    end subroutine require

    ! Rank r's element i: small integers, exact in every kind and order.
    elemental integer function value(r, i)
        integer, intent(in) :: r, i
        value = mod(r * 7 + i * 5, 41) - 20
    end function value

    subroutine sums(algorithm)
        integer, intent(in) :: algorithm
        integer, parameter :: root = 1
        type(phasers_reduction) :: r64, r32, i32, i64
        integer :: expected(count), i
        call r64%create(threads, PHASERS_TYPE_F64, PHASERS_OP_SUM, algorithm, root)
        call r32%create(threads, PHASERS_TYPE_F32, PHASERS_OP_SUM, algorithm, root)
        call i32%create(threads, PHASERS_TYPE_I32, PHASERS_OP_SUM, algorithm, root)
        call i64%create(threads, PHASERS_TYPE_I64, PHASERS_OP_MAX, algorithm, root)
        call require(r64%parties() == threads, 'parties')
        do i = 1, count
            expected(i) = sum([value(0, i), value(1, i), value(2, i)])
        end do
        !$omp parallel num_threads(threads) default(none) shared(r64, r32, i32, i64, expected)
        block
            integer :: rank, j
            real(c_double) :: d_in(count), d_out(count), d_scalar
            real(c_float) :: f_in(count), f_out(count)
            integer(c_int32_t) :: k_in(count), k_out(count)
            integer(c_int64_t) :: l_in(count), l_out(count), l_scalar
            logical :: has_result
            rank = omp_get_thread_num()
            do j = 1, count
                d_in(j) = real(value(rank, j), c_double)
            end do
            f_in = real(d_in, c_float)
            k_in = int(d_in, c_int32_t)
            l_in = int(d_in, c_int64_t)
            ! Arrays.
            call r64%allreduce(rank, d_in, d_out)
            call r32%allreduce(rank, f_in, f_out)
            call i32%allreduce(rank, k_in, k_out)
            call i64%allreduce(rank, l_in, l_out)
            if (any(int(d_out) /= expected) .or. any(int(f_out) /= expected) .or. &
                any(k_out /= expected)) error stop 'wrong sum'
            if (any(l_out /= [(maxval([value(0, j), value(1, j), value(2, j)]), j = 1, count)])) &
                error stop 'wrong max'
            ! Scalars.
            call r64%allreduce(rank, real(rank + 1, c_double), d_scalar)
            if (nint(d_scalar) /= 6) error stop 'wrong scalar sum'
            call i64%allreduce(rank, int(rank, c_int64_t), l_scalar)
            if (l_scalar /= threads - 1) error stop 'wrong scalar max'
            ! reduce: only the root's output is written.
            d_out = -99.0_c_double
            call r64%reduce(rank, d_in, d_out, has_result)
            if (has_result .neqv. (rank == root)) error stop 'has_result'
            if (rank == root) then
                if (any(int(d_out) /= expected)) error stop 'wrong reduce'
            else
                if (any(int(d_out) /= -99)) error stop 'reduce wrote a non-root output'
            end if
            ! Non-contiguous sections are copied in and out by the compiler.
            call r32%allreduce(rank, f_in(1:count:2), f_out(1:count:2))
            if (any(int(f_out(1:count:2)) /= expected(1:count:2))) error stop 'strided sum'
        end block
        !$omp end parallel
        call r64%destroy()
        call r32%destroy()
        call i32%destroy()
        call i64%destroy()
    end subroutine sums

    subroutine errors()
        type(phasers_reduction) :: red
        real(c_double) :: a(3), b(2)
        integer(c_int32_t) :: k, k_out
        integer :: stat
        call red%create(2, PHASERS_TYPE_U32, PHASERS_OP_SUM, stat=stat)
        call require(stat == PHASERS_EINVAL, 'unsigned reductions do not exist')
        call red%create(2, PHASERS_TYPE_F64, PHASERS_OP_XOR, stat=stat)
        call require(stat == PHASERS_EINVAL, 'xor on real64')
        call red%create(1, PHASERS_TYPE_F64, PHASERS_OP_SUM)
        a = [1.0_c_double, 2.0_c_double, 3.0_c_double]
        call red%allreduce(0, a, b, stat=stat)
        call require(stat == PHASERS_EINVAL, 'output shorter than input')
        call phasers_reduction_allreduce(red, 0, a(1:2), b, stat=stat)
        call require(stat == PHASERS_OK, 'the generic under its C name')
        call require(nint(b(2)) == 2, 'one rank: the input')
        k = 1
        call red%allreduce(0, k, k_out, stat=stat)
        call require(stat == PHASERS_EINVAL, 'int32 into a real64 reduction (checked here: C has no type)')
        call red%destroy()
    end subroutine errors

    subroutine mismatch()
        type(phasers_reduction) :: red
        integer :: codes(0:1)
        call red%create(2, PHASERS_TYPE_I32, PHASERS_OP_SUM)
        !$omp parallel num_threads(2) default(none) shared(red, codes)
        block
            integer :: rank
            integer(c_int32_t), allocatable :: in(:), out(:)
            rank = omp_get_thread_num()
            allocate (in(rank + 1), out(rank + 1))
            in = 1
            call red%allreduce(rank, in, out, stat=codes(rank))
        end block
        !$omp end parallel
        call require(all(codes == PHASERS_EMISMATCH), 'different lengths: every rank is told')
        call red%destroy()
    end subroutine mismatch
end program reduction
