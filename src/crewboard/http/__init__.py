"""The HTTP kernel the doors share, below them all: Server-Sent Events streams (the web app's
`/events` and REST's project events), the sign-in and registration throttles, and the name of
the web session cookie (REST and the live streams accept a signed-in browser too).

A door never imports another door; what two of them need lives here, or lower."""
