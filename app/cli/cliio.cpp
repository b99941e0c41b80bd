#include "cliio.h"

#include "args.h"
#include "base/fileio.h"
#include "base/units.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"
#include "text/dataset.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

namespace tw::cli {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// Paths and token pieces may hold any bytes: JSON output replaces invalid UTF-8 instead of throwing.
std::string dumpJson(const json& j, int indent)
{
    return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// One "tokenwire-cli: …" line per line of the message (a joined Error lists several problems).
void printError(std::ostream& err, const Error& e)
{
    const std::string text = e.toString();
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        err << kTool << ": " << text.substr(start, end - start) << '\n';
        start = end + 1;
    }
}

void printWarning(std::ostream& err, const std::string& message)
{
    err << kTool << ": warning: " << message << '\n';
}

std::string displayName(const std::string& path)
{
    return path == "-" ? "<stdin>" : path;
}

Error fileError(const std::string& path, std::string message)
{
    Location where;
    where.file = displayName(path);
    return makeError(std::move(message), std::move(where));
}


namespace {

std::string tooLarge()
{
    return "larger than " + formatBytes(static_cast<double>(text::maxTextBytes()), {ByteUnits::Binary, 4})
        + ", the most tokenized in one piece";
}

// Reads all bytes of a FILE* until EOF; `what` names the file's role in messages.
Result<std::string> readAll(std::FILE* f, const std::string& path, const std::string& what, std::size_t sizeHint = 0)
{
    std::string data;
    data.reserve(sizeHint);
    std::vector<char> chunk(1 << 16);
    for (;;) {
        const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
        data.append(chunk.data(), n);
        if (data.size() > text::maxTextBytes())
            return fileError(path, what + " is " + tooLarge());
        if (n < chunk.size()) {
            if (std::ferror(f))
                return fileError(path, "cannot read " + what + ": " + std::strerror(errno));
            break;
        }
    }
    return data;
}

} // namespace

// The bytes of a file, or of standard input for "-"; an Error says which file and why not.
Result<std::string> readInput(const std::string& path, const std::string& what)
{
    if (path == "-")
        return readAll(stdin, path, what);
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec) {
        if (ec == std::errc::no_such_file_or_directory)
            return fileError(path, "cannot read " + what + ": no such file");
        if (ec == std::errc::not_a_directory)
            return fileError(path, "cannot read " + what + ": a part of the path is a file, not a directory");
        return fileError(path, "cannot read " + what + ": " + ec.message());
    }
    if (fs::is_directory(st))
        return fileError(path, "cannot read " + what + ": is a directory, not a file");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return fileError(path, "cannot read " + what + ": " + std::strerror(errno));
    std::size_t sizeHint = 0;
    if (fs::is_regular_file(st)) {
        const auto size = fs::file_size(path, ec);
        if (!ec && size > text::maxTextBytes()) {
            std::fclose(f);
            return fileError(path, what + " is " + tooLarge());
        }
        if (!ec)
            sizeHint = static_cast<std::size_t>(size);
    }
    auto all = readAll(f, path, what, sizeHint);
    std::fclose(f);
    return all;
}

// Width of a UTF-8 string in code points (good enough for aligning labels in a terminal).
std::size_t displayWidth(std::string_view s)
{
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string padRight(const std::string& s, std::size_t width)
{
    const std::size_t w = displayWidth(s);
    return w >= width ? s + "  " : s + std::string(width - w + 2, ' ');
}

void printRows(std::ostream& out, const std::vector<std::vector<std::string>>& rows)
{
    std::vector<std::size_t> widths;
    for (const auto& r : rows)
        for (std::size_t c = 0; c + 1 < r.size(); ++c) {
            if (widths.size() <= c)
                widths.resize(c + 1, 0);
            widths[c] = std::max(widths[c], displayWidth(r[c]));
        }
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t c = 0; c < r.size(); ++c)
            line += c + 1 < r.size() ? padRight(r[c], widths[c]) : r[c];
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out << line << '\n';
    }
}

std::string gpuLine(const scenario::Scenario& s, const scenario::Derivation& d)
{
    const std::string gpu = d.gpu.name.empty() ? d.gpu.id : d.gpu.name;
    if (s.hardware.nodes == 1)
        return formatInteger(static_cast<std::int64_t>(s.hardware.gpusPerNode)) + " × " + gpu;
    return formatInteger(static_cast<std::int64_t>(s.hardware.nodes)) + " nodes × "
           + formatInteger(static_cast<std::int64_t>(s.hardware.gpusPerNode)) + " × " + gpu;
}

namespace {

// The scenario of --scenario FILE (every problem but the last printed, each with its JSON path) or
// --preset NAME; readScenario prints the last.
Result<scenario::Scenario> scenarioFor(const ScenarioOptions& o, std::ostream& err)
{
    if (!o.preset.empty())
        return scenario::preset(o.preset);
    auto bytes = readInput(o.scenarioFile, "the scenario file");
    if (!bytes)
        return bytes.error();
    scenario::ScenarioLoad load = scenario::loadScenario(bytes.value(), displayName(o.scenarioFile));
    if (!load.errors.empty()) {
        for (std::size_t i = 0; i + 1 < load.errors.size(); ++i)
            printError(err, load.errors[i]);
        return load.errors.back();
    }
    if (o.scenarioFile == "-")
        return std::move(*load.scenario);
    return scenario::resolvePaths(std::move(*load.scenario), o.scenarioFile);
}

} // namespace

std::optional<scenario::Scenario> readScenario(const ScenarioOptions& o, std::ostream& err)
{
    auto loaded = scenarioFor(o, err);
    if (!loaded) {
        printError(err, loaded.error());
        return std::nullopt;
    }
    return std::move(loaded).value();
}

Error inScenarioFile(Error e, const ScenarioOptions& o)
{
    if (e.where.file.empty() && !o.scenarioFile.empty())
        e.where.file = displayName(o.scenarioFile);
    return e;
}

void printPlanCannotRun(std::ostream& err, std::size_t reasons)
{
    err << kTool << ": the plan cannot run (" << reasons << (reasons == 1 ? " reason" : " reasons")
        << " in \"errors\")\n";
}

} // namespace tw::cli
