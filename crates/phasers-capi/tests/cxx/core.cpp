// phasers.hpp over barriers, phasers, registrations and accumulators: each wrapper across
// threads, move semantics, errors as phasers::error with their code, the element-type mapping,
// phasers::span, and a thread that throws while it holds a Registration.
#include <array>
#include <iterator>
#include <atomic>
#include <cstdint>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "check.hpp"

using namespace std::chrono_literals;

// --- compile-time properties -------------------------------------------------------------------

template <class T>
constexpr bool move_only = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                           std::is_nothrow_move_constructible_v<T> &&
                           std::is_nothrow_move_assignable_v<T> &&
                           std::is_nothrow_destructible_v<T>;
static_assert(move_only<phasers::Barrier>);
static_assert(move_only<phasers::Phaser>);
static_assert(move_only<phasers::Registration>);
static_assert(move_only<phasers::Accumulator<double>>);

static_assert(std::is_base_of_v<std::runtime_error, phasers::error>);

static_assert(phasers::element_type_v<float> == PHASERS_TYPE_F32);
static_assert(phasers::element_type_v<double> == PHASERS_TYPE_F64);
static_assert(phasers::element_type_v<int> == PHASERS_TYPE_I32);
static_assert(phasers::element_type_v<std::int32_t> == PHASERS_TYPE_I32);
static_assert(phasers::element_type_v<unsigned> == PHASERS_TYPE_U32);
static_assert(phasers::element_type_v<long long> == PHASERS_TYPE_I64);
static_assert(phasers::element_type_v<std::int64_t> == PHASERS_TYPE_I64);
static_assert(phasers::element_type_v<unsigned long long> == PHASERS_TYPE_U64);
static_assert(phasers::element_type_v<std::uint64_t> == PHASERS_TYPE_U64);
static_assert(phasers::element_type_v<const double> == PHASERS_TYPE_F64);
static_assert(!phasers::is_element_v<bool>);
static_assert(!phasers::is_element_v<char>);
static_assert(!phasers::is_element_v<char32_t>);
static_assert(!phasers::is_element_v<std::int16_t>);
static_assert(!phasers::is_element_v<long double>);
static_assert(!phasers::is_element_v<std::string>);

// span conversions: containers, arrays, const.
static_assert(std::is_convertible_v<std::vector<double> &, phasers::span<double>>);
static_assert(std::is_convertible_v<std::vector<double> &, phasers::span<const double>>);
static_assert(std::is_convertible_v<const std::vector<double> &, phasers::span<const double>>);
static_assert(!std::is_convertible_v<const std::vector<double> &, phasers::span<double>>);
static_assert(!std::is_convertible_v<std::vector<float> &, phasers::span<double>>);
static_assert(std::is_convertible_v<std::array<int, 3> &, phasers::span<int>>);
static_assert(std::is_convertible_v<int (&)[4], phasers::span<const int>>);
static_assert(std::is_convertible_v<phasers::span<int>, phasers::span<const int>>);
static_assert(!std::is_convertible_v<phasers::span<const int>, phasers::span<int>>);

static void spans() {
    std::vector<double> v{1.0, 2.0, 3.0};
    phasers::span<const double> s = v;
    CHECK(s.size() == 3 && s.data() == v.data() && s[2] == 3.0 && !s.empty());
    int raw[4] = {1, 2, 3, 4};
    phasers::span<int> r = raw;
    int total = 0;
    for (int x : r) {
        total += x;
    }
    CHECK(total == 10 && r.size() == 4);
    phasers::span<const int> rc = r;
    CHECK(rc.data() == raw);
    CHECK(phasers::span<int>().empty());
}

// --- errors ------------------------------------------------------------------------------------

