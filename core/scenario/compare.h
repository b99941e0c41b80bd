#pragma once
// Scenario A beside scenario B: the what-if question answered figure by figure. A curated list of
// key figures per stage (keyFigureSpecs(): which figure, which stage, which way is better and why),
// the key figures of one derivation and its simulated step (KeyFigures), and their comparison
// (Comparison): A, B, B − A, (B − A)/|A|, better / worse / neutral, figures present on one side only
// marked as such (never read as zero), plus the three chart series the compare panel draws (bytes per
// GPU per step by strategy, where the step time goes, memory per GPU by kind).
//
// Directions (documented per figure in keyFigureSpecs()): a cost is better lower (memory, FLOPs,
// bytes, time, the pipeline bubble, tokens per word), an efficiency better higher (MFU, tokens per
// second, memory headroom), and a choice or a description is neutral (parameters, GPUs, degrees,
// tokens, sequences): a bigger model is the question asked, not a defect.
// Two values are the same when |B − A| ≤ max(1e-12·max(|A|, |B|), floor), the floor 1e-12 s for times
// and 1e-9 otherwise (the derivation is deterministic; the tolerance only absorbs summation order, e.g.
// a one-stage pipeline's bubble of 1e-17 against 0).

#include "base/error.h"
#include "base/figure.h"
#include "base/stage.h"
#include "base/progress.h"
#include "base/units.h"

#include <optional>
#include <string>
#include <vector>

namespace tw::network {
struct StepSimulation;
}

namespace tw::scenario {

struct Derivation;
struct Scenario;

// Which way a figure is better.
enum class Better { Lower, Higher, Neither };
// B against A.
enum class Verdict { Neutral, Better, Worse };
// Which side has the figure.
enum class Presence { Both, OnlyA, OnlyB };
// How a value is written: in its unit, or a fraction written as a percentage (Δ in points).
enum class ValueStyle { Unit, Percent };

struct KeyFigureSpec {
    Stage stage = Stage::Text;
    std::string id;         // the figure's id in the derivation or the simulation
    Better better = Better::Neither;
    ValueStyle style = ValueStyle::Unit;
    std::string why;        // one line: why this direction ("less memory leaves room for a bigger batch")
    std::string label;      // a short name for a narrow table ("Step time"); empty: the figure's own label
};

// The curated key figures, stage by stage, in display order.
[[nodiscard]] const std::vector<KeyFigureSpec>& keyFigureSpecs();
// The spec of one id (null when it is not a key figure).
[[nodiscard]] const KeyFigureSpec* keyFigureSpec(const std::string& id);

// The key figures of one scenario: copies of the derivation's and the simulation's figures (with
// their formulas), the ones a derivation does not have simply absent (e.g. "ep.*" without experts,
// stage 3–5 when the plan cannot run, "sim.mfu" without a GPU peak).
struct KeyFigures {
    std::string scenarioName;
    FigureSet figures;
    bool simulated = false;       // stage 5's figures are in `figures`
    std::string stage5Note;       // why they are not (empty when simulated)
};

// From a derivation and, when there is one, its simulated step (stage 5's figures and the throughput
// "step.tokens_per_second" = G / step time).
[[nodiscard]] KeyFigures keyFigures(const Derivation& derivation, const network::StepSimulation* simulation,
                                    const std::string& scenarioName = {});
// Runs stage 5 for the key figures (the fabric, then one step simulated as the CLI and the sweep do:
// scenario::simulationOptions without link samples) and collects them. A plan that cannot run or a
// fabric that cannot hold the cluster is a KeyFigures without stage 5 (stage5Note says why); a stop
// request is an Error ("cancelled").
[[nodiscard]] Result<KeyFigures> measureKeyFigures(const Scenario& scenario, const Derivation& derivation,
                                                   const Progress& progress = {});

// One key figure, A beside B.
struct FigureDelta {
    Stage stage = Stage::Text;
    std::string id, label, unit;
    std::string shortLabel;         // the spec's short name, else the figure's label
    Better better = Better::Neither;
    ValueStyle style = ValueStyle::Unit;
    std::string why;
    Presence presence = Presence::Both;
    std::optional<double> a, b;
    std::string formulaA, formulaB; // each side's formula, as its figure set wrote it
    double absolute = 0;            // B − A (both present)
    std::optional<double> relative; // (B − A)/|A|; none when a side is missing or A = 0 ≠ B (0 when A = B = 0)
    bool differs = false;           // beyond the tolerance above (a one-sided figure differs)
    Verdict verdict = Verdict::Neutral; // Neutral when the same, one-sided or without a direction
};

// One group of bars, A's beside B's (values in the series' unit; none: the side lacks the figure).
struct SeriesBar {
    std::string id;    // the figure behind the bar
    std::string label; // "DP", "compute", "weights" …
    std::optional<double> a, b;
};
struct Series {
    std::string title;
    std::string unit;  // "B" or "s"
    std::vector<SeriesBar> bars; // categories present and above 1e-9 of the largest bar on at least one side,
                                 // in a fixed order
};

struct Comparison {
    std::vector<FigureDelta> rows; // keyFigureSpecs() order, figures absent on both sides left out
    Series bytesByStrategy;        // dp/pp/tp/ep.bytes_per_gpu_per_step
    Series stepSplit;              // sim.compute_s, sim.exposed_{dp,pp,tp,ep}_s, sim.bubble_s
    Series memoryByKind;           // memory.plan.peak_*_bytes: the plan's largest GPU by kind (stage 3)

    [[nodiscard]] const FigureDelta* find(const std::string& id) const;
    [[nodiscard]] std::vector<const FigureDelta*> stage(Stage stage) const;
};

// A beside B.
[[nodiscard]] Comparison compare(const KeyFigures& a, const KeyFigures& b);

// A value as the table writes it: "248.9 MB", "399 ms", "45.2 %", "0.024 %", "124,439,808 params", and
// counts from 10⁹ (fractions from 10⁴) with an SI prefix: "450.8 TFLOP", "1.313 M tokens/s".
[[nodiscard]] std::string formatKeyValue(const FigureDelta& row, double value, const DisplayUnits& units = {});
// B − A with its sign: "+460.8 MB", "−1.2 ms", "+3.8 points"; "0" when the same.
[[nodiscard]] std::string formatAbsoluteDelta(const FigureDelta& row, const DisplayUnits& units = {});
// (B − A)/|A| with its sign: "+185.1 %", "+38,267 %" (no decimals from 1,000 %); "—" when undefined.
[[nodiscard]] std::string formatRelativeDelta(const FigureDelta& row);

[[nodiscard]] const char* toString(Better better);   // "lower is better" | "higher is better" | "neither"
[[nodiscard]] const char* toString(Verdict verdict); // "better" | "worse" | "neutral"

} // namespace tw::scenario
