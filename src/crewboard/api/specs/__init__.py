"""REST routes of spec files (list, details, line windows, the raw bytes, upload, save, the
trash bin), attachments (list, details, text windows, the raw bytes, upload) and comment
threads on spec files (list, start, reply, edit and delete one's own comment).

Queries and bodies are checked by the tools' argument models (camelCase, as on MCP), so a bad
value is refused with the same code and field. The path names the project and the file,
attachment, thread or comment (by id). A save names the `contentVersion` it was made from in
`If-Match: "<version>"` (412 when stale) or as `expectedVersion` in the body (409 when stale);
so does a comment edit, with the comment's own contentVersion. `localFilePath` is not taken
here: the server's disk is not the caller's (the stdio server reads local files). No route
resolves or reopens a thread: people do that in the web app, never a token.
"""

from __future__ import annotations

from crewboard.api.common import Endpoint
from crewboard.api.specs import attachments, comments, files

ENDPOINTS: tuple[Endpoint, ...] = (*files.ENDPOINTS, *comments.ENDPOINTS, *attachments.ENDPOINTS)
