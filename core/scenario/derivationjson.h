#pragma once
// The derivation as one JSON document: scenario name, description, every figure (id, label, value,
// unit, formula, inputs) and the problems. `tokenwire-cli derive --json` prints it and File → Export
// report writes it, so both say the same thing byte for byte. Keys keep their order (ordered_json).

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace tw {
struct Figure;
}

namespace tw::scenario {

struct Scenario;
struct Derivation;

// Integers as JSON integers (699, not 699.0); NaN and infinities as null.
[[nodiscard]] nlohmann::ordered_json numberJson(double value);
// {"id", "label", "value", "unit", "formula", "inputs"} in that order.
[[nodiscard]] nlohmann::ordered_json figureJson(const Figure& figure);
// {"scenario", "description", "figures": [figureJson…], "problems": [text…]}.
[[nodiscard]] nlohmann::ordered_json derivationJson(const Scenario& scenario, const Derivation& derivation);
// derivationJson written out (indent < 0: one line); invalid UTF-8 in names or pieces is replaced, never thrown.
[[nodiscard]] std::string derivationJsonText(const Scenario& scenario, const Derivation& derivation, int indent = -1);

} // namespace tw::scenario
