! Jacobi iteration for Laplace's equation on a square grid, with OpenMP threads as the ranks of a
! phasers barrier and a phasers reduction: each thread updates its own block of columns, the
! residual (the largest change) is combined by an allreduce, and a barrier per iteration keeps a
! thread from reading its neighbour's columns while they are being copied. The result must equal
! a serial run's, bit for bit (the maximum is exact in any order).
!
!     gfortran -std=f2008 -fopenmp -I$PREFIX/lib/fortran/modules jacobi.f90 \
!         -L$PREFIX/lib -lphasers_fortran -lphasers -o jacobi
program jacobi
    use, intrinsic :: iso_c_binding, only: c_double
    use omp_lib, only: omp_get_num_threads, omp_get_thread_num
    use phasers
    implicit none

    integer, parameter :: n = 40          ! interior points per side
    integer, parameter :: threads = 2
    integer, parameter :: max_iterations = 100000
    real(c_double), parameter :: tolerance = 1.0e-6_c_double

    real(c_double), allocatable :: serial(:, :), parallel(:, :)
    integer :: serial_iterations, parallel_iterations
    real(c_double) :: serial_residual, parallel_residual, difference

    call solve_serial(serial, serial_iterations, serial_residual)
    call solve_parallel(parallel, parallel_iterations, parallel_residual)
    difference = maxval(abs(parallel - serial))
    print '(a, i0, a, i0, a, es10.3)', 'jacobi: ', n, 'x', n, ' grid, residual ', parallel_residual
    print '(a, i0, a, i0)', 'iterations: serial ', serial_iterations, ', parallel ', &
        parallel_iterations
    print '(a, es10.3)', 'largest difference from the serial run: ', difference
    if (parallel_iterations /= serial_iterations .or. difference > 0.0_c_double .or. &
            parallel_residual >= tolerance) then
        print '(a)', 'FAILED'
        error stop 1
    end if
    print '(a)', 'ok'

contains

    ! The grid with its boundary: 1 along the top edge, 0 on the others, 0 inside.
    subroutine initial(u)
        real(c_double), allocatable, intent(out) :: u(:, :)
        allocate (u(0:n + 1, 0:n + 1))
        u = 0.0_c_double
        u(:, n + 1) = 1.0_c_double
    end subroutine initial

    ! One sweep over columns first..last: new from u; returns the largest change.
    function sweep(u, new, first, last) result(change)
        real(c_double), intent(in) :: u(0:, 0:)
        real(c_double), intent(inout) :: new(0:, 0:)
        integer, intent(in) :: first, last
        real(c_double) :: change
        integer :: i, j
        change = 0.0_c_double
        do j = first, last
            do i = 1, n
                new(i, j) = 0.25_c_double * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1))
                change = max(change, abs(new(i, j) - u(i, j)))
            end do
        end do
    end function sweep

    subroutine solve_serial(u, iterations, residual)
        real(c_double), allocatable, intent(out) :: u(:, :)
        integer, intent(out) :: iterations
        real(c_double), intent(out) :: residual
        real(c_double), allocatable :: new(:, :)
        call initial(u)
        new = u
        do iterations = 1, max_iterations
            residual = sweep(u, new, 1, n)
            u(:, 1:n) = new(:, 1:n)
            if (residual < tolerance) exit
        end do
    end subroutine solve_serial

    subroutine solve_parallel(u, iterations, residual)
        real(c_double), allocatable, intent(out) :: u(:, :)
        integer, intent(out) :: iterations
        real(c_double), intent(out) :: residual
        real(c_double), allocatable :: new(:, :)
        type(phasers_barrier) :: barrier
        type(phasers_reduction) :: largest
        integer :: team_size
        call initial(u)
        new = u
        call barrier%create(threads)
        call largest%create(threads, PHASERS_TYPE_F64, PHASERS_OP_MAX)
        team_size = 0
        !$omp parallel num_threads(threads) default(none) &
        !$omp     shared(u, new, barrier, largest, iterations, residual, team_size)
        block
            integer :: rank, first, last, iteration
            real(c_double) :: mine, everyone
            rank = omp_get_thread_num()
            if (rank == 0) team_size = omp_get_num_threads()
            first = rank * n / threads + 1
            last = (rank + 1) * n / threads
            do iteration = 1, max_iterations
                mine = sweep(u, new, first, last)
                ! Every thread gets the largest change of all: the same decision everywhere.
                call largest%allreduce(rank, mine, everyone)
                u(:, first:last) = new(:, first:last)
                ! Nobody reads a neighbour's columns for the next sweep before they are copied.
                call barrier%wait(rank)
                if (everyone < tolerance) exit
            end do
            if (rank == 0) then
                iterations = iteration
                residual = everyone
            end if
        end block
        !$omp end parallel
        if (team_size /= threads) error stop 'OpenMP did not start every thread'
        call largest%destroy()
        call barrier%destroy()
    end subroutine solve_parallel
end program jacobi