static void errors() {
    // A constructor that fails throws, with the C code and phasers_last_error()'s text.
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_barrier_create", phasers::Barrier(0));
    try {
        phasers::Barrier too_many(1u << 20);
        CHECK(false);
    } catch (const phasers::error &e) {
        CHECK(e.code() == PHASERS_EINVAL);
        CHECK(std::string(e.description()) == phasers_strerror(PHASERS_EINVAL));
        const std::runtime_error &base = e;  // catchable as std::runtime_error
        CHECK(std::strlen(base.what()) > std::strlen("phasers_barrier_create: "));
    }
    phasers::Barrier barrier(2);
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_barrier_wait", barrier.wait(2));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_phaser_create",
                  phasers::Phaser::create(phasers::mode::wait));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_phaser_create_tree",
                  phasers::Phaser::create_tree(phasers::mode::sig_wait, 0, 2));
    auto [phaser, main_task] = phasers::Phaser::create();
    // A bitwise operator on floating point.
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_accumulator_create",
                  phasers::Accumulator<double>(phaser, phasers::op::bit_xor));
    // Capabilities: a signal-only registration cannot wait.
    phasers::Registration producer = main_task.register_child(phasers::mode::sig);
    EXPECT_THROWS(PHASERS_ECAPABILITY, "phasers_registration_wait", producer.wait());
    EXPECT_THROWS(PHASERS_ECAPABILITY, "phasers_registration_register",
                  producer.register_child(phasers::mode::sig_wait));
}

// --- barriers ----------------------------------------------------------------------------------

static void barrier_across_threads(phasers::algorithm which) {
    constexpr std::size_t threads = 4;
    constexpr int episodes = 500;
    phasers::Barrier barrier(threads, which);
    CHECK(barrier.parties() == threads);
    CHECK(barrier.algorithm() != phasers::algorithm::automatic);
    if (which != phasers::algorithm::automatic) {
        CHECK(barrier.algorithm() == which);
    }
    std::atomic<int> arrived{0};
    std::atomic<int> leaders{0};
    std::vector<std::thread> pool;
    for (std::size_t rank = 0; rank < threads; rank++) {
        pool.emplace_back([&, rank] {
            for (int e = 0; e < episodes; e++) {
                arrived.fetch_add(1);
                phasers::WaitResult result = barrier.wait(rank);
                CHECK(result.episode() == static_cast<std::uint64_t>(e));
                // Everyone arrived at episode e before anyone left it.
                CHECK(arrived.load() >= (e + 1) * static_cast<int>(threads));
                if (result.is_leader()) {
                    leaders.fetch_add(1);
                }
            }
        });
    }
    for (auto &t : pool) {
        t.join();
    }
    CHECK(leaders.load() == episodes);
}

// Issue 34: `std::cout << barrier.algorithm()` printed 2. Names are the library's own, the ones
// the Rust crate and the `phasers` command use.
static void algorithm_names() {
    const std::pair<phasers::algorithm, const char *> expected[] = {
        {phasers::algorithm::automatic, "auto"},
        {phasers::algorithm::sense_reversing, "sense-reversing"},
        {phasers::algorithm::counting, "counting"},
        {phasers::algorithm::ticket, "ticket"},
        {phasers::algorithm::combining_tree, "combining-tree"},
        {phasers::algorithm::mcs_tree, "mcs"},
        {phasers::algorithm::dissemination, "dissemination"},
        {phasers::algorithm::tournament, "tournament"},
    };
    std::set<std::string> seen;
    for (const auto &[which, name] : expected) {
        CHECK(phasers::to_string(which) == name);
        CHECK(phasers::to_string(which) == phasers_algorithm_name(static_cast<int>(which)));
        std::ostringstream out;
        out << which;
        CHECK(out.str() == name);
        seen.insert(out.str());
    }
    CHECK(seen.size() == std::size(expected));
    // What a barrier reports prints by name, found by argument-dependent lookup as users write it.
    phasers::Barrier barrier(2, phasers::algorithm::dissemination);
    std::ostringstream out;
    out << "algorithm " << barrier.algorithm();
    CHECK(out.str() == "algorithm dissemination");
    CHECK(to_string(barrier.algorithm()) == "dissemination");
    // A value that is no PHASERS_ALGORITHM_* says so, with the number.
    CHECK(phasers::to_string(static_cast<phasers::algorithm>(99)) == "algorithm(99)");
    std::ostringstream bad;
    bad << static_cast<phasers::algorithm>(-1);
    CHECK(bad.str() == "algorithm(-1)");
}

