#include "theme.h"

#include "views/palette.h"

#include <QApplication>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QGuiApplication>
#include <QPainter>
#include <QProxyStyle>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleOption>
#include <QWidget>

#include <optional>

namespace tw::ui::theme {

namespace {
std::optional<QFont>& capturedBase()
{
    static std::optional<QFont> base;
    if (!base)
        base = QApplication::font();
    return base;
}

// Fusion, with one change: on a dark palette the outline of an unchecked radio button or check
// box is drawn in a light grey (Fusion darkens the window colour for it, which all but vanishes on
// dark grey; WCAG 2.1 asks 3:1 for such controls).
class TokenWireStyle : public QProxyStyle {
public:
    TokenWireStyle()
        : QProxyStyle(QStyleFactory::create(QStringLiteral("Fusion")))
    {
        setObjectName(QStringLiteral("tokenwire-fusion"));
    }

    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget) const override
    {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        const bool indicator = element == PE_IndicatorRadioButton || element == PE_IndicatorCheckBox;
        if (!indicator || option->palette.color(QPalette::Window).lightness() >= 128)
            return;
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing, true);
        QColor ring = option->palette.color(QPalette::Disabled, QPalette::WindowText);
        if (!(option->state & State_Enabled))
            ring = ring.darker(140);
        painter->setPen(QPen(ring, 1.0));
        painter->setBrush(Qt::NoBrush);
        const QRectF box = QRectF(option->rect).adjusted(0.5, 0.5, -0.5, -0.5);
        if (element == PE_IndicatorRadioButton)
            painter->drawEllipse(box.adjusted(0.5, 0.5, -0.5, -0.5));
        else
            painter->drawRoundedRect(box, 1.5, 1.5);
        painter->restore();
    }
};

// Our Fusion, once (setting it again would re-polish every widget for nothing).
void useFusion()
{
    if (QApplication::style() && QApplication::style()->objectName() == QLatin1String("tokenwire-fusion"))
        return;
    QApplication::setStyle(new TokenWireStyle);
}

// Every widget paints again; graphics views drop their cached background and redraw the scene.
void repaintAll()
{
    for (QWidget* widget : QApplication::allWidgets()) {
        if (auto* view = qobject_cast<QGraphicsView*>(widget)) {
            view->resetCachedContent();
            if (view->scene())
                view->scene()->update();
        }
        widget->update();
    }
}
} // namespace

QFont baseFont()
{
    return *capturedBase();
}

QFont scaledFont(double extra)
{
    QFont font = baseFont();
    const double scale = AppSettings::instance()->fontScale() * extra;
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * scale);
    else if (font.pixelSize() > 0)
        font.setPixelSize(std::max(1, qRound(font.pixelSize() * scale)));
    return font;
}

QPalette paletteFor(AppSettings::Theme theme)
{
    QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"));
    QPalette light = fusion ? fusion->standardPalette() : QPalette();
    delete fusion;
    if (theme == AppSettings::Theme::Light)
        return light;
    // A dark grey desk (not black: the drawings' white paper would glare); text 11:1 on Window and
    // 13.5:1 on Base, links 7:1 (WCAG 2.1 contrast ratios).
    QPalette p = light;
    const QColor window(0x2B, 0x2E, 0x33);
    const QColor base(0x1E, 0x20, 0x24);
    const QColor text(0xE8, 0xEA, 0xED);
    const QColor disabled(0x8A, 0x90, 0x99);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x29, 0x2E));
    p.setColor(QPalette::ToolTipBase, QColor(0x33, 0x37, 0x3D));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x36, 0x3A, 0x40));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xFF, 0x8A, 0x80));
    p.setColor(QPalette::Light, QColor(0x4A, 0x4F, 0x57));
    p.setColor(QPalette::Midlight, QColor(0x40, 0x44, 0x4B));
    p.setColor(QPalette::Mid, QColor(0x24, 0x27, 0x2B));
    p.setColor(QPalette::Dark, QColor(0x19, 0x1B, 0x1E));
    p.setColor(QPalette::Shadow, QColor(0x0A, 0x0B, 0x0C));
    p.setColor(QPalette::Highlight, QColor(0x3B, 0x82, 0xC4));
    p.setColor(QPalette::HighlightedText, QColor(0xFF, 0xFF, 0xFF));
    p.setColor(QPalette::Link, QColor(0x7C, 0xC0, 0xFF));
    p.setColor(QPalette::LinkVisited, QColor(0xC3, 0x9B, 0xF0));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    p.setColor(QPalette::Disabled, QPalette::Button, QColor(0x30, 0x33, 0x38));
    p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x4A, 0x4F, 0x57));
    return p;
}

namespace {
// Whether the palette in use is dark: the colours below must suit the window they are drawn on, and a
// batch run (screenshots, timing) keeps the default light palette whatever theme the settings name.
bool dark()
{
    return QGuiApplication::palette().color(QPalette::Window).lightness() < 128;
}
} // namespace

QColor linkColor()
{
    return dark() ? QColor(0x7C, 0xC0, 0xFF) : paperLinkColor(); // the light window's links are the paper's
}

QColor mutedTextColor()
{
    return dark() ? QColor(0xA3, 0xAA, 0xB5) : QColor(0x47, 0x55, 0x69);
}

QColor paperLinkColor() { return QColor(0x0B, 0x4F, 0x8A); }

QColor errorColor()
{
    return dark() ? QColor(0xFF, 0x8A, 0x80) : QColor(0xB9, 0x1C, 0x1C);
}

void followTheme(QWidget* widget, std::function<QString()> make)
{
    widget->setStyleSheet(make());
    QObject::connect(AppSettings::instance(), &AppSettings::themeChanged, widget,
                     [widget, make = std::move(make)] { widget->setStyleSheet(make()); });
}

void styleErrorLabel(QWidget* label, const QString& extra)
{
    followTheme(label, [extra] {
        return QStringLiteral("QLabel { color: %1; %2 }").arg(errorColor().name(), extra);
    });
}

void showProblem(QWidget* label, bool problem)
{
    static const char* const kProblem = "twProblem";
    static const char* const kFollows = "twProblemFollowsTheme";
    label->setProperty(kProblem, problem);
    auto make = [label] {
        return label->property(kProblem).toBool() ? QStringLiteral("QLabel { color: %1; }").arg(errorColor().name())
                                                  : QString();
    };
    if (label->property(kFollows).toBool()) {
        label->setStyleSheet(make());
        return;
    }
    label->setProperty(kFollows, true);
    followTheme(label, make);
}

void applyAppearance(QApplication& app)
{
    capturedBase(); // before the first change of the application font
    const AppSettings* settings = AppSettings::instance();
    useFusion();
    app.setPalette(paletteFor(settings->theme()));
    app.setFont(scaledFont());
    palette::applyScheme(settings->paletteScheme() == AppSettings::PaletteScheme::TolBright ? palette::Scheme::TolBright
                                                                                           : palette::Scheme::OkabeIto);
    repaintAll();
}

void followAppSettings(QApplication& app)
{
    applyAppearance(app);
    static bool connected = false;
    if (connected)
        return;
    connected = true;
    AppSettings* settings = AppSettings::instance();
    QApplication* target = &app;
    auto apply = [target] { applyAppearance(*target); };
    QObject::connect(settings, &AppSettings::themeChanged, target, apply);
    QObject::connect(settings, &AppSettings::fontScaleChanged, target, apply);
    QObject::connect(settings, &AppSettings::paletteSchemeChanged, target, apply);
}

} // namespace tw::ui::theme
