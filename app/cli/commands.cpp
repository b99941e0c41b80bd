// tokenwire-cli: the command switch, the presets list and the scenario loading the commands share. Each
// command family lives in its own cmd_*.cpp; input and output helpers in cliio.cpp.

#include "commands.h"

#include "args.h"
#include "cliio.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "scenario/scenarioschema.h"

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tw::cli {

int runPresets(std::ostream& out)
{
    const auto list = scenario::presetList();
    for (const auto& p : list)
        out << p.name << '\n';
    out << '\n';
    for (const auto& p : list)
        out << p.name << " — " << p.description << '\n';
    return out.good() ? kExitOk : kExitInput;
}

int runTool(int argc, char** argv, std::ostream& out, std::ostream& err)
{
    std::vector<std::string_view> args;
    for (int i = 1; i < argc; ++i)
        args.emplace_back(argv[i]);
    auto inv = parseArgs(args);
    if (!inv) {
        printError(err, inv.error());
        err << "Try '" << kTool << " --help'.\n";
        return kExitUsage;
    }
    const Invocation& i = inv.value();
    if (i.help) {
        out << usage(i.command);
        return kExitOk;
    }
    if (i.version) {
        out << kTool << ' ' << TOKENWIRE_VERSION << '\n';
        return kExitOk;
    }
    switch (i.command) {
    case Command::Tokenize:
        return runTokenize(i.tokenize, out, err);
    case Command::TrainBpe:
        return runTrainBpe(i.trainBpe, out, err);
    case Command::Derive:
        return runDerive(i.scenario, out, err);
    case Command::Tensors:
        return runTensors(i.scenario, out, err);
    case Command::Explain:
        return runExplain(i.scenario, out, err);
    case Command::Plan:
        return runPlan(i.scenario, out, err);
    case Command::Memory:
        return runMemory(i.scenario, out, err);
    case Command::Kernels:
        return runKernels(i.scenario, out, err);
    case Command::Fit:
        return runFit(i.fit, out, err);
    case Command::Simulate:
        return runSimulate(i.scenario, out, err);
    case Command::Sweep:
        return runSweep(i.sweep, out, err);
    case Command::Collective:
        return runCollective(i.collective, out, err);
    case Command::Presets:
        return runPresets(out);
    case Command::Validate:
        return runValidate(i.validate, out, err);
    case Command::Busbw:
        return runBusbw(i.busbw, out, err);
    case Command::Run:
        return runRun(i.run, out, err);
    case Command::Schema:
        out << (i.schemaMarkdown ? scenario::scenarioKeysMarkdown() : scenario::scenarioJsonSchema());
        return out.good() ? kExitOk : kExitInput;
    case Command::None:
        break;
    }
    out << usage(Command::None);
    return kExitUsage;
}

// The scenario's plan with the command line's overrides: --pp and --tp first (DP takes the rest),
// then --ep, then an explicit --dp, then the sharding.
void applyPlanOverrides(const ScenarioOptions& o, scenario::Scenario& s)
{
    if (o.pp)
        scenario::setParallelDegree(s, parallel::Strategy::PP, *o.pp);
    if (o.tp)
        scenario::setParallelDegree(s, parallel::Strategy::TP, *o.tp);
    if (o.ep)
        scenario::setParallelDegree(s, parallel::Strategy::EP, *o.ep);
    if (o.dp)
        scenario::setParallelDegree(s, parallel::Strategy::DP, *o.dp);
    if (o.sharding)
        s.parallel.sharding = parallel::shardingFromString(*o.sharding).value_or(s.parallel.sharding);
}

std::optional<DerivedScenario> deriveScenarioFor(const ScenarioOptions& options, std::ostream& err)
{
    auto loaded = readScenario(options, err);
    if (!loaded)
        return std::nullopt;
    DerivedScenario out{std::move(*loaded), nullptr, std::make_shared<scenario::Deriver>()};
    applyPlanOverrides(options, out.scenario);
    auto derived = out.deriver->derive(out.scenario);
    if (!derived) {
        printError(err, inScenarioFile(derived.error(), options));
        return std::nullopt;
    }
    out.derivation = std::move(derived).value();
    return out;
}

std::optional<std::vector<scenario::PhaseStep>> simulateRampFor(const DerivedScenario& derived, std::ostream& err)
{
    if (derived.scenario.run.batchRamp.empty())
        return std::vector<scenario::PhaseStep>{};
    auto phases = scenario::simulateRamp(derived.scenario, derived.deriver.get());
    if (!phases) {
        printError(err, phases.error());
        return std::nullopt;
    }
    return std::move(phases).value();
}

} // namespace tw::cli
