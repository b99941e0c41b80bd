// Fuzz target: loadScenario on any bytes returns a scenario or located problems, never a crash nor
// a half-loaded value; a loaded scenario survives scenarioToJson → loadScenario unchanged.

#include "fuzzcheck.h"

#include "scenario/scenariojson.h"

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
    return 0;
}
