// Package testkit holds what the module's tests share: one manual clock, so that
// schedules of hours are tested in microseconds without each package writing its own
// fake. It is imported by tests only.
package testkit
