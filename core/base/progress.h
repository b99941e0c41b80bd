#pragma once
// Long work (tokenizing a large file, training BPE, simulating) reports progress in [0, 1] and
// stops early when asked. Both are optional.

#include <functional>
#include <stop_token>

namespace tw {

struct Progress {
    std::function<void(double fraction)> report; // may be empty; called from the working thread
    std::stop_token stop;                        // default: never stops

    void operator()(double fraction) const
    {
        if (report)
            report(fraction);
    }
    [[nodiscard]] bool stopRequested() const { return stop.stop_requested(); }
};

} // namespace tw
