// Each CASE must fail to compile with the static_assert's message (tests/cxx.rs checks it).
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
#else
    phasers::Accumulator<double> bad(phaser, phasers::op::sum);  // compiles: the control case
#endif
    (void)bad;
    (void)main_task;
    return 0;
}
