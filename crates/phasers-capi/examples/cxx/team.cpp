// Threads as the members of a phasers::Team: a blocking allreduce, a non-blocking one overlapped
// with local work, a barrier per step, and what happens when one thread throws: its Member is
// destroyed on the way out, the team breaks, and the others get phasers::error (PHASERS_EBROKEN)
// instead of waiting for ever.
//
//     c++ -std=c++17 team.cpp $(pkg-config --cflags --libs phasers) -Wl,-rpath,$(pkg-config --variable=libdir phasers) -pthread -o team
#include <phasers.hpp>

#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

int main() {
    constexpr std::size_t threads = 4;
    std::vector<double> totals(threads);
    {
        phasers::Team team(threads);
        std::vector<std::thread> pool;
        for (phasers::Member &member : team.participants()) {
            pool.emplace_back([&totals, m = std::move(member)]() mutable {
                const std::size_t rank = m.rank();
                const std::vector<double> mine{static_cast<double>(rank), 1.0};
                std::vector<double> sum(2);
                m.allreduce(mine, sum, phasers::op::sum);  // {0+1+2+3, 4}

                std::vector<double> largest(2);
                phasers::Request request = m.iallreduce(mine, largest, phasers::op::max);
                double local = 0.0;  // work that needs neither buffer
                for (int i = 1; i <= 1000; i++) {
                    local += 1.0 / i;
                }
                request.wait();  // now `largest` holds {3, 1}
                m.barrier();
                totals[rank] = sum[0] + largest[0] + (local > 7.0 ? 1.0 : 0.0);
            });
        }
        for (auto &t : pool) {
            t.join();
        }
    }
    std::printf("every member: %g (6 + 3 + 1)\n", totals[0]);

    phasers::Team team(threads);
    std::vector<std::thread> pool;
    std::vector<int> outcome(threads);
    for (phasers::Member &member : team.participants()) {
        pool.emplace_back([&outcome, m = std::move(member)]() mutable {
            const std::size_t rank = m.rank();
            try {
                phasers::Member mine = std::move(m);  // owned by this scope
                for (int step = 0; step < 10; step++) {
                    if (rank == 2 && step == 3) {
                        throw std::runtime_error("member 2 fails");
                    }
                    mine.barrier();
                }
            } catch (const phasers::error &e) {
                outcome[rank] = e.code();
            } catch (const std::runtime_error &) {
                outcome[rank] = -1;
            }
        });
    }
    for (auto &t : pool) {
        t.join();
    }
    int released = 0;
    for (std::size_t rank = 0; rank < threads; rank++) {
        released += outcome[rank] == PHASERS_EBROKEN;
    }
    std::printf("member 2 threw; %d members were released with PHASERS_EBROKEN\n", released);
    const bool ok = totals == std::vector<double>(threads, 10.0) && released == 3;
    std::printf(ok ? "ok\n" : "FAILED\n");
    return ok ? 0 : 1;
}
