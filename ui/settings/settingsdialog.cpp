#include "settingsdialog.h"

#include "appsettings.h"
#include "views/palette.h"
#include "views/qtstrings.h"

#include "base/units.h"
#include "parallel/plan.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QRadioButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>
#include <iterator>

namespace tw::ui {

namespace {
constexpr double kSpeedStep = 0.25; // the speed slider moves in quarters: position p = speed / 0.25
// A tensor of 48 MiB (12 Mi fp32 values): 50.33 MB in decimal units, 48 MiB in binary ones.
constexpr double kExampleBytes = 50331648.0;
} // namespace

// The seven colours of a scheme as swatches, the four strategies named under theirs.
class PaletteSwatches : public QWidget {
public:
    explicit PaletteSwatches(QWidget* parent)
        : QWidget(parent)
    {
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }

    void setScheme(palette::Scheme scheme)
    {
        m_scheme = scheme;
        const QColor* colours = scheme == palette::Scheme::TolBright ? palette::kTolBright : palette::kOkabeIto;
        QStringList names;
        for (int i = 0; i < palette::kCategoricalSize; ++i)
            names << colours[i].name();
        setToolTip(names.join(QStringLiteral("  ")));
        update();
    }

    // Follows the font: a swatch is two lines high, its label one more.
    [[nodiscard]] QSize sizeHint() const override
    {
        return {palette::kCategoricalSize * fontMetrics().height() * 2, fontMetrics().height() * 3 + 2};
    }
    [[nodiscard]] QSize minimumSizeHint() const override { return sizeHint(); }

protected:
    void changeEvent(QEvent* event) override
    {
        if (event->type() == QEvent::FontChange)
            updateGeometry();
        QWidget::changeEvent(event);
    }

    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        const QColor* colours = m_scheme == palette::Scheme::TolBright ? palette::kTolBright : palette::kOkabeIto;
        const int n = palette::kCategoricalSize;
        const double gap = 4.0;
        const double w = (width() - gap * (n - 1)) / n;
        const double label = fontMetrics().height();
        const double h = height() - label - 2;
        for (int i = 0; i < n; ++i) {
            const QRectF box(i * (w + gap), 0, w, h);
            p.setPen(QPen(palette().color(QPalette::WindowText), 0.5));
            p.setBrush(colours[i]);
            p.drawRoundedRect(box.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
            if (i < parallel::kStrategyCount) {
                p.setPen(palette().color(QPalette::WindowText));
                p.drawText(QRectF(box.left(), h + 2, w, label), Qt::AlignCenter, qs(parallel::toString(parallel::Strategy(i))));
            }
        }
    }

private:
    palette::Scheme m_scheme = palette::Scheme::OkabeIto;
};

// Numbers: how byte sizes are written (decimal or binary, significant digits, an example).
QGroupBox* SettingsDialog::buildNumbers()
{
    auto* numbers = new QGroupBox(tr("Numbers"), this);
    m_decimal = new QRadioButton(tr("Decimal: kB, MB, GB (1 MB = 10⁶ B)"), numbers);
    m_decimal->setObjectName(QStringLiteral("decimalUnits"));
    m_binary = new QRadioButton(tr("Binary: KiB, MiB, GiB (1 MiB = 2²⁰ B)"), numbers);
    m_binary->setObjectName(QStringLiteral("binaryUnits"));
    m_digits = new QSpinBox(numbers);
    m_digits->setObjectName(QStringLiteral("significantDigits"));
    m_digits->setRange(2, 8);
    m_digits->setKeyboardTracking(false);
    m_example = new QLabel(numbers);
    m_example->setObjectName(QStringLiteral("unitsExample"));
    auto* unitsColumn = new QVBoxLayout;
    unitsColumn->addWidget(m_decimal);
    unitsColumn->addWidget(m_binary);
    auto* numbersForm = new QFormLayout(numbers);
    numbersForm->addRow(tr("Byte units:"), unitsColumn);
    numbersForm->addRow(tr("Significant digits:"), m_digits);
    numbersForm->addRow(tr("Example:"), m_example);

    return numbers;
}

// Appearance: theme, palette (with its swatches and note) and font size.
QGroupBox* SettingsDialog::buildLooks()
{
    auto* looks = new QGroupBox(tr("Appearance"), this);
    m_theme = new QComboBox(looks);
    m_theme->setObjectName(QStringLiteral("theme"));
    m_theme->addItem(tr("Light"));
    m_theme->addItem(tr("Dark"));
    // Notes in explicit lines: a word-wrapped label in a dialog's form gets clipped (a window's
    // minimum size ignores height-for-width).
    auto* themeNote = new QLabel(tr("Drawings and charts keep their white paper in the dark theme."), looks);
    m_palette = new QComboBox(looks);
    m_palette->setObjectName(QStringLiteral("palette"));
    m_palette->addItem(tr("Okabe–Ito (default)"));
    m_palette->addItem(tr("Paul Tol “bright”"));
    m_swatches = new PaletteSwatches(looks);
    auto* paletteNote = new QLabel(tr("Both palettes are colour-blind safe: their colours stay distinguishable\n"
                                      "with red–green (protanopia, deuteranopia) and blue–yellow (tritanopia)\n"
                                      "colour blindness. Tol’s “bright” is more saturated, for projectors."),
                                   looks);
    paletteNote->setObjectName(QStringLiteral("paletteNote"));
    m_fontSlider = new QSlider(Qt::Horizontal, looks);
    m_fontSlider->setObjectName(QStringLiteral("fontScaleSlider"));
    m_fontSlider->setRange(int(std::lround(AppSettings::kMinFontScale * 100)),
                           int(std::lround(AppSettings::kMaxFontScale * 100)));
    m_fontSlider->setSingleStep(5);
    m_fontSlider->setPageStep(25);
    m_fontSlider->setTracking(false); // a drag applies on release: relaying out the window per pixel is slow
    m_fontBox = new QSpinBox(looks);
    m_fontBox->setObjectName(QStringLiteral("fontScale"));
    m_fontBox->setRange(m_fontSlider->minimum(), m_fontSlider->maximum());
    m_fontBox->setSingleStep(5);
    m_fontBox->setSuffix(QStringLiteral(" %"));
    m_fontBox->setKeyboardTracking(false);
    auto* fontRow = new QHBoxLayout;
    fontRow->addWidget(m_fontSlider, 1);
    fontRow->addWidget(m_fontBox);
    auto* looksForm = new QFormLayout(looks);
    looksForm->addRow(tr("Theme:"), m_theme);
    looksForm->addRow(QString(), themeNote);
    looksForm->addRow(tr("Palette:"), m_palette);
    looksForm->addRow(QString(), m_swatches);
    looksForm->addRow(QString(), paletteNote);
    looksForm->addRow(tr("Font size:"), fontRow);

    return looks;
}

// Animation and files: the animation's speed and the autosave interval.
QGroupBox* SettingsDialog::buildMotion()
{
    auto* motion = new QGroupBox(tr("Animation and files"), this);
    m_speedSlider = new QSlider(Qt::Horizontal, motion);
    m_speedSlider->setObjectName(QStringLiteral("animationSpeedSlider"));
    m_speedSlider->setRange(int(std::lround(AppSettings::kMinAnimationSpeed / kSpeedStep)),
                            int(std::lround(AppSettings::kMaxAnimationSpeed / kSpeedStep)));
    m_speedSlider->setPageStep(4);
    m_speedBox = new QDoubleSpinBox(motion);
    m_speedBox->setObjectName(QStringLiteral("animationSpeed"));
    m_speedBox->setRange(AppSettings::kMinAnimationSpeed, AppSettings::kMaxAnimationSpeed);
    m_speedBox->setSingleStep(kSpeedStep);
    m_speedBox->setDecimals(2);
    m_speedBox->setSuffix(QStringLiteral(" ×"));
    m_speedBox->setKeyboardTracking(false);
    auto* speedRow = new QHBoxLayout;
    speedRow->addWidget(m_speedSlider, 1);
    speedRow->addWidget(m_speedBox);
    m_autosave = new QSpinBox(motion);
    m_autosave->setObjectName(QStringLiteral("autosaveSeconds"));
    m_autosave->setRange(AppSettings::kMinAutosaveSeconds, AppSettings::kMaxAutosaveSeconds);
    m_autosave->setSuffix(tr(" s"));
    m_autosave->setKeyboardTracking(false);
    m_autosave->setToolTip(tr("A modified scenario is written to an autosave file this often (and a few seconds "
                              "after the last edit); after a crash the next start offers it back."));
    auto* motionForm = new QFormLayout(motion);
    motionForm->addRow(tr("Animation speed:"), speedRow);
    motionForm->addRow(tr("Autosave every:"), m_autosave);

    return motion;
}

// Restore defaults and Close, neither of them the default button.
QDialogButtonBox* SettingsDialog::buildButtons(AppSettings* settings)
{
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::RestoreDefaults | QDialogButtonBox::Close, this);
    m_restore = buttons->button(QDialogButtonBox::RestoreDefaults);
    m_restore->setObjectName(QStringLiteral("restoreDefaults"));
    // No default button: Enter in a spin box commits its value; it must not restore the defaults or
    // close the dialog.
    for (QAbstractButton* button : buttons->buttons())
        if (auto* push = qobject_cast<QPushButton*>(button)) {
            push->setAutoDefault(false);
            push->setDefault(false);
        }
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_restore, &QAbstractButton::clicked, settings, &AppSettings::restoreDefaults);

    return buttons;
}

