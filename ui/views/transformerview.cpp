#include "transformerview.h"

#include "base/units.h"
#include "scenario/derive.h"
#include "views/qtstrings.h"

#include <QGraphicsPathItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QMouseEvent>
#include <QScrollBar>
#include <QResizeEvent>

#include <algorithm>
#include <vector>

namespace tw::ui {

namespace {
constexpr qreal kWidth = 560;     // scene width
constexpr qreal kMaxScale = 1.5;  // fitWidth() grows the drawing up to this
constexpr qreal kMargin = 44;     // left room for the residual lines
constexpr qreal kGap = 18;        // vertical arrow between rows
constexpr qreal kColumnGap = 10;
constexpr qreal kSingleOpWidth = 330;
constexpr int kPenRole = 1; // the item's own pen, restored when it is no longer selected

struct Colors {
    QColor fill;
    QColor border;
};

Colors colorsOf(const QString& component)
{
    if (component == QLatin1String("embedding"))
        return {QColor(0xdb, 0xea, 0xfe), QColor(0x25, 0x63, 0xeb)};
    if (component == QLatin1String("attention"))
        return {QColor(0xfe, 0xe2, 0xe2), QColor(0xdc, 0x26, 0x26)};
    if (component == QLatin1String("mlp"))
        return {QColor(0xdc, 0xfc, 0xe7), QColor(0x16, 0xa3, 0x4a)};
    if (component == QLatin1String("experts") || component == QLatin1String("router"))
        return {QColor(0xf3, 0xe8, 0xff), QColor(0x93, 0x33, 0xea)};
    if (component == QLatin1String("head"))
        return {QColor(0xfe, 0xf3, 0xc7), QColor(0xd9, 0x77, 0x06)};
    if (component == QLatin1String("residual"))
        return {QColor(0xff, 0xff, 0xff), QColor(0x33, 0x41, 0x55)};
    return {QColor(0xf1, 0xf5, 0xf9), QColor(0x64, 0x74, 0x8b)}; // norms, loss
}

struct Op {
    QString text;
    QString tensor;    // selected on click (a weight, or the tensor the op makes)
    QString component;
};
struct Chip {
    QString tensor;
    QString symbol;    // "x", "Q", "logits"
};
struct Row {
    std::vector<Op> ops;      // an operation row …
    std::vector<Chip> chips;  // … or a tensor row
    bool residualFrom = false; // the residual stream leaves here …
    bool residualTo = false;   // … and is added back here
    bool blockStart = false;
    bool blockEnd = false;
};

} // namespace

QString shapeNumbers(const model::TensorInfo& t)
{
    QStringList parts;
    for (std::uint64_t n : t.shape)
        parts << QString::number(n);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

TransformerView::TransformerView(QWidget* parent)
    : QGraphicsView(parent)
{
    setObjectName(QStringLiteral("transformerView"));
    setScene(new QGraphicsScene(this));
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setBackgroundBrush(Qt::white);
    setAlignment(Qt::AlignHCenter | Qt::AlignTop);
    setDragMode(QGraphicsView::ScrollHandDrag);
    // Resizing and scaling keep the top of the drawing in place (the token ids come first).
    setResizeAnchor(QGraphicsView::NoAnchor);
    setTransformationAnchor(QGraphicsView::NoAnchor);
    setMinimumWidth(260);
    m_caption = new QLabel(viewport());
    m_caption->setObjectName(QStringLiteral("transformerFollowCaption"));
    m_caption->setWordWrap(true);
    m_caption->setTextFormat(Qt::RichText);
    m_caption->setStyleSheet(QStringLiteral("QLabel { background: rgba(255, 247, 214, 240); color: #111827; "
                                            "border: 1px solid #111827; border-radius: 6px; padding: 5px; }"));
    m_caption->hide();
    connect(m_caption, &QLabel::linkActivated, this, [this](const QString& link) {
        if (link.startsWith(QLatin1String("fig:")))
            emit figureLinkActivated(link.mid(4));
    });
}

namespace {

// The translated text of the drawing (TransformerView's context).
QString tr(const char* text) { return TransformerView::tr(text); }

// The block the drawing shows: the first MoE layer when there is one, else layer 0, and the tensors of
// that layer and of no layer by name.
struct DrawnBlock {
    int layer = 0;
    bool moe = false;
    QHash<QString, const model::TensorInfo*> tensors;
};

DrawnBlock drawnBlock(const scenario::Derivation& d)
{
    DrawnBlock out;
    for (const model::TensorInfo& t : d.stage2->tensors)
        if (t.kind == model::TensorKind::Activation && t.component == "router") {
            out.layer = t.layer;
            out.moe = true;
            break;
        }
    for (const model::TensorInfo& t : d.stage2->tensors)
        if (t.layer == -1 || t.layer == out.layer)
            out.tensors.insert(qs(t.name), &t);
    return out;
}

// The drawing's rows, top to bottom: token ids, embedding, the block (attention, then MLP or experts),
// the final norm, the head and the loss.
std::vector<Row> blockRows(const model::ModelConfig& m, const DrawnBlock& block)
{
    const bool gpt = m.family == model::Family::Gpt2;
    const bool moe = block.moe;
    const QString p = QStringLiteral("layer%1.").arg(block.layer);
    auto weight = [&](const char* name) { return p + QLatin1String(name); };
    auto symbols = [&](const QString& name) {
        const model::TensorInfo* t = block.tensors.value(name);
        return t ? qs(t->shapeSymbols) : QString();
    };
    std::vector<Row> rows;
    auto ops = [&](std::vector<Op> list) {
        Row r;
        r.ops = std::move(list);
        rows.push_back(std::move(r));
        return rows.size() - 1;
    };
    auto chips = [&](std::vector<Chip> list) {
        Row r;
        r.chips = std::move(list);
        rows.push_back(std::move(r));
        return rows.size() - 1;
    };
    const QString emb = QStringLiteral("embedding");
    chips({{QStringLiteral("input.ids"), tr("token ids")}});
    if (gpt)
        ops({{tr("token embedding wte %1").arg(symbols(QStringLiteral("embedding.wte"))), QStringLiteral("embedding.wte"), emb},
             {tr("+ positions wpe %1").arg(symbols(QStringLiteral("embedding.wpe"))), QStringLiteral("embedding.wpe"), emb}});
    else
        ops({{tr("token embedding %1 (positions: RoPE on Q, K)").arg(symbols(QStringLiteral("embedding.wte"))),
              QStringLiteral("embedding.wte"), emb}});
    rows[chips({{QStringLiteral("embedding.output"), QStringLiteral("x")}})].residualFrom = true;

    const QString norm = QStringLiteral("norm"), attn = QStringLiteral("attention");
    rows[ops({{gpt ? tr("LayerNorm ln_1") : tr("RMSNorm"), weight(gpt ? "ln1.weight" : "attn_norm.weight"), norm}})].blockStart =
        true;
    chips({{p + (gpt ? QLatin1String("ln1") : QLatin1String("attn_norm")), tr("x_norm")}});
    if (gpt)
        ops({{tr("W_q (of W_qkv)"), weight("attn.qkv.weight"), attn},
             {tr("W_k (of W_qkv)"), weight("attn.qkv.weight"), attn},
             {tr("W_v (of W_qkv)"), weight("attn.qkv.weight"), attn}});
    else
        ops({{tr("W_q %1").arg(symbols(weight("attn.wq"))), weight("attn.wq"), attn},
             {tr("W_k %1").arg(symbols(weight("attn.wk"))), weight("attn.wk"), attn},
             {tr("W_v %1").arg(symbols(weight("attn.wv"))), weight("attn.wv"), attn}});
    chips({{p + QLatin1String("attn.q"), QStringLiteral("Q")},
           {p + QLatin1String("attn.k"), QStringLiteral("K")},
           {p + QLatin1String("attn.v"), QStringLiteral("V")}});
    ops({{tr("softmax(Q·Kᵀ / √(d/a)), causal mask: a = %1 heads").arg(m.heads), p + QLatin1String("attn.scores"), attn}});
    chips({{p + QLatin1String("attn.softmax"), tr("scores")}});
    ops({{tr("scores · V, heads joined, then W_o"), weight(gpt ? "attn.proj.weight" : "attn.wo"), attn}});
    chips({{p + QLatin1String("attn.out"), tr("attn")}});
    rows[ops({{tr("⊕  add the residual x"), QString(), QStringLiteral("residual")}})].residualTo = true;
    rows[chips({{p + QLatin1String("residual"), QStringLiteral("h")}})].residualFrom = true;
    ops({{gpt ? tr("LayerNorm ln_2") : tr("RMSNorm"), weight(gpt ? "ln2.weight" : "mlp_norm.weight"), norm}});
    chips({{p + (gpt ? QLatin1String("ln2") : QLatin1String("mlp_norm")), tr("h_norm")}});
    if (moe) {
        const QString ex = QStringLiteral("experts");
        ops({{tr("router %1: top-%2 of E = %3 experts").arg(symbols(weight("router.weight"))).arg(m.moe.topK).arg(m.moe.experts),
              weight("router.weight"), QStringLiteral("router")}});
        chips({{p + QLatin1String("router.logits"), tr("router")}});
        ops({{tr("dispatch: each expert's buffer of C tokens (CF = %1)").arg(m.moe.capacityFactor),
              p + QLatin1String("experts.dispatch"), ex}});
        chips({{p + QLatin1String("experts.dispatch"), tr("buffers")}});
        if (gpt) {
            ops({{tr("experts' W_fc %1").arg(symbols(weight("experts.fc.weight"))), weight("experts.fc.weight"), ex}});
            chips({{p + QLatin1String("experts.up"), tr("up")}});
            ops({{tr("GELU"), p + QLatin1String("experts.gelu"), ex}});
            chips({{p + QLatin1String("experts.gelu"), tr("act")}});
            ops({{tr("experts' W_proj %1").arg(symbols(weight("experts.proj.weight"))), weight("experts.proj.weight"), ex}});
        } else {
            ops({{tr("experts' W_gate"), weight("experts.w_gate"), ex}, {tr("experts' W_up"), weight("experts.w_up"), ex}});
            chips({{p + QLatin1String("experts.gate"), tr("gate")}, {p + QLatin1String("experts.up"), tr("up")}});
            ops({{tr("SiLU(gate) ⊙ up"), p + QLatin1String("experts.swiglu"), ex}});
            chips({{p + QLatin1String("experts.swiglu"), tr("act")}});
            ops({{tr("experts' W_down %1").arg(symbols(weight("experts.w_down"))), weight("experts.w_down"), ex}});
        }
        chips({{p + QLatin1String("experts.down"), tr("down")}});
        ops({{tr("combine: weighted sum of the top-%1 outputs").arg(m.moe.topK), p + QLatin1String("experts.combine"), ex}});
        chips({{p + QLatin1String("experts.combine"), tr("mlp")}});
    } else {
        const QString mlp = QStringLiteral("mlp");
        if (gpt) {
            ops({{tr("W_fc %1").arg(symbols(weight("mlp.fc.weight"))), weight("mlp.fc.weight"), mlp}});
            chips({{p + QLatin1String("mlp.up"), tr("up")}});
            ops({{tr("GELU"), p + QLatin1String("mlp.gelu"), mlp}});
            chips({{p + QLatin1String("mlp.gelu"), tr("act")}});
            ops({{tr("W_proj %1").arg(symbols(weight("mlp.proj.weight"))), weight("mlp.proj.weight"), mlp}});
        } else {
            ops({{tr("W_gate %1").arg(symbols(weight("mlp.w_gate"))), weight("mlp.w_gate"), mlp},
                 {tr("W_up %1").arg(symbols(weight("mlp.w_up"))), weight("mlp.w_up"), mlp}});
            chips({{p + QLatin1String("mlp.gate"), tr("gate")}, {p + QLatin1String("mlp.up"), tr("up")}});
            ops({{tr("SwiGLU: SiLU(gate) ⊙ up"), p + QLatin1String("mlp.swiglu"), mlp}});
            chips({{p + QLatin1String("mlp.swiglu"), tr("act")}});
            ops({{tr("W_down %1").arg(symbols(weight("mlp.w_down"))), weight("mlp.w_down"), mlp}});
        }
        chips({{p + QLatin1String("mlp.down"), tr("mlp")}});
    }
    rows[ops({{tr("⊕  add the residual h"), QString(), QStringLiteral("residual")}})].residualTo = true;
    rows[chips({{p + QLatin1String("output"), tr("block out")}})].blockEnd = true;
    ops({{gpt ? tr("final LayerNorm") : tr("final RMSNorm"), QStringLiteral("final_norm.weight"), norm}});
    chips({{QStringLiteral("final_norm.output"), tr("x_L")}});
    if (m.tiedEmbeddings)
        ops({{tr("head: × wteᵀ (tied to the embedding)"), QStringLiteral("embedding.wte"), QStringLiteral("head")}});
    else
        ops({{tr("head W_head %1").arg(symbols(QStringLiteral("head.weight"))), QStringLiteral("head.weight"), QStringLiteral("head")}});
    chips({{QStringLiteral("logits"), tr("logits")}});
    ops({{tr("cross-entropy with the next tokens [B,T]"), QStringLiteral("input.targets"), QStringLiteral("loss")}});
    chips({{QStringLiteral("loss"), tr("loss")}});

    return rows;
}

// An operation's box at `slot` (narrower when alone in its row), clickable when it names a tensor.
QRectF addOpBox(QGraphicsScene* s, const Op& op, QRectF slot, bool alone, const QFont& opFont,
                const QHash<QString, const model::TensorInfo*>& tensors)
{
    const QFontMetricsF opMetrics(opFont);
    const QColor ink(0x11, 0x18, 0x27);
    const qreal left = slot.left(), column = slot.width(), y = slot.top();
    const qreal w = alone ? std::min(kSingleOpWidth, column) : column;
    const QRectF textRect = opMetrics.boundingRect(QRectF(0, 0, w - 12, 1000), Qt::AlignCenter | Qt::TextWordWrap, op.text);
    const QRectF box(left + (column - w) / 2, y, w, textRect.height() + 10);
    const Colors c = colorsOf(op.component);
    auto* rect = s->addRect(box, QPen(c.border, 1.4), c.fill);
    auto* text = new QGraphicsSimpleTextItem(rect);
    text->setFont(opFont);
    text->setBrush(ink);
    text->setText(opMetrics.horizontalAdvance(op.text) > w - 12 ? opMetrics.elidedText(op.text, Qt::ElideRight, w - 12) : op.text);
    text->setPos(box.center().x() - text->boundingRect().width() / 2, box.center().y() - text->boundingRect().height() / 2);
    if (!op.tensor.isEmpty() && tensors.contains(op.tensor)) {
        rect->setData(TransformerView::TensorNameRole, op.tensor);
        rect->setData(kPenRole, QVariant::fromValue(rect->pen()));
        rect->setCursor(Qt::PointingHandCursor);
        rect->setToolTip(op.tensor);
    }
    return box;
}

// Arrows between consecutive rows (column to column, or every box to every box).
void drawArrows(QGraphicsScene* s, const std::vector<std::vector<QRectF>>& placed)
{
    const QPen arrowPen(QColor(0x33, 0x41, 0x55), 1.3);
    auto arrow = [&](QPointF from, QPointF to) {
        s->addLine(QLineF(from, to), arrowPen)->setZValue(-1);
        QPolygonF head;
        head << to << QPointF(to.x() - 4, to.y() - 7) << QPointF(to.x() + 4, to.y() - 7);
        s->addPolygon(head, arrowPen, QColor(0x33, 0x41, 0x55));
    };
    for (std::size_t r = 0; r + 1 < placed.size(); ++r) {
        const auto& a = placed[r];
        const auto& b = placed[r + 1];
        if (a.size() == b.size())
            for (std::size_t i = 0; i < a.size(); ++i)
                arrow(QPointF(a[i].center().x(), a[i].bottom()), QPointF(b[i].center().x(), b[i].top()));
        else
            for (const QRectF& from : a)
                for (const QRectF& to : b)
                    arrow(QPointF(from.center().x(), from.bottom()), QPointF(to.center().x(), to.top()));
    }

}

// The residual stream: from a tensor down the left margin to its ⊕.
void drawResidual(QGraphicsScene* s, const std::vector<Row>& rows, const std::vector<std::vector<QRectF>>& placed)
{
    const QPen arrowPen(QColor(0x33, 0x41, 0x55), 1.3);
    const QPen residualPen(QColor(0x33, 0x41, 0x55), 1.2, Qt::DashLine);
    std::vector<QRectF> from;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].residualFrom)
            from.push_back(placed[r].front());
        if (rows[r].residualTo && !from.empty()) {
            const QRectF src = from.back();
            const QRectF dst = placed[r].front();
            QPainterPath path(QPointF(src.left(), src.center().y()));
            path.lineTo(14, src.center().y());
            path.lineTo(14, dst.center().y());
            path.lineTo(dst.left() - 1, dst.center().y());
            s->addPath(path, residualPen)->setZValue(-1);
            QPolygonF head;
            const QPointF tip(dst.left() - 1, dst.center().y());
            head << tip << QPointF(tip.x() - 7, tip.y() - 4) << QPointF(tip.x() - 7, tip.y() + 4);
            s->addPolygon(head, arrowPen, QColor(0x33, 0x41, 0x55));
        }
    }

}

} // namespace

