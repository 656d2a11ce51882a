/*
 * phasers.hpp: a header-only C++17 interface to the phasers synchronization library, over the C
 * interface of phasers.h (link with libphasers, as for C: see crates/phasers-capi/README.md).
 *
 *     c++ -std=c++17 prog.cpp $(pkg-config --cflags --libs phasers) -pthread -o prog
 *     # or, in CMake: find_package(phasers REQUIRED) + target_link_libraries(app phasers::phasers)
 *
 * Everything is in namespace `phasers`. Names follow the Rust crate (its "Names" table): parties(),
 * rank(), wait() / wait_timeout(), a phaser's next() / signal(), collectives under MPI's names with
 * an `i` for the non-blocking form. phasers.h documents every call in detail; this header says
 * what the C++ layer adds.
 *
 * OWNERSHIP. Every object is a move-only RAII handle: its destructor releases the C handle
 * (destroy, or for a Registration or Member, leaving the phaser or team), so a thread that ends by
 * an exception gives up its membership on the way out, and the others are not left waiting for it:
 *   - a Registration leaves its phaser: later phases no longer wait for it;
 *   - a Member destroyed while the others still need it breaks the team: their calls throw
 *     phasers::error with code() == PHASERS_EBROKEN instead of waiting forever.
 * A Barrier rank is a number, not an object, so nothing can give it up on a thread's behalf: a
 * rank that never arrives leaves the others waiting. Where a thread may fail, use a Team (whose
 * Member breaks the team when it is destroyed), a Phaser, or Barrier::wait_timeout.
 * A moved-from handle is empty (explicit operator bool is false); calling it throws phasers::error
 * with PHASERS_ENULL. native_handle() gives the C handle for calls this header does not wrap.
 * Destructors never throw: a destroy that fails there (PHASERS_EBUSY: another thread still waits
 * on the object, a bug in the program) leaves the object allocated.
 *
 * ERRORS. Failures throw phasers::error (a std::runtime_error) carrying the PHASERS_E* code and
 * the text of phasers_last_error(). Exceptions rather than returned codes because constructors
 * cannot return one, and rather than a result type because std::expected is C++23 and this header
 * is C++17. Timeouts are not errors here: the *_timeout calls return an empty std::optional (or
 * false), and the arrival stays in place as in C, so calling again completes the same episode.
 *
 * BUFFERS. C++17 has no std::span: calls that take arrays accept a pointer and a count, or any
 * contiguous container of the element type (std::vector<T>, std::array<T, N>, T[N], or the
 * minimal phasers::span<T> below, a pointer and a size). Element types map to PHASERS_TYPE_* at
 * compile time: float, double, and the 32- and 64-bit signed and unsigned integers (whatever
 * their spelling: int, long, long long, std::int64_t, ...); any other type is a compile error
 * (static_assert). Output sizes are checked before the C call, since C cannot see them: a wrong
 * size throws phasers::error with PHASERS_EINVAL.
 *
 * THREADS. As in C: a barrier rank, a Registration, a Member is used by one thread at a time
 * (a second thread gets PHASERS_EBUSY); everything else may be shared.
 */
#ifndef PHASERS_HPP
#define PHASERS_HPP

