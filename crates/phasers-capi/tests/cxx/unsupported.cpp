// Each CASE must fail to compile with the static_assert's message (tests/cxx.rs checks it).
#include <vector>

#include "phasers.hpp"

int main() {
    auto [phaser, main_task] = phasers::Phaser::create();
#if CASE == 1
    phasers::Accumulator<char> bad(phaser, phasers::op::sum);  // not an element type
#elif CASE == 2
    phasers::Accumulator<long double> bad(phaser, phasers::op::sum);
#elif CASE == 3
    phasers::Accumulator<bool> bad(phaser, phasers::op::sum);
#elif CASE == 4
    phasers::Reduction<unsigned> bad(2);  // an element type, but not of reductions
#elif CASE == 5
    phasers::Team team(1);
    phasers::Member member = team.participant(0);
    std::vector<short> in(1), out(1);
    member.allreduce(in, out, phasers::op::sum);  // short is no element type
    int bad = 0;
#elif CASE == 6
    phasers::Team team(1);
    phasers::Member member = team.participant(0);
    std::vector<int> out(1);
    // A temporary input would be gone before the request completes.
    phasers::Request bad = member.iallreduce(std::vector<int>{1}, out, phasers::op::sum);
#else
    phasers::Accumulator<double> bad(phaser, phasers::op::sum);  // compiles: the control case
#endif
    (void)bad;
    (void)main_task;
    return 0;
}