// A tensor's chip at `slot`: its symbol, shape and bytes, clickable, remembered for the followed row.
QRectF TransformerView::addChipBox(const QString& tensor, const QString& symbol, const model::TensorInfo* t, QRectF slot,
                                   bool wide, const QFont& chipFont)
{
    QGraphicsScene* s = scene();
    const QFontMetricsF chipMetrics(chipFont);
    const QColor ink(0x11, 0x18, 0x27), muted(0x47, 0x55, 0x69);
    const qreal left = slot.left(), column = slot.width(), y = slot.top();
    const Chip chip{tensor, symbol};
    const std::size_t n = wide ? 1 : 2;
    QString shape, bytes;
    if (t) {
        const QString sym = qs(t->shapeSymbols), num = shapeNumbers(*t);
        shape = n == 1 ? QStringLiteral("%1  %2 = %3").arg(chip.symbol, sym, num)
                       : QStringLiteral("%1  %2\n= %3").arg(chip.symbol, sym, num);
        bytes = QStringLiteral("%1 · %2").arg(qs(formatBytes(t->bytes, m_units)), qs(t->dtypeName));
        m_symbols.insert(chip.tensor, sym);
    } else {
        shape = chip.symbol;
    }
    const qreal w = std::min(column, std::max(chipMetrics.horizontalAdvance(bytes),
                                              chipMetrics.boundingRect(QRectF(0, 0, 2000, 1000), Qt::AlignLeft, shape).width())
                                         + 18);
    auto* shapeText = new QGraphicsSimpleTextItem;
    shapeText->setFont(chipFont);
    shapeText->setBrush(ink);
    shapeText->setText(shape);
    auto* bytesText = new QGraphicsSimpleTextItem;
    bytesText->setFont(chipFont);
    bytesText->setBrush(muted);
    bytesText->setText(bytes);
    const qreal h = shapeText->boundingRect().height() + (bytes.isEmpty() ? 0 : bytesText->boundingRect().height()) + 8;
    const QRectF box(left + (column - w) / 2, y, w, h);
    auto* rect = s->addRect(box, QPen(QColor(0x94, 0xa3, 0xb8), 1.0), QColor(0xff, 0xff, 0xff));
    shapeText->setParentItem(rect);
    bytesText->setParentItem(rect);
    shapeText->setPos(box.center().x() - shapeText->boundingRect().width() / 2, box.top() + 4);
    bytesText->setPos(box.center().x() - bytesText->boundingRect().width() / 2,
                      box.top() + 4 + shapeText->boundingRect().height());
    rect->setData(TensorNameRole, chip.tensor);
    rect->setData(kPenRole, QVariant::fromValue(rect->pen()));
    rect->setCursor(Qt::PointingHandCursor);
    const QString label = bytes.isEmpty() ? shape : shape + QLatin1Char('\n') + bytes;
    rect->setToolTip(tr("%1\n%2\nbytes = the product of the shape × bytes per element; click for the details")
                         .arg(chip.tensor, label));
    m_labels.insert(chip.tensor, QString(label).replace(QLatin1Char('\n'), QLatin1Char(' ')));
    if (n == 1)
        m_wide.insert(chip.tensor);
    m_rects.insert(chip.tensor, box);
    return box;
}

