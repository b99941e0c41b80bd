#include "fontfollow.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QLayout>
#include <QEvent>
#include <QFontDatabase>
#include <QPointer>
#include <QWidget>

#include <cmath>

namespace tw::ui::fontfollow {

namespace {

constexpr const char* kScale = "twFontScale";       // on a widget: its scale of the application font
constexpr const char* kBase = "twChartFontBase";    // on a chart: the application font's size it was built in
constexpr const char* kApplied = "twChartFontFactor"; // on a chart's layerable: the factor its fonts carry

double appPointSize()
{
    const QFont f = QApplication::font();
    return f.pointSizeF() > 0 ? f.pointSizeF() : f.pixelSize() * 0.75;
}

QFont resized(QFont font, double factor)
{
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    else if (font.pixelSize() > 0)
        font.setPixelSize(std::max(1, int(std::lround(font.pixelSize() * factor))));
    return font;
}

// QApplication::setFont sends ApplicationFontChange to the application and to the top-level windows
// only; a child with its own font sees no change when only the size changed. One filter on the
// application tells the followers.
class AppFontHub : public QObject {
    Q_OBJECT
public:
    static AppFontHub* instance()
    {
        static QPointer<AppFontHub> hub;
        if (!hub) {
            hub = new AppFontHub(qApp);
            qApp->installEventFilter(hub);
        }
        return hub;
    }

signals:
    void changed();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::ApplicationFontChange && watched == qApp) {
            emit changed();
            // Hidden widgets (the panes of the stages not shown) do not ask their layouts again when their
            // fonts change, and their layouts keep the minimum sizes of the old fonts, which the window's
            // layout still adds up: after presentation mode the window came back wider than the screen.
            QMetaObject::invokeMethod(this, &AppFontHub::invalidateLayouts, Qt::QueuedConnection);
        }
        return QObject::eventFilter(watched, event);
    }

private:
    using QObject::QObject;
    // A layout and its nested layouts (QLayout::invalidate leaves the nested ones' caches alone; only an
    // activation, which hidden widgets never get, would reach them).
    static void invalidateTree(QLayout* layout)
    {
        for (int i = 0; i < layout->count(); ++i)
            if (QLayout* nested = layout->itemAt(i)->layout())
                invalidateTree(nested);
        layout->invalidate();
    }
    static void invalidateLayouts()
    {
        for (QWidget* top : QApplication::topLevelWidgets()) {
            for (QWidget* w : top->findChildren<QWidget*>())
                if (QLayout* l = w->layout())
                    invalidateTree(l);
            if (QLayout* l = top->layout()) {
                invalidateTree(l);
                l->activate();
            }
        }
    }
};

// Keeps one widget's font at its scale of the application font.
class WidgetFollower : public QObject {
public:
    WidgetFollower(QWidget* widget, bool bold, Face face)
        : QObject(widget)
        , m_widget(widget)
        , m_bold(bold)
        , m_face(face)
    {
        setObjectName(QStringLiteral("fontFollower"));
        connect(AppFontHub::instance(), &AppFontHub::changed, this, &WidgetFollower::apply);
    }
    void apply()
    {
        const QFont app = QApplication::font();
        QFont f = m_face == Face::FixedPitch ? QFontDatabase::systemFont(QFontDatabase::FixedFont) : app;
        if (app.pointSizeF() > 0)
            f.setPointSizeF(app.pointSizeF() * followedScale(m_widget));
        else
            f.setPixelSize(std::max(1, int(std::lround(app.pixelSize() * followedScale(m_widget)))));
        if (m_bold)
            f.setBold(true);
        m_widget->setFont(f);
    }
    void set(bool bold, Face face)
    {
        m_bold = bold;
        m_face = face;
    }

private:
    QWidget* m_widget;
    bool m_bold;
    Face m_face;
};

