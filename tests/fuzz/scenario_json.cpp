// Fuzz target: loadScenario on any bytes returns a scenario or located problems, never a crash nor
// a half-loaded value; a loaded scenario survives scenarioToJson → loadScenario unchanged; its
// parallel plan (stage 3) is validated without a crash, and a plan validate() accepts derives
// (clusters up to 4,096 GPUs, to keep each run short) with a mesh that is a bijection.

#include "fuzzcheck.h"

#include "model/model.h"
#include "parallel/plan.h"
#include "scenario/scenariojson.h"

#include <set>
#include <tuple>

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace tw;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const scenario::ScenarioLoad loaded = scenario::loadScenario(input, "fuzz.tokenwire.json");
    if (!loaded.scenario) {
        fuzz::check(!loaded.errors.empty(), "refused without a reason");
        for (const Error& e : loaded.errors)
            fuzz::check(!e.message.empty(), "a problem without a message");
        return 0;
    }
    fuzz::check(loaded.errors.empty(), "a scenario returned together with problems (half-loaded)");
    const std::string saved = scenario::scenarioToJson(*loaded.scenario);
    const scenario::ScenarioLoad again = scenario::loadScenario(saved, "again.tokenwire.json");
    fuzz::check(again.scenario.has_value(), "scenarioToJson output does not load",
                again.errors.empty() ? std::string() : again.errors.front().toString());
    fuzz::check(*again.scenario == *loaded.scenario, "the scenario changed through save and load");

    const scenario::Scenario& s = *loaded.scenario;
    if (!scenario::validate(s).empty() || !model::validate(s.model).empty())
        return 0;
    const parallel::Cluster cluster = s.hardware.cluster();
    const auto planErrors = parallel::validate(s.parallel, cluster, s.model, s.batch);
    for (const Error& e : planErrors)
        fuzz::check(e.where.jsonPath.starts_with("parallel."), "a plan problem outside parallel.*", e.toString());
    if (!planErrors.empty() || cluster.gpuCount() > 4096)
        return 0;
    const model::GpuSpec gpu = model::findGpu("a100-80gb").value_or(model::GpuSpec{});
    const parallel::PlanDerivation d = parallel::derivePlan(s.parallel, cluster, s.model, s.batch, gpu);
    fuzz::check(d.mesh.size() == cluster.gpuCount(), "the mesh does not cover the cluster");
    std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> places;
    for (const parallel::MeshCoord& c : d.mesh)
        places.insert({c.dp, c.pp, c.tp});
    fuzz::check(places.size() == d.mesh.size(), "two GPUs share a place in the mesh");
    fuzz::check(d.comm.signature.size() == 4, "the signature lacks a strategy");
    return 0;
}
