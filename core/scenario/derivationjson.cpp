#include "derivationjson.h"

#include "derive.h"
#include "scenario.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>

namespace tw::scenario {

using json = nlohmann::ordered_json;

json numberJson(double v)
{
    if (!std::isfinite(v))
        return nullptr;
    if (v == std::round(v) && std::fabs(v) < 9.0e15)
        return static_cast<std::int64_t>(v);
    return v;
}

json figureJson(const Figure& f)
{
    return json{{"id", f.id},           {"label", f.label},     {"value", numberJson(f.value)},
                {"unit", f.unit},       {"formula", f.formula}, {"inputs", f.inputs}};
}

json derivationJson(const Scenario& s, const Derivation& d)
{
    json figures = json::array();
    for (const Figure& f : d.figures.all())
        figures.push_back(figureJson(f));
    json problems = json::array();
    for (const Error& e : d.problems)
        problems.push_back(e.toString());
    return json{{"scenario", s.name}, {"description", s.description}, {"figures", figures}, {"problems", problems}};
}

std::string derivationJsonText(const Scenario& s, const Derivation& d, int indent)
{
    return derivationJson(s, d).dump(indent, ' ', false, json::error_handler_t::replace);
}

} // namespace tw::scenario
