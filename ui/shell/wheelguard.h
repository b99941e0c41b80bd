#pragma once
// The mouse wheel scrolls a form, not the field that passes under the pointer while it scrolls: a combo
// box or spin box inside a scroll area takes the wheel only once it has the keyboard focus (clicked or
// tabbed into). Without this, scrolling stage 5's form turned the NIC protocol under the pointer from
// RoCEv2 to TCP and started a new simulation. Fields outside scroll areas (the toolbar's) keep the wheel.

class QWidget;

namespace tw::ui {

// Installs the guard on the application once (later calls do nothing).
void installWheelGuard();

// Whether the guard passes a wheel over `widget` on to the scroll area around it: a combo or spin box in
// a scroll area without the focus.
[[nodiscard]] bool wheelScrollsTheForm(const QWidget* widget);

} // namespace tw::ui
