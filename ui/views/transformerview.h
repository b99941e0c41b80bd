#pragma once
// Stage 2's drawn Transformer: token ids → embedding → [norm → attention → ⊕ → norm → MLP/MoE → ⊕] × L
// → final norm → head → logits → loss, for the derivation's family. Operations are boxes; the
// tensors between them are labels on the edges with their shape in symbols and numbers and their
// bytes, all read from core's tensor inventory. Clicking a box or a label selects its tensor.

#include <QGraphicsView>
#include <QHash>

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

signals:
    void tensorClicked(const QString& name);

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void fitWidth();

    QHash<QString, QString> m_labels;
    QHash<QString, QRectF> m_rects;
    QString m_selected;
};

} // namespace tw::ui