// The drawing of one Transformer block of the derivation's model: its rows of operations and tensors,
// the arrows, the residual stream and the block's frame.
void TransformerView::setDerivation(const scenario::Derivation* d)
{
    QGraphicsScene* s = scene();
    const bool first = s->items().isEmpty();
    s->clear();
    m_followItems.clear();
    m_marked.clear();
    m_labels.clear();
    m_rects.clear();
    m_symbols.clear();
    m_wide.clear();
    if (!d) {
        m_caption->hide();
        return;
    }
    const model::ModelConfig& m = d->model;
    const DrawnBlock block = drawnBlock(*d);
    const std::vector<Row> rows = blockRows(m, block);

    // Layout: rows top to bottom, items centred in equal columns.
    QFont opFont = font();
    opFont.setPointSizeF(opFont.pointSizeF() * 1.0);
    QFont chipFont = font();
    chipFont.setPointSizeF(chipFont.pointSizeF() * 0.95);
    QFont titleFont = font();
    titleFont.setBold(true);
    const QColor ink(0x11, 0x18, 0x27);
    const qreal usable = kWidth - kMargin - 8;
    std::vector<std::vector<QRectF>> placed(rows.size());
    qreal y = 8;
    qreal blockTop = 0, blockBottom = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const Row& row = rows[r];
        if (row.blockStart) {
            y += 30; // the block's title
            blockTop = y - 34;
        }
        const std::size_t n = std::max(row.ops.size(), row.chips.size());
        const qreal column = (usable - kColumnGap * qreal(n - 1)) / qreal(n);
        qreal height = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const QRectF slot(kMargin + qreal(i) * (column + kColumnGap), y, column, 0);
            const QRectF box = !row.ops.empty()
                                   ? addOpBox(s, row.ops[i], slot, n == 1, opFont, block.tensors)
                                   : addChipBox(row.chips[i].tensor, row.chips[i].symbol,
                                                block.tensors.value(row.chips[i].tensor), slot, n == 1, chipFont);
            placed[r].push_back(box);
            height = std::max(height, box.height());
        }
        y += height;
        if (row.blockEnd)
            blockBottom = y + 8;
        y += kGap + (row.blockEnd ? 8 : 0);
    }
    drawArrows(s, placed);
    drawResidual(s, rows, placed);

    // The block frame, repeated L times.
    const QRectF frame(kMargin - 10, blockTop, usable + 18, blockBottom - blockTop);
    auto* frameItem = s->addRect(frame, QPen(QColor(0x94, 0xa3, 0xb8), 1.2, Qt::DashLine), Qt::NoBrush);
    frameItem->setZValue(-2);
    QString title = tr("Transformer block × L = %1   (layer %2 drawn)").arg(m.layers).arg(block.layer);
    if (block.moe)
        title = tr("Transformer block × L = %1; MoE in %2 of them   (layer %3 drawn)").arg(m.layers).arg(m.moeLayers()).arg(block.layer);
    auto* titleItem = s->addSimpleText(title, titleFont);
    titleItem->setBrush(ink);
    titleItem->setPos(frame.left() + 8, frame.top() + 6);

    s->setSceneRect(QRectF(0, 0, kWidth, y));
    drawFollowedRow();
    selectTensor(m_selected);
    fitWidth();
    if (first) // a new drawing starts at the token ids; redraws after edits keep the user's place
        verticalScrollBar()->setValue(verticalScrollBar()->minimum());
}

