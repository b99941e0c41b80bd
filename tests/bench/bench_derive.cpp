// Speed of core::derive for every preset (issue 3: "derive for any preset in under 1 ms"):
//   cold  — a fresh Deriver: tokenizing the sample, the dataset figures and stage 2;
//   warm  — the same Deriver after an edit of the model (the hidden size cycles through 6 valid
//           values, more than the Deriver keeps, so stage 1 is memoized and stage 2 runs again);
//   memo  — the same scenario again: the Deriver returns the cached derivation;
//   model — model::deriveModel alone (the part of "warm" that stage 2 itself takes).
// With --gui PATH it also starts the GUI offscreen (`PATH --preset NAME --stage 2 --startup-timing`)
// for the two presets with the most tensors and reports how long the stage 2 pane took to show.
// Usage: bench_derive [--runs N] [--preset NAME] [--gui PATH] [--gui-runs N]   (Release build; scripts/bench.sh)

#include "model/tensors.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Stats {
    double median = 0;
    double min = 0;
};

Stats stats(std::vector<double> v)
{
    if (v.empty())
        return {};
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.front()};
}

int fail(const std::string& what)
{
    std::fprintf(stderr, "bench_derive: %s\n", what.c_str());
    return 1;
}

struct Row {
    std::string preset;
    std::size_t tensors = 0, figures = 0;
    Stats cold, warm, memo, model;
};

// One GUI start: the GUI's own report "tokenwire: stage 2 shown with its derivation after 412 ms"
// (from main() to the painted pane) and the wall time of the whole process (loading the libraries
// and exiting included). shownMs < 0 on failure.
struct GuiStart {
    double shownMs = -1;
    double processMs = -1;
};

GuiStart guiStartup(const std::string& gui, const std::string& preset)
{
    const std::string cmd = "QT_QPA_PLATFORM=offscreen '" + gui + "' --preset '" + preset
                            + "' --stage 2 --startup-timing 2>&1";
    const auto t0 = Clock::now();
    FILE* p = popen(cmd.c_str(), "r");
    if (!p)
        return {};
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p))
        out += buf;
    const int rc = pclose(p);
    GuiStart start;
    start.processMs = msSince(t0);
    const std::string_view key = "with its derivation after ";
    const auto at = out.find(key);
    if (rc != 0 || at == std::string::npos) {
        std::fprintf(stderr, "bench_derive: %s failed:\n%s", cmd.c_str(), out.c_str());
        return {};
    }
    start.shownMs = std::atof(out.c_str() + at + key.size());
    return start;
}

} // namespace

