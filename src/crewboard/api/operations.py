"""REST routes built from the operation declarations (`Operation.rest` in `contract/`).

An operation's `Rest(method, path)` is the one place its route is written. Where a hand-written
endpoint serves the operation (it answers in a REST shape of its own: 201 with `replayed`, a
file's bytes), `endpoint_for` builds that endpoint from the declaration. Every other operation
gets `operation_endpoint`: a generic handler that applies the scope check the MCP door
applies, reads the arguments from the path and the query string (GET, DELETE) or the JSON body
(the key from `Idempotency-Key`, the revision from `If-Match`) through the operation's own
argument model, runs the operation and answers its reply's body.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    IF_MATCH_REVISION,
    PATH_FIELDS,
    BodyChoice,
    Created,
    Endpoint,
    Handler,
    PreconditionFailed,
    actor_of,
    created,
    if_match,
    keyed_body,
    parse_args,
    query_list,
    query_params,
    read_body,
    reads_headers,
    refuse_carried,
)
from crewboard.contract.args import Args, input_schema
from crewboard.contract.catalogue import Catalogue, default_catalogue
from crewboard.contract.operation import Call, Operation, Rest
from crewboard.errors import RevisionConflict, ValidationFailed
from crewboard.jsonbody import MAX_BODY
from crewboard.services.idempotency import KeyedResult

_BODY_METHODS = frozenset({"POST", "PATCH", "PUT"})
A = TypeVar("A", bound=Args)
T = TypeVar("T")


@functools.cache
def catalogue() -> Catalogue:
    """The operations REST serves (built once: the declarations do not change at run time)."""
    return default_catalogue()


def declared_route(name: str) -> Rest:
    """The REST route operation `name` declares.

    Raises:
        ValueError: no such operation, or it declares no route (a programming error).
    """
    return _route(name).rest


def _route(name: str) -> _Route:
    operation = catalogue().find(name)
    if operation is None or not isinstance(operation.rest, Rest):
        raise ValueError(f"operation {name!r} declares no REST route")
    return _Route(operation, operation.rest, path_arguments(operation.rest.path, operation.args))


def endpoint_for(
    name: str,
    handler: Handler,
    summary: str,
    body: type[Args] | BodyChoice | None = None,
    *,
    query: type[Args] | None = None,
    produces: tuple[str, ...] = ("application/json",),
) -> Endpoint:
    """A hand-written endpoint serving operation `name`, at the method, path and success
    status the operation declares."""
    rest = declared_route(name)
    return Endpoint(
        rest.path,
        rest.method,
        handler,
        summary,
        body,
        rest.status,
        query=query,
        produces=produces,
        operation=name,
    )


def call_of(request: Request) -> Call:
    """What an operation's handler is given, for this request's caller."""
    return Call(request.app.state.db, actor_of(request), request.app.state.settings)


async def run_made(request: Request, made: Callable[[Call, A], T], args: A) -> T:
    """`made(call, args)` in a worker thread (it blocks on the database), as the caller."""
    return await to_thread.run_sync(made, call_of(request), args)


def read_endpoint(
    name: str,
    made: Callable[[Call, Any], dict[str, Any]],
    summary: str,
    *,
    query: type[Args],
) -> Endpoint:
    """The endpoint of a read that REST answers whole where MCP fits it to its budget: the
    query string (each parameter a field of `query`, which OpenAPI shows) and the path's
    arguments, checked by the operation's model; `made` answers."""
    route = _route(name)

    async def answer(request: Request) -> dict[str, Any]:
        given = {**query_params(request, query), **route.from_path(request)}
        return await run_made(request, made, parse_args(route.operation.args, given, strict=False))

    return endpoint_for(name, answer, summary, query=query)


def keyed_endpoint(
    name: str,
    made: Callable[[Call, Any], KeyedResult],
    summary: str,
    body: type[Args],
    *,
    limit: int = MAX_BODY,
) -> Endpoint:
    """The endpoint of a keyed create that REST answers in a shape of its own: 201 with
    `replayed`. The body (up to `limit` bytes, the key also from `Idempotency-Key`) and the
    path's arguments are checked by the operation's model as on a generic route; `made` runs
    the use case and answers the ledger's result (the operation's `run` is `keyed(made)`).
    `body` is what OpenAPI shows of the body."""
    route = _route(name)

    @reads_headers(IDEMPOTENCY_KEY)
    async def answer(request: Request) -> Created:
        args = route.body_arguments(request, await keyed_body(request, limit))
        return created(await run_made(request, made, args))

    return endpoint_for(name, answer, summary, body)


def path_arguments(path: str, model: type[Args]) -> dict[str, str]:
    """Each `{name}` of `path` and the argument it fills: `{project}` → projectId, else the
    argument of that name, else `<name>Id` (`{task}` → taskId, `{repo}` → repoId).

    Raises:
        ValueError: a path segment that names no argument (a declaration error).
    """
    fields = {field.alias or name for name, field in model.model_fields.items()}
    filled: dict[str, str] = {}
    for name in re.findall(r"{(\w+)}", path):
        for candidate in (PATH_FIELDS.get(name), name, f"{name}Id"):
            if candidate in fields:
                filled[name] = candidate
                break
        else:
            raise ValueError(f"{path}: {{{name}}} names no argument of {model.__name__}")
    return filled


def _list_fields(model: type[Args]) -> frozenset[str]:
    """The arguments that take a list: repeated (or comma-separated) in a query string."""
    found = set()
    for name, field in input_schema(model).get("properties", {}).items():
        members = [field, *field.get("anyOf", ())]
        if any(m.get("type") == "array" for m in members):
            found.add(name)
    return frozenset(found)


