// phasers::Reduction<T> from C++: allreduce and reduce across threads for every element type and
// algorithm, containers and pointer + count, output sizes checked before the C call, calls that
// differ between ranks (PHASERS_EMISMATCH on every rank), and move semantics.
#include <array>
#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

#include "check.hpp"

static_assert(!std::is_copy_constructible_v<phasers::Reduction<double>> &&
              std::is_nothrow_move_constructible_v<phasers::Reduction<double>> &&
              std::is_nothrow_move_assignable_v<phasers::Reduction<double>>);
static_assert(phasers::is_reduction_element_v<float> && phasers::is_reduction_element_v<int> &&
              phasers::is_reduction_element_v<long long> &&
              !phasers::is_reduction_element_v<unsigned> &&
              !phasers::is_reduction_element_v<std::uint64_t>);

constexpr std::size_t threads = 4;
constexpr std::size_t count = 37;

// Rank r's element i in call c: small integers, exact in float, so every order sums the same.
template <class T>
T value(std::size_t r, int c, std::size_t i) {
    return static_cast<T>(static_cast<long long>((r * 7 + static_cast<std::size_t>(c) * 3 + i * 5) % 41) - 20);
}

template <class T>
T expected_sum(int c, std::size_t i) {
    T total = 0;
    for (std::size_t r = 0; r < threads; r++) {
        total = static_cast<T>(total + value<T>(r, c, i));
    }
    return total;
}

template <class T>
void sums(phasers::reduce_algorithm which) {
    constexpr std::size_t root = 2;
    phasers::Reduction<T> reduction(threads, phasers::op::sum, which, root);
    CHECK(reduction.parties() == threads && reduction.root() == root);
    std::vector<std::thread> pool;
    for (std::size_t rank = 0; rank < threads; rank++) {
        pool.emplace_back([&reduction, rank] {
            std::vector<T> input(count);
            std::vector<T> output(count);
            for (int c = 0; c < 4; c++) {
                for (std::size_t i = 0; i < count; i++) {
                    input[i] = value<T>(rank, c, i);
                }
                if (c % 2 == 0) {
                    reduction.allreduce(rank, input, output);  // containers
                } else {
                    reduction.allreduce(rank, input.data(), output.data(), count);  // pointers
                }
                for (std::size_t i = 0; i < count; i++) {
                    CHECK(output[i] == expected_sum<T>(c, i));
                }
                // reduce: only the root's output is written; the others pass an empty one on
                // even calls.
                std::vector<T> at_root(rank == root || c % 2 ? count : 0, T(99));
                bool has_result = reduction.reduce(rank, input, at_root);
                CHECK(has_result == (rank == root));
                for (std::size_t i = 0; i < at_root.size(); i++) {
                    CHECK(at_root[i] == (rank == root ? expected_sum<T>(c, i) : T(99)));
                }
            }
        });
    }
    for (auto &t : pool) {
        t.join();
    }
}

static void arrays_and_spans() {
    phasers::Reduction<int> reduction(2, phasers::op::max, phasers::reduce_algorithm::linear);
    std::thread other([&] {
        const std::array<int, 3> input{7, 1, 5};
        int output[3] = {0, 0, 0};
        reduction.allreduce(1, input, output);
        CHECK(output[0] == 7 && output[1] == 2 && output[2] == 5);
    });
    std::vector<int> output(3);
    reduction.allreduce(0, std::vector<int>{3, 2, 1}, phasers::span<int>(output));  // a temporary input
    CHECK(output[0] == 7 && output[1] == 2 && output[2] == 5);
    other.join();
}

static void sizes_and_errors() {
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_reduction_create",
                  phasers::Reduction<double>(2, phasers::op::bit_and));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_reduction_create",
                  phasers::Reduction<double>(2, phasers::op::sum,
                                             phasers::reduce_algorithm::automatic, 2));
    phasers::Reduction<double> reduction(1);
    std::vector<double> input{1.0, 2.0};
    std::vector<double> short_output(1);
    // Found before the C call (C cannot see the output's size); nothing was called.
    EXPECT_THROWS(PHASERS_EINVAL, "output holds 1 elements, the input 2",
                  reduction.allreduce(0, input, short_output));
    EXPECT_THROWS(PHASERS_EINVAL, "root's output holds 1 elements",
                  reduction.reduce(0, input, short_output));
    // Overlapping buffers: found by C.
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_reduction_allreduce",
                  reduction.allreduce(0, input.data(), input.data(), 2));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_reduction_allreduce", reduction.allreduce(1, input, input));
    std::vector<double> output(2);
    reduction.allreduce(0, input, output);  // still usable
    CHECK(output[1] == 2.0);
}

static void mismatch() {
    Watchdog watchdog("reduction mismatch", std::chrono::seconds(30));
    phasers::Reduction<long long> reduction(2);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> pool;
    for (std::size_t rank = 0; rank < 2; rank++) {
        pool.emplace_back([&, rank] {
            std::vector<long long> input(rank + 1, 1), output(rank + 1);
            try {
                reduction.allreduce(rank, input, output);
            } catch (const phasers::error &e) {
                if (e.code() == PHASERS_EMISMATCH) {
                    mismatches++;
                }
            }
        });
    }
    for (auto &t : pool) {
        t.join();
    }
    CHECK(mismatches.load() == 2);
}

static void moves() {
    phasers::Reduction<float> a(1);
    phasers::Reduction<float> b(std::move(a));
    CHECK(!a && b && b.parties() == 1);
    EXPECT_THROWS(PHASERS_ENULL, "phasers_reduction_parties", a.parties());
    phasers::Reduction<float> c(3, phasers::op::sum, phasers::reduce_algorithm::automatic, 2);
    c = std::move(b);
    CHECK(c.parties() == 1 && c.root() == 0 && !b);
    float in = 2.5f, out = 0.0f;
    c.allreduce(0, &in, &out, 1);
    CHECK(out == 2.5f);
}

int main() {
    Watchdog watchdog("cxx reduction", std::chrono::seconds(100));
    for (auto which : {phasers::reduce_algorithm::automatic, phasers::reduce_algorithm::linear,
                       phasers::reduce_algorithm::static_tree,
                       phasers::reduce_algorithm::dynamic_pairs,
                       phasers::reduce_algorithm::dynamic_group}) {
        sums<float>(which);
        sums<double>(which);
        sums<int>(which);
        sums<std::int64_t>(which);
    }
    arrays_and_spans();
    sizes_and_errors();
    mismatch();
    moves();
    std::printf("cxx reduction ok\n");
    return 0;
}