int main(int argc, char** argv)
{
    int runs = 200;
    int guiRuns = 3;
    std::string only, gui;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--runs" && hasValue)
            runs = std::atoi(argv[++i]);
        else if (a == "--preset" && hasValue)
            only = argv[++i];
        else if (a == "--gui" && hasValue)
            gui = argv[++i];
        else if (a == "--gui-runs" && hasValue)
            guiRuns = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: bench_derive [--runs N] [--preset NAME] [--gui PATH] [--gui-runs N]\n");
            return 2;
        }
    }
    if (runs < 1 || guiRuns < 1)
        return fail("--runs and --gui-runs must be positive numbers");

    std::vector<std::string> names = tw::scenario::presetNames();
    if (!only.empty())
        names = {only};
    std::vector<Row> rows;
    for (const std::string& name : names) {
        auto loaded = tw::scenario::preset(name);
        if (!loaded)
            return fail(loaded.error().toString());
        const tw::scenario::Scenario base = loaded.value();
        Row row;
        row.preset = name;

        // (a) cold: a fresh Deriver each run (fewer runs: it tokenizes the sample every time).
        std::vector<double> t;
        const int coldRuns = std::max(1, runs / 10);
        for (int r = 0; r < coldRuns; ++r) {
            tw::scenario::Deriver deriver;
            const auto t0 = Clock::now();
            auto d = deriver.derive(base);
            t.push_back(msSince(t0));
            if (!d)
                return fail(name + ": " + d.error().toString());
            row.tensors = d.value()->stage2->tensors.size();
            row.figures = d.value()->figures.size();
        }
        row.cold = stats(t);

        // (b) warm: an edit of the hidden size; stage 1 memoized, stage 2 derived again.
        tw::scenario::Deriver deriver;
        if (auto d = deriver.derive(base); !d)
            return fail(name + ": " + d.error().toString());
        const std::uint64_t a = base.model.heads;
        std::vector<tw::scenario::Scenario> edits;
        for (std::uint64_t i = 1; i <= 6; ++i) { // d + 2·i·a keeps d a multiple of a and d/a even
            tw::scenario::Scenario s = base;
            s.model.hiddenSize = base.model.hiddenSize + 2 * i * a;
            edits.push_back(std::move(s));
        }
        const auto before = deriver.counters();
        t.clear();
        for (int r = 0; r < runs; ++r) {
            const auto& s = edits[static_cast<std::size_t>(r) % edits.size()];
            const auto t0 = Clock::now();
            auto d = deriver.derive(s);
            t.push_back(msSince(t0));
            if (!d)
                return fail(name + " (hidden size " + std::to_string(s.model.hiddenSize) + "): " + d.error().toString());
        }
        const auto after = deriver.counters();
        if (after.tokenizations != before.tokenizations || after.datasets != before.datasets
            || after.models != before.models + static_cast<std::size_t>(runs))
            return fail(name + ": the warm runs did not re-derive stage 2 alone (memoization changed?)");
        row.warm = stats(t);

        // (c) memoized: the same scenario again.
        if (auto d = deriver.derive(base); !d)
            return fail(name + ": " + d.error().toString());
        const auto cached = deriver.counters();
        t.clear();
        for (int r = 0; r < runs; ++r) {
            const auto t0 = Clock::now();
            auto d = deriver.derive(base);
            t.push_back(msSince(t0));
            if (!d)
                return fail(name + ": " + d.error().toString());
        }
        if (deriver.counters() != cached)
            return fail(name + ": the memoized runs derived a stage again");
        row.memo = stats(t);

        // Stage 2 alone, with the inputs the Deriver gives it.
        auto d = deriver.derive(base);
        const tw::scenario::Derivation& full = *d.value();
        t.clear();
        std::size_t sink = 0;
        for (int r = 0; r < runs; ++r) {
            const auto t0 = Clock::now();
            const tw::model::ModelDerivation m =
                tw::model::deriveModel(full.model, base.batch, full.gpu, full.stage1->stats.figures);
            t.push_back(msSince(t0));
            sink += m.tensors.size();
        }
        if (sink != row.tensors * static_cast<std::size_t>(runs))
            return fail(name + ": deriveModel gave another inventory than derive");
        row.model = stats(t);
        rows.push_back(row);
    }

    std::printf("derive per preset, ms (median / min of %d runs; cold: %d runs)\n", runs, std::max(1, runs / 10));
    std::printf("%-16s %8s %8s  %17s  %17s  %17s  %17s\n", "preset", "tensors", "figures", "cold (fresh)",
                "warm (edit d)", "memoized", "deriveModel");
    for (const Row& r : rows)
        std::printf("%-16s %8zu %8zu  %8.3f / %6.3f  %8.3f / %6.3f  %8.3f / %6.3f  %8.3f / %6.3f\n", r.preset.c_str(),
                    r.tensors, r.figures, r.cold.median, r.cold.min, r.warm.median, r.warm.min, r.memo.median,
                    r.memo.min, r.model.median, r.model.min);
    double worstWarm = 0;
    for (const Row& r : rows) {
        worstWarm = std::max(worstWarm, r.warm.median);
        std::printf("RESULT preset=%s tensors=%zu figures=%zu cold_median_ms=%.4f cold_min_ms=%.4f warm_median_ms=%.4f "
                    "warm_min_ms=%.4f memo_median_ms=%.4f memo_min_ms=%.4f model_median_ms=%.4f model_min_ms=%.4f\n",
                    r.preset.c_str(), r.tensors, r.figures, r.cold.median, r.cold.min, r.warm.median, r.warm.min,
                    r.memo.median, r.memo.min, r.model.median, r.model.min);
    }
    std::printf("RESULT name=derive worst_warm_median_ms=%.4f target_ms=1 %s\n", worstWarm,
                worstWarm < 1.0 ? "pass" : "FAIL");

    if (!gui.empty()) {
        // The two presets with the most tensors.
        std::vector<Row> largest = rows;
        std::sort(largest.begin(), largest.end(), [](const Row& x, const Row& y) { return x.tensors > y.tensors; });
        largest.resize(std::min<std::size_t>(2, largest.size()));
        std::printf("\nGUI start-up to the stage 2 pane with its derivation (offscreen, %d runs each)\n", guiRuns);
        for (const Row& r : largest) {
            std::vector<double> shown, process;
            for (int i = 0; i < guiRuns; ++i) {
                const GuiStart g = guiStartup(gui, r.preset);
                if (g.shownMs < 0)
                    return 1;
                shown.push_back(g.shownMs);
                process.push_back(g.processMs);
            }
            const Stats s = stats(shown), w = stats(process);
            std::printf("%-16s pane shown after median %5.0f ms (min %5.0f); whole process median %5.0f ms (min %5.0f)"
                        "  (target < 1000 ms)\n",
                        r.preset.c_str(), s.median, s.min, w.median, w.min);
            std::printf("RESULT gui_preset=%s shown_median_ms=%.0f shown_min_ms=%.0f process_median_ms=%.0f "
                        "process_min_ms=%.0f target_ms=1000 %s\n",
                        r.preset.c_str(), s.median, s.min, w.median, w.min, s.median < 1000 ? "pass" : "FAIL");
        }
    }
    return 0;
}
