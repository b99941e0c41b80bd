// tokenwire-cli derive, tensors and explain: every figure of a scenario, its tensors, one figure's chain.

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "model/tensors.h"
#include "scenario/derivationjson.h"
#include "scenario/derive.h"
#include "scenario/run.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tw::cli {

using json = nlohmann::ordered_json;

using scenario::figureJson;
using scenario::numberJson;

int runDerive(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    const auto derived = deriveScenarioFor(o, err);
    if (!derived)
        return kExitInput;
    const scenario::Scenario& s = derived->scenario;
    const auto& d = derived->derivation;
    if (o.json) {
        out << scenario::derivationJsonText(s, *d) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    out << "Scenario:   " << s.name << '\n';
    if (!s.description.empty())
        out << "            " << s.description << '\n';
    out << "Text:       " << d->stage1->tokenized->textName << ", tokenizer " << d->tokenizer().name() << " ("
        << formatInteger(static_cast<std::int64_t>(d->tokenizer().vocabSize())) << " tokens)\n";
    out << "Model:      " << d->model.name << " on " << gpuLine(s, *d) << "\n\n";
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Id", "Figure", "Value", "Formula"});
    for (const Figure& f : d->figures.all())
        rows.push_back({f.id, f.label, formatValue(f.value, f.unit, o.units), f.formula});
    printRows(out, rows);
    if (!d->problems.empty()) {
        out << "\nNotes:\n";
        for (const Error& e : d->problems)
            out << "  " << e.toString() << '\n';
    }
    return out.good() ? kExitOk : kExitInput;
}

int runTensors(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    const auto derived = deriveScenarioFor(o, err);
    if (!derived)
        return kExitInput;
    const scenario::Scenario& s = derived->scenario;
    const auto& d = derived->derivation;
    const auto& tensors = d->stage2->tensors;
    if (o.json) {
        json list = json::array();
        for (const model::TensorInfo& t : tensors)
            list.push_back({{"name", t.name.str()},
                            {"component", std::string(t.component)},
                            {"shape_symbols", std::string(t.shapeSymbols)},
                            {"shape", t.shape.toVector()},
                            {"dtype", model::toString(t.dtype)},
                            {"bytes", numberJson(t.bytes)},
                            {"layer", t.layer},
                            {"phase", std::string(model::phaseId(t.phase))},
                            {"kind", std::string(model::tensorKindId(t.kind))}});
        out << dumpJson(json{{"scenario", s.name}, {"tensors", list}}) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    out << "Scenario:   " << s.name << " (" << d->model.name << ", B = "
        << formatInteger(static_cast<std::int64_t>(s.batch.microBatch)) << ", T = "
        << formatInteger(static_cast<std::int64_t>(s.batch.sequenceLength)) << ")\n\n";
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Tensor", "Component", "Kind", "Phase", "Layer", "Dtype", "Shape", "Elements", "Bytes"});
    for (const model::TensorInfo& t : tensors) {
        std::string numbers = "[";
        for (std::size_t i = 0; i < t.shape.size(); ++i)
            numbers += (i ? "," : "") + std::to_string(t.shape[i]);
        numbers += "]";
        rows.push_back({t.name.str(), std::string(t.component), std::string(model::tensorKindId(t.kind)), std::string(model::phaseId(t.phase)),
                        t.layer < 0 ? "-" : std::to_string(t.layer), std::string(model::toString(t.dtype)),
                        std::string(t.shapeSymbols), numbers, formatBytes(t.bytes, o.units)});
    }
    printRows(out, rows);
    out << "\nTensors: " << formatInteger(static_cast<std::int64_t>(tensors.size())) << '\n';
    return out.good() ? kExitOk : kExitInput;
}

int runExplain(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    const auto derived = deriveScenarioFor(o, err);
    if (!derived)
        return kExitInput;
    const scenario::Scenario& s = derived->scenario;
    const auto& d = derived->derivation;
    // Stage 5's figures (net.*, sim.*) come from the simulated step, not from the derivation: for those
    // ids the step is simulated and its figures join the derivation's, so their chains reach stages 1–4.
    // The run's (run.*) repeat that step over the scenario's run.tokens (none: 20 per parameter, as stage
    // 5's Run tab counts).
    FigureSet figures = d->figures;
    const bool run = o.figureId.starts_with("run.");
    const bool stage5 = run || o.figureId.starts_with("sim.") || o.figureId.starts_with("net.");
    if (stage5 && d->stage3) {
        const auto step = scenario::simulateDerived(s, *d, false);
        if (!step) {
            printError(err, step.error());
            return kExitInput;
        }
        std::vector<const FigureSet*> parts{&step.value().network->figures, &step.value().simulation->figures};
        Result<scenario::RunEstimate> estimate = makeError("no run");
        if (run) {
            const auto ramp = simulateRampFor(*derived, err);
            if (!ramp)
                return kExitInput;
            estimate = scenario::estimateRun(s, *d, *step.value().simulation, std::nullopt,
                                             scenario::UnsetTokens::Chinchilla, *ramp);
            if (!estimate) {
                printError(err, estimate.error());
                return kExitInput;
            }
            parts.push_back(&estimate.value().figures);
        }
        for (const FigureSet* part : parts)
            for (const Figure& f : part->all())
                if (!figures.find(f.id))
                    figures.add(f);
    }
    if (!figures.find(o.figureId)) {
        if (stage5 && !d->stage3) {
            printError(err, makeError("'" + o.figureId + "' is a figure of the simulated step, and the plan cannot run "
                                      "(see tokenwire-cli plan)"));
            return kExitInput;
        }
        const auto close = scenario::closeIds(figures, o.figureId);
        std::string message = "unknown figure id '" + o.figureId + "'";
        if (close.empty()) {
            message += "; `tokenwire-cli derive` lists every id";
        } else {
            message += "; close ids:";
            for (std::size_t i = 0; i < close.size(); ++i)
                message += (i ? ", " : " ") + close[i];
        }
        printError(err, makeError(message));
        return kExitUsage;
    }
    const auto tree = scenario::derivationTree(figures, o.figureId);
    if (o.json) {
        json chain = json::array();
        for (const auto& step : tree) {
            json f = figureJson(*step.figure);
            f["depth"] = step.depth;
            f["repeated"] = step.repeated;
            chain.push_back(std::move(f));
        }
        out << dumpJson(json{{"scenario", s.name}, {"id", o.figureId}, {"chain", chain}}) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    for (const auto& step : tree) {
        const Figure& f = *step.figure;
        const std::string indent(std::size_t(step.depth) * 2, ' ');
        if (step.repeated) {
            out << indent << f.id << " = " << formatValue(f.value, f.unit, o.units) << "  (see above)\n";
            continue;
        }
        out << indent << f.id << " = " << formatValue(f.value, f.unit, o.units) << "  " << f.label << '\n';
        out << indent << "    " << f.formula << '\n';
    }
    return out.good() ? kExitOk : kExitInput;
}

} // namespace tw::cli
