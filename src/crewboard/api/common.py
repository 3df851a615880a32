"""What every REST route shares: JSON in and out, argument parsing, errors, revisions."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any, TypeVar
from urllib.parse import quote

from anyio import to_thread
from pydantic import Field, ValidationError, create_model
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from crewboard.api.auth import authenticate_request
from crewboard.api.errors import error_response
from crewboard.contract import args as a
from crewboard.domain.identity.records import Actor
from crewboard.domain.validation import INT32_MAX, parse_whole
from crewboard.errors import CrewboardError, InternalError, RevisionConflict, ValidationFailed
from crewboard.http.metrics import INTERNAL, OK, Record, outcome_of_code
from crewboard.jsonbody import MAX_BODY, BadJson, parse_json, read_request_body
from crewboard.services.idempotency import KeyedResult
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.storage.database import Database
from crewboard.storage.outages import unavailable

log = logging.getLogger("crewboard.api")
_ENDPOINT = "crewboard.endpoint"  # where json_route puts the endpoint in the request's scope

Handler = Callable[[Request], Awaitable[Any]]
INTERNAL_ERROR = InternalError(
    "Internal error; the server has logged it. Retrying a keyed write is safe."
)
M = TypeVar("M", bound=a.Args)
T = TypeVar("T")


class Created:
    """A handler result answered with 201."""

    def __init__(self, body: Any) -> None:
        self.body = body


class PreconditionFailed(RevisionConflict):
    """A stale `If-Match`: the same conflict, answered with 412 as HTTP asks."""

    http_status = 412


def json_route(endpoint: Endpoint) -> Callable[[Request], Awaitable[Response]]:
    """Answer one endpoint: the caller authenticated first (a stranger gets 401, never a word
    about their input), then the handler, its result as JSON and any CrewboardError in the
    one error shape. The endpoint's declaration rides on the request, so `read_body` and
    `keyed_body` hold the body and headers to what OpenAPI says of them."""

    # The operation it counts under in /metrics: its declaration's name, else its route.
    operation = endpoint.operation or f"{endpoint.method} {endpoint.path}"

    async def answer(request: Request) -> Response:
        record: Record | None = request.app.state.count_rest
        if record is None:
            return (await _answer(request))[0]
        start = perf_counter()
        response, outcome = await _answer(request)
        record(operation, outcome, perf_counter() - start)
        return response

    async def _answer(request: Request) -> tuple[Response, str]:
        try:
            if not endpoint.signed:
                request.state.actor = await authenticate_request(request)
            request.scope[_ENDPOINT] = endpoint
            _refuse_missing_headers(request, endpoint)
            result = await endpoint.handler(request)
            if isinstance(result, Response):  # a route that answers other than JSON
                return result, OK
            if isinstance(result, Created):
                return JSONResponse(result.body, status_code=201), OK
            return JSONResponse(result), OK
        except CrewboardError as error:
            return error_response(error), outcome_of_code(error.code.value)
        except Exception as error:
            if (outage := unavailable(error)) is not None:  # the database, not a bug: 503
                log.warning("%s %s: %s", request.method, request.url.path, _first_line(error))
                return error_response(outage), outage.code.value
            # A bug, not a refusal: log it, and still answer in the one shape on a connection
            # the client can keep using (an escaping exception would drop it unanswered).
            log.exception("%s %s failed", request.method, request.url.path)
            return error_response(INTERNAL_ERROR), INTERNAL

    return answer


def _refuse_missing_headers(request: Request, endpoint: Endpoint) -> None:
    """A header the endpoint declares required (and OpenAPI so lists) missing or blank.

    Raises:
        ValidationFailed: naming the header.
    """
    for header in endpoint.headers:
        if header.body_field is not None:
            continue  # the body may carry it instead: keyed_body looks at both
        if endpoint.requires(header) and not request.headers.get(header.name, "").strip():
            raise ValidationFailed.field(header.name, f"required: {header.description}")


def by_path(endpoints: tuple[Endpoint, ...]) -> Callable[[Request], Awaitable[Response]]:
    """One path's endpoints as one route (so a 405 names every method the path takes, as
    OpenAPI lists them): each request goes to its method's endpoint, HEAD to GET's."""
    answers = {e.method: json_route(e) for e in endpoints}
    if "GET" in answers:
        answers.setdefault("HEAD", answers["GET"])

    async def answer(request: Request) -> Response:
        return await answers[request.method](request)

    return answer


def endpoint_of(request: Request) -> Endpoint | None:
    """The endpoint a request was routed to (None outside `json_route`)."""
    found = request.scope.get(_ENDPOINT)
    return found if isinstance(found, Endpoint) else None


def actor_of(request: Request) -> Actor:
    """The caller `json_route` authenticated."""
    actor = getattr(request.state, "actor", None)
    if not isinstance(actor, Actor):
        raise InternalError("The request was not authenticated before its handler ran.")
    return actor


def _first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).partition(chr(10))[0][:300]}"


async def read_body(request: Request, limit: int = MAX_BODY) -> dict[str, Any]:
    """The JSON object a write sent: at most `limit` bytes (MAX_BODY unless the route carries
    a file), no NaN, bounded nesting.

    Raises:
        BodyTooLarge: over the limit (413).
        ValidationFailed: not JSON, nested too deep, or not an object.
    """
    raw = await read_request_body(request, limit)
    if not raw.strip():
        endpoint = endpoint_of(request)
        if endpoint is not None and endpoint.body_required:
            raise ValidationFailed(
                "body: required: send a JSON object with "
                + ", ".join(endpoint.required_body_fields)
                + ".",
                {"field": "body", "required": list(endpoint.required_body_fields)},
            )
        return {}
    try:
        body = parse_json(raw)
    except BadJson as error:
        raise ValidationFailed(f"body: {error.message}", {"field": "body"}) from None
    if not isinstance(body, dict):
        raise ValidationFailed("body: must be a JSON object.", {"field": "body"})
    return body


async def keyed_body(request: Request, limit: int = MAX_BODY) -> dict[str, Any]:
    """The JSON body, with the Idempotency-Key header (when sent) as its `idempotencyKey`."""
    data = await read_body(request, limit)
    key = request.headers.get("idempotency-key")
    if key is not None:
        if not key.strip():
            raise ValidationFailed.field(
                "Idempotency-Key", "is empty: send a key for this write, or leave the header out."
            )
        if "idempotencyKey" in data and data["idempotencyKey"] != key:
            raise ValidationFailed.field(
                "idempotencyKey",
                "is sent twice, in the body and as the Idempotency-Key header, with different "
                "values; send it once.",
            )
        data["idempotencyKey"] = key
    endpoint = endpoint_of(request)
    needed = endpoint is not None and any(
        h.body_field == "idempotencyKey" and endpoint.requires(h) for h in endpoint.headers
    )
    if needed and data.get("idempotencyKey") is None:
        raise ValidationFailed.field(
            "Idempotency-Key",
            "required: send a stable key for this write (or idempotencyKey in the body), "
            "and the same one on a retry.",
        )
    return data


def refuse_carried(data: dict[str, Any], names: tuple[str, ...], where: str) -> dict[str, Any]:
    """Refuse body fields the path (or a header) carries; `where` says which names which.

    Raises:
        ValidationFailed: naming the first such field.
    """
    for name in names:
        if name in data:
            raise ValidationFailed.field(name, f"is not a body field here: {where}.")
    return data


def created(result: KeyedResult) -> Created:
    """A keyed write's answer: 201, and whether it replays an earlier use of the key."""
    return Created({**result.body, "replayed": result.replayed})


