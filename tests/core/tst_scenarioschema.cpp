// The scenario file's documentation and JSON Schema against the reader (issue #41): every key the
// reader accepts is documented in docs/scenario.md and in resources/scenario.schema.json (both as
// generated, so neither drifts); every preset validates against the schema and broken files do not.
// The validator below knows the draft 2020-12 keywords the schema uses and refuses any other, so a
// keyword it does not check cannot pass unnoticed.

#include "scenario/presets.h"
#include "scenario/scenariojson.h"
#include "scenario/scenarioschema.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace tw;
using Json = nlohmann::json;

namespace {

std::string readSource(const std::string& relative)
{
    std::ifstream in(std::string(TOKENWIRE_SOURCE_DIR) + "/" + relative, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool isInteger(const Json& v)
{
    return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
}

bool hasType(const Json& v, const std::string& type)
{
    if (type == "object")
        return v.is_object();
    if (type == "array")
        return v.is_array();
    if (type == "string")
        return v.is_string();
    if (type == "boolean")
        return v.is_boolean();
    if (type == "number")
        return v.is_number();
    if (type == "integer")
        return v.is_number() && isInteger(v);
    return false;
}

// Every problem of `v` against `schema`, with its path. Unknown keywords are problems of the schema.
void validate(const Json& schema, const Json& v, const std::string& path, std::vector<std::string>& problems)
{
    static const std::set<std::string> known = {
        "$schema", "title", "description", "default", "type", "enum", "const", "minimum", "maximum",
        "exclusiveMinimum", "properties", "additionalProperties", "required", "items", "minItems", "maxItems",
        "anyOf", "pattern"};
    for (const auto& [k, value] : schema.items())
        if (!known.count(k))
            problems.push_back(path + ": the validator does not know keyword " + k);
    auto fail = [&](const std::string& what) { problems.push_back((path.empty() ? "(root)" : path) + ": " + what); };
    if (schema.contains("type") && !hasType(v, schema["type"].get<std::string>()))
        return fail("not of type " + schema["type"].get<std::string>());
    if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end())
        fail("not one of " + schema["enum"].dump());
    if (schema.contains("const") && v != schema["const"])
        fail("not " + schema["const"].dump());
    if (v.is_number()) {
        const double x = v.get<double>();
        if (schema.contains("minimum") && x < schema["minimum"].get<double>())
            fail("below the minimum");
        if (schema.contains("maximum") && x > schema["maximum"].get<double>())
            fail("above the maximum");
        if (schema.contains("exclusiveMinimum") && x <= schema["exclusiveMinimum"].get<double>())
            fail("not above the exclusive minimum");
    }
    if (v.is_string() && schema.contains("pattern")
        && !std::regex_search(v.get<std::string>(), std::regex(schema["pattern"].get<std::string>(), std::regex::ECMAScript)))
        fail("does not match " + schema["pattern"].get<std::string>());
    if (v.is_object()) {
        const Json props = schema.value("properties", Json::object());
        for (const auto& [k, child] : v.items()) {
            if (props.contains(k))
                validate(props[k], child, path.empty() ? k : path + "." + k, problems);
            else if (schema.contains("additionalProperties") && !schema["additionalProperties"].get<bool>())
                fail("unexpected key " + k);
        }
        for (const auto& r : schema.value("required", Json::array()))
            if (!v.contains(r.get<std::string>()))
                fail("missing " + r.get<std::string>());
    }
    if (v.is_array()) {
        if (schema.contains("minItems") && v.size() < schema["minItems"].get<std::size_t>())
            fail("too few items");
        if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<std::size_t>())
            fail("too many items");
        if (schema.contains("items"))
            for (std::size_t i = 0; i < v.size(); ++i)
                validate(schema["items"], v[i], path + "[" + std::to_string(i) + "]", problems);
    }
    if (schema.contains("anyOf")) {
        bool any = false;
        for (const Json& alternative : schema["anyOf"]) {
            std::vector<std::string> p;
            validate(alternative, v, path, p);
            any = any || p.empty();
        }
        if (!any)
            fail("matches none of anyOf");
    }
}

std::vector<std::string> problemsOf(const Json& doc)
{
    std::vector<std::string> problems;
    validate(Json::parse(scenario::scenarioJsonSchema()), doc, "", problems);
    return problems;
}

// The JSON pointer of a key's schema: "model.moe" → /properties/model/properties/moe.
Json::json_pointer pointerOf(const std::string& path)
{
    std::string p;
    std::stringstream ss(path);
    for (std::string part; std::getline(ss, part, '.');)
        p += "/properties/" + part;
    return Json::json_pointer(p);
}

// A minimal document holding `value` at the dotted `path`.
Json withValue(const std::string& path, const Json& value)
{
    Json doc = {{"schema_version", scenario::kSchemaVersion}};
    Json* at = &doc;
    std::stringstream ss(path);
    std::vector<std::string> parts;
    for (std::string part; std::getline(ss, part, '.');)
        parts.push_back(part);
    for (std::size_t i = 0; i + 1 < parts.size(); ++i)
        at = &(*at)[parts[i]];
    (*at)[parts.back()] = value;
    return doc;
}

} // namespace

