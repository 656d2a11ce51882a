! Built by tests/cmake.rs through the installed CMake package (phasers::fortran): a barrier and a
! reduction of one rank, and an error code through stat.
program cmake_app
    use, intrinsic :: iso_c_binding, only: c_double
    use phasers
    implicit none
    type(phasers_barrier) :: barrier
    type(phasers_reduction) :: reduction
    real(c_double) :: total
    integer :: stat
    call barrier%create(1)
    call barrier%wait(0)
    call barrier%destroy()
    call reduction%create(1, PHASERS_TYPE_F64, PHASERS_OP_SUM)
    call reduction%allreduce(0, 2.5_c_double, total)
    call reduction%destroy()
    call barrier%create(0, stat=stat)
    if (nint(total * 2) /= 5 .or. stat /= PHASERS_EINVAL) error stop 'wrong result'
    print '(a)', 'cmake fortran ok'
end program cmake_app