def model_without(
    name: str,
    model: type[a.Args],
    *,
    drop: tuple[str, ...],
    base: type[a.Args] = a.Args,
    **extra: Any,
) -> type[a.Args]:
    """`model` as a REST body or query: the path and headers carry the fields in `drop`;
    `extra` adds or replaces fields as `(annotation, Field(...))`; `base` may add to the
    schema what fields cannot say (a rule across fields)."""
    kept = {k: (f.annotation, f) for k, f in model.model_fields.items() if k not in drop}
    return create_model(name, __base__=base, **{**kept, **extra})


def parse_args(model: type[M], data: dict[str, Any], *, strict: bool = True) -> M:
    """Check a body (strict JSON types, as MCP checks arguments) or, with strict=False, a
    query string, whose values are all text and are read as the schema's types.

    Raises:
        ValidationFailed, LimitExceeded: naming the field.
    """
    try:
        if strict:
            return a.validate_arguments(model, data)
        a.refuse_nul(data)
        return model.model_validate(data)
    except ValidationError as error:
        raise a.argument_error(error, a.input_schema(model)) from None


def query_int(
    request: Request, name: str, default: int, *, minimum: int = 0, maximum: int = INT32_MAX
) -> int:
    """A whole-number query parameter within [minimum, maximum], or `default` when absent.

    Raises:
        ValidationFailed: naming the parameter and the accepted range.
    """
    raw = request.query_params.get(name)
    return default if raw is None else parse_whole(name, raw, minimum=minimum, maximum=maximum)


