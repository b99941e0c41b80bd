#pragma once
// Input and output every command of tokenwire-cli shares: the "tokenwire-cli: …" error and warning
// lines, reading a file or standard input, the one table printer, JSON written without throwing, and
// the scenario of --scenario / --preset loaded and derived (commands.h declares the public part).

#include "base/error.h"

#include <nlohmann/json_fwd.hpp>

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::scenario {
struct Scenario;
struct Derivation;
}

namespace tw::cli {

struct ScenarioOptions;

inline constexpr std::string_view kTool = "tokenwire-cli";

// Paths and token pieces may hold any bytes: JSON output replaces invalid UTF-8 instead of throwing.
[[nodiscard]] std::string dumpJson(const nlohmann::ordered_json& j, int indent = -1);

// One "tokenwire-cli: …" line per line of the message (a joined Error lists several problems).
void printError(std::ostream& err, const Error& e);
void printWarning(std::ostream& err, const std::string& message);

// How a file is named in messages ("<stdin>" for -).
[[nodiscard]] std::string displayName(const std::string& path);
// An Error located in that file.
[[nodiscard]] Error fileError(const std::string& path, std::string message);
// The bytes of a file, or of standard input for "-"; an Error says which file and why not. `what`
// names the file's role in messages ("the scenario file").
[[nodiscard]] Result<std::string> readInput(const std::string& path, const std::string& what);

// Width of a UTF-8 string in code points (good enough for aligning labels in a terminal).
[[nodiscard]] std::size_t displayWidth(std::string_view s);
// s and at least two spaces, to `width` code points.
[[nodiscard]] std::string padRight(const std::string& s, std::size_t width);
// The table printer: every column but the last padded to its widest cell, trailing spaces dropped.
void printRows(std::ostream& out, const std::vector<std::vector<std::string>>& rows);

// "8 × NVIDIA A100" or "4 nodes × 8 × NVIDIA H100".
[[nodiscard]] std::string gpuLine(const scenario::Scenario& s, const scenario::Derivation& d);

// The scenario of --scenario FILE or --preset NAME; nullopt after printing why it could not be read,
// every problem with its JSON path (the command then exits kExitInput).
[[nodiscard]] std::optional<scenario::Scenario> readScenario(const ScenarioOptions& o, std::ostream& err);
// An error about the scenario that names no file is located in --scenario FILE (if one was given).
[[nodiscard]] Error inScenarioFile(Error e, const ScenarioOptions& o);
// "tokenwire-cli: the plan cannot run (N reasons in "errors")" after a --json document that lists them.
void printPlanCannotRun(std::ostream& err, std::size_t reasons);

} // namespace tw::cli
