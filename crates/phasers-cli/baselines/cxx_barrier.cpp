// C++20 std::barrier<> (libstdc++) behind a C ABI. Every entry point is noexcept and catches
// everything: an exception must not unwind into Rust, and noexcept turns anything missed into
// std::terminate rather than undefined behaviour.
#include "baselines.h"

#include <barrier>
#include <cerrno>
#include <cstddef>
#include <new>

// Over-aligned like the pthread shim, so both baselines get the same placement.
struct alignas(128) phasers_cxx_barrier {
    explicit phasers_cxx_barrier(std::ptrdiff_t parties) : barrier(parties) {}
    std::barrier<> barrier;
};

extern "C" phasers_cxx_barrier *phasers_cxx_barrier_create(int64_t parties, int *error) noexcept
{
    // std::barrier accepts 0, but arriving at it is then undefined; refuse it like pthread does.
    if (parties <= 0 || parties > std::barrier<>::max()) {
        *error = EINVAL;
        return nullptr;
    }
    try {
        return new phasers_cxx_barrier(static_cast<std::ptrdiff_t>(parties));
    } catch (const std::bad_alloc &) {
        *error = ENOMEM;
    } catch (...) {
        *error = PHASERS_NATIVE_EXCEPTION;
    }
    return nullptr;
}

extern "C" int phasers_cxx_barrier_wait(phasers_cxx_barrier *shim) noexcept
{
    try {
        shim->barrier.arrive_and_wait();
        return 0;
    } catch (...) {
        // libstdc++'s arrive_and_wait does not throw today; the standard does not promise it.
        return PHASERS_NATIVE_EXCEPTION;
    }
}

extern "C" void phasers_cxx_barrier_destroy(phasers_cxx_barrier *shim) noexcept
{
    delete shim;
}

extern "C" int32_t phasers_libstdcxx_release(void) noexcept
{
    return _GLIBCXX_RELEASE;
}

extern "C" int64_t phasers_libstdcxx_date(void) noexcept
{
    return __GLIBCXX__;
}
