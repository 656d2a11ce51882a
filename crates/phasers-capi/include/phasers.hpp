/*
 * phasers.hpp: a header-only C++17 interface to the phasers synchronization library, over the C
 * interface of phasers.h (link with libphasers, as for C: see crates/phasers-capi/README.md).
 *
 *     c++ -std=c++17 prog.cpp $(pkg-config --cflags --libs phasers) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir phasers) -pthread -o prog
 *     # or, in CMake: find_package(phasers REQUIRED) + target_link_libraries(app phasers::phasers)
 *
 * Everything is in namespace `phasers`: Barrier, Phaser and Registration, Accumulator<T>,
 * Reduction<T>, Team, Member and Request, phasers::error, and phasers::span<T>. Names follow the
 * Rust crate (its "Names" table): parties(), rank(), participant() / participants(), wait() /
 * wait_timeout(), a phaser's next() / signal(), force_terminate(), collectives under MPI's names
 * with an `i` for the non-blocking form and the root first (broadcast(root, buffer)). Where C++
 * forbids the Rust name: Registration::register_child (`register` is a keyword), op::bit_and /
 * bit_or / bit_xor (`and`, `or`, `xor` are). phasers.h documents every call in detail; this header
 * says what the C++ layer adds.
 *
 * OWNERSHIP. Every object is a move-only RAII handle: its destructor releases the C handle
 * (destroy, or for a Registration or Member, leaving the phaser or team), so a thread that ends by
 * an exception gives up its membership on the way out, and the others are not left waiting for it:
 *   - a Registration leaves its phaser: later phases no longer wait for it;
 *   - a Member destroyed while the others still need it breaks the team: their calls throw
 *     phasers::error with code() == PHASERS_EBROKEN instead of waiting for ever.
 * Barrier and Reduction ranks are numbers, not objects, so nothing can give one up on a thread's
 * behalf: a rank that never arrives leaves the others waiting (a stall report on stderr after
 * PHASERS_STALL). Where a thread may fail, use a Team, a Phaser, or Barrier::wait_timeout.
 * Members keep their team alive: the C team is destroyed with the last of the Team and its
 * Members, in any order. A Request's destructor finishes its call first (as dropping a Rust Pending
 * does); destroy it before its Member, that is, declare it after.
 * A moved-from handle is empty (explicit operator bool is false); calling it throws phasers::error
 * with PHASERS_ENULL. native_handle() gives the C handle for calls this header does not wrap.
 * Destructors never throw: a destroy that fails there (PHASERS_EBUSY: another thread is still
 * inside a call on the object, a bug in the program) leaves the object allocated.
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
 * their spelling: int, long, long long, std::int64_t, ...; reductions: float, double and the
 * signed ones); any other type is a compile error (static_assert). Output sizes are checked before
 * the C call, since C cannot see them: a wrong size throws phasers::error with PHASERS_EINVAL, and
 * this participant does not take part in the call (a Member's destruction then releases the
 * others). The buffers of a non-blocking call must outlive its Request: a temporary container is
 * a compile error there.
 *
 * THREADS. As in C: a barrier or reduction rank, a Registration, a Member, a Request is used by one
 * thread at a time (a second thread gets PHASERS_EBUSY); everything else may be shared.
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
#include <ostream>
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

/* The same name as a std::string, the library's own (phasers_algorithm_name); a value that is no
   PHASERS_ALGORITHM_* (a cast from a bad int) reads "algorithm(9)", so that it is not mistaken for
   one. */
inline std::string to_string(algorithm which) {
    const char *name = phasers_algorithm_name(static_cast<int>(which));
    if (name != nullptr) {
        return name;
    }
    return "algorithm(" + std::to_string(static_cast<int>(which)) + ")";
}

/* Writes to_string(which): an enum class has no operator<<, and without this one
   `std::cout << barrier.algorithm()` would not compile, or with a cast print a bare number. */
