// Built by tests/cmake.rs through the installed CMake package (phasers::phasers): two threads meet
// at a Barrier and allreduce through a Reduction<double>.
#include <cstdio>
#include <thread>
#include <vector>

#include <phasers.hpp>

int main() {
    phasers::Barrier barrier(2);
    phasers::Reduction<double> reduction(2);
    std::vector<double> sums[2] = {std::vector<double>(3), std::vector<double>(3)};
    auto work = [&](std::size_t rank) {
        const std::vector<double> input{1.0 + static_cast<double>(rank), 2.0, 3.0};
        barrier.wait(rank);
        reduction.allreduce(rank, input, sums[rank]);
    };
    std::thread other(work, 1);
    work(0);
    other.join();
    if (sums[0] != std::vector<double>{3.0, 4.0, 6.0} || sums[1] != sums[0]) {
        std::printf("wrong sums\n");
        return 1;
    }
    std::printf("cmake cxx ok\n");
    return 0;
}
