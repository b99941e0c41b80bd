#pragma once
// Long work (tokenizing a large file, training BPE, simulating) reports progress in [0, 1] and
// stops early when asked. Both are optional.

#include <algorithm>
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

// The part [lo, hi] of a longer piece of work: reports lo + f·(hi − lo) for f clamped to [0, 1], with the
// parent's stop token. The parent's callback is copied, so the part may outlive `parent`.
[[nodiscard]] inline Progress subProgress(const Progress& parent, double lo, double hi)
{
    Progress p;
    p.stop = parent.stop;
    if (parent.report)
        p.report = [report = parent.report, lo, hi](double f) { report(lo + (hi - lo) * std::clamp(f, 0.0, 1.0)); };
    return p;
}

} // namespace tw