void TransformerView::fitWidth()
{
    // The drawing fills its column's width: narrow windows (a 1280×720 projector) shrink it instead of
    // cutting it, a maximized window on a large screen grows it (to 1.5×, the text then at a projector's
    // reading size) instead of leaving it small in the middle.
    const qreal available = viewport()->width() - 4;
    const qreal scale = std::clamp(available / kWidth, 0.6, kMaxScale);
    if (!qFuzzyCompare(transform().m11(), scale))
        setTransform(QTransform::fromScale(scale, scale));
}

void TransformerView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    fitWidth();
    placeCaption();
}

void TransformerView::setFollowedRow(std::optional<FollowedRow> row)
{
    m_follow = std::move(row);
    drawFollowedRow();
}

void TransformerView::placeCaption()
{
    if (!m_follow || m_follow->caption.isEmpty()) {
        m_caption->hide();
        return;
    }
    const int width = std::max(160, viewport()->width() - 16);
    m_caption->setFixedWidth(width);
    m_caption->setText(m_follow->caption);
    // As tall as its wrapped text at this width (adjustSize undercounts the style sheet's padding).
    m_caption->setFixedHeight(std::max(m_caption->heightForWidth(width), m_caption->sizeHint().height()));
    m_caption->move(8, std::max(4, viewport()->height() - m_caption->height() - 6));
    m_caption->show();
    m_caption->raise();
}