def _query_arguments(request: Request, model: type[Args], filled: frozenset[str]) -> dict[str, Any]:
    """The query string as arguments: each parameter one argument the path does not fill,
    a list argument from its repeated (or comma-separated) values.

    Raises:
        ValidationFailed: a parameter that is no argument of the operation, or an empty value.
    """
    accepted = sorted(
        alias
        for name, field in model.model_fields.items()
        if (alias := field.alias or name) not in filled
    )
    lists = _list_fields(model)
    values: dict[str, Any] = {}
    for name in request.query_params:
        if name not in accepted:
            raise ValidationFailed.field(name, "is not a parameter of this route.", accepted)
        values[name] = query_list(request, name) if name in lists else request.query_params[name]
    return values


@dataclass(frozen=True)
class _Route:
    """One operation's route: what the generic handlers need to read its arguments."""

    operation: Operation
    rest: Rest
    filled: dict[str, str]  # each `{name}` of the path → the argument it fills

    @property
    def carried(self) -> tuple[str, ...]:
        return tuple(self.filled.values())

    def from_path(self, request: Request) -> dict[str, Any]:
        return {argument: request.path_params[name] for name, argument in self.filled.items()}

    def body_arguments(self, request: Request, data: dict[str, Any]) -> Args:
        """The body with the path's arguments, checked as MCP checks a tool's arguments.

        Raises:
            ValidationFailed: a field the path carries sent in the body, or a bad argument.
        """
        refuse_carried(data, self.carried, "the path names it")
        return parse_args(self.operation.args, {**data, **self.from_path(request)})

    async def answer(self, request: Request, args: Args, *, via_header: bool = False) -> Response:
        """Run the operation in a worker thread (it blocks on the database) and answer its
        reply's body; a stale revision that If-Match named is 412, as on the hand routes."""
        call = call_of(request)
        try:
            reply = await to_thread.run_sync(self.operation.run, call, args)
            if reply.follow is not None:  # waits on the event loop, holding no thread
                reply = await reply.follow()
        except RevisionConflict as conflict:
            if via_header:
                raise PreconditionFailed(conflict.message, conflict.details) from None
            raise
        return JSONResponse(reply.body, status_code=self.rest.status)


# One handler per way of reading arguments, each declaring the headers it reads beside the
# code that reads them. Each checks the token's scopes first, before any argument is read.


def _query_handler(route: _Route) -> Handler:
    async def answer(request: Request) -> Response:
        route.operation.check_scopes(actor_of(request))
        query = _query_arguments(request, route.operation.args, frozenset(route.carried))
        args = parse_args(route.operation.args, {**query, **route.from_path(request)}, strict=False)
        return await route.answer(request, args)

    return answer


def _body_handler(route: _Route) -> Handler:
    """The JSON body as the arguments."""

    async def answer(request: Request) -> Response:
        route.operation.check_scopes(actor_of(request))
        data = await read_body(request)
        return await route.answer(request, route.body_arguments(request, data))

    return answer


def _keyed_body_handler(route: _Route) -> Handler:
    """The JSON body as the arguments of a keyed write, whose key may come in Idempotency-Key."""

    @reads_headers(IDEMPOTENCY_KEY)
    async def answer(request: Request) -> Response:
        route.operation.check_scopes(actor_of(request))
        data = await keyed_body(request)
        return await route.answer(request, route.body_arguments(request, data))

    return answer


def _keyed_revision_handler(route: _Route) -> Handler:
    @reads_headers(IDEMPOTENCY_KEY, IF_MATCH_REVISION)
    async def answer(request: Request) -> Response:
        route.operation.check_scopes(actor_of(request))
        data = await keyed_body(request)
        sent = if_match(request)
        if sent is not None:
            if data.get("expectedRevision") not in (None, sent):
                raise ValidationFailed.field(
                    "expectedRevision",
                    "differs from the If-Match header; send the revision you read once.",
                )
            data["expectedRevision"] = sent
        args = route.body_arguments(request, data)
        return await route.answer(request, args, via_header=sent is not None)

    return answer


def operation_endpoint(operation: Operation) -> Endpoint:
    """The generic endpoint of an operation no hand-written endpoint serves.

    Raises:
        TypeError: the operation declares no route.
        ValueError: its path names no argument, or it takes a revision but no key (no
            handler reads arguments that way yet).
    """
    rest = operation.rest
    if not isinstance(rest, Rest):
        raise TypeError(f"operation {operation.name!r} declares no REST route")
    model = operation.args
    route = _Route(operation, rest, path_arguments(rest.path, model))
    fields = {field.alias or name for name, field in model.model_fields.items()}
    takes_body = rest.method in _BODY_METHODS
    if not takes_body:
        handler = _query_handler(route)
    elif "expectedRevision" in fields:
        if "idempotencyKey" not in fields:
            raise ValueError(f"{operation.name}: a revision without a key has no handler")
        handler = _keyed_revision_handler(route)
    elif "idempotencyKey" in fields:
        handler = _keyed_body_handler(route)
    else:
        handler = _body_handler(route)
    return Endpoint(
        rest.path,
        rest.method,
        handler,
        operation.title,
        model if takes_body else None,
        rest.status,
        query=None if takes_body else model,
        operation=operation.name,
        fills=route.carried,
    )


def operation_endpoints(served: frozenset[str]) -> tuple[Endpoint, ...]:
    """The generic endpoints: one per operation with a `Rest` route that no hand-written
    endpoint (those named in `served`) already serves, in catalogue order."""
    return tuple(
        operation_endpoint(operation)
        for operation in catalogue()
        if isinstance(operation.rest, Rest) and operation.name not in served
    )
