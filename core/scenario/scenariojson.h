#pragma once
// The scenario as JSON: the one place that reads and writes it. Base units only (B, s, FLOP, B/s).
// Loading checks everything and reports every problem with its JSON path; it never half-loads.

#include "base/error.h"
#include "base/keylog.h"
#include "scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::scenario {

// Deeper JSON is refused before it is built (a scenario is 3 levels deep).
inline constexpr int kMaxJsonDepth = 64;

// A scenario, or every problem found (each with file, JSON path, and line/column for syntax errors).
struct ScenarioLoad {
    std::optional<Scenario> scenario; // set only when errors is empty
    // Every field read as its type, but the whole does not validate (d = 1024 with 12 heads): what an
    // editor in the middle of an edit holds. For recovering such work; never derived as is.
    std::optional<Scenario> unchecked;
    std::vector<Error> errors;
};

// Parses, migrates older schema versions to kSchemaVersion, reads and validates a scenario file.
[[nodiscard]] ScenarioLoad loadScenario(std::string_view json, const std::string& fileName);
// The same, with every problem in one Error: the first one's location, the others one per line.
[[nodiscard]] Result<Scenario> scenarioFromJson(std::string_view json, const std::string& fileName);
// Pretty-printed JSON that loadScenario reads back to an equal Scenario.
[[nodiscard]] std::string scenarioToJson(const Scenario& scenario);

// Every key loadScenario's reader accepts, in reading order, with its JSON type and a name's values:
// the reader itself, run with a key log over an empty document (topology.* from its own reader).
[[nodiscard]] KeyLog scenarioReaderKeys();

// Errors as one: the first's location and message, then each further error's toString() on its own line.
[[nodiscard]] Error joinErrors(const std::vector<Error>& errors);
// Relative text and tokenizer paths of a scenario file are relative to the file's folder.
[[nodiscard]] Scenario resolvePaths(Scenario scenario, const std::string& scenarioFile);

} // namespace tw::scenario
