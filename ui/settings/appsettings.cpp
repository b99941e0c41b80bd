#include "appsettings.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QSettings>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {
QSettings store()
{
    return QSettings(QStringLiteral("TokenWire"), QStringLiteral("TokenWire"));
}

double clamped(double value, double lo, double hi, double fallback)
{
    return std::isfinite(value) ? std::clamp(value, lo, hi) : fallback;
}

// A stored number, or fallback when the entry is missing or not a number ("huge").
double storedNumber(const QSettings& s, const QString& key, double fallback)
{
    bool ok = false;
    const double value = s.value(key).toDouble(&ok);
    return ok ? value : fallback;
}

int storedInt(const QSettings& s, const QString& key, int fallback)
{
    bool ok = false;
    const int value = s.value(key).toInt(&ok);
    return ok ? value : fallback;
}
} // namespace

AppSettings* AppSettings::instance()
{
    static AppSettings* settings = [] {
        auto* s = new AppSettings(QCoreApplication::instance());
        return s;
    }();
    return settings;
}

AppSettings::AppSettings(QObject* parent)
    : QObject(parent)
{
    reload();
}

void AppSettings::reload()
{
    const QSettings s = store();
    m_units.bytes = s.value(QStringLiteral("units/bytes")).toString() == QLatin1String("binary") ? ByteUnits::Binary
                                                                                                 : ByteUnits::Decimal;
    m_units.significantDigits =
        std::clamp(storedInt(s, QStringLiteral("units/digits"), DisplayUnits{}.significantDigits), 2, 8);
    m_theme = s.value(QStringLiteral("view/theme")).toString() == QLatin1String("dark") ? Theme::Dark : Theme::Light;
    m_palette = s.value(QStringLiteral("view/palette")).toString() == QLatin1String("tol-bright")
                    ? PaletteScheme::TolBright
                    : PaletteScheme::OkabeIto;
    m_fontScale = clamped(storedNumber(s, QStringLiteral("view/fontScale"), 1.0), kMinFontScale, kMaxFontScale, 1.0);
    m_animationSpeed = clamped(storedNumber(s, QStringLiteral("view/animationSpeed"), 1.0), kMinAnimationSpeed,
                               kMaxAnimationSpeed, 1.0);
    m_autosaveSeconds = std::clamp(storedInt(s, QStringLiteral("files/autosaveSeconds"), kDefaultAutosaveSeconds),
                                   kMinAutosaveSeconds, kMaxAutosaveSeconds);
    m_recent = s.value(QStringLiteral("files/recent")).toStringList();
    m_recent.removeAll(QString());
    m_recent.removeDuplicates();
    while (m_recent.size() > kMaxRecentFiles)
        m_recent.removeLast();
}

void AppSettings::write(const char* key, const QVariant& value)
{
    QSettings s = store();
    s.setValue(QLatin1String(key), value);
    s.sync();
}

void AppSettings::setDisplayUnits(DisplayUnits units)
{
    units.significantDigits = std::clamp(units.significantDigits, 2, 8);
    if (units == m_units)
        return;
    m_units = units;
    write("units/bytes", units.bytes == ByteUnits::Binary ? QStringLiteral("binary") : QStringLiteral("decimal"));
    write("units/digits", units.significantDigits);
    emit displayUnitsChanged(units);
}

template <typename T>
void AppSettings::change(T& member, T value, const char* key, const QVariant& stored, void (AppSettings::*signal)(T))
{
    if (value == member)
        return;
    member = value;
    write(key, stored);
    emit(this->*signal)(value);
}

void AppSettings::setTheme(Theme theme)
{
    change(m_theme, theme, "view/theme", theme == Theme::Dark ? QStringLiteral("dark") : QStringLiteral("light"),
           &AppSettings::themeChanged);
}

void AppSettings::setPaletteScheme(PaletteScheme scheme)
{
    change(m_palette, scheme, "view/palette",
           scheme == PaletteScheme::TolBright ? QStringLiteral("tol-bright") : QStringLiteral("okabe-ito"),
           &AppSettings::paletteSchemeChanged);
}

void AppSettings::setFontScale(double scale)
{
    scale = clamped(scale, kMinFontScale, kMaxFontScale, 1.0);
    change(m_fontScale, scale, "view/fontScale", scale, &AppSettings::fontScaleChanged);
}

void AppSettings::setAnimationSpeed(double speed)
{
    speed = clamped(speed, kMinAnimationSpeed, kMaxAnimationSpeed, 1.0);
    change(m_animationSpeed, speed, "view/animationSpeed", speed, &AppSettings::animationSpeedChanged);
}

void AppSettings::setAutosaveIntervalSeconds(int seconds)
{
    seconds = std::clamp(seconds, kMinAutosaveSeconds, kMaxAutosaveSeconds);
    change(m_autosaveSeconds, seconds, "files/autosaveSeconds", seconds, &AppSettings::autosaveIntervalChanged);
}

void AppSettings::restoreDefaults()
{
    setDisplayUnits(DisplayUnits{});
    setTheme(Theme::Light);
    setPaletteScheme(PaletteScheme::OkabeIto);
    setFontScale(1.0);
    setAnimationSpeed(1.0);
    setAutosaveIntervalSeconds(kDefaultAutosaveSeconds);
}

void AppSettings::addRecentFile(const QString& path)
{
    if (path.isEmpty())
        return;
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList files = m_recent;
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    if (files == m_recent)
        return;
    m_recent = files;
    write("files/recent", m_recent);
    emit recentFilesChanged(m_recent);
}

void AppSettings::removeRecentFile(const QString& path)
{
    if (m_recent.removeAll(QFileInfo(path).absoluteFilePath()) + m_recent.removeAll(path) == 0)
        return;
    write("files/recent", m_recent);
    emit recentFilesChanged(m_recent);
}

void AppSettings::clearRecentFiles()
{
    if (m_recent.isEmpty())
        return;
    m_recent.clear();
    write("files/recent", m_recent);
    emit recentFilesChanged(m_recent);
}

} // namespace tw::ui
