#include "compare.h"

#include "base/enumnames.h"
#include "network/simulate.h"
#include "scenario/derive.h"
#include "scenario/scenario.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace tw::scenario {

namespace {

// Same within this fraction of the larger magnitude, or within an absolute floor per kind of value (see
// the top of compare.h).
constexpr double kTolerance = 1e-12;

// Below this, a difference is rounding: a picosecond, a billionth of a fraction, a billionth of a byte
// or a count (e.g. a pipeline bubble of 1e-17 from summing the blocks of a one-stage schedule).
double absoluteFloor(const std::string& unit)
{
    return unit == "s" ? 1e-12 : 1e-9;
}

std::vector<KeyFigureSpec> makeSpecs()
{
    using B = Better;
    const auto U = ValueStyle::Unit;
    const auto P = ValueStyle::Percent;
    return {
        // Stage 1: the text and its tokens.
        {Stage::Text, "tokenizer.vocab_size", B::Neither, U, "a tokenizer choice: a larger V shortens the text but widens the embedding", ""},
        {Stage::Text, "tokens.count", B::Neither, U, "the text's length in tokens: a description of the data", ""},
        {Stage::Text, "tokens.per_word", B::Lower, U, "fewer tokens per word: the same text in shorter sequences, fewer FLOPs per word", ""},
        {Stage::Text, "dataset.sequences", B::Neither, U, "how many sequences of T the text fills: a description of the data", ""},
        {Stage::Text, "dataset.steps_per_epoch", B::Neither, U, "optimizer steps to see the text once: set by the text and G", ""},
        // Stage 2: the model's tensors, memory and work.
        {Stage::Tensors, "model.parameters", B::Neither, U, "the model's size is the question asked, not a cost", ""},
        {Stage::Tensors, "memory.activations_bytes", B::Lower, U, "less activation memory leaves room for a bigger batch or model", "Activation memory"},
        {Stage::Tensors, "memory.total_bytes", B::Lower, U, "less memory per GPU (stage 2, before sharding) fits smaller GPUs", ""},
        {Stage::Tensors, "memory.headroom_bytes", B::Higher, U, "more memory left on the GPU; below zero it does not fit", ""},
        {Stage::Tensors, "compute.flops_per_step", B::Lower, U, "less arithmetic for one optimizer step", "FLOPs per step"},
        // Stage 3: the parallel plan's traffic.
        {Stage::Gpus, "plan.gpus", B::Neither, U, "the cluster's size is a choice", ""},
        {Stage::Gpus, "dp.bytes_per_gpu_per_step", B::Lower, U, "fewer bytes each GPU sends for data parallelism", "DP bytes per GPU"},
        {Stage::Gpus, "pp.bytes_per_gpu_per_step", B::Lower, U, "fewer bytes each GPU sends between pipeline stages", "PP bytes per GPU"},
        {Stage::Gpus, "tp.bytes_per_gpu_per_step", B::Lower, U, "fewer bytes each GPU sends for tensor parallelism", "TP bytes per GPU"},
        {Stage::Gpus, "ep.bytes_per_gpu_per_step", B::Lower, U, "fewer bytes each GPU sends for expert parallelism", "EP bytes per GPU"},
        {Stage::Gpus, "pp.bubble_fraction", B::Lower, P, "less idle time in the pipeline schedule", "Pipeline bubble"},
        {Stage::Gpus, "pp.makespan", B::Lower, U, "a shorter step if communication were free", "Pipeline time"},
        {Stage::Gpus, "memory.plan.peak_bytes", B::Lower, U, "less memory on the plan's largest GPU: more room, smaller GPUs", "Largest GPU memory"},
        // Stage 4: the collectives' schedules.
        {Stage::Collectives, "collective.dp.wire_bytes_per_step", B::Lower, U, "fewer DP bytes on the wire per step", "DP bytes on the wire"},
        {Stage::Collectives, "collective.pp.wire_bytes_per_step", B::Lower, U, "fewer PP bytes on the wire per step", "PP bytes on the wire"},
        {Stage::Collectives, "collective.tp.wire_bytes_per_step", B::Lower, U, "fewer TP bytes on the wire per step", "TP bytes on the wire"},
        {Stage::Collectives, "collective.ep.wire_bytes_per_step", B::Lower, U, "fewer EP bytes on the wire per step", "EP bytes on the wire"},
        {Stage::Collectives, "collective.wire_bytes_per_step", B::Lower, U, "fewer bytes on the wire per step, all strategies", "All bytes on the wire"},
        {Stage::Collectives, "collective.seconds_per_step", B::Lower, U, "less communication time (α–β, nothing overlapped)", "α–β comm. time"},
        // Stage 5: the simulated step.
        {Stage::Wire, "sim.step_time_s", B::Lower, U, "a shorter training step", "Step time"},
        {Stage::Wire, "step.tokens_per_second", B::Higher, U, "more tokens trained per second", "Tokens/s"},
        {Stage::Wire, "sim.compute_s", B::Lower, U, "less compute per GPU per step", "Compute"},
        {Stage::Wire, "sim.exposed_comm_s", B::Lower, U, "less time the GPUs wait on communication", "Exposed comm."},
        {Stage::Wire, "sim.bubble_s", B::Lower, U, "less idle time (pipeline bubble and tail)", "Idle (bubble)"},
        {Stage::Wire, "sim.comm_share", B::Lower, P, "a smaller share of the step spent waiting on communication", "Comm. share"},
        {Stage::Wire, "sim.mfu", B::Higher, P, "more of the GPUs' peak FLOP/s used for the model", "MFU"},
    };
}

std::string signedWith(const std::string& magnitude, double delta)
{
    // A real minus sign (U+2212), as in the tables of the paper.
    return (delta < 0 ? "\xE2\x88\x92" : "+") + magnitude;
}

// The bars of one chart: the figures present and non-zero on at least one side, in the order given.
Series series(std::string title, std::string unit, const std::vector<std::pair<const char*, const char*>>& idsAndLabels,
              const KeyFigures& a, const KeyFigures& b)
{
    Series s{std::move(title), std::move(unit), {}};
    // Negligible: below a billionth of the series' largest value (rounding, e.g. 1e-16 s of idle).
    double largest = 0;
    for (const auto& [id, label] : idsAndLabels)
        for (const KeyFigures* side : {&a, &b})
            if (const Figure* f = side->figures.find(id); f && std::isfinite(f->value))
                largest = std::max(largest, std::fabs(f->value));
    const double negligible = 1e-9 * largest;
    for (const auto& [id, label] : idsAndLabels) {
        const Figure* fa = a.figures.find(id);
        const Figure* fb = b.figures.find(id);
        const bool nonzero = (fa && std::fabs(fa->value) > negligible) || (fb && std::fabs(fb->value) > negligible);
        if (!nonzero)
            continue;
        SeriesBar bar{id, label, std::nullopt, std::nullopt};
        if (fa)
            bar.a = fa->value;
        if (fb)
            bar.b = fb->value;
        s.bars.push_back(std::move(bar));
    }
    return s;
}

// toString's names (string literals: .data() is their NUL-terminated text).
constexpr std::array kBetterNames{EnumName{Better::Lower, "lower is better"}, EnumName{Better::Higher, "higher is better"},
                                  EnumName{Better::Neither, "neither way is better"}};
constexpr std::array kVerdictNames{EnumName{Verdict::Better, "better"}, EnumName{Verdict::Worse, "worse"},
                                   EnumName{Verdict::Neutral, "neutral"}};

} // namespace

