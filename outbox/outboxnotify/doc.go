// Package outboxnotify tells an endpoint's owner that it was paused, disabled or
// removed (docs/outbox.md §3: owners are notified): each outbox.Notice goes to the
// account's operational webhook, as an event of the notice's type
// (endpoint.paused, endpoint.disabled, endpoint.removed) delivered by the outbox
// itself, durably and signed, and by e-mail through SMTP when configured.
//
// The embedding program says where an account's notices go (Config.Recipients) and
// hands the Notifier's Notify to outbox.Config.Notify. Notices are sent off the
// outbox's dispatcher, from a bounded queue; one that cannot be sent is logged, and
// stays in the audit log.
package outboxnotify