static void barrier_timeout() {
    phasers::Barrier barrier(2, phasers::algorithm::counting);
    CHECK(std::string(phasers::algorithm_name(barrier.algorithm())) == "counting");
    // Rank 1 is absent: rank 0 times out, and its arrival stays.
    CHECK(!barrier.wait_timeout(0, 10ms).has_value());
    CHECK(!barrier.wait_timeout(0, -5s).has_value());  // negative: only checks
    std::thread other([&] { CHECK(barrier.wait(1).episode() == 0); });
    std::optional<phasers::WaitResult> done;
    while (!(done = barrier.wait_timeout(0, 50ms))) {
    }
    CHECK(done->episode() == 0);
    other.join();
}

// --- phasers -----------------------------------------------------------------------------------

static void phaser_across_threads() {
    constexpr int tasks = 3;
    constexpr std::uint64_t phases = 200;
    auto [phaser, main_task] = phasers::Phaser::create_tree(phasers::mode::sig_wait, 2, 2);
    std::vector<phasers::Registration> registrations;
    for (int t = 0; t < tasks; t++) {
        registrations.push_back(main_task.register_child(phasers::mode::sig_wait));
    }
    main_task.drop();  // the creator leaves; later phases wait for the tasks only
    CHECK(!main_task);
    EXPECT_THROWS(PHASERS_ENULL, "phasers_registration_next", main_task.next());
    std::atomic<std::uint64_t> arrivals{0};
    std::vector<std::thread> pool;
    for (auto &registration : registrations) {
        pool.emplace_back([&arrivals, r = std::move(registration)]() mutable {
            for (std::uint64_t p = 0; p < phases; p++) {
                arrivals.fetch_add(1);
                if (p % 2 == 0) {
                    CHECK(r.next() == p);
                } else {
                    r.signal();  // split phase
                    CHECK(r.wait() == p);
                }
                CHECK(arrivals.load() >= (p + 1) * tasks);
            }
        });
    }
    for (auto &t : pool) {
        t.join();
    }
    // Each thread dropped its registration: the last drop completes one more phase, in which
    // nobody is left (as Java's arriveAndDeregister does), and the phaser then terminates.
    CHECK(phaser.phase() == phases + 1);
}

static void phaser_timeout_and_termination() {
    auto [phaser, main_task] = phasers::Phaser::create();
    phasers::Registration late = main_task.register_child(phasers::mode::sig_wait);
    CHECK(!main_task.next_timeout(10ms).has_value());  // `late` has not signalled
    CHECK(late.next_timeout(1s) == std::optional<std::uint64_t>(0));
    CHECK(main_task.next_timeout(1s) == std::optional<std::uint64_t>(0));  // the same phase
    std::thread waiter([r = std::move(late)]() mutable {
        EXPECT_THROWS(PHASERS_ETERMINATED, "phasers_registration_next", r.next());
    });
    std::this_thread::sleep_for(20ms);
    phaser.force_terminate();
    waiter.join();
    EXPECT_THROWS(PHASERS_ETERMINATED, "phasers_registration_next", main_task.next());
}

// --- accumulators ------------------------------------------------------------------------------

