! A failed call without stat= stops the program, after writing the C function and
! phasers_last_error()'s message to error_unit (tests/fortran.rs checks both).
program error_stop
    use phasers
    implicit none
    type(phasers_barrier) :: barrier
    print '(a)', 'creating a barrier of 0 parties'
    call barrier%create(0)
    print '(a)', 'not reached'
end program error_stop
