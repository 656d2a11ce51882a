// phasers::Team, Member and Request from C++: every collective across threads (containers and
// pointer + count), split, the non-blocking forms with test / wait / wait_timeout and a Request
// that finishes in its destructor, calls that differ (PHASERS_EMISMATCH on every member), sizes
// checked before the C call, move semantics and destruction in any order, and a thread that
// throws while it owns its Member: the others get PHASERS_EBROKEN instead of hanging.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "check.hpp"

using namespace std::chrono_literals;

static_assert(!std::is_copy_constructible_v<phasers::Team> &&
              std::is_nothrow_move_constructible_v<phasers::Team>);
static_assert(!std::is_copy_constructible_v<phasers::Member> &&
              std::is_nothrow_move_constructible_v<phasers::Member> &&
              std::is_nothrow_move_assignable_v<phasers::Member>);
static_assert(!std::is_copy_constructible_v<phasers::Request> &&
              std::is_nothrow_move_constructible_v<phasers::Request> &&
              std::is_nothrow_move_assignable_v<phasers::Request>);

// Runs `body(member)` on one thread per member of a team of `parties`, and joins them.
static void on_team(std::size_t parties, const std::function<void(phasers::Member &)> &body,
                    bool checked = true) {
    phasers::Team team(parties, checked);
    CHECK(team.parties() == parties);
    std::vector<std::thread> pool;
    for (auto &member : team.participants()) {
        pool.emplace_back([&body, m = std::move(member)]() mutable { body(m); });
    }
    for (auto &t : pool) {
        t.join();
    }
}

static void blocking_collectives() {
    constexpr std::size_t n = 4;
    on_team(n, [](phasers::Member &m) {
        const std::size_t r = m.rank();
        CHECK(m.parties() == n);
        m.barrier();

        std::vector<int> buffer(3, r == 1 ? 7 : 0);
        m.broadcast(1, buffer);
        CHECK(buffer == std::vector<int>(3, 7));

        const std::vector<double> values{static_cast<double>(r), 1.0};
        std::vector<double> total(r == 0 ? 2 : 0);  // only the root's output is written
        m.reduce(0, values, total, phasers::op::sum);
        if (r == 0) {
            CHECK(total[0] == 6.0 && total[1] == 4.0);
        }

        std::array<float, 2> largest{};
        m.allreduce(std::array<float, 2>{static_cast<float>(r), -static_cast<float>(r)}, largest,
                    phasers::op::max);
        CHECK(largest[0] == 3.0f && largest[1] == 0.0f);

        const std::int64_t mine[2] = {static_cast<std::int64_t>(r), 10};
        std::vector<std::int64_t> gathered(r == 2 ? 2 * n : 0);
        m.gather(2, mine, gathered);
        if (r == 2) {
            for (std::size_t i = 0; i < n; i++) {
                CHECK(gathered[2 * i] == static_cast<std::int64_t>(i) && gathered[2 * i + 1] == 10);
            }
        }

        std::vector<std::uint32_t> everyone(n);
        const std::uint32_t one = static_cast<std::uint32_t>(r * r);
        m.allgather(&one, everyone.data(), 1);  // pointer + count
        for (std::size_t i = 0; i < n; i++) {
            CHECK(everyone[i] == i * i);
        }

        std::vector<unsigned long long> blocks;
        if (r == 3) {
            for (std::size_t i = 0; i < n * 2; i++) {
                blocks.push_back(100 + i);
            }
        }
        std::vector<unsigned long long> block(2);
        m.scatter(3, blocks, block);
        CHECK(block[0] == 100 + 2 * r && block[1] == 101 + 2 * r);

        std::vector<int> to_each(n), from_each(n);
        for (std::size_t i = 0; i < n; i++) {
            to_each[i] = static_cast<int>(10 * r + i);  // block i goes to member i
        }
        m.alltoall(to_each, from_each);
        for (std::size_t s = 0; s < n; s++) {
            CHECK(from_each[s] == static_cast<int>(10 * s + r));
        }

        const long long ones[1] = {1};
        long long inclusive[1] = {0}, exclusive[1] = {-5};
        m.scan_inclusive(ones, inclusive, phasers::op::sum);
        m.scan_exclusive(ones, exclusive, phasers::op::sum);
        CHECK(inclusive[0] == static_cast<long long>(r) + 1);
        CHECK(exclusive[0] == (r == 0 ? -5 : static_cast<long long>(r)));  // member 0: untouched

        // Odd and even ranks form sub-teams, ranked in reverse.
        phasers::Member half = m.split(static_cast<int>(r % 2), -static_cast<int>(r));
        CHECK(half.parties() == 2);
        CHECK(half.rank() == (r < 2 ? 1u : 0u));
        int sum = 0;
        const int me = static_cast<int>(r);
        half.allreduce(&me, &sum, 1, phasers::op::sum);
        CHECK(sum == (r % 2 == 0 ? 0 + 2 : 1 + 3));
        m.barrier();  // the parent team stays usable
    });
}