class TestScenarioSchema : public QObject {
    Q_OBJECT
private slots:
    void everyReaderKeyIsDocumented()
    {
        const KeyLog keys = scenario::scenarioReaderKeys();
        // The reader's list is the whole file: the sections and keys a reader of the code finds.
        std::set<std::string> paths;
        for (const ReadKey& k : keys)
            paths.insert(k.path);
        for (const char* expected : {"schema_version", "model.layers", "model.moe.top_k", "parallel.memory_headroom",
                                     "parallel.assignment", "collectives.alltoall", "topology.nic_bandwidth",
                                     "topology.spine_core_bandwidth", "hardware.custom.kernel_seconds", "$schema"})
            QVERIFY2(paths.count(expected), expected);
        QCOMPARE(paths.size(), keys.size()); // each key read once
        const auto undocumented = scenario::keysWithoutDoc();
        QVERIFY2(undocumented.empty(), ("no row for " + (undocumented.empty() ? "" : undocumented.front())).c_str());
        const auto stale = scenario::docsWithoutKey();
        QVERIFY2(stale.empty(), ("a row the reader does not read: " + (stale.empty() ? "" : stale.front())).c_str());
        for (const scenario::KeyDoc& d : scenario::scenarioKeyDocs()) {
            QVERIFY2(!d.meaning.empty(), d.path.c_str());
            QVERIFY2(!d.defaultText.empty() || d.path == "batch", d.path.c_str());
        }
    }

    // docs/scenario.md and resources/scenario.schema.json are the generated text, every key in both.
    void shippedFilesAreTheGeneratedOnes()
    {
        const std::string md = readSource("docs/scenario.md");
        QVERIFY2(md == scenario::scenarioKeysMarkdown(),
                 "docs/scenario.md differs from the reader: regenerate it with tokenwire-cli schema --markdown");
        const std::string schemaFile = readSource("resources/scenario.schema.json");
        QVERIFY2(schemaFile == scenario::scenarioJsonSchema(),
                 "resources/scenario.schema.json differs: regenerate it with tokenwire-cli schema");
        const Json schema = Json::parse(schemaFile);
        QCOMPARE(schema["$schema"].get<std::string>(), std::string("https://json-schema.org/draft/2020-12/schema"));
        for (const ReadKey& k : scenario::scenarioReaderKeys()) {
            QVERIFY2(md.find("| `" + k.path + "` |") != std::string::npos || md.find("\n## `" + k.path + "`\n") != std::string::npos,
                     ("docs/scenario.md lacks " + k.path).c_str());
            QVERIFY2(schema.contains(pointerOf(k.path)), ("the schema lacks " + k.path).c_str());
        }
    }

