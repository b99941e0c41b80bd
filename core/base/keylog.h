#pragma once
// What a JSON reader accepts, as it reads: every key it asks for, with the JSON type it takes and, for a
// name, the values it knows. A reader given a log while reading an empty object visits every key it
// would accept; docs/scenario.md and the scenario's JSON Schema are built from that list
// (scenario/scenarioschema.h), so neither can drift from the code that reads the file.

#include <string>
#include <vector>

namespace tw {

struct ReadKey {
    std::string path; // "model.layers", "topology.nic_bandwidth"
    // "integer" (unsigned), "number", "boolean", "string", "name" (one of values), "object", "array",
    // "rate" (bytes per second, a rate with its unit or "auto"), "number-or-auto"
    std::string type;
    std::vector<std::string> values; // a name's accepted values, in the reader's order
};

using KeyLog = std::vector<ReadKey>;

// "a, b or c" (a reader's "expected …" text) as {a, b, c}.
[[nodiscard]] inline std::vector<std::string> splitChoices(const std::string& text)
{
    std::vector<std::string> out;
    std::string rest = text;
    for (const char* sep : {" or ", ", "}) {
        std::vector<std::string> parts;
        std::vector<std::string> pieces = out.empty() ? std::vector<std::string>{rest} : out;
        for (const std::string& piece : pieces) {
            std::size_t from = 0;
            for (std::size_t at = piece.find(sep); at != std::string::npos; at = piece.find(sep, from)) {
                parts.push_back(piece.substr(from, at - from));
                from = at + std::string(sep).size();
            }
            parts.push_back(piece.substr(from));
        }
        out = std::move(parts);
    }
    return out;
}

} // namespace tw