const std::vector<KeyFigureSpec>& keyFigureSpecs()
{
    static const std::vector<KeyFigureSpec> specs = makeSpecs();
    return specs;
}

const KeyFigureSpec* keyFigureSpec(const std::string& id)
{
    for (const KeyFigureSpec& s : keyFigureSpecs())
        if (s.id == id)
            return &s;
    return nullptr;
}

KeyFigures keyFigures(const Derivation& d, const network::StepSimulation* simulation, const std::string& scenarioName)
{
    KeyFigures k;
    k.scenarioName = scenarioName;
    // The chart series' figures are kept too (memory by kind, exposed time by strategy), beside the table's.
    static const char* const kChartIds[] = {"memory.plan.peak_weights_bytes", "memory.plan.peak_gradients_bytes",
                                            "memory.plan.peak_optimizer_bytes", "memory.plan.peak_activations_bytes",
                                            "memory.plan.peak_buffers_bytes", "sim.exposed_dp_s",      "sim.exposed_pp_s",       "sim.exposed_tp_s",
                                            "sim.exposed_ep_s"};
    auto keep = [&](const FigureSet& from, const std::string& id) {
        if (const Figure* f = from.find(id))
            k.figures.add(*f);
    };
    for (const KeyFigureSpec& s : keyFigureSpecs())
        keep(d.figures, s.id);
    for (const char* id : kChartIds)
        keep(d.figures, id);
    if (simulation) {
        k.simulated = true;
        for (const KeyFigureSpec& s : keyFigureSpecs())
            keep(simulation->figures, s.id);
        for (const char* id : kChartIds)
            keep(simulation->figures, id);
        const double G = d.figures.valueOf("batch.G");
        if (std::isfinite(G) && simulation->stepSeconds > 0)
            k.figures.add({"step.tokens_per_second", "Tokens trained per second", G / simulation->stepSeconds, "tokens/s",
                           "G / step time = " + formatCount(G, 0) + " tokens / " + formatSeconds(simulation->stepSeconds)
                               + " = " + formatCount(G / simulation->stepSeconds, 0) + " tokens/s",
                           {"batch.G", "sim.step_time_s"}});
    } else if (!d.stage3) {
        std::string why;
        for (const Error& e : d.planErrors)
            why += (why.empty() ? "" : "; ") + e.toString();
        k.stage5Note = "the plan cannot run, so there is no step to simulate" + (why.empty() ? std::string() : ": " + why);
    } else {
        k.stage5Note = "the step was not simulated";
    }
    return k;
}