inline std::ostream &operator<<(std::ostream &out, algorithm which) {
    return out << to_string(which);
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


/* ---------------------------------------------------------------------------------------------- */
/* Team, Member, Request                                                                          */
/* ---------------------------------------------------------------------------------------------- */

namespace detail {

template <class T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class T>
constexpr int collective_type() {
    static_assert(is_element_v<T>,
                  "phasers::Member: the element type must be float, double or a 32- or 64-bit "
                  "integer");
    return element_type_v<T>;
}

/* A collective's input: a contiguous container (or span) of an element type, as span<const E>. */
template <class In>
auto input_span(In &&input) {
    static_assert(is_contiguous_v<In>,
                  "phasers::Member: pass a contiguous container (std::vector, std::array, T[N], "
                  "phasers::span) or a pointer and a count");
    using E = std::remove_const_t<element_of<In>>;
    (void)collective_type<E>();
    return span<const E>(std::data(input), std::size(input));
}

/* A collective's output: as input_span, writable. */
template <class Out>
auto output_span(Out &&output) {
    static_assert(is_contiguous_v<Out>,
                  "phasers::Member: pass a contiguous container (std::vector, std::array, T[N], "
                  "phasers::span) or a pointer and a count");
    static_assert(!std::is_const_v<element_of<Out>>, "phasers::Member: the output must be writable");
    using E = element_of<Out>;
    (void)collective_type<E>();
    return span<E>(std::data(output), std::size(output));
}

template <class In, class Out>
constexpr void same_elements() {
    static_assert(std::is_same_v<std::remove_const_t<element_of<In>>, element_of<Out>>,
                  "phasers::Member: the input and the output must have the same element type");
}

/* A non-blocking call's buffer must outlive its Request: a named container, or a span. */
template <class Buffer>
constexpr void lasting() {
    static_assert(std::is_lvalue_reference_v<Buffer> || is_span<remove_cvref_t<Buffer>>::value,
                  "phasers::Member: a non-blocking call's buffers must outlive its Request; pass a "
                  "named container (not a temporary) or a phasers::span");
}

inline void expect(bool ok, const char *function, const std::string &why) {
    if (!ok) {
        fail_here(PHASERS_EINVAL, function, why);
    }
}

inline std::string sizes(const char *what, std::size_t got, std::size_t expected) {
    return std::string(what) + " holds " + std::to_string(got) + " elements, " +
           std::to_string(expected) + " expected";
}

}  // namespace detail

/* A non-blocking collective in flight (Rust's Pending), returned by Member::i*. Its buffers must
   stay untouched until it completes: test() returned true, or wait() / wait_timeout() returned.
   The call makes progress only inside test / wait / wait_timeout (there is no background
   thread), and its member accepts no other call meanwhile (PHASERS_EBUSY). The destructor
   finishes the call (waiting for the other members) and discards its outcome, so declare a
   Request after its buffers and its Member, which then outlive it. */
class Request {
public:
    Request() noexcept = default;
    /* Takes ownership of a C request. */
    explicit Request(phasers_request *handle) noexcept : handle_(handle) {}
    Request(Request &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Request &operator=(Request &&other) noexcept {
        if (this != &other) {
            release();
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    Request(const Request &) = delete;
    Request &operator=(const Request &) = delete;
    ~Request() { release(); }

    /* Makes what progress it can without waiting: true once the call is over (its outputs
       written). Throws the call's error once it is over with one. The request stays valid. */
    bool test() {
        int done = 0;
        detail::check(phasers_request_test(handle_, &done), "phasers_request_test");
        return done != 0;
    }

    /* Waits until the call is over, and throws its error if it failed. Leaves this empty. */
    void wait() {
        phasers_request *handle = handle_;
        const int code = phasers_request_wait(handle);
        if (code != PHASERS_EBUSY && code != PHASERS_ENULL) {
            handle_ = nullptr;  // freed, whatever the outcome
        }
        detail::check(code, "phasers_request_wait");
    }

    /* As wait, giving up after `timeout`: false when the call is still in flight (the request
       stays valid: call again), true when it is over (this is then empty). */
    template <class Rep, class Period>
    bool wait_timeout(std::chrono::duration<Rep, Period> timeout) {
        const int code = phasers_request_timedwait(handle_, detail::to_ns(timeout));
        if (code == PHASERS_ETIMEDOUT) {
            return false;
        }
        if (code != PHASERS_EBUSY && code != PHASERS_ENULL) {
            handle_ = nullptr;
        }
        detail::check(code, "phasers_request_timedwait");
        return true;
    }

    phasers_request *native_handle() const noexcept { return handle_; }
    /* True until the request was waited for (or moved from). */
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    void release() noexcept {
        if (handle_ != nullptr) {
            (void)phasers_request_free(handle_);
            handle_ = nullptr;
        }
    }
    phasers_request *handle_ = nullptr;
};

class Team;

/* One rank's membership of a team, used by one thread at a time; it calls the collectives.
   Destroying a Member while the team still needs it breaks the team: the other members' calls
   throw phasers::error with PHASERS_EBROKEN instead of waiting for it. So a thread that throws
   while it owns its Member releases the others.
   Sizes: containers give their size; the pointer forms take `count`, the elements per member as
   in C. A size found wrong here (C cannot see it) throws PHASERS_EINVAL before the call: this
   member then does not take part, and the others wait until its Member is destroyed. */
class Member {
public:
    Member() noexcept = default;
    Member(Member &&other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)),
          team_(std::move(other.team_)),
          rank_(other.rank_),
          parties_(other.parties_) {}
    Member &operator=(Member &&other) noexcept {
        if (this != &other) {
            release();
            handle_ = std::exchange(other.handle_, nullptr);
            team_ = std::move(other.team_);
            rank_ = other.rank_;
            parties_ = other.parties_;
        }
        return *this;
    }
    Member(const Member &) = delete;
    Member &operator=(const Member &) = delete;
    ~Member() { release(); }

    std::size_t rank() const {
        std::size_t rank = 0;
        detail::check(phasers_member_rank(handle_, &rank), "phasers_member_rank");
        return rank;
    }
    std::size_t parties() const {
        std::size_t parties = 0;
        detail::check(phasers_member_parties(handle_, &parties), "phasers_member_parties");
        return parties;
    }

    /* Collective: members with the same color (0 or more) form a sub-team, ranked by key, ties by
       rank. Returns this member's member of it; this one stays usable. */
    Member split(int color, int key) {
        phasers_member *out = nullptr;
        detail::check(phasers_member_split(handle_, color, key, &out), "phasers_member_split");
        return Member(out, team_);
    }

    /* ---- blocking collectives ---- */

    void barrier() { detail::check(phasers_member_barrier(handle_), "phasers_member_barrier"); }

    template <class T>
    void broadcast(std::size_t root, T *buffer, std::size_t count) {
        detail::check(phasers_member_broadcast(handle_, detail::collective_type<T>(), buffer, count,
                                               root),
                      "phasers_member_broadcast");
    }
    template <class Buffer>
    void broadcast(std::size_t root, Buffer &&buffer) {
        auto b = detail::output_span(buffer);
        broadcast(root, b.data(), b.size());
    }

    template <class T>
    void reduce(std::size_t root, const T *input, T *output, std::size_t count, op operation) {
        detail::check(phasers_member_reduce(handle_, detail::collective_type<T>(),
                                            static_cast<int>(operation), input, output, count, root),
                      "phasers_member_reduce");
    }
    /* Only the root's output is written (as long as the input); the others may pass an empty
       one. */
    template <class In, class Out>
    void reduce(std::size_t root, In &&input, Out &&output, op operation) {
        auto [in, out] = rooted_pair<In, Out>(input, output, root, 1, "phasers_member_reduce");
        reduce(root, in.data(), out, in.size(), operation);
    }

    template <class T>
    void allreduce(const T *input, T *output, std::size_t count, op operation) {
        detail::check(phasers_member_allreduce(handle_, detail::collective_type<T>(),
                                               static_cast<int>(operation), input, output, count),
                      "phasers_member_allreduce");
    }
    template <class In, class Out>
    void allreduce(In &&input, Out &&output, op operation) {
        auto [in, out] = sized<In, Out>(input, output, 1, "phasers_member_allreduce");
        allreduce(in.data(), out.data(), in.size(), operation);
    }

    template <class T>
    void gather(std::size_t root, const T *input, T *output, std::size_t count) {
        detail::check(phasers_member_gather(handle_, detail::collective_type<T>(), input, output,
                                            count, root),
                      "phasers_member_gather");
    }
    /* The root's output holds parties() times the input, member r's block at r * size; the
       others may pass an empty one. */
    template <class In, class Out>
    void gather(std::size_t root, In &&input, Out &&output) {
        auto [in, out] = rooted_pair<In, Out>(input, output, root, parties_, "phasers_member_gather");
        gather(root, in.data(), out, in.size());
    }

    template <class T>
    void allgather(const T *input, T *output, std::size_t count) {
        detail::check(phasers_member_allgather(handle_, detail::collective_type<T>(), input, output,
                                               count),
                      "phasers_member_allgather");
    }
    template <class In, class Out>
    void allgather(In &&input, Out &&output) {
        auto [in, out] = sized<In, Out>(input, output, parties_, "phasers_member_allgather");
        allgather(in.data(), out.data(), in.size());
    }

    template <class T>
    void scatter(std::size_t root, const T *input, T *output, std::size_t count) {
        detail::check(phasers_member_scatter(handle_, detail::collective_type<T>(), input, output,
                                             count, root),
                      "phasers_member_scatter");
    }
    /* Block r of the root's input (parties() times the output's size) goes to member r's
       output; the others may pass an empty input. */
    template <class In, class Out>
    void scatter(std::size_t root, In &&input, Out &&output) {
        auto [in, out] = scatter_pair<In, Out>(input, output, root, "phasers_member_scatter");
        scatter(root, in, out.data(), out.size());
    }

    template <class T>
    void alltoall(const T *input, T *output, std::size_t count) {
        detail::check(phasers_member_alltoall(handle_, detail::collective_type<T>(), input, output,
                                              count),
                      "phasers_member_alltoall");
    }
    /* Input and output hold parties() blocks of the same size: block r of the input goes to
       member r. */
    template <class In, class Out>
    void alltoall(In &&input, Out &&output) {
        auto [in, out] = alltoall_pair<In, Out>(input, output, "phasers_member_alltoall");
        alltoall(in.data(), out.data(), in.size() / parties_);
    }

    template <class T>
    void scan_inclusive(const T *input, T *output, std::size_t count, op operation) {
        detail::check(phasers_member_scan_inclusive(handle_, detail::collective_type<T>(),
                                                    static_cast<int>(operation), input, output,
                                                    count),
                      "phasers_member_scan_inclusive");
    }
    template <class In, class Out>
    void scan_inclusive(In &&input, Out &&output, op operation) {
        auto [in, out] = sized<In, Out>(input, output, 1, "phasers_member_scan_inclusive");
        scan_inclusive(in.data(), out.data(), in.size(), operation);
    }

    template <class T>
    void scan_exclusive(const T *input, T *output, std::size_t count, op operation) {
        detail::check(phasers_member_scan_exclusive(handle_, detail::collective_type<T>(),
                                                    static_cast<int>(operation), input, output,
                                                    count),
                      "phasers_member_scan_exclusive");
    }
    /* Member 0's output is left as it was. */
    template <class In, class Out>
    void scan_exclusive(In &&input, Out &&output, op operation) {
        auto [in, out] = sized<In, Out>(input, output, 1, "phasers_member_scan_exclusive");
        scan_exclusive(in.data(), out.data(), in.size(), operation);
    }

    /* ---- non-blocking collectives: the same arguments; they return a Request ---- */

    Request ibarrier() {
        phasers_request *request = nullptr;
        detail::check(phasers_member_ibarrier(handle_, &request), "phasers_member_ibarrier");
        return Request(request);
    }

    template <class T>
    Request ibroadcast(std::size_t root, T *buffer, std::size_t count) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_ibroadcast(handle_, detail::collective_type<T>(), buffer,
                                                count, root, &request),
                      "phasers_member_ibroadcast");
        return Request(request);
    }
    template <class Buffer>
    Request ibroadcast(std::size_t root, Buffer &&buffer) {
        detail::lasting<Buffer>();
        auto b = detail::output_span(buffer);
        return ibroadcast(root, b.data(), b.size());
    }

    template <class T>
    Request ireduce(std::size_t root, const T *input, T *output, std::size_t count, op operation) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_ireduce(handle_, detail::collective_type<T>(),
                                             static_cast<int>(operation), input, output, count,
                                             root, &request),
                      "phasers_member_ireduce");
        return Request(request);
    }
    template <class In, class Out>
    Request ireduce(std::size_t root, In &&input, Out &&output, op operation) {
        detail::lasting<In>();
        detail::lasting<Out>();
        auto [in, out] = rooted_pair<In, Out>(input, output, root, 1, "phasers_member_ireduce");
        return ireduce(root, in.data(), out, in.size(), operation);
    }

    template <class T>
    Request iallreduce(const T *input, T *output, std::size_t count, op operation) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_iallreduce(handle_, detail::collective_type<T>(),
                                                static_cast<int>(operation), input, output, count,
                                                &request),
                      "phasers_member_iallreduce");
        return Request(request);
    }
    template <class In, class Out>
    Request iallreduce(In &&input, Out &&output, op operation) {
        detail::lasting<In>();
        detail::lasting<Out>();
        auto [in, out] = sized<In, Out>(input, output, 1, "phasers_member_iallreduce");
        return iallreduce(in.data(), out.data(), in.size(), operation);
    }

    template <class T>
    Request igather(std::size_t root, const T *input, T *output, std::size_t count) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_igather(handle_, detail::collective_type<T>(), input, output,
                                             count, root, &request),
                      "phasers_member_igather");
        return Request(request);
    }
    template <class In, class Out>
    Request igather(std::size_t root, In &&input, Out &&output) {
        detail::lasting<In>();
        detail::lasting<Out>();
        auto [in, out] =
            rooted_pair<In, Out>(input, output, root, parties_, "phasers_member_igather");
        return igather(root, in.data(), out, in.size());
    }

    template <class T>
    Request iallgather(const T *input, T *output, std::size_t count) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_iallgather(handle_, detail::collective_type<T>(), input,
                                                output, count, &request),
                      "phasers_member_iallgather");
        return Request(request);
    }
    template <class In, class Out>
    Request iallgather(In &&input, Out &&output) {
        detail::lasting<In>();
        detail::lasting<Out>();
        auto [in, out] = sized<In, Out>(input, output, parties_, "phasers_member_iallgather");
        return iallgather(in.data(), out.data(), in.size());
    }

    template <class T>
    Request iscatter(std::size_t root, const T *input, T *output, std::size_t count) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_iscatter(handle_, detail::collective_type<T>(), input, output,
                                              count, root, &request),
                      "phasers_member_iscatter");
        return Request(request);
    }
    template <class In, class Out>
    Request iscatter(std::size_t root, In &&input, Out &&output) {
        detail::lasting<In>();
        detail::lasting<Out>();
        auto [in, out] = scatter_pair<In, Out>(input, output, root, "phasers_member_iscatter");
        return iscatter(root, in, out.data(), out.size());
    }

    template <class T>
    Request ialltoall(const T *input, T *output, std::size_t count) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_ialltoall(handle_, detail::collective_type<T>(), input,
                                               output, count, &request),
                      "phasers_member_ialltoall");
        return Request(request);
    }
    template <class In, class Out>
    Request ialltoall(In &&input, Out &&output) {
        detail::lasting<In>();
        detail::lasting<Out>();
        auto [in, out] = alltoall_pair<In, Out>(input, output, "phasers_member_ialltoall");
        return ialltoall(in.data(), out.data(), in.size() / parties_);
    }

    template <class T>
    Request iscan_inclusive(const T *input, T *output, std::size_t count, op operation) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_iscan_inclusive(handle_, detail::collective_type<T>(),
                                                     static_cast<int>(operation), input, output,
                                                     count, &request),
                      "phasers_member_iscan_inclusive");
        return Request(request);
    }
    template <class In, class Out>
    Request iscan_inclusive(In &&input, Out &&output, op operation) {
        detail::lasting<In>();
        detail::lasting<Out>();
        auto [in, out] = sized<In, Out>(input, output, 1, "phasers_member_iscan_inclusive");
        return iscan_inclusive(in.data(), out.data(), in.size(), operation);
    }

    template <class T>
    Request iscan_exclusive(const T *input, T *output, std::size_t count, op operation) {
        phasers_request *request = nullptr;
        detail::check(phasers_member_iscan_exclusive(handle_, detail::collective_type<T>(),
                                                     static_cast<int>(operation), input, output,
                                                     count, &request),
                      "phasers_member_iscan_exclusive");
        return Request(request);
    }
    template <class In, class Out>
    Request iscan_exclusive(In &&input, Out &&output, op operation) {
        detail::lasting<In>();
        detail::lasting<Out>();
        auto [in, out] = sized<In, Out>(input, output, 1, "phasers_member_iscan_exclusive");
        return iscan_exclusive(in.data(), out.data(), in.size(), operation);
    }

    phasers_member *native_handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    friend class Team;

    /* Takes ownership of a C member of `team`, which it keeps alive. */
    Member(phasers_member *handle, std::shared_ptr<phasers_team> team)
        : handle_(handle), team_(std::move(team)) {
        // Cached for the size checks; neither fails on the fresh handle.
        (void)phasers_member_rank(handle_, &rank_);
        (void)phasers_member_parties(handle_, &parties_);
    }

    /* Input and output of sizes n and n * factor. */
    template <class In, class Out>
    static auto sized(In &input, Out &output, std::size_t factor, const char *function) {
        detail::same_elements<In, Out>();
        auto in = detail::input_span(input);
        auto out = detail::output_span(output);
        detail::expect(out.size() == in.size() * factor, function,
                       detail::sizes("the output", out.size(), in.size() * factor));
        return std::make_pair(in, out);
    }

    /* As sized at the root; elsewhere the output is ignored (NULL when empty). */
    template <class In, class Out>
    auto rooted_pair(In &input, Out &output, std::size_t root, std::size_t factor,
                     const char *function) const {
        detail::same_elements<In, Out>();
        auto in = detail::input_span(input);
        auto out = detail::output_span(output);
        if (rank_ == root) {
            detail::expect(out.size() == in.size() * factor, function,
                           detail::sizes("the root's output", out.size(), in.size() * factor));
        }
        return std::make_pair(in, out.empty() ? nullptr : out.data());
    }

    /* Scatter: the root's input is parties() times the output; elsewhere it is ignored. */
    template <class In, class Out>
    auto scatter_pair(In &input, Out &output, std::size_t root, const char *function) const {
        detail::same_elements<In, Out>();
        auto in = detail::input_span(input);
        auto out = detail::output_span(output);
        if (rank_ == root) {
            detail::expect(in.size() == out.size() * parties_, function,
                           detail::sizes("the root's input", in.size(), out.size() * parties_));
        }
        return std::make_pair(in.empty() ? nullptr : in.data(), out);
    }

    /* Alltoall: equal sizes, a multiple of parties(). */
    template <class In, class Out>
    auto alltoall_pair(In &input, Out &output, const char *function) const {
        detail::same_elements<In, Out>();
        auto in = detail::input_span(input);
        auto out = detail::output_span(output);
        detail::expect(in.size() == out.size() && parties_ != 0 && in.size() % parties_ == 0,
                       function,
                       "the input and the output must hold the same number of elements, a multiple "
                       "of parties() = " + std::to_string(parties_) + " (input " +
                           std::to_string(in.size()) + ", output " + std::to_string(out.size()) +
                           ")");
        return std::make_pair(in, out);
    }

    void release() noexcept {
        if (handle_ != nullptr) {
            (void)phasers_member_destroy(handle_);
            handle_ = nullptr;
        }
        team_.reset();
    }

    phasers_member *handle_ = nullptr;
    std::shared_ptr<phasers_team> team_;  // the team outlives its members
    std::size_t rank_ = 0;
    std::size_t parties_ = 0;
};