#include "phasers.h"

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "phasers.hpp needs C++17 or later (-std=c++17)"
#endif

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace phasers {

/* ---------------------------------------------------------------------------------------------- */
/* Errors                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

/* What every failed call throws: code() is the PHASERS_E* status, what() names the C function and
   gives phasers_last_error()'s text (for a timeout or a stall: who had not arrived). */
class error : public std::runtime_error {
public:
    error(int code, const std::string &what) : std::runtime_error(what), code_(code) {}

    /* The PHASERS_E* status code (PHASERS_EBROKEN, PHASERS_EMISMATCH, ...). */
    int code() const noexcept { return code_; }

    /* phasers_strerror(code()): the code's static, one-line description. */
    const char *description() const noexcept { return phasers_strerror(code_); }

private:
    int code_;
};

namespace detail {

/* Throws phasers::error for `code`, with phasers_last_error() (read at once, before anything else
   can overwrite it) or, when that is empty, phasers_strerror(code). */
[[noreturn]] inline void fail(int code, const char *function) {
    const char *last = phasers_last_error();
    std::string text = function;
    text += ": ";
    text += (last != nullptr && *last != '\0') ? last : phasers_strerror(code);
    throw error(code, text);
}

inline void check(int code, const char *function) {
    if (code != PHASERS_OK) {
        fail(code, function);
    }
}

/* A failure the C++ layer finds itself (sizes C cannot see). */
[[noreturn]] inline void fail_here(int code, const char *function, const std::string &why) {
    throw error(code, std::string(function) + ": " + why);
}

/* A duration as the nanoseconds the C timeouts take: negative is 0 (only check), beyond 2^64 - 1
   ns (584 years) is 2^64 - 1. */
template <class Rep, class Period>
std::uint64_t to_ns(std::chrono::duration<Rep, Period> timeout) {
    const long double ns = std::chrono::duration<long double, std::nano>(timeout).count();
    if (!(ns > 0.0L)) {
        return 0;
    }
    if (ns >= 18446744073709551615.0L) {
        return std::numeric_limits<std::uint64_t>::max();
    }
    return static_cast<std::uint64_t>(ns);
}

template <class T>
constexpr bool is_character() {
    using U = std::remove_cv_t<T>;
    return std::is_same_v<U, char> || std::is_same_v<U, signed char> ||
           std::is_same_v<U, unsigned char> || std::is_same_v<U, wchar_t> ||
           std::is_same_v<U, char16_t> || std::is_same_v<U, char32_t>
#if defined(__cpp_char8_t)
           || std::is_same_v<U, char8_t>
#endif
        ;
}

/* PHASERS_TYPE_* for T, or -1. */
template <class T>
constexpr int element_code() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, float>) {
        return PHASERS_TYPE_F32;
    } else if constexpr (std::is_same_v<U, double>) {
        return PHASERS_TYPE_F64;
    } else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool> && !is_character<U>()) {
        if constexpr (sizeof(U) == 4) {
            return std::is_signed_v<U> ? PHASERS_TYPE_I32 : PHASERS_TYPE_U32;
        } else if constexpr (sizeof(U) == 8) {
            return std::is_signed_v<U> ? PHASERS_TYPE_I64 : PHASERS_TYPE_U64;
        } else {
            return -1;
        }
    } else {
        return -1;
    }
}

}  // namespace detail

/* Whether T is an element type of accumulators and team collectives, and its PHASERS_TYPE_*. */
template <class T>
inline constexpr bool is_element_v = detail::element_code<T>() >= 0;

template <class T>
inline constexpr int element_type_v = detail::element_code<T>();

/* ---------------------------------------------------------------------------------------------- */
/* span                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

/* A pointer and a number of elements: the minimal std::span this C++17 header needs. It converts
   from any contiguous container of T (std::vector, std::array, a built-in array, anything with
   std::data and std::size), and span<T> converts to span<const T>. It does not own its elements. */
template <class T>
class span {
public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    using size_type = std::size_t;
    using pointer = T *;
    using iterator = T *;

    constexpr span() noexcept = default;
    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}

    template <std::size_t N>
    constexpr span(T (&array)[N]) noexcept : data_(array), size_(N) {}

    /* From a contiguous container whose elements are T (or, for span<const T>, T or const T).
       As with std::span, only a span<const T> binds a temporary container: the span must not
       outlive it. */
    template <class Container,
              class Pointer = decltype(std::data(std::declval<Container &>())),
              class = decltype(std::size(std::declval<Container &>())),
              std::enable_if_t<std::is_pointer_v<Pointer> &&
                                   std::is_convertible_v<std::remove_pointer_t<Pointer> (*)[], T (*)[]> &&
                                   (std::is_lvalue_reference_v<Container> || std::is_const_v<T>) &&
                                   !std::is_same_v<std::remove_cv_t<std::remove_reference_t<Container>>, span>,
                               int> = 0>
    constexpr span(Container &&container) noexcept
        : data_(std::data(container)), size_(std::size(container)) {}

    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }
    constexpr T &operator[](std::size_t index) const noexcept { return data_[index]; }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