// The fonts of one layerable multiplied by `by`.
void scaleFonts(QCPLayerable* layerable, double by)
{
    if (auto* axis = qobject_cast<QCPAxis*>(layerable)) {
        axis->setLabelFont(resized(axis->labelFont(), by));
        axis->setTickLabelFont(resized(axis->tickLabelFont(), by));
        axis->setSelectedLabelFont(resized(axis->selectedLabelFont(), by));
        axis->setSelectedTickLabelFont(resized(axis->selectedTickLabelFont(), by));
    } else if (auto* legend = qobject_cast<QCPLegend*>(layerable)) {
        // QCPLegend::setFont sets its items' fonts too: keep theirs, they are scaled on their own.
        std::vector<std::pair<QCPAbstractLegendItem*, QFont>> items;
        for (int i = 0; i < legend->itemCount(); ++i)
            if (QCPAbstractLegendItem* item = legend->item(i))
                items.emplace_back(item, item->font());
        legend->setFont(resized(legend->font(), by));
        legend->setSelectedFont(resized(legend->selectedFont(), by));
        for (auto& [item, font] : items)
            item->setFont(font);
    } else if (auto* item = qobject_cast<QCPAbstractLegendItem*>(layerable)) {
        item->setFont(resized(item->font(), by));
        item->setSelectedFont(resized(item->selectedFont(), by));
    } else if (auto* title = qobject_cast<QCPTextElement*>(layerable)) {
        title->setFont(resized(title->font(), by));
        title->setSelectedFont(resized(title->selectedFont(), by));
    } else if (auto* text = qobject_cast<QCPItemText*>(layerable)) {
        text->setFont(resized(text->font(), by));
        text->setSelectedFont(resized(text->selectedFont(), by));
    }
}

// Brings every layerable of `plot` to the chart's current factor. A legend item the chart just added
// takes the legend's font, which already carries the factor.
void bringUpToDate(QCustomPlot* plot)
{
    const double factor = chartFontFactor(plot);
    for (QCPLayerable* layerable : plot->findChildren<QCPLayerable*>()) {
        const QVariant applied = layerable->property(kApplied);
        double now = applied.isValid() ? applied.toDouble() : 1.0;
        if (!applied.isValid()) {
            auto* item = qobject_cast<QCPAbstractLegendItem*>(layerable);
            if (item && item->parentLegend() && item->font() == item->parentLegend()->font()
                && item->parentLegend()->property(kApplied).isValid())
                now = item->parentLegend()->property(kApplied).toDouble();
        }
        if (std::abs(now - factor) > 1e-9)
            scaleFonts(layerable, factor / now);
        layerable->setProperty(kApplied, factor);
    }
}

class ChartFollower : public QObject {
public:
    explicit ChartFollower(QCustomPlot* plot)
        : QObject(plot)
    {
        setObjectName(QStringLiteral("chartFontFollower"));
        connect(plot, &QCustomPlot::beforeReplot, this, [plot] { bringUpToDate(plot); });
        connect(AppFontHub::instance(), &AppFontHub::changed, this, [plot] {
            bringUpToDate(plot);
            // Its minimum size follows its fonts: the layouts holding it (a hidden pane's too) must ask
            // again, or they keep the size of the old fonts (after presentation mode, a window too wide).
            plot->updateGeometry();
            plot->replot(QCustomPlot::rpQueuedReplot);
        });
    }
};

} // namespace

void followAppFont(QWidget* widget, double scale, bool bold, Face face)
{
    widget->setProperty(kScale, scale);
    auto* follower = widget->findChild<WidgetFollower*>(QStringLiteral("fontFollower"), Qt::FindDirectChildrenOnly);
    if (!follower)
        follower = new WidgetFollower(widget, bold, face);
    follower->set(bold, face);
    follower->apply();
}

double followedScale(const QWidget* widget)
{
    return widget->property(kScale).toDouble();
}

void followAppFontChart(QCustomPlot* plot)
{
    if (plot->property(kBase).isValid())
        return;
    plot->setProperty(kBase, appPointSize());
    new ChartFollower(plot);
}

double chartFontFactor(const QCustomPlot* plot)
{
    const double base = plot->property(kBase).toDouble();
    return base > 0 ? appPointSize() / base : 1.0;
}

} // namespace tw::ui::fontfollow

#include "fontfollow.moc"
