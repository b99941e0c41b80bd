#pragma once
// A stage that is not built yet: its title and what it will show. No numbers.

#include <QWidget>

namespace tw::ui {

class PlaceholderPane : public QWidget {
    Q_OBJECT
public:
    PlaceholderPane(const QString& title, const QString& promise, QWidget* parent = nullptr);
};

} // namespace tw::ui