// Widgets → AppSettings (live). m_showing: the dialog is showing AppSettings' values, not editing.
void SettingsDialog::connectEdits(AppSettings* settings)
{
    auto units = [this, settings] {
        if (m_showing)
            return;
        DisplayUnits u;
        u.bytes = m_binary->isChecked() ? ByteUnits::Binary : ByteUnits::Decimal;
        u.significantDigits = m_digits->value();
        settings->setDisplayUnits(u);
    };
    connect(m_decimal, &QRadioButton::toggled, this, units);
    connect(m_binary, &QRadioButton::toggled, this, units);
    connect(m_digits, &QSpinBox::valueChanged, this, units);
    connect(m_theme, &QComboBox::currentIndexChanged, this, [this, settings](int index) {
        if (!m_showing)
            settings->setTheme(index == 1 ? AppSettings::Theme::Dark : AppSettings::Theme::Light);
    });
    connect(m_palette, &QComboBox::currentIndexChanged, this, [this, settings](int index) {
        if (!m_showing)
            settings->setPaletteScheme(index == 1 ? AppSettings::PaletteScheme::TolBright
                                                  : AppSettings::PaletteScheme::OkabeIto);
    });
    auto font = [this, settings](int percent) {
        if (!m_showing)
            settings->setFontScale(percent / 100.0);
    };
    connect(m_fontSlider, &QSlider::valueChanged, this, font);
    connect(m_fontBox, &QSpinBox::valueChanged, this, font);
    connect(m_fontSlider, &QSlider::sliderMoved, this, [this](int percent) {
        // The number follows the thumb during a drag; the value applies on release.
        const QSignalBlocker block(m_fontBox);
        m_fontBox->setValue(percent);
    });
    connect(m_speedSlider, &QSlider::valueChanged, this, [this, settings](int position) {
        if (!m_showing)
            settings->setAnimationSpeed(position * kSpeedStep);
    });
    connect(m_speedBox, &QDoubleSpinBox::valueChanged, this, [this, settings](double speed) {
        if (!m_showing)
            settings->setAnimationSpeed(speed);
    });
    connect(m_autosave, &QSpinBox::valueChanged, this, [this, settings](int seconds) {
        if (!m_showing)
            settings->setAutosaveIntervalSeconds(seconds);
    });

}