def query_list(request: Request, name: str) -> list[str]:
    """A repeatable query parameter (`?status=a&status=b` or `?status=a,b`) as its values.

    Raises:
        ValidationFailed: an empty value (`?status=`, `a,,b`), which names nothing.
    """
    values = [v.strip() for raw in request.query_params.getlist(name) for v in raw.split(",")]
    if not all(values):
        raise ValidationFailed(
            f"{name}: an empty value; give one or more values, or leave the parameter out.",
            {"field": name},
        )
    return values


def if_match(request: Request) -> int | None:
    raw = request.headers.get("if-match")
    if raw is None:
        return None
    return parse_whole("If-Match", raw.strip().removeprefix("W/").strip('"'))


async def run_service(request: Request, work: Callable[[Database, Actor], T]) -> T:
    """The service call in a worker thread (it blocks on the database), as the caller."""
    actor = actor_of(request)
    db: Database = request.app.state.db
    return await to_thread.run_sync(work, db, actor)


def workspace_of(data: dict[str, Any]) -> WorkspaceRef:
    """The body's `workspaceId` (its type checked by the route's model); left out, the
    project's own, since the path already names the project."""
    return data.get("workspaceId", ANY_WORKSPACE)  # type: ignore[no-any-return]


def expected_revision(
    request: Request, data: dict[str, Any], field: str = "expectedRevision"
) -> tuple[int, bool]:
    """The revision the writer read: from If-Match (412 on mismatch) or the body's `field`
    (409); a null there, as OpenAPI allows, is the field left out."""
    from_header = if_match(request)
    if from_header is not None:
        return from_header, True
    value = data.get(field)
    if value is None:
        raise ValidationFailed(
            f"{field}: required (or send the revision in an If-Match header).", {"field": field}
        )
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= INT32_MAX:
        raise ValidationFailed(
            f"{field}: must be a revision number from 0 to {INT32_MAX}.",
            {"field": field, "minimum": 0, "maximum": INT32_MAX},
        )
    return value, False


async def guard_precondition(work: Callable[[], Awaitable[T]], via_header: bool) -> T:
    try:
        return await work()
    except RevisionConflict as conflict:
        if via_header:
            raise PreconditionFailed(conflict.message, conflict.details) from None
        raise


# A body field a route fills from (or overrides with) its path, so not a body field there.
PATH_FIELDS = {"project": "projectId", "item": "actionItemId"}


@dataclass(frozen=True)
class Header:
    """A request header a route reads; OpenAPI lists it as a header parameter.

    `body_field`: the body field that may carry the same value instead (the MCP tools' name,
    for callers that cannot set headers). OpenAPI documents the header as its one place and
    leaves the field out of the body (a schema cannot say "this header or that field", and
    documenting both would invite a request that sends two different values); `keyed_body`
    still reads it, and a required header is then refused only when both are missing.
    """

    name: str
    description: str
    required: bool = False
    body_field: str | None = None