static void non_blocking_collectives() {
    constexpr std::size_t n = 3;
    on_team(n, [](phasers::Member &m) {
        const std::size_t r = m.rank();
        std::vector<double> input{static_cast<double>(r) + 1.0, 2.0};
        std::vector<double> output(2);
        {
            phasers::Request request = m.iallreduce(input, output, phasers::op::sum);
            CHECK(request);
            // The member accepts nothing else meanwhile.
            EXPECT_THROWS(PHASERS_EBUSY, "phasers_member_barrier", m.barrier());
            while (!request.test()) {
                std::this_thread::yield();
            }
            request.wait();  // returns at once; frees it
            CHECK(!request);
        }
        CHECK(output[0] == 6.0 && output[1] == 6.0);

        std::vector<int> buffer(2, r == 0 ? 9 : 0);
        phasers::Request broadcast = m.ibroadcast(0, buffer);
        while (!broadcast.wait_timeout(1ms)) {
        }
        CHECK(!broadcast && buffer[1] == 9);

        std::vector<int> all(n);
        const int mine = static_cast<int>(r);
        phasers::Request gather = m.iallgather(&mine, all.data(), 1);
        phasers::Request moved = std::move(gather);
        CHECK(!gather && moved);
        moved.wait();
        CHECK(all[2] == 2);

        std::vector<long long> pieces(r == 1 ? n : 0, 4), piece(1);
        m.iscatter(1, pieces, piece).wait();
        std::vector<long long> sums(1);
        m.iscan_inclusive(piece, sums, phasers::op::sum).wait();
        CHECK(sums[0] == 4 * static_cast<long long>(r + 1));
        std::vector<float> to(n, static_cast<float>(r)), from(n);
        m.ialltoall(to, from).wait();
        CHECK(from[2] == 2.0f);
        std::vector<long long> before(1, -1);
        m.iscan_exclusive(piece, before, phasers::op::sum).wait();
        CHECK(before[0] == (r == 0 ? -1 : 4 * static_cast<long long>(r)));
        std::vector<float> root_out(r == 0 ? n : 0);
        m.igather(0, phasers::span<const float>(to.data(), 1), root_out).wait();
        if (r == 0) {
            CHECK(root_out[0] == 0.0f && root_out[1] == 1.0f && root_out[2] == 2.0f);
        }
        std::vector<float> reduced(r == 2 ? 1 : 0);
        m.ireduce(2, phasers::span<const float>(to.data(), 1), reduced, phasers::op::sum).wait();
        if (r == 2) {
            CHECK(reduced[0] == 3.0f);
        }

        // A Request that goes out of scope finishes its call first.
        { phasers::Request dropped = m.ibarrier(); }
        m.barrier();
    });
}

static void request_timeout() {
    phasers::Team team(2);
    phasers::Member first = team.participant(0);
    phasers::Member second = team.participant(1);
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_team_member", team.participant(1));  // handed out once
    phasers::Request request = first.ibarrier();
    CHECK(!request.wait_timeout(10ms));  // member 1 has not started it
    CHECK(request);
    std::thread other([&] { second.ibarrier().wait(); });
    while (!request.wait_timeout(50ms)) {
    }
    other.join();
    CHECK(!request);
}

static void errors() {
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_team_create", phasers::Team(0));
    // Sizes C cannot see: refused before the call (one member, so nobody waits for it).
    phasers::Team team(1);
    phasers::Member m = team.participant(0);
    std::vector<int> in{1, 2, 3}, out(2);
    EXPECT_THROWS(PHASERS_EINVAL, "the output holds 2 elements, 3 expected",
                  m.allreduce(in, out, phasers::op::sum));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_member_allgather", m.allgather(in, out));
    EXPECT_THROWS(PHASERS_EINVAL, "the root's output holds 2", m.gather(0, in, out));
    EXPECT_THROWS(PHASERS_EINVAL, "the root's input holds 3", m.scatter(0, in, out));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_member_alltoall", m.alltoall(in, out));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_member_iallreduce", m.iallreduce(in, out, phasers::op::sum));
    // Found by C: a bitwise operator on floating point, a root out of range, a negative color.
    std::vector<double> d{1.0}, e(1);
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_member_allreduce", m.allreduce(d, e, phasers::op::bit_or));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_member_broadcast", m.broadcast(1, d));
    EXPECT_THROWS(PHASERS_EINVAL, "phasers_member_split", m.split(-1, 0));
    m.allreduce(d, e, phasers::op::sum);  // still usable
    CHECK(e[0] == 1.0);

    // Calls that differ: every member of a checked team is told, and the team stays usable.
    std::atomic<int> mismatches{0};
    on_team(3, [&](phasers::Member &member) {
        std::vector<int> mine(member.rank() == 1 ? 2 : 1, 1), sum(mine.size());
        try {
            member.allreduce(mine, sum, phasers::op::sum);
        } catch (const phasers::error &error) {
            if (error.code() == PHASERS_EMISMATCH) {
                mismatches++;
            }
        }
        member.barrier();
    });
    CHECK(mismatches.load() == 3);
}

