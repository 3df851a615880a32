"""The web app for people: server-rendered pages, plain forms, a little hand-written JavaScript."""