Result<KeyFigures> measureKeyFigures(const Scenario& scenario, const Derivation& d, const Progress& progress)
{
    if (!d.stage3 || !d.stage4)
        return keyFigures(d, nullptr, scenario.name);
    auto step = simulateDerived(scenario, d, false, progress);
    if (progress.stopRequested())
        return makeError("cancelled");
    if (!step) {
        KeyFigures k = keyFigures(d, nullptr, scenario.name);
        k.stage5Note = "the step cannot be simulated: " + step.error().toString();
        return k;
    }
    progress(1.0);
    return keyFigures(d, step.value().simulation.get(), scenario.name);
}

const FigureDelta* Comparison::find(const std::string& id) const
{
    for (const FigureDelta& r : rows)
        if (r.id == id)
            return &r;
    return nullptr;
}

std::vector<const FigureDelta*> Comparison::stage(Stage s) const
{
    std::vector<const FigureDelta*> out;
    for (const FigureDelta& r : rows)
        if (r.stage == s)
            out.push_back(&r);
    return out;
}

Comparison compare(const KeyFigures& a, const KeyFigures& b)
{
    Comparison c;
    for (const KeyFigureSpec& spec : keyFigureSpecs()) {
        const Figure* fa = a.figures.find(spec.id);
        const Figure* fb = b.figures.find(spec.id);
        if (!fa && !fb)
            continue;
        const Figure& any = fb ? *fb : *fa;
        FigureDelta r;
        r.stage = spec.stage;
        r.id = spec.id;
        r.label = any.label;
        r.shortLabel = spec.label.empty() ? any.label : spec.label;
        r.unit = any.unit;
        r.better = spec.better;
        r.style = spec.style;
        r.why = spec.why;
        if (fa) {
            r.a = fa->value;
            r.formulaA = fa->formula;
        }
        if (fb) {
            r.b = fb->value;
            r.formulaB = fb->formula;
        }
        if (fa && fb) {
            r.presence = Presence::Both;
            r.absolute = fb->value - fa->value;
            const double scale = std::max(std::fabs(fa->value), std::fabs(fb->value));
            r.differs = std::fabs(r.absolute) > std::max(kTolerance * scale, absoluteFloor(r.unit));
            if (!r.differs)
                r.relative = 0.0;
            else if (fa->value != 0)
                r.relative = r.absolute / std::fabs(fa->value);
            if (r.differs && spec.better != Better::Neither) {
                const bool lower = r.absolute < 0;
                r.verdict = (lower == (spec.better == Better::Lower)) ? Verdict::Better : Verdict::Worse;
            }
        } else {
            r.presence = fa ? Presence::OnlyA : Presence::OnlyB;
            r.differs = true;
        }
        c.rows.push_back(std::move(r));
    }
    c.bytesByStrategy = series("Bytes per GPU per step by strategy", "B",
                               {{"dp.bytes_per_gpu_per_step", "DP"},
                                {"pp.bytes_per_gpu_per_step", "PP"},
                                {"tp.bytes_per_gpu_per_step", "TP"},
                                {"ep.bytes_per_gpu_per_step", "EP"}},
                               a, b);
    c.stepSplit = series("Where the step time goes (mean per GPU)", "s",
                         {{"sim.compute_s", "compute"},
                          {"sim.exposed_dp_s", "exposed DP"},
                          {"sim.exposed_pp_s", "exposed PP"},
                          {"sim.exposed_tp_s", "exposed TP"},
                          {"sim.exposed_ep_s", "exposed EP"},
                          {"sim.bubble_s", "bubble"}},
                         a, b);
    c.memoryByKind = series("Memory of the plan's largest GPU by kind (stage 3)", "B",
                            {{"memory.plan.peak_weights_bytes", "weights"},
                             {"memory.plan.peak_gradients_bytes", "gradients"},
                             {"memory.plan.peak_optimizer_bytes", "optimizer"},
                             {"memory.plan.peak_activations_bytes", "activations"},
                             {"memory.plan.peak_buffers_bytes", "buffers"}},
                            a, b);
    return c;
}