_KEY = "A key for this write: sent again, it replays the first answer instead of writing twice."
_IN_BODY = " (Or idempotencyKey in the body; sent in both, the two must be equal.)"
IDEMPOTENCY_KEY = Header("Idempotency-Key", _KEY + _IN_BODY, body_field="idempotencyKey")
# For a write that must have a key (its service refuses one without).
IDEMPOTENCY_KEY_NEEDED = Header(
    "Idempotency-Key", _KEY + _IN_BODY, required=True, body_field="idempotencyKey"
)
# The tasks routes take the key in the header only (their bodies refuse idempotencyKey).
IDEMPOTENCY_KEY_REQUIRED = Header("Idempotency-Key", _KEY, required=True)
IF_MATCH_REVISION = Header(
    "If-Match",
    'The revision you read, as an entity tag ("3"), instead of expectedRevision in the body; '
    "412 when it is no longer current.",
)
IF_MATCH_VERSION = Header(
    "If-Match",
    'The contentVersion you read ("cv_…"), instead of expectedVersion in the body; 412 when '
    "it is no longer current.",
)
H = TypeVar("H", bound=Handler)


def reads_headers(*headers: Header) -> Callable[[H], H]:
    """Mark a handler with the headers it reads, beside the code that reads them."""

    def mark(handler: H) -> H:
        setattr(handler, "headers_read", headers)  # noqa: B010 - a function attribute
        return handler

    return mark


# The arguments that name where a write goes, and the use case keyword each one fills.
_REFS = {"project_id": "project", "task_id": "task"}


