#pragma once
// Choosing a combo box item the way a user does, for the UI tests: a click opens the list, a click on the
// item's row picks it.

#include <QAbstractItemView>
#include <QApplication>
#include <QComboBox>
#include <QTest>

namespace tw::test {

// Opens the combo's list with a click and clicks the item showing `text`; false when it is not listed or
// the list did not open or close.
inline bool chooseWithMouse(QComboBox* combo, const QString& text)
{
    const int row = combo->findText(text);
    if (row < 0)
        return false;
    QTest::mouseClick(combo, Qt::LeftButton);
    QAbstractItemView* view = combo->view();
    if (!QTest::qWaitFor([view] { return view->isVisible(); }, 2000))
        return false;
    QTest::qWait(QApplication::doubleClickInterval() + 50); // QComboBox ignores a release right after opening
    const QRect rect = view->visualRect(view->model()->index(row, 0));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, rect.center());
    return QTest::qWaitFor([view] { return !view->isVisible(); }, 2000);
}

} // namespace tw::test
