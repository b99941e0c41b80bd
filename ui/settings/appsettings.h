#pragma once
// The viewer's preferences, kept with QSettings (organization "TokenWire", application
// "TokenWire"): byte units (MB = 10^6 B or MiB), light/dark theme, the colour palette, a font scale,
// the animation speed, the autosave interval and the recent files. Not part of a scenario: the same
// scenario looks the same to everyone's numbers, each in their own units. One instance per
// application (AppSettings::instance()); panes read it and follow its change signals. Tests point
// QSettings at a temporary folder (QStandardPaths::setTestModeEnabled) before the first use.

#include "base/units.h"

#include <QObject>
#include <QStringList>

namespace tw::ui {

class AppSettings : public QObject {
    Q_OBJECT
public:
    enum class Theme { Light, Dark };
    // Okabe & Ito (the default: safe for every common colour-vision deficiency) or Paul Tol's
    // "bright" scheme (also colour-blind safe, higher contrast on a projector).
    enum class PaletteScheme { OkabeIto, TolBright };

    static constexpr double kMinFontScale = 0.75;
    static constexpr double kMaxFontScale = 2.5;
    static constexpr double kMinAnimationSpeed = 0.25;
    static constexpr double kMaxAnimationSpeed = 4.0;
    static constexpr int kMaxRecentFiles = 8;
    static constexpr int kMinAutosaveSeconds = 5;
    static constexpr int kMaxAutosaveSeconds = 600;
    static constexpr int kDefaultAutosaveSeconds = 30;

    // The application's settings, read from QSettings on first use.
    [[nodiscard]] static AppSettings* instance();

    [[nodiscard]] DisplayUnits displayUnits() const { return m_units; }
    [[nodiscard]] Theme theme() const { return m_theme; }
    [[nodiscard]] PaletteScheme paletteScheme() const { return m_palette; }
    [[nodiscard]] double fontScale() const { return m_fontScale; }           // 1 = the system font
    [[nodiscard]] double animationSpeed() const { return m_animationSpeed; } // multiplies every pane's speed
    [[nodiscard]] QStringList recentFiles() const { return m_recent; }       // newest first
    // How often an open, modified scenario is written to its autosave file (ui/document/autosave.h).
    [[nodiscard]] int autosaveIntervalSeconds() const { return m_autosaveSeconds; }

    // Each setter stores the value (clamped to its range), writes QSettings and emits its signal
    // when the value changed.
    void setDisplayUnits(DisplayUnits units);
    void setTheme(Theme theme);
    void setPaletteScheme(PaletteScheme scheme);
    void setFontScale(double scale);
    void setAnimationSpeed(double speed);
    void setAutosaveIntervalSeconds(int seconds);
    // Every preference back to its default (the recent files stay), one signal per value that changed.
    void restoreDefaults();
    // Moves path to the front (absolute, deduplicated, at most kMaxRecentFiles).
    void addRecentFile(const QString& path);
    void removeRecentFile(const QString& path);
    void clearRecentFiles();

    // Re-reads QSettings (tests; another instance wrote them).
    void reload();

signals:
    void displayUnitsChanged(tw::DisplayUnits units);
    void themeChanged(tw::ui::AppSettings::Theme theme);
    void paletteSchemeChanged(tw::ui::AppSettings::PaletteScheme scheme);
    void fontScaleChanged(double scale);
    void animationSpeedChanged(double speed);
    void autosaveIntervalChanged(int seconds);
    void recentFilesChanged(const QStringList& files);

private:
    explicit AppSettings(QObject* parent = nullptr);
    void write(const char* key, const QVariant& value);
    // The setters' common part: unless value is the one held, holds it, writes `stored` under key and
    // emits signal(value).
    template <typename T>
    void change(T& member, T value, const char* key, const QVariant& stored, void (AppSettings::*signal)(T));

    DisplayUnits m_units;
    Theme m_theme = Theme::Light;
    PaletteScheme m_palette = PaletteScheme::OkabeIto;
    double m_fontScale = 1.0;
    double m_animationSpeed = 1.0;
    int m_autosaveSeconds = kDefaultAutosaveSeconds;
    QStringList m_recent;
};

} // namespace tw::ui
