#pragma once
// Stage 2's drawn Transformer: token ids → embedding → [norm → attention → ⊕ → norm → MLP/MoE → ⊕] × L
// → final norm → head → logits → loss, for the derivation's family. Operations are boxes; the
// tensors between them are labels on the edges with their shape in symbols and numbers and their
// bytes, all read from core's tensor inventory. Clicking a box or a label selects its tensor.

#include "base/units.h"

#include <QGraphicsView>
#include <QHash>
#include <QList>
#include <QSet>

#include <cstdint>
#include <optional>

class QLabel;

namespace tw::model {
struct TensorInfo;
}
namespace tw::scenario {
struct Derivation;
}

namespace tw::ui {

class TransformerView : public QGraphicsView {
    Q_OBJECT
public:
    static constexpr int TensorNameRole = 0; // QGraphicsItem::data key holding the tensor's name

    explicit TransformerView(QWidget* parent = nullptr);

    // Redraws for a derivation (nullptr: empty).
    void setDerivation(const scenario::Derivation* derivation);
    // The label drawn for a tensor ("embedding.output" → "x  [B,T,d] = [32, 1024, 768] …"); empty
    // when the tensor is not drawn.
    [[nodiscard]] QString tensorLabel(const QString& name) const;
    [[nodiscard]] QStringList drawnTensors() const { return m_labels.keys(); }
    // Where a tensor's label sits, in scene coordinates (for tests and for scrolling to it).
    [[nodiscard]] QRectF tensorRect(const QString& name) const;
    [[nodiscard]] QString selectedTensor() const { return m_selected; }
    void selectTensor(const QString& name);

    // Byte sizes on the labels in the viewer's units (applies at the next setDerivation).
    void setDisplayUnits(DisplayUnits units) { m_units = units; }

    // The story's live thread: the followed token is row (b, t) of every [B,T,…] tensor. Each such
    // tensor's label gets a highlight and a small [B,T] grid with the token's cell marked; `caption`
    // (rich text, "fig:" links allowed) is shown over the top of the view. nullopt clears it.
    struct FollowedRow {
        std::uint64_t b = 0, t = 0, B = 1, T = 1;
        QString caption;
    };
    void setFollowedRow(std::optional<FollowedRow> row);
    [[nodiscard]] const std::optional<FollowedRow>& followedRow() const { return m_follow; }
    // The tensors whose row of the followed token is marked (those shaped [B,T,…]).
    [[nodiscard]] QStringList markedTensors() const { return m_marked; }
    [[nodiscard]] QLabel* followCaption() const { return m_caption; }

signals:
    void tensorClicked(const QString& name);
    void figureLinkActivated(const QString& id); // a "fig:" link of the caption was clicked

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void fitWidth();
    void drawFollowedRow();
    QRectF addChipBox(const QString& tensor, const QString& symbol, const model::TensorInfo* t, QRectF slot, bool wide,
                      const QFont& chipFont);
    void placeCaption();

    QHash<QString, QString> m_labels;
    QHash<QString, QRectF> m_rects;
    QHash<QString, QString> m_symbols; // tensor → its shape in symbols ("[B,T,d]")
    QSet<QString> m_wide;              // tensors whose label has a row of its own
    QString m_selected;
    DisplayUnits m_units;
    std::optional<FollowedRow> m_follow;
    QList<QGraphicsItem*> m_followItems;
    QStringList m_marked;
    QLabel* m_caption = nullptr;
};

// A tensor's shape as numbers, "[8, 1024, 768]" (its symbols, "[b, s, d]", are shapeSymbols).
[[nodiscard]] QString shapeNumbers(const model::TensorInfo& t);

} // namespace tw::ui