def _plain(value: Any) -> Any:
    """A nested argument (a task's changes, a team's seats) as the JSON data a use case takes."""
    if isinstance(value, a.Args):
        return value.model_dump(by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def use_case_keywords(args: a.Args) -> dict[str, Any]:
    """Checked arguments as their use case's keywords, where it names them alike: each field
    by its own name, `project_id` and `task_id` as `project` and `task`, the workspace as the
    reference the caller named (any, when none was sent), nested arguments as JSON data."""
    return {
        _REFS.get(name, name): (
            args.workspace_ref() if name == "workspace_id" else _plain(getattr(args, name))
        )
        for name in type(args).model_fields
    }


def keyed_route(
    model: type[a.Args],
    write: Callable[..., KeyedResult],
    answer: Callable[[Any], dict[str, Any]],
    *,
    key: Header = IDEMPOTENCY_KEY,
) -> Handler:
    """The handler of a keyed write whose body `model` names the use case `write`'s keywords
    (`use_case_keywords`) and whose path names the rest: 201 with `replayed`."""

    @reads_headers(key)
    async def handle(request: Request) -> Created:
        args = parse_args(model, await keyed_body(request))
        given = {**use_case_keywords(args), **request.path_params}
        result = await run_service(
            request, lambda db, actor: write(db, actor, **given, answer=answer)
        )
        return created(result)

    return handle


@dataclass(frozen=True)
class BodyChoice:
    """A body that is one of several models, picked by a field naming which (`kind`):
    OpenAPI lists each as one choice of a `oneOf` with that field fixed."""

    field: str
    models: dict[str, type[a.Args]]

    def model_for(self, data: dict[str, Any]) -> type[a.Args]:
        """The model the body's `field` names.

        Raises:
            ValidationFailed: the field missing, or naming no model.
        """
        accepted = list(self.models)
        if self.field not in data:
            raise ValidationFailed.field(self.field, "required: say which body this is.", accepted)
        value = data[self.field]
        if not isinstance(value, str) or value not in self.models:
            raise ValidationFailed.field(self.field, f"unknown value {value!r}.", accepted)
        return self.models[value]


@dataclass(frozen=True)
class Endpoint:
    path: str
    method: str
    handler: Handler
    summary: str
    body: type[a.Args] | BodyChoice | None = None
    success: int = 200
    # The query string the handler reads, as the model that checks it (or that mirrors its
    # checks): OpenAPI lists each field as a query parameter with its type and bounds.
    query: type[a.Args] | None = None
    # The media types of a success; a route answering other than JSON returns its Response.
    produces: tuple[str, ...] = ("application/json",)
    # The operation (contract catalogue) this endpoint serves, whose `Rest` declaration gave
    # its method and path; None for a route no operation stands behind (a file's bytes).
    operation: str | None = None
    # Arguments the path fills in besides `projectId` (an operation's route fills each
    # `{name}`): like it, not body or query fields here.
    fills: tuple[str, ...] = ()
    # Authenticated by a signature over the body (a webhook), not a bearer token.
    signed: bool = False

    @property
    def headers(self) -> tuple[Header, ...]:
        """The request headers the handler reads (`reads_headers`)."""
        return getattr(self.handler, "headers_read", ())

    @property
    def carried_fields(self) -> frozenset[str]:
        """Fields of the body model the path fills in (`projectId` under `{project}`) or a
        header carries (`idempotencyKey`): not body fields here, so OpenAPI leaves them out."""
        carried = {
            PATH_FIELDS[name] for name in re.findall(r"{(\w+)}", self.path) if name in PATH_FIELDS
        }
        carried.update(self.fills)
        return frozenset(carried | {h.body_field for h in self.headers if h.body_field})

    @property
    def required_body_fields(self) -> tuple[str, ...]:
        """The body fields a request must send (the model's required ones the path does not
        carry); OpenAPI lists them as required."""
        if self.body is None:
            return ()
        if isinstance(self.body, BodyChoice):
            return (self.body.field,)
        required = a.input_schema(self.body).get("required", ())
        return tuple(name for name in required if name not in self.carried_fields)

    def requires(self, header: Header) -> bool:
        """Whether a request must carry `header` (or, for one a body field may stand in for,
        that field): declared required, or standing for a field the body model requires."""
        if header.required:
            return True
        if header.body_field is None or self.body is None or isinstance(self.body, BodyChoice):
            return False
        return header.body_field in a.input_schema(self.body).get("required", ())

    @property
    def body_required(self) -> bool:
        """Whether a request must have a body: OpenAPI marks it required, and `read_body`
        refuses an empty one naming `body`. A body of only optional fields may be left out."""
        return bool(self.required_body_fields)


def query_params(request: Request, model: type[a.Args]) -> dict[str, Any]:
    """The query parameters, each one a field of `model` (the route's OpenAPI query) that the
    path does not carry, the ones it requires (and OpenAPI so marks) present.

    Raises:
        ValidationFailed: a parameter this route does not take, or a required one missing.
    """
    endpoint = endpoint_of(request)
    carried = endpoint.carried_fields if endpoint is not None else frozenset()
    fields = {
        f.alias or n: f for n, f in model.model_fields.items() if (f.alias or n) not in carried
    }
    accepted = sorted(fields)
    params = dict(request.query_params)
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValidationFailed.field(unknown[0], "is not a parameter of this route.", accepted)
    for name, field in fields.items():
        if field.is_required() and name not in params:
            raise ValidationFailed.field(name, f"is required: {field.description or 'give it'}")
    return params


def content_disposition(name: str) -> str:
    """A Content-Disposition naming the file: a plain ASCII `filename` every client reads (no
    quote, backslash or control character survives into it), and the exact name in
    `filename*` (RFC 6266) when it differs."""
    plain = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in name)
    value = f'attachment; filename="{plain}"'
    if plain != name:
        value += f"; filename*=UTF-8''{quote(name, safe='')}"
    return value


# A body's `workspaceId` where the path names the project: optional, and checked when sent.
OPTIONAL_WORKSPACE = (
    str | None,
    Field(
        default=None,
        max_length=200,
        description="The project's workspace id, or null for a private one; omit to skip the check.",
    ),
)