    // The sections the rows cite exist in docs/model.md.
    void citedSectionsExist()
    {
        const std::string model = readSource("docs/model.md");
        for (const scenario::KeyDoc& d : scenario::scenarioKeyDocs())
            if (!d.section.empty())
                QVERIFY2(model.find("# " + d.section + " ") != std::string::npos,
                         (d.path + " cites " + d.section + ", not a heading of docs/model.md").c_str());
    }

    void everyPresetValidates()
    {
        const auto presets = scenario::presetList();
        QVERIFY(presets.size() >= 10);
        for (const auto& p : presets) {
            const auto problems = problemsOf(Json::parse(scenario::presetJson(p.name)));
            QVERIFY2(problems.empty(), (p.name + ": " + (problems.empty() ? "" : problems.front())).c_str());
        }
        // A file as the program saves it validates too, and "$schema" is accepted by both.
        Json saved = Json::parse(scenario::scenarioToJson(scenario::Scenario{}));
        saved["$schema"] = "scenario.schema.json";
        QVERIFY(problemsOf(saved).empty());
        QVERIFY(scenario::loadScenario(saved.dump(), "saved.json").errors.empty());
    }

    void brokenFilesDoNot()
    {
        const Json broken[] = {
            Json::object(),                                     // no schema_version
            withValue("model.layerz", 12),                      // an unknown key
            withValue("model.layers", -1),                      // a negative count
            withValue("model.layers", "12"),                    // a string for a number
            withValue("model.weights", "bf17"),                 // an unknown precision
            withValue("parallel.compute_efficiency", "fast"),   // neither a number nor "auto"
            withValue("parallel.assignment", Json::array({Json::array({0, 0})})), // two coordinates
            withValue("topology.nic_bandwidth", "400 furlongs"), // no rate unit
            withValue("topology.nic_bandwidth", true),
            withValue("schema_version", 99),                    // newer than the program
        };
        for (const Json& doc : broken) {
            QVERIFY2(!problemsOf(doc).empty(), doc.dump().c_str());
            // And the program refuses each as well: the schema is no stricter than the reader here.
            QVERIFY2(!scenario::loadScenario(doc.dump(), "broken.json").errors.empty(), doc.dump().c_str());
        }
        // Above 0.5: the file reads, the plan's validation refuses it when derived; the schema says so early.
        QVERIFY(!problemsOf(withValue("parallel.memory_headroom", 0.7)).empty());
        QVERIFY(problemsOf(withValue("parallel.memory_headroom", 0.3)).empty());
        // Not a PCIe generation: read as a protocol, refused when the fabric is built.
        QVERIFY(!problemsOf(withValue("topology.pcie", "nvlink4")).empty());
        // Rates as the reader takes them pass the schema's pattern.
        for (const char* rate : {"400Gbps", "400 Gb/s", "50GB/s", "12.5 GiB/s", "1e3 Mbps", "auto"}) {
            const Json doc = withValue("topology.nic_bandwidth", rate);
            QVERIFY2(problemsOf(doc).empty(), rate);
            QVERIFY2(scenario::loadScenario(doc.dump(), "rate.json").errors.empty(), rate);
        }
    }

    // A name's listed values are exactly what the reader takes: each listed value reads, a made-up one
    // does not.
    void namesListTheReadersValues()
    {
        for (const scenario::KeyDoc& d : scenario::scenarioKeyDocs()) {
            if (d.type != "name")
                continue;
            QVERIFY2(d.values.size() >= 2, d.path.c_str());
            for (const std::string& v : d.values) {
                for (const Error& e : scenario::loadScenario(withValue(d.path, v).dump(), "f.json").errors)
                    QVERIFY2(!(e.where.jsonPath == d.path && e.message.starts_with("unknown")),
                             (d.path + " = " + v + ": " + e.message).c_str());
            }
            bool refused = false;
            for (const Error& e : scenario::loadScenario(withValue(d.path, "no-such-name").dump(), "f.json").errors)
                refused = refused || (e.where.jsonPath == d.path && e.message.starts_with("unknown"));
            QVERIFY2(refused, d.path.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestScenarioSchema)
#include "tst_scenarioschema.moc"
