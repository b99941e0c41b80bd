#pragma once
// A figure: one derived number with its provenance. The function that computes a figure also
// writes its formula, so the number on screen and its explanation cannot drift apart.

#include <optional>
#include <string>
#include <vector>

namespace tw {

struct Figure {
    std::string id;                  // stable, dotted: "dataset.sequences"
    std::string label;               // "Sequences of T tokens"
    double value = 0;                // base units (B, s, FLOP, tokens …)
    std::string unit;                // "B", "s", "tokens", "" for pure numbers
    std::string formula;             // "n_tokens / T = 235,828 / 1,024"
    std::vector<std::string> inputs; // ids of the figures this one came from
    bool operator==(const Figure&) const = default;
};

// An ordered collection of figures with lookup by id (the provenance graph).
class FigureSet {
public:
    // Adds or replaces the figure with the same id; returns a reference to the stored one.
    const Figure& add(Figure figure);
    [[nodiscard]] const Figure* find(const std::string& id) const;
    [[nodiscard]] double valueOf(const std::string& id) const; // NaN when missing
    [[nodiscard]] const std::vector<Figure>& all() const { return m_figures; }
    [[nodiscard]] std::size_t size() const { return m_figures.size(); }
    // Ids named as inputs that no figure in the set defines (empty when the graph is closed).
    [[nodiscard]] std::vector<std::string> missingInputs() const;
    // The figure followed by its inputs, depth first, each once: a derivation chain to the inputs.
    [[nodiscard]] std::vector<const Figure*> chain(const std::string& id) const;

private:
    std::vector<Figure> m_figures;
};

} // namespace tw