static void moves_and_lifetimes() {
    // The Team goes first: its members keep the C team alive, and destroy it last.
    phasers::Member only;
    CHECK(!only);
    EXPECT_THROWS(PHASERS_ENULL, "phasers_member_barrier", only.barrier());
    {
        phasers::Team team(1);
        phasers::Team moved_team(std::move(team));
        CHECK(!team && moved_team);
        only = moved_team.participant(0);
    }
    only.barrier();
    phasers::Member other(std::move(only));
    CHECK(!only && other.rank() == 0);
    phasers::Member sub = other.split(0, 0);
    other = phasers::Member();  // destroys the member; `sub` keeps the team alive
    sub.barrier();
    CHECK(sub.parties() == 1);
}

// Destructors release the C handles: a stale pointer then reads PHASERS_EDESTROYED (the handles
// stay as tombstones). The C team goes with the last of the Team and its Members.
static void destructors_release() {
    phasers_team *team_handle;
    phasers_member *member_handle, *sub_handle;
    phasers_request *request_handle;
    phasers_reduction *reduction_handle;
    std::size_t n = 0;
    {
        phasers::Member kept;
        {
            phasers::Team team(1);
            team_handle = team.native_handle();
            kept = team.participant(0);
        }
        CHECK(phasers_team_parties(team_handle, &n) == PHASERS_OK && n == 1);  // kept alive
        member_handle = kept.native_handle();
        phasers::Member sub = kept.split(0, 0);
        sub_handle = sub.native_handle();
        phasers::Request request = kept.ibarrier();
        request_handle = request.native_handle();
        request = phasers::Request();  // freed: the call finished first
        int done = 0;
        CHECK(phasers_request_test(request_handle, &done) == PHASERS_EDESTROYED);
        kept.barrier();  // the member is free again
        phasers::Reduction<int> reduction(1);
        reduction_handle = reduction.native_handle();
    }
    CHECK(phasers_member_rank(member_handle, &n) == PHASERS_EDESTROYED);
    CHECK(phasers_member_rank(sub_handle, &n) == PHASERS_EDESTROYED);
    CHECK(phasers_team_parties(team_handle, &n) == PHASERS_EDESTROYED);
    CHECK(phasers_reduction_parties(reduction_handle, &n) == PHASERS_EDESTROYED);
}

// A thread that throws while it owns its Member: unwinding destroys the Member, which breaks the
// team, and the others' next call throws PHASERS_EBROKEN instead of waiting for it forever.
static void owner_throws() {
    Watchdog watchdog("owner_throws (team)", std::chrono::seconds(30));
    constexpr std::size_t n = 3;
    phasers::Team team(n);
    std::atomic<int> broken{0};
    std::atomic<bool> caught{false};
    std::vector<std::thread> pool;
    for (auto &member : team.participants()) {
        pool.emplace_back([&, m = std::move(member)]() mutable {
            try {
                phasers::Member mine = std::move(m);
                for (int step = 0; step < 100; step++) {
                    if (mine.rank() == 0 && step == 5) {
                        throw std::runtime_error("member 0 fails at step 5");
                    }
                    mine.barrier();
                }
            } catch (const phasers::error &error) {
                if (error.code() == PHASERS_EBROKEN) {
                    broken++;
                }
            } catch (const std::runtime_error &) {
                caught = true;
            }
        });
    }
    for (auto &t : pool) {
        t.join();
    }
    CHECK(caught.load());
    CHECK(broken.load() == static_cast<int>(n) - 1);
}

int main() {
    Watchdog watchdog("cxx team", std::chrono::seconds(100));
    blocking_collectives();
    non_blocking_collectives();
    request_timeout();
    errors();
    moves_and_lifetimes();
    destructors_release();
    owner_throws();
    std::printf("cxx team ok\n");
    return 0;
}