template <class T>
static void accumulator_sum(bool reproducible) {
    constexpr int tasks = 3;
    constexpr int phases = 5;
    auto [phaser, main_task] = phasers::Phaser::create();
    phasers::Accumulator<T> sum(phaser, phasers::op::sum, reproducible);
    phasers::Accumulator<T> max(phaser, phasers::op::max);
    CHECK(sum.result() == T(0));
    std::vector<std::thread> pool;
    for (int t = 1; t <= tasks; t++) {
        pool.emplace_back([&sum, &max, t, r = main_task.register_child(phasers::mode::sig_wait)]() mutable {
            for (int p = 0; p < phases; p++) {
                sum.send(r, static_cast<T>(10 * t + p));
                max.send(r, static_cast<T>(t));
                r.next();
            }
        });
    }
    for (int p = 0; p < phases; p++) {
        CHECK(main_task.next() == static_cast<std::uint64_t>(p));
        CHECK(sum.result() == static_cast<T>(60 + 3 * p));
        CHECK(max.result() == static_cast<T>(tasks));
    }
    for (auto &t : pool) {
        t.join();
    }
}

// --- move semantics ----------------------------------------------------------------------------

static void moves() {
    phasers::Barrier a(2);
    phasers_barrier *raw = a.native_handle();
    phasers::Barrier b(std::move(a));
    CHECK(!a && b && b.native_handle() == raw);
    EXPECT_THROWS(PHASERS_ENULL, "phasers_barrier_parties", a.parties());
    phasers::Barrier c(3);
    c = std::move(b);  // c's own barrier is destroyed, b's moves in
    CHECK(c.parties() == 2 && !b);
    phasers::Barrier &same = c;
    c = std::move(same);  // self-move keeps it
    CHECK(c && c.parties() == 2);
    std::vector<phasers::Barrier> barriers;
    for (int i = 0; i < 8; i++) {
        barriers.emplace_back(static_cast<std::size_t>(i + 1));  // reallocations move them
    }
    for (std::size_t i = 0; i < barriers.size(); i++) {
        CHECK(barriers[i].parties() == i + 1);
    }

    // Move-assigning over a Registration deregisters the one it held: the phase no longer waits
    // for it.
    auto [phaser, main_task] = phasers::Phaser::create();
    phasers::Registration first = main_task.register_child(phasers::mode::sig_wait);
    phasers::Registration second = main_task.register_child(phasers::mode::sig);
    CHECK(second.next() == 0);            // signal-only: signals phase 0, never waits
    first = std::move(second);            // `first`'s old registration leaves
    CHECK(main_task.next() == 0);         // so phase 0 completes without it
    CHECK(first.next() == 1);             // `first` now holds the signal-only one
    CHECK(main_task.next() == 1);
    phasers::Phaser moved_phaser(std::move(phaser));
    CHECK(!phaser && moved_phaser.phase() == 2);
    phasers::Accumulator<int> acc(moved_phaser, phasers::op::sum);
    phasers::Accumulator<int> acc2 = std::move(acc);
    CHECK(!acc && acc2);
    EXPECT_THROWS(PHASERS_ENULL, "phasers_accumulator_result", acc.result());
    acc2.send(main_task, 5);
    first.drop();
    main_task.next();
    CHECK(acc2.result() == 5);
}

// --- destructors release the C handles ---------------------------------------------------------

// A destroyed C handle stays a tombstone, so a stale pointer reads PHASERS_EDESTROYED: that shows
// each destructor (and move-assignment over a live handle) destroyed what it owned.
static void destructors_release() {
    phasers_barrier *barrier;
    phasers_phaser *phaser;
    phasers_registration *creator, *child, *replaced;
    phasers_accumulator *accumulator;
    {
        phasers::Barrier b(2);
        barrier = b.native_handle();
        auto [p, main_task] = phasers::Phaser::create();
        phaser = p.native_handle();
        creator = main_task.native_handle();
        phasers::Registration c = main_task.register_child(phasers::mode::sig_wait);
        child = c.native_handle();
        phasers::Registration r = main_task.register_child(phasers::mode::wait);
        replaced = r.native_handle();
        r = main_task.register_child(phasers::mode::wait);  // the old one is dropped now
        std::uint64_t phase = 0;
        CHECK(phasers_registration_next(replaced, &phase) == PHASERS_EDESTROYED);
        phasers::Accumulator<double> a(p, phasers::op::sum);
        accumulator = a.native_handle();
        CHECK(phasers_barrier_parties(barrier, nullptr) == PHASERS_ENULL);  // alive: checks `out`
    }
    std::size_t parties = 0;
    std::uint64_t phase = 0;
    double result = 0.0;
    CHECK(phasers_barrier_parties(barrier, &parties) == PHASERS_EDESTROYED);
    CHECK(phasers_phaser_phase(phaser, &phase) == PHASERS_EDESTROYED);
    CHECK(phasers_registration_next(creator, &phase) == PHASERS_EDESTROYED);
    CHECK(phasers_registration_next(child, &phase) == PHASERS_EDESTROYED);
    CHECK(phasers_accumulator_result_f64(accumulator, &result) == PHASERS_EDESTROYED);
}