// The settings dialog: numbers, appearance, animation and files, each change applied at once.
SettingsDialog::SettingsDialog(QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings"));
    AppSettings* settings = AppSettings::instance();
    QGroupBox* numbers = buildNumbers();
    QGroupBox* looks = buildLooks();
    QGroupBox* motion = buildMotion();
    QDialogButtonBox* buttons = buildButtons(settings);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(numbers);
    layout->addWidget(looks);
    layout->addWidget(motion);
    layout->addStretch(1);
    layout->addWidget(buttons);
    connectEdits(settings);

    // AppSettings → widgets (a change from elsewhere, a clamped value, Restore defaults).
    connect(settings, &AppSettings::displayUnitsChanged, this, &SettingsDialog::showSettings);
    connect(settings, &AppSettings::themeChanged, this, &SettingsDialog::showSettings);
    connect(settings, &AppSettings::paletteSchemeChanged, this, &SettingsDialog::showSettings);
    connect(settings, &AppSettings::fontScaleChanged, this, &SettingsDialog::showSettings);
    connect(settings, &AppSettings::animationSpeedChanged, this, &SettingsDialog::showSettings);
    connect(settings, &AppSettings::autosaveIntervalChanged, this, &SettingsDialog::showSettings);
    showSettings();
}

void SettingsDialog::showSettings()
{
    const AppSettings* settings = AppSettings::instance();
    m_showing = true;
    const DisplayUnits units = settings->displayUnits();
    (units.bytes == ByteUnits::Binary ? m_binary : m_decimal)->setChecked(true);
    m_digits->setValue(units.significantDigits);
    const QString example = QString::fromStdString(formatBytes(kExampleBytes, units));
    m_example->setText(tr("50,331,648 B is shown as %1").arg(example));
    m_theme->setCurrentIndex(settings->theme() == AppSettings::Theme::Dark ? 1 : 0);
    const bool tol = settings->paletteScheme() == AppSettings::PaletteScheme::TolBright;
    m_palette->setCurrentIndex(tol ? 1 : 0);
    m_swatches->setScheme(tol ? palette::Scheme::TolBright : palette::Scheme::OkabeIto);
    const int percent = int(std::lround(settings->fontScale() * 100));
    m_fontSlider->setValue(percent);
    m_fontBox->setValue(percent);
    m_speedSlider->setValue(int(std::lround(settings->animationSpeed() / kSpeedStep)));
    m_speedBox->setValue(settings->animationSpeed());
    m_autosave->setValue(settings->autosaveIntervalSeconds());
    m_showing = false;
}

} // namespace tw::ui
