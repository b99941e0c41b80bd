#pragma once
// The viewer's preferences as a dialog: byte units and significant digits, light/dark theme, the
// colour-blind-safe palette, the font scale, the animation speed and the autosave interval. Every
// change goes to AppSettings at once (which stores it; theme.h applies it); "Restore defaults"
// puts them all back. The dialog follows AppSettings too, so it always shows the current values.

#include <QDialog>

class QAbstractButton;
class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QRadioButton;
class QSlider;
class QSpinBox;

namespace tw::ui {

class AppSettings;
class PaletteSwatches;

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit SettingsDialog(QWidget* parent = nullptr);

    // The controls (tests drive them with key and mouse events).
    [[nodiscard]] QRadioButton* decimalButton() const { return m_decimal; }
    [[nodiscard]] QRadioButton* binaryButton() const { return m_binary; }
    [[nodiscard]] QSpinBox* digitsBox() const { return m_digits; }
    [[nodiscard]] QLabel* unitsExample() const { return m_example; }
    [[nodiscard]] QComboBox* themeBox() const { return m_theme; }
    [[nodiscard]] QComboBox* paletteBox() const { return m_palette; }
    [[nodiscard]] QSlider* fontSlider() const { return m_fontSlider; }
    [[nodiscard]] QSpinBox* fontBox() const { return m_fontBox; }
    [[nodiscard]] QSlider* speedSlider() const { return m_speedSlider; }
    [[nodiscard]] QDoubleSpinBox* speedBox() const { return m_speedBox; }
    [[nodiscard]] QSpinBox* autosaveBox() const { return m_autosave; }
    [[nodiscard]] QAbstractButton* restoreDefaultsButton() const { return m_restore; }

private:
    // Shows AppSettings' values without writing them back.
    void showSettings();
    // The constructor's steps (settingsdialog.cpp).
    QGroupBox* buildNumbers();
    QGroupBox* buildLooks();
    QGroupBox* buildMotion();
    QDialogButtonBox* buildButtons(AppSettings* settings);
    void connectEdits(AppSettings* settings);

    QRadioButton* m_decimal = nullptr;
    QRadioButton* m_binary = nullptr;
    QSpinBox* m_digits = nullptr;
    QLabel* m_example = nullptr;
    QComboBox* m_theme = nullptr;
    QComboBox* m_palette = nullptr;
    PaletteSwatches* m_swatches = nullptr;
    QSlider* m_fontSlider = nullptr;
    QSpinBox* m_fontBox = nullptr;
    QSlider* m_speedSlider = nullptr;
    QDoubleSpinBox* m_speedBox = nullptr;
    QSpinBox* m_autosave = nullptr;
    QAbstractButton* m_restore = nullptr;
    bool m_showing = false;
};

} // namespace tw::ui
