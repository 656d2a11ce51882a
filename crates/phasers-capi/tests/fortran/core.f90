! The phasers Fortran module over barriers, phasers and registrations, with OpenMP threads as the
! ranks: results across threads, stat codes and messages, timeouts, termination.
program core
    use, intrinsic :: iso_c_binding, only: c_double, c_int64_t
    use omp_lib, only: omp_get_num_threads, omp_get_thread_num
    use phasers
    implicit none

    integer, parameter :: threads = 4

    call errors()
    call barrier_across_threads(PHASERS_ALGORITHM_AUTO)
    call barrier_across_threads(PHASERS_ALGORITHM_DISSEMINATION)
    call barrier_across_threads(PHASERS_ALGORITHM_TOURNAMENT)
    call barrier_timeout()
    call phaser_across_threads()
    call phaser_timeout_and_termination()
    print '(a)', 'fortran core ok'

contains

    subroutine require(condition, what)
        logical, intent(in) :: condition
        character(len=*), intent(in) :: what
        if (.not. condition) then
            print '(a)', 'check failed: ' // what // ' (last error: ' // phasers_last_error() // ')'
            error stop 1
        end if
    end subroutine require

    subroutine errors()
        type(phasers_barrier) :: barrier
        type(phasers_phaser) :: phaser
        type(phasers_registration) :: main_task, producer, child
        integer :: stat
        call phasers_barrier_create(barrier, 0, stat=stat)
        call require(stat == PHASERS_EINVAL, 'zero parties is PHASERS_EINVAL')
        call require(len(phasers_last_error()) > 0, 'a failure leaves a message')
        call require(phasers_strerror(PHASERS_EINVAL) /= phasers_strerror(PHASERS_EBUSY), &
            'strerror describes each code')
        call barrier%create(2, PHASERS_ALGORITHM_COUNTING, stat=stat)
        call require(stat == PHASERS_OK, 'create')
        call require(len(phasers_last_error()) == 0, 'a success clears the message')
        call require(barrier%parties() == 2, 'parties')
        call require(phasers_algorithm_name(PHASERS_ALGORITHM_COUNTING) == 'counting', 'name')
        call require(phasers_algorithm_name(99) == '', 'unknown algorithm name')
        call barrier%wait(5, stat=stat)
        call require(stat == PHASERS_EINVAL, 'rank out of range')
        call require(index(phasers_last_error(), '5') > 0, 'the message names the rank')
        call barrier%destroy()
        call barrier%destroy(stat=stat)
        call require(stat == PHASERS_ENULL .or. stat == PHASERS_EDESTROYED, 'second destroy')

        call phasers_phaser_create(phaser, main_task, PHASERS_MODE_WAIT, stat=stat)
        call require(stat == PHASERS_EINVAL, 'a wait-only creator')
        call phaser%create(main_task)
        call main_task%register(producer, PHASERS_MODE_SIG)
        call producer%wait(stat=stat)
        call require(stat == PHASERS_ECAPABILITY, 'signal-only cannot wait')
        call producer%register(child, PHASERS_MODE_SIG_WAIT, stat=stat)
        call require(stat == PHASERS_ECAPABILITY, 'no stronger child')
        call producer%drop()
        call main_task%drop()
        call phaser%destroy()
    end subroutine errors

    subroutine barrier_across_threads(algorithm)
        integer, intent(in) :: algorithm
        integer, parameter :: episodes = 300
        type(phasers_barrier) :: barrier
        integer :: arrived(0:threads - 1), leaders, team_size
        call barrier%create(threads, algorithm)
        arrived = 0
        leaders = 0
        team_size = 0
        !$omp parallel num_threads(threads) default(none) shared(barrier, arrived, leaders, team_size)
        block
            integer :: rank, e, r
            logical :: leader
            integer(c_int64_t) :: episode
            rank = omp_get_thread_num()
            !$omp single
            team_size = omp_get_num_threads()
            !$omp end single
            do e = 0, episodes - 1
                !$omp atomic update
                arrived(rank) = arrived(rank) + 1
                call barrier%wait(rank, is_leader=leader, episode=episode)
                if (episode /= e) error stop 'wrong episode'
                do r = 0, threads - 1
                    ! Every rank arrived at episode e before any left it.
                    block
                        integer :: seen
                        !$omp atomic read
                        seen = arrived(r)
                        if (seen < e + 1) error stop 'a rank left before all arrived'
                    end block
                end do
                if (leader) then
                    !$omp atomic update
                    leaders = leaders + 1
                end if
            end do
        end block
        !$omp end parallel
        call require(team_size == threads, 'OpenMP gave every thread asked for')
        call require(leaders == episodes, 'one leader per episode')
        call barrier%destroy()
    end subroutine barrier_across_threads

    subroutine barrier_timeout()
        type(phasers_barrier) :: barrier
        integer :: stat
        integer(c_int64_t) :: episode
        call barrier%create(2)
        call barrier%wait_timeout(0, 0.01_c_double, stat=stat)
        call require(stat == PHASERS_ETIMEDOUT, 'rank 1 is absent')
        call require(index(phasers_last_error(), '1') > 0, 'the message names the missing rank')
        !$omp parallel num_threads(2) default(none) shared(barrier, episode)
        if (omp_get_thread_num() == 1) then
            call barrier%wait(1)
        else
            ! The arrival stayed: this wait completes episode 0.
            call barrier%wait_timeout(0, 60.0_c_double, episode=episode)
        end if
        !$omp end parallel
        call require(episode == 0, 'the timed-out arrival completed episode 0')
        call barrier%destroy()
    end subroutine barrier_timeout

    subroutine phaser_across_threads()
        integer, parameter :: phases = 200
        type(phasers_phaser) :: phaser
        type(phasers_registration) :: main_task, tasks(0:threads - 1)
        integer :: t
        call phaser%create_tree(main_task, PHASERS_MODE_SIG_WAIT, 2, 2)
        do t = 0, threads - 1
            call main_task%register(tasks(t), PHASERS_MODE_SIG_WAIT)
        end do
        call main_task%drop()
        !$omp parallel num_threads(threads) default(none) shared(tasks)
        block
            integer :: rank, p
            integer(c_int64_t) :: phase
            rank = omp_get_thread_num()
            do p = 0, phases - 1
                if (mod(p, 2) == 0) then
                    call tasks(rank)%next(phase)
                else
                    call tasks(rank)%signal()
                    call tasks(rank)%wait(phase)
                end if
                if (phase /= p) error stop 'wrong phase'
            end do
            call tasks(rank)%drop()
        end block
        !$omp end parallel
        ! The last task's drop completes one more phase, in which nobody is left (as Java's
        ! arriveAndDeregister does); the phaser then terminates.
        call require(phaser%phase() == phases + 1, 'every phase completed')
        call phaser%destroy()
    end subroutine phaser_across_threads

    subroutine phaser_timeout_and_termination()
        type(phasers_phaser) :: phaser
        type(phasers_registration) :: main_task, late
        integer :: stat
        integer(c_int64_t) :: phase
        call phaser%create(main_task)
        call main_task%register(late, PHASERS_MODE_SIG_WAIT)
        call main_task%next_timeout(0.01_c_double, stat=stat)
        call require(stat == PHASERS_ETIMEDOUT, 'late has not signalled')
        call late%next_timeout(10.0_c_double, phase)
        call require(phase == 0, 'late completes phase 0')
        call main_task%next_timeout(10.0_c_double, phase)
        call require(phase == 0, 'the signal stayed: the same phase')
        call phaser%terminate()
        call late%next(stat=stat)
        call require(stat == PHASERS_ETERMINATED, 'terminated')
        call late%drop()
        call main_task%drop()
        call phaser%destroy()
    end subroutine phaser_timeout_and_termination
end program core
