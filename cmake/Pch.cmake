# Precompiled headers: build time only, no behaviour. Most of a test's or a pane's compile time is
# Qt's and the standard library's headers (a Debug compile of tst_wirepane.cpp took 12.9 s, of an
# empty file including <QtWidgets> and <QtTest> 8.6 s); the headers below are compiled once per group
# and reused. The asan preset turns them off (CMAKE_DISABLE_PRECOMPILE_HEADERS), so every core and CLI
# source is still compiled on its own includes there.
set(TOKENWIRE_PCH_STD
  <algorithm> <array> <cmath> <cstdint> <functional> <map> <memory> <optional> <set> <string>
  <vector> <nlohmann/json.hpp>)
set(TOKENWIRE_PCH_WIDGETS
  <QApplication> <QComboBox> <QDoubleSpinBox> <QFormLayout> <QGroupBox> <QHBoxLayout> <QLabel>
  <QPainter> <QPushButton> <QScrollArea> <QSpinBox> <QSplitter> <QString> <QStringList>
  <QTabWidget> <QTableView> <QTextBrowser> <QTimer> <QUndoStack> <QVBoxLayout> <QWidget>
  <qcustomplot.h>)

# Gives `target` the precompiled headers of its group: ui (Qt Widgets + QCustomPlot), uitest (ui +
# Qt Test) or coretest (Qt Test + standard library, for core and CLI tests).
function(tokenwire_pch target group)
  if(group STREQUAL "ui")
    target_precompile_headers(${target} PRIVATE ${TOKENWIRE_PCH_STD} ${TOKENWIRE_PCH_WIDGETS})
  elseif(group STREQUAL "uitest")
    target_precompile_headers(${target} PRIVATE ${TOKENWIRE_PCH_STD} ${TOKENWIRE_PCH_WIDGETS} <QTest> <QSignalSpy>)
  elseif(group STREQUAL "coretest")
    target_precompile_headers(${target} PRIVATE ${TOKENWIRE_PCH_STD} <QTest> <QString> <QFile> <QDir>)
  else()
    message(FATAL_ERROR "tokenwire_pch: unknown group '${group}'")
  endif()
endfunction()