// A count short enough for a table cell: exact below 10⁹ when whole ("124,439,808 params"), else four
// significant digits with an SI prefix ("450.8 TFLOP", "1.313 M tokens/s"; fractions from 10⁴: "108.6 k
// tokens/s"); fractions from 100 without decimals. The exact value stays in the tooltip's formula.
std::string compactCount(double value, const std::string& unit)
{
    const double a = std::fabs(value);
    const bool whole = std::isfinite(value) && std::fabs(value - std::round(value)) < 1e-9;
    if (std::isfinite(value) && (a >= 1e9 || (!whole && a >= 1e4))) {
        static const struct {
            double scale;
            const char* prefix;
        } kPrefixes[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
        for (const auto& p : kPrefixes) {
            if (a < p.scale)
                continue;
            char digits[32];
            std::snprintf(digits, sizeof digits, "%.4g", value / p.scale);
            const bool attach = unit.rfind("FLOP", 0) == 0; // TFLOP, PFLOP/s
            return std::string(digits) + " " + p.prefix + (unit.empty() ? "" : (attach ? "" : " ") + unit);
        }
    }
    const std::string number = formatCount(value, !whole && a >= 100 ? 0 : 2);
    return unit.empty() ? number : number + " " + unit;
}

// A fraction as a percentage: one decimal, three below a tenth of a percent ("0.024 %").
std::string percentOf(double fraction)
{
    const double pct = 100.0 * fraction;
    return formatCount(pct, pct != 0 && std::fabs(pct) < 0.1 ? 3 : 1) + " %";
}

std::string formatKeyValue(const FigureDelta& row, double value, const DisplayUnits& units)
{
    if (row.style == ValueStyle::Percent)
        return percentOf(value);
    if (row.unit == "B" || row.unit == "s")
        return formatValue(value, row.unit, units);
    return compactCount(value, row.unit);
}

std::string formatAbsoluteDelta(const FigureDelta& row, const DisplayUnits& units)
{
    if (row.presence != Presence::Both)
        return row.presence == Presence::OnlyA ? "only in A" : "only in B";
    if (!row.differs)
        return "0";
    const double m = std::fabs(row.absolute);
    if (row.style == ValueStyle::Percent) {
        const double points = 100.0 * m;
        return signedWith(formatCount(points, points < 0.1 ? 3 : 1) + " points", row.absolute);
    }
    return signedWith(formatKeyValue(row, m, units), row.absolute);
}

std::string formatRelativeDelta(const FigureDelta& row)
{
    if (!row.relative)
        return "\xE2\x80\x94"; // an em dash
    if (!row.differs)
        return "0 %";
    const double pct = 100.0 * *row.relative;
    const int decimals = std::fabs(pct) < 0.1 ? 3 : std::fabs(pct) >= 1000 ? 0 : 1;
    return signedWith(formatCount(std::fabs(pct), decimals) + " %", pct);
}

const char* toString(Better better)
{
    return nameOf(kBetterNames, better, "neither way is better").data();
}

const char* toString(Verdict verdict)
{
    return nameOf(kVerdictNames, verdict, "neutral").data();
}

} // namespace tw::scenario