namespace detail {

template <class T>
struct is_span : std::false_type {};
template <class T>
struct is_span<span<T>> : std::true_type {};

/* The element type of a contiguous container (const if its elements are), or void. */
template <class Container, class = void>
struct contiguous_element {
    using type = void;
};
template <class Container>
struct contiguous_element<Container,
                          std::void_t<decltype(std::data(std::declval<Container &>())),
                                      decltype(std::size(std::declval<Container &>()))>> {
    using pointer = decltype(std::data(std::declval<Container &>()));
    using type = std::conditional_t<std::is_pointer_v<pointer>, std::remove_pointer_t<pointer>, void>;
};

template <class Container>
using element_of = typename contiguous_element<std::remove_reference_t<Container>>::type;

template <class Container>
inline constexpr bool is_contiguous_v = !std::is_void_v<element_of<Container>>;

/* Any contiguous container as a span of its elements. */
template <class Container>
span<element_of<Container>> as_span(Container &&container) {
    return span<element_of<Container>>(std::data(container), std::size(container));
}

}  // namespace detail

/* ---------------------------------------------------------------------------------------------- */
/* Enumerations                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

/* Barrier algorithms (PHASERS_ALGORITHM_*); `automatic` is PHASERS_ALGORITHM_AUTO. */
enum class algorithm : int {
    automatic = PHASERS_ALGORITHM_AUTO,
    sense_reversing = PHASERS_ALGORITHM_SENSE_REVERSING,
    counting = PHASERS_ALGORITHM_COUNTING,
    ticket = PHASERS_ALGORITHM_TICKET,
    combining_tree = PHASERS_ALGORITHM_COMBINING_TREE,
    mcs_tree = PHASERS_ALGORITHM_MCS_TREE,
    dissemination = PHASERS_ALGORITHM_DISSEMINATION,
    tournament = PHASERS_ALGORITHM_TOURNAMENT
};

/* The algorithm's name as the `phasers` command prints it ("counting", "mcs", ...). */
inline const char *algorithm_name(algorithm which) noexcept {
    const char *name = phasers_algorithm_name(static_cast<int>(which));
    return name != nullptr ? name : "unknown";
}

/* Phaser registration modes (PHASERS_MODE_*). */
enum class mode : int {
    sig = PHASERS_MODE_SIG,
    wait = PHASERS_MODE_WAIT,
    sig_wait = PHASERS_MODE_SIG_WAIT,
    sig_wait_single = PHASERS_MODE_SIG_WAIT_SINGLE
};

/* Reduction operators (PHASERS_OP_*). `and`, `or` and `xor` are C++ keywords, hence bit_*. */
enum class op : int {
    sum = PHASERS_OP_SUM,
    product = PHASERS_OP_PRODUCT,
    min = PHASERS_OP_MIN,
    max = PHASERS_OP_MAX,
    bit_and = PHASERS_OP_AND,
    bit_or = PHASERS_OP_OR,
    bit_xor = PHASERS_OP_XOR
};

/* ---------------------------------------------------------------------------------------------- */
/* Barrier                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* What a completed barrier wait reports. */
class WaitResult {
public:
    constexpr WaitResult() noexcept = default;
    constexpr WaitResult(std::uint64_t episode, bool is_leader) noexcept
        : episode_(episode), is_leader_(is_leader) {}

    /* The episode that completed, counted from 0. */
    constexpr std::uint64_t episode() const noexcept { return episode_; }
    /* True for exactly one rank per episode. */
    constexpr bool is_leader() const noexcept { return is_leader_; }

private:
    std::uint64_t episode_ = 0;
    bool is_leader_ = false;
};

