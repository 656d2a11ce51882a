! Times an allreduce (sum) of 1M (2^20) doubles across 2 OpenMP threads through a phasers
! reduction, and prints the time per call in nanoseconds. The optional argument is the number of
! timed calls (default 50).
!
!     gfortran -std=f2008 -O2 -fopenmp -I$PREFIX/lib/fortran/modules allreduce_1m.f90 \
!         -L$PREFIX/lib -lphasers_fortran -lphasers -o allreduce_1m
program allreduce_1m
    use, intrinsic :: iso_c_binding, only: c_double
    use omp_lib, only: omp_get_num_threads, omp_get_thread_num, omp_get_wtime
    use phasers
    implicit none

    integer, parameter :: n = 2**20, threads = 2, warmup = 3
    type(phasers_reduction) :: reduction
    integer :: calls, length, status, team_size
    character(len=32) :: argument
    real(c_double) :: seconds
    logical :: correct

    calls = 50
    call get_command_argument(1, argument, length, status)
    if (status == 0 .and. length > 0) read (argument, *) calls

    call reduction%create(threads, PHASERS_TYPE_F64, PHASERS_OP_SUM)
    correct = .true.
    team_size = 0
    seconds = 0.0_c_double
    !$omp parallel num_threads(threads) default(none) &
    !$omp     shared(reduction, calls, correct, seconds, team_size)
    block
        real(c_double), allocatable :: input(:), output(:)
        real(c_double) :: start
        integer :: rank, call_number
        rank = omp_get_thread_num()
        if (rank == 0) team_size = omp_get_num_threads()
        allocate (input(n), output(n))
        input = real(rank + 1, c_double)
        do call_number = 1, warmup
            call reduction%allreduce(rank, input, output)
        end do
        ! Start together, so that the time is the calls' and not a thread's late start.
        call reduction%allreduce(rank, input(1:1), output(1:1))
        start = omp_get_wtime()
        do call_number = 1, calls
            call reduction%allreduce(rank, input, output)
        end do
        if (rank == 0) seconds = omp_get_wtime() - start
        ! 1 + 2 in every element.
        if (any(abs(output - 3.0_c_double) > 0.0_c_double)) then
            !$omp atomic write
            correct = .false.
        end if
    end block
    !$omp end parallel
    call reduction%destroy()
    if (team_size /= threads) error stop 'OpenMP did not start every thread'
    if (.not. correct) error stop 'wrong sum'
    print '(a, i0, a, i0, a, i0, a)', 'allreduce of ', n, ' doubles across ', threads, &
        ' threads: ', nint(seconds / calls * 1.0e9_c_double, kind=8), ' ns per call'
    print '(a)', 'ok'
end program allreduce_1m
