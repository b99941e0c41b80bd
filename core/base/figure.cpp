#include "figure.h"

#include <cmath>
#include <functional>
#include <set>

namespace tw {

const Figure& FigureSet::add(Figure figure)
{
    for (auto& f : m_figures) {
        if (f.id == figure.id) {
            f = std::move(figure);
            return f;
        }
    }
    m_figures.push_back(std::move(figure));
    return m_figures.back();
}

const Figure* FigureSet::find(const std::string& id) const
{
    for (const auto& f : m_figures)
        if (f.id == id)
            return &f;
    return nullptr;
}

double FigureSet::valueOf(const std::string& id) const
{
    const Figure* f = find(id);
    return f ? f->value : std::nan("");
}

std::vector<std::string> FigureSet::missingInputs() const
{
    std::vector<std::string> missing;
    for (const auto& f : m_figures)
        for (const auto& in : f.inputs)
            if (!find(in))
                missing.push_back(in);
    return missing;
}

std::vector<const Figure*> FigureSet::chain(const std::string& id) const
{
    std::vector<const Figure*> out;
    std::set<std::string> seen;
    std::function<void(const std::string&)> visit = [&](const std::string& current) {
        if (!seen.insert(current).second)
            return;
        const Figure* f = find(current);
        if (!f)
            return;
        out.push_back(f);
        for (const auto& in : f->inputs)
            visit(in);
    };
    visit(id);
    return out;
}

} // namespace tw