/* A team of a fixed number of members. It hands out one Member per rank; the C team is destroyed
   when the Team and every Member made from it are gone, in any order. */
class Team {
public:
    /* `checked` (the Rust default): calls that differ between members throw PHASERS_EMISMATCH on
       every member instead of being undefined. */
    explicit Team(std::size_t parties, bool checked = true) {
        phasers_team *handle = nullptr;
        detail::check(phasers_team_create(parties, checked ? 1 : 0, &handle), "phasers_team_create");
        team_ = std::shared_ptr<phasers_team>(handle, [](phasers_team *team) {
            (void)phasers_team_destroy(team);
        });
    }
    Team(Team &&) noexcept = default;
    Team &operator=(Team &&) noexcept = default;
    Team(const Team &) = delete;
    Team &operator=(const Team &) = delete;
    ~Team() = default;

    std::size_t parties() const {
        std::size_t parties = 0;
        detail::check(phasers_team_parties(team_.get(), &parties), "phasers_team_parties");
        return parties;
    }

    /* The member of `rank`, handed out once. */
    Member participant(std::size_t rank) {
        phasers_member *member = nullptr;
        detail::check(phasers_team_member(team_.get(), rank, &member), "phasers_team_member");
        return Member(member, team_);
    }

    /* Every member, in rank order. */
    std::vector<Member> participants() {
        std::vector<Member> members;
        const std::size_t n = parties();
        members.reserve(n);
        for (std::size_t rank = 0; rank < n; rank++) {
            members.push_back(participant(rank));
        }
        return members;
    }

    phasers_team *native_handle() const noexcept { return team_.get(); }
    explicit operator bool() const noexcept { return team_ != nullptr; }

private:
    std::shared_ptr<phasers_team> team_;
};

}  // namespace phasers

#endif /* PHASERS_HPP */