void TransformerView::drawFollowedRow()
{
    for (QGraphicsItem* item : std::as_const(m_followItems))
        delete item;
    m_followItems.clear();
    m_marked.clear();
    placeCaption();
    if (!m_follow || scene()->items().isEmpty())
        return;
    const FollowedRow& f = *m_follow;
    const QColor ink(0x11, 0x18, 0x27), mark(0xF0, 0xE4, 0x42);
    // Every tensor shaped [B,T,…] holds the token's row at (b, t).
    for (auto it = m_symbols.cbegin(); it != m_symbols.cend(); ++it) {
        if (!it.value().startsWith(QLatin1String("[B,T")))
            continue;
        const QRectF box = m_rects.value(it.key());
        if (box.isNull())
            continue;
        m_marked << it.key();
        auto* halo = scene()->addRect(box.adjusted(-3, -3, 3, 3), QPen(mark, 4.0), Qt::NoBrush);
        halo->setZValue(-0.5);
        m_followItems << halo;
        // A [B,T] grid (T across, B down) with the token's (b, t) marked, beside labels that have a row
        // of their own (side by side labels have no room for it).
        if (!m_wide.contains(it.key()))
            continue;
        const qreal gw = 46, gh = 26;
        const QRectF grid(box.right() + 8, box.center().y() - gh / 2, gw, gh);
        if (grid.right() > kWidth - 2)
            continue;
        auto* frame = scene()->addRect(grid, QPen(ink, 0.8), QColor(0xf8, 0xfa, 0xfc));
        frame->setToolTip(tr("[B,T] = [%1, %2]: the followed token is row b = %3, position t = %4").arg(f.B).arg(f.T).arg(f.b).arg(f.t));
        m_followItems << frame;
        const qreal x = grid.left() + 3 + (gw - 6) * (f.T > 1 ? qreal(f.t) / qreal(f.T - 1) : 0.5);
        const qreal y = grid.top() + 3 + (gh - 6) * (f.B > 1 ? qreal(f.b) / qreal(f.B - 1) : 0.5);
        const QPen thin(ink, 0.7, Qt::DotLine);
        scene()->addLine(QLineF(x, grid.top(), x, grid.bottom()), thin)->setParentItem(frame);
        scene()->addLine(QLineF(grid.left(), y, grid.right(), y), thin)->setParentItem(frame);
        scene()->addEllipse(QRectF(x - 3.5, y - 3.5, 7, 7), QPen(ink, 1.0), mark)->setParentItem(frame);
    }
    m_marked.sort();
}

QString TransformerView::tensorLabel(const QString& name) const
{
    return m_labels.value(name);
}

QRectF TransformerView::tensorRect(const QString& name) const
{
    return m_rects.value(name);
}

void TransformerView::selectTensor(const QString& name)
{
    m_selected = name;
    for (QGraphicsItem* item : scene()->items()) {
        auto* rect = qgraphicsitem_cast<QGraphicsRectItem*>(item);
        if (!rect || !rect->data(TensorNameRole).isValid())
            continue;
        QPen pen = rect->data(kPenRole).value<QPen>();
        if (!name.isEmpty() && rect->data(TensorNameRole).toString() == name) {
            pen.setWidthF(3.0);
            pen.setColor(QColor(0xf5, 0x9e, 0x0b));
        }
        rect->setPen(pen);
    }
}

void TransformerView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        for (QGraphicsItem* item = itemAt(event->position().toPoint()); item; item = item->parentItem()) {
            const QVariant name = item->data(TensorNameRole);
            if (name.isValid()) {
                selectTensor(name.toString());
                emit tensorClicked(name.toString());
                event->accept();
                return;
            }
        }
    }
    QGraphicsView::mousePressEvent(event);
}

} // namespace tw::ui
