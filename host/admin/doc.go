// Package admin is Palisade's admin API: people signed in with the identity provider (oidc.go,
// a session cookie), bearer access tokens from it, and the break-glass admin token (from
// config, or generated on first start and kept in the data directory with mode 0600), with
// roles (people.go) enforced per route, in front of route sets that features add to
// Server.Group: bundles (list, active, activate, rollback, upload) in bundles.go; the shadow
// bundle and its disagreements in shadow.go; approvals, events, the stored history
// (history.go, over a HistorySource: host/auditsink's History or audit.StreamHistory, which the
// gateway passes in) and the web UI in their own files.
//
// Handlers translate HTTP to calls on typed core APIs (bundle.Manager, ...) that take a
// context.Context; nothing below this package sees an echo.Context. It imports bundle,
// approval, engine (the shadow's types), config and echo; never gateway or cmd.
package admin