// --- a thread that throws while it holds a registration ----------------------------------------

static void owner_throws_registration() {
    Watchdog watchdog("owner_throws_registration", std::chrono::seconds(30));
    constexpr std::size_t tasks = 3;
    constexpr std::uint64_t phases = 50;
    auto [phaser, main_task] = phasers::Phaser::create();
    std::vector<phasers::Registration> registrations;
    for (std::size_t t = 0; t < tasks; t++) {
        registrations.push_back(main_task.register_child(phasers::mode::sig_wait));
    }
    main_task.drop();
    std::atomic<bool> caught{false};
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < tasks; t++) {
        pool.emplace_back([&, t, r = std::move(registrations[t])]() mutable {
            try {
                // The thread owns its registration; the exception unwinds through its scope.
                phasers::Registration mine = std::move(r);
                for (std::uint64_t p = 0; p < phases; p++) {
                    if (t == 0 && p == 7) {
                        throw std::runtime_error("task 0 fails in phase 7");
                    }
                    CHECK(mine.next() == p);
                }
            } catch (const std::runtime_error &) {
                caught = true;  // `mine` was destroyed on the way here: it deregistered
            }
        });
    }
    for (auto &t : pool) {
        t.join();  // the other tasks finished all their phases without task 0
    }
    CHECK(caught.load());
    // The last task's drop completed one more phase, as Java's arriveAndDeregister does.
    CHECK(phaser.phase() == phases + 1);
}

// A Barrier rank cannot be given up (it is a number): when the thread of rank 1 throws, rank 0's
// wait_timeout reports the missing rank instead of hanging.
static void owner_throws_barrier_timeout() {
    Watchdog watchdog("owner_throws_barrier_timeout", std::chrono::seconds(30));
    phasers::Barrier barrier(2);
    std::thread failing([&] {
        try {
            barrier.wait(1);
            throw std::runtime_error("rank 1 fails after episode 0");
        } catch (const std::runtime_error &) {
        }
    });
    CHECK(barrier.wait(0).episode() == 0);
    failing.join();
    CHECK(!barrier.wait_timeout(0, 50ms).has_value());
}

int main() {
    Watchdog watchdog("cxx core", std::chrono::seconds(100));
    spans();
    errors();
    for (phasers::algorithm which :
         {phasers::algorithm::automatic, phasers::algorithm::sense_reversing,
          phasers::algorithm::counting, phasers::algorithm::ticket,
          phasers::algorithm::combining_tree, phasers::algorithm::mcs_tree,
          phasers::algorithm::dissemination, phasers::algorithm::tournament}) {
        barrier_across_threads(which);
    }
    algorithm_names();
    barrier_timeout();
    phaser_across_threads();
    phaser_timeout_and_termination();
    accumulator_sum<int>(false);
    accumulator_sum<long long>(false);
    accumulator_sum<unsigned>(false);
    accumulator_sum<std::uint64_t>(false);
    accumulator_sum<float>(true);
    accumulator_sum<double>(false);
    accumulator_sum<double>(true);
    moves();
    destructors_release();
    owner_throws_registration();
    owner_throws_barrier_timeout();
    std::printf("cxx core ok\n");
    return 0;
}