/* A barrier of a fixed number of parties; each thread waits with its own rank, 0 .. parties-1. */
class Barrier {
public:
    explicit Barrier(std::size_t parties, phasers::algorithm which = phasers::algorithm::automatic) {
        detail::check(phasers_barrier_create(parties, static_cast<int>(which), &handle_),
                      "phasers_barrier_create");
    }
    Barrier(Barrier &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Barrier &operator=(Barrier &&other) noexcept {
        if (this != &other) {
            release();
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    Barrier(const Barrier &) = delete;
    Barrier &operator=(const Barrier &) = delete;
    ~Barrier() { release(); }

    std::size_t parties() const {
        std::size_t parties = 0;
        detail::check(phasers_barrier_parties(handle_, &parties), "phasers_barrier_parties");
        return parties;
    }

    /* What `automatic` resolved to. */
    phasers::algorithm algorithm() const {
        int which = 0;
        detail::check(phasers_barrier_algorithm(handle_, &which), "phasers_barrier_algorithm");
        return static_cast<phasers::algorithm>(which);
    }

    /* Arrives as `rank` and waits for every rank. */
    WaitResult wait(std::size_t rank) {
        phasers_wait_result result{};
        detail::check(phasers_barrier_wait(handle_, rank, &result), "phasers_barrier_wait");
        return WaitResult(result.episode, result.is_leader != 0);
    }

    /* As wait, giving up after `timeout`: empty on a timeout, and the arrival stays (calling
       again completes the same episode). A zero timeout only checks. */
    template <class Rep, class Period>
    std::optional<WaitResult> wait_timeout(std::size_t rank,
                                           std::chrono::duration<Rep, Period> timeout) {
        phasers_wait_result result{};
        const int code = phasers_barrier_timedwait(handle_, rank, detail::to_ns(timeout), &result);
        if (code == PHASERS_ETIMEDOUT) {
            return std::nullopt;
        }
        detail::check(code, "phasers_barrier_timedwait");
        return WaitResult(result.episode, result.is_leader != 0);
    }

    phasers_barrier *native_handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    void release() noexcept {
        if (handle_ != nullptr) {
            (void)phasers_barrier_destroy(handle_);
            handle_ = nullptr;
        }
    }
    phasers_barrier *handle_ = nullptr;
};

/* ---------------------------------------------------------------------------------------------- */
/* Phaser and Registration                                                                        */
/* ---------------------------------------------------------------------------------------------- */

class Phaser;

/* One task's membership of a phaser, used by one thread at a time. Destroying it deregisters:
   later phases no longer wait for it (and when the last registration that can signal goes, the
   phaser terminates). */
class Registration {
public:
    Registration() noexcept = default;
    /* Takes ownership of a C registration. */
    explicit Registration(phasers_registration *handle) noexcept : handle_(handle) {}
    Registration(Registration &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Registration &operator=(Registration &&other) noexcept {
        if (this != &other) {
            release();
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    Registration(const Registration &) = delete;
    Registration &operator=(const Registration &) = delete;
    ~Registration() { release(); }

    /* Registers a child task with `child_mode`, no stronger than this one's (Rust's
       Registration::register; `register` is a C++ keyword). Hand the result to the child. */
    Registration register_child(phasers::mode child_mode) {
        phasers_registration *child = nullptr;
        detail::check(phasers_registration_register(handle_, static_cast<int>(child_mode), &child),
                      "phasers_registration_register");
        return Registration(child);
    }

    /* Advances to the next phase: signals (unless already signalled, or wait-only), then waits
       (unless signal-only). Returns the phase completed (signal-only: the phase signalled). */
    std::uint64_t next() {
        std::uint64_t phase = 0;
        detail::check(phasers_registration_next(handle_, &phase), "phasers_registration_next");
        return phase;
    }

    /* As next, giving up after `timeout`: empty on a timeout; the signal stays in place. */
    template <class Rep, class Period>
    std::optional<std::uint64_t> next_timeout(std::chrono::duration<Rep, Period> timeout) {
        std::uint64_t phase = 0;
        const int code = phasers_registration_next_timeout(handle_, detail::to_ns(timeout), &phase);
        if (code == PHASERS_ETIMEDOUT) {
            return std::nullopt;
        }
        detail::check(code, "phasers_registration_next_timeout");
        return phase;
    }

    /* Split phase: signal the current phase now, wait() for it later. */
    void signal() {
        detail::check(phasers_registration_signal(handle_), "phasers_registration_signal");
    }

    /* Waits for the phase this registration is in (signalling first if needed). */
    std::uint64_t wait() {
        std::uint64_t phase = 0;
        detail::check(phasers_registration_wait(handle_, &phase), "phasers_registration_wait");
        return phase;
    }

    /* Deregisters now (what the destructor does), reporting a failure; leaves this empty. */
    void drop() {
        phasers_registration *handle = handle_;
        detail::check(phasers_registration_drop(handle), "phasers_registration_drop");
        handle_ = nullptr;
    }

    phasers_registration *native_handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    void release() noexcept {
        if (handle_ != nullptr) {
            (void)phasers_registration_drop(handle_);
            handle_ = nullptr;
        }
    }
    phasers_registration *handle_ = nullptr;
};

/* A phaser. The object lives on while registrations or accumulators use it, so this handle may
   go before them. */
class Phaser {
public:
    /* A flat phaser and its creator's registration:
           auto [phaser, main_task] = phasers::Phaser::create(phasers::mode::sig_wait); */
    static std::pair<Phaser, Registration> create(mode creator_mode = mode::sig_wait) {
        phasers_phaser *phaser = nullptr;
        phasers_registration *creator = nullptr;
        detail::check(phasers_phaser_create(static_cast<int>(creator_mode), &phaser, &creator),
                      "phasers_phaser_create");
        return {Phaser(phaser), Registration(creator)};
    }

    /* As create, with a tree of `tiers` levels and `degree` children per sub-phaser. */
    static std::pair<Phaser, Registration> create_tree(mode creator_mode, std::size_t tiers,
                                                       std::size_t degree) {
        phasers_phaser *phaser = nullptr;
        phasers_registration *creator = nullptr;
        detail::check(phasers_phaser_create_tree(static_cast<int>(creator_mode), tiers, degree,
                                                 &phaser, &creator),
                      "phasers_phaser_create_tree");
        return {Phaser(phaser), Registration(creator)};
    }

    Phaser() noexcept = default;
    /* Takes ownership of a C phaser handle. */
    explicit Phaser(phasers_phaser *handle) noexcept : handle_(handle) {}
    Phaser(Phaser &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Phaser &operator=(Phaser &&other) noexcept {
        if (this != &other) {
            release();
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    Phaser(const Phaser &) = delete;
    Phaser &operator=(const Phaser &) = delete;
    ~Phaser() { release(); }

    /* The phase in progress: the number of phases completed. */
    std::uint64_t phase() const {
        std::uint64_t phase = 0;
        detail::check(phasers_phaser_phase(handle_, &phase), "phasers_phaser_phase");
        return phase;
    }

    /* Terminates the phaser: every wait, blocked or later, throws with PHASERS_ETERMINATED. */
    void force_terminate() {
        detail::check(phasers_phaser_terminate(handle_), "phasers_phaser_terminate");
    }

    phasers_phaser *native_handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    void release() noexcept {
        if (handle_ != nullptr) {
            (void)phasers_phaser_destroy(handle_);
            handle_ = nullptr;
        }
    }
    phasers_phaser *handle_ = nullptr;
};

/* ---------------------------------------------------------------------------------------------- */
/* Accumulator                                                                                    */
/* ---------------------------------------------------------------------------------------------- */

/* A reduction riding a phaser's phases: values sent in phase p are combined when p completes. */
template <class T>
class Accumulator {
    static_assert(is_element_v<T>,
                  "phasers::Accumulator<T>: T must be float, double or a 32- or 64-bit integer");

public:
    /* With `reproducible`, floating-point results have the same bits whatever the arrival order
       (Rust's Accumulator::reproducible). */
    Accumulator(Phaser &phaser, op operation, bool reproducible = false) {
        detail::check(phasers_accumulator_create(phaser.native_handle(), element_type_v<T>,
                                                 static_cast<int>(operation), reproducible ? 1 : 0,
                                                 &handle_),
                      "phasers_accumulator_create");
    }
    Accumulator(Accumulator &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Accumulator &operator=(Accumulator &&other) noexcept {
        if (this != &other) {
            release();
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    Accumulator(const Accumulator &) = delete;
    Accumulator &operator=(const Accumulator &) = delete;
    ~Accumulator() { release(); }

    /* Contributes `value` through `registration` to its current phase. */
    void send(Registration &registration, T value) {
        phasers_registration *r = registration.native_handle();
        int code;
        if constexpr (element_type_v<T> == PHASERS_TYPE_I32) {
            code = phasers_accumulator_send_i32(handle_, r, static_cast<std::int32_t>(value));
        } else if constexpr (element_type_v<T> == PHASERS_TYPE_I64) {
            code = phasers_accumulator_send_i64(handle_, r, static_cast<std::int64_t>(value));
        } else if constexpr (element_type_v<T> == PHASERS_TYPE_U32) {
            code = phasers_accumulator_send_u32(handle_, r, static_cast<std::uint32_t>(value));
        } else if constexpr (element_type_v<T> == PHASERS_TYPE_U64) {
            code = phasers_accumulator_send_u64(handle_, r, static_cast<std::uint64_t>(value));
        } else if constexpr (element_type_v<T> == PHASERS_TYPE_F32) {
            code = phasers_accumulator_send_f32(handle_, r, value);
        } else {
            code = phasers_accumulator_send_f64(handle_, r, value);
        }
        detail::check(code, "phasers_accumulator_send");
    }

    /* The result of the most recently completed phase (the operator's identity before any). */
    T result() const {
        int code;
        T out{};
        if constexpr (element_type_v<T> == PHASERS_TYPE_I32) {
            std::int32_t v = 0;
            code = phasers_accumulator_result_i32(handle_, &v);
            out = static_cast<T>(v);
        } else if constexpr (element_type_v<T> == PHASERS_TYPE_I64) {
            std::int64_t v = 0;
            code = phasers_accumulator_result_i64(handle_, &v);
            out = static_cast<T>(v);
        } else if constexpr (element_type_v<T> == PHASERS_TYPE_U32) {
            std::uint32_t v = 0;
            code = phasers_accumulator_result_u32(handle_, &v);
            out = static_cast<T>(v);
        } else if constexpr (element_type_v<T> == PHASERS_TYPE_U64) {
            std::uint64_t v = 0;
            code = phasers_accumulator_result_u64(handle_, &v);
            out = static_cast<T>(v);
        } else if constexpr (element_type_v<T> == PHASERS_TYPE_F32) {
            code = phasers_accumulator_result_f32(handle_, &out);
        } else {
            code = phasers_accumulator_result_f64(handle_, &out);
        }
        detail::check(code, "phasers_accumulator_result");
        return out;
    }

    phasers_accumulator *native_handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    void release() noexcept {
        if (handle_ != nullptr) {
            (void)phasers_accumulator_destroy(handle_);
            handle_ = nullptr;
        }
    }
    phasers_accumulator *handle_ = nullptr;
};

/* ---------------------------------------------------------------------------------------------- */
/* Reduction                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

/* The element types of a Reduction: float, double and the 32- and 64-bit signed integers. */
template <class T>
inline constexpr bool is_reduction_element_v =
    element_type_v<T> == PHASERS_TYPE_F32 || element_type_v<T> == PHASERS_TYPE_F64 ||
    element_type_v<T> == PHASERS_TYPE_I32 || element_type_v<T> == PHASERS_TYPE_I64;

/* Reduction algorithms (PHASERS_REDUCE_*); `automatic` picks one per call. */
enum class reduce_algorithm : int {
    automatic = PHASERS_REDUCE_AUTO,
    linear = PHASERS_REDUCE_LINEAR,
    static_tree = PHASERS_REDUCE_STATIC_TREE,
    dynamic_pairs = PHASERS_REDUCE_DYNAMIC_PAIRS,
    dynamic_group = PHASERS_REDUCE_DYNAMIC_GROUP
};

/* An array reduction among a fixed number of ranks (0 .. parties-1), each used by one thread at a
   time: in each call every rank brings an array of the same length, and the element-wise
   reduction lands at the root (reduce) or at every rank (allreduce). The operator, the algorithm
   and the root are fixed at construction. Reductions have no timeout: a rank that never calls
   (for example because its thread threw) leaves the others waiting; use a Team where a thread may
   fail. */
template <class T>
class Reduction {
    static_assert(is_reduction_element_v<T>,
                  "phasers::Reduction<T>: T must be float, double, or a 32- or 64-bit signed integer");

public:
    explicit Reduction(std::size_t parties, op operation = op::sum,
                       reduce_algorithm which = reduce_algorithm::automatic, std::size_t root = 0)
        : root_(root) {
        detail::check(phasers_reduction_create(parties, element_type_v<T>, static_cast<int>(operation),
                                               static_cast<int>(which), root, &handle_),
                      "phasers_reduction_create");
    }
    Reduction(Reduction &&other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)), root_(other.root_) {}
    Reduction &operator=(Reduction &&other) noexcept {
        if (this != &other) {
            release();
            handle_ = std::exchange(other.handle_, nullptr);
            root_ = other.root_;
        }
        return *this;
    }
    Reduction(const Reduction &) = delete;
    Reduction &operator=(const Reduction &) = delete;
    ~Reduction() { release(); }

    std::size_t parties() const {
        std::size_t parties = 0;
        detail::check(phasers_reduction_parties(handle_, &parties), "phasers_reduction_parties");
        return parties;
    }

    /* The rank that receives reduce's result. */
    std::size_t root() const noexcept { return root_; }

    /* Reduces every rank's input into the root's output (as long as the input; the other ranks'
       outputs are neither read nor written, and may be empty). Returns true at the root. A rank
       whose data was consumed may return before the root has the result (quick return). */
    bool reduce(std::size_t rank, span<const T> input, span<T> output) {
        if (rank == root_ && output.size() != input.size()) {
            detail::fail_here(PHASERS_EINVAL, "phasers_reduction_reduce",
                              "the root's output holds " + std::to_string(output.size()) +
                                  " elements, the input " + std::to_string(input.size()));
        }
        return reduce(rank, input.data(), output.empty() ? nullptr : output.data(), input.size());
    }
    bool reduce(std::size_t rank, const T *input, T *output, std::size_t count) {
        int has_result = 0;
        detail::check(phasers_reduction_reduce(handle_, rank, input, output, count, &has_result),
                      "phasers_reduction_reduce");
        return has_result != 0;
    }

    /* Reduces every rank's input into every rank's output (as long as the input, not
       overlapping it). */
    void allreduce(std::size_t rank, span<const T> input, span<T> output) {
        if (output.size() != input.size()) {
            detail::fail_here(PHASERS_EINVAL, "phasers_reduction_allreduce",
                              "the output holds " + std::to_string(output.size()) +
                                  " elements, the input " + std::to_string(input.size()));
        }
        allreduce(rank, input.data(), output.data(), input.size());
    }
    void allreduce(std::size_t rank, const T *input, T *output, std::size_t count) {
        detail::check(phasers_reduction_allreduce(handle_, rank, input, output, count),
                      "phasers_reduction_allreduce");
    }

    phasers_reduction *native_handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    void release() noexcept {
        if (handle_ != nullptr) {
            (void)phasers_reduction_destroy(handle_);
            handle_ = nullptr;
        }
    }
    phasers_reduction *handle_ = nullptr;
    std::size_t root_ = 0;
};

}  // namespace phasers

#endif /* PHASERS_HPP */
