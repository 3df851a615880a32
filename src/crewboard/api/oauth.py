"""The OAuth 2.1 door for MCP clients: authorization server metadata (RFC 8414 and the
OpenID discovery path), registration (RFC 7591), authorize, token, revocation (RFC 7009).

The protocol checks are the `mcp` SDK's own authorization-server handlers (PKCE S256 only,
the code's redirect URI and verifier, the grant types); this module is the provider they
call, backed by `services.oauth`. The consent page itself is in the web app
(`web/pages/oauth`), where the person is signed in.
"""

from __future__ import annotations

import base64
import binascii
import time
from typing import Any
from urllib.parse import unquote, urlencode

from anyio import to_thread
from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.server.transport_security import RequestBodyLimitMiddleware
from mcp.shared.auth import (
    InvalidRedirectUriError,
    InvalidScopeError,
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
)
from pydantic import AnyUrl
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from crewboard.config import Settings
from crewboard.domain.oauth import DEFAULT_SCOPES, OAuthClient, parse_scopes, redirect_uri_matches
from crewboard.errors import ValidationFailed
from crewboard.http.throttle import LoginThrottle
from crewboard.services.oauth import grants
from crewboard.services.oauth.clients import (
    ClientPolicy,
    check_secret,
    find_client,
    is_document_id,
    policy_from,
    register_client,
)
from crewboard.services.oauth.documents import DocumentRefused
from crewboard.storage.database import Database

AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"  # noqa: S105 - a path
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
CONSENT_PATH = "/oauth/consent"
REGISTRATION_BODY_LIMIT = 64 * 1024
FORM_BODY_LIMIT = 64 * 1024
SCOPES = grants.SCOPE_NAMES
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def mcp_resource(settings: Settings) -> str:
    """The audience every token is bound to (RFC 8707): this server's /mcp."""
    return f"{settings.public_url}/mcp"


def client_policy(settings: Settings) -> ClientPolicy:
    return policy_from(
        dynamic_registration=settings.oauth_dynamic_registration,
        documents=settings.oauth_client_documents,
        redirect_hosts=settings.oauth_redirect_hosts,
        allow_private=settings.oauth_documents_private,
        ca_file=settings.oauth_documents_ca_file,
    )


class CrewboardClient(OAuthClientInformationFull):
    """A client as the SDK's handlers see it, with our redirect and scope rules."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = [str(uri) for uri in self.redirect_uris or []]
        if redirect_uri is None:
            if len(registered) == 1:
                return AnyUrl(registered[0])
            raise InvalidRedirectUriError("redirect_uri is required: the app registered several.")
        asked = str(redirect_uri)
        if any(redirect_uri_matches(uri, asked) for uri in registered):
            return redirect_uri
        raise InvalidRedirectUriError(
            f"redirect_uri {asked[:200]!r} is not one the app registered; it must match exactly "
            "(a loopback address may change only its port)."
        )

    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        asked = parse_scopes(requested_scope)
        if not asked:
            return None
        unknown = [s for s in asked if s not in SCOPES]
        if unknown:
            raise InvalidScopeError(
                f"unknown scope {', '.join(unknown)}; this server knows {', '.join(SCOPES)}."
            )
        return asked


def _as_sdk_client(client: OAuthClient) -> CrewboardClient:
    meta = {k: v for k, v in client.metadata.items() if k in CrewboardClient.model_fields}
    meta.pop("client_secret", None)
    return CrewboardClient.model_validate(
        {
            **meta,
            "client_id": client.id,
            "client_name": client.name,
            "redirect_uris": list(client.redirect_uris),
            "token_endpoint_auth_method": client.auth_method,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": client.scope,
        }
    )


class Provider:
    """The SDK's authorization-server provider, backed by the database."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self.policy = client_policy(settings)
        self.resource = mcp_resource(settings)
        self.issuer = settings.public_url

    async def client_with_secret(self, client_id: str) -> tuple[OAuthClient, str | None] | None:
        return await find_client(self.db, self.policy, client_id)

    async def get_client(self, client_id: str) -> CrewboardClient | None:
        try:
            found = await self.client_with_secret(client_id)
        except DocumentRefused:
            return None
        return _as_sdk_client(found[0]) if found else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        metadata = client_info.model_dump(mode="json", exclude_none=True)
        secret = metadata.pop("client_secret", None)
        try:
            await to_thread.run_sync(
                lambda: register_client(
                    self.db, self.policy, metadata, client_id=client_info.client_id, secret=secret
                )
            )
        except ValidationFailed as error:
            field = (error.details or {}).get("field")
            if field == "redirect_uris":
                raise RegistrationError("invalid_redirect_uri", error.message) from error
            raise RegistrationError("invalid_client_metadata", error.message) from error

    def _resource_of(self, asked: str | None) -> str:
        """The audience a request names (RFC 8707), which must be this server's /mcp."""
        if asked is None or asked.rstrip("/") in (self.resource, self.issuer):
            return self.resource
        raise AuthorizeError(
            "invalid_target",
            f"resource {asked[:200]!r} is not served here; use {self.resource}.",
        )

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        resource = self._resource_of(params.resource)
        asked = list(params.scopes or [])
        if not asked:
            registered = parse_scopes(client.scope)
            asked = [s for s in registered if s in SCOPES] or [s.value for s in DEFAULT_SCOPES]
        found = await self.client_with_secret(str(client.client_id))
        if found is None:  # pragma: no cover - the handler just loaded it
            raise AuthorizeError("unauthorized_client", "The app is not known here.")
        try:
            grants.check_authorization_request(
                state=params.state,
                code_challenge=params.code_challenge,
                redirect_uri=str(params.redirect_uri),
            )
        except ValidationFailed as error:
            raise AuthorizeError("invalid_request", error.message) from error
        pending = await to_thread.run_sync(
            lambda: grants.start_authorization(
                self.db,
                found[0],
                redirect_uri=str(params.redirect_uri),
                redirect_explicit=params.redirect_uri_provided_explicitly,
                scopes=asked,
                resource=resource,
                code_challenge=params.code_challenge,
                state=params.state,
            )
        )
        return f"{self.issuer}{CONSENT_PATH}?{urlencode({'request': pending.id})}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        record = await to_thread.run_sync(
            grants.load_code, self.db, str(client.client_id), authorization_code
        )
        if record is None:
            return None
        # load_code judged the expiry on the server's clock; the SDK judges it again on the
        # machine's, so it is given the time left on that one (the two may differ: tests).
        left = (record.expires_at - self.db.clock.now()).total_seconds()
        return AuthorizationCode(
            code=authorization_code,
            scopes=sorted(s.value for s in record.grant.scopes),
            expires_at=time.time() + left,
            client_id=record.grant.client_id,
            code_challenge=record.code_challenge,
            redirect_uri=AnyUrl(record.redirect_uri),
            redirect_uri_provided_explicitly=record.redirect_explicit,
            resource=record.grant.resource,
            subject=record.grant.user_id,
        )

    async def exchange_authorization_code(
        self,
        client: OAuthClientInformationFull,  # noqa: ARG002 - the SDK's signature
        authorization_code: AuthorizationCode,
    ) -> OAuthToken:
        try:
            tokens = await to_thread.run_sync(
                grants.exchange_code, self.db, authorization_code.code
            )
        except grants.Replayed as error:
            raise TokenError("invalid_grant", str(error)) from error
        return _token_response(tokens)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        grant = await to_thread.run_sync(
            grants.load_refresh, self.db, str(client.client_id), refresh_token
        )
        if grant is None:
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=grant.client_id,
            scopes=sorted(s.value for s in grant.scopes),
            resource=grant.resource,
            subject=grant.user_id,
        )

    async def exchange_refresh_token(
        self,
        client: OAuthClientInformationFull,  # noqa: ARG002 - the SDK's signature
        refresh_token: RefreshToken,
        scopes: list[str],  # noqa: ARG002 - a refresh keeps the grant's scopes
    ) -> OAuthToken:
        try:
            tokens = await to_thread.run_sync(grants.rotate_refresh, self.db, refresh_token.token)
        except grants.Replayed as error:
            raise TokenError("invalid_grant", str(error)) from error
        return _token_response(tokens)

    async def load_access_token(self, token: str) -> AccessToken | None:
        # The SDK provider's protocol; /oauth/revoke itself is RevocationEndpoint's.
        if not grants.is_access_token(token):
            return None
        client_id = await to_thread.run_sync(grants.client_of_access_token, self.db, token)
        if client_id is None:
            return None
        return AccessToken(token=token, client_id=client_id, scopes=[])

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        await to_thread.run_sync(grants.revoke_secret, self.db, token.client_id, token.token)


def _token_response(tokens: grants.TokenSet) -> OAuthToken:
    return OAuthToken(
        access_token=tokens.access_token,
        token_type="Bearer",  # noqa: S106 - the token type's name
        expires_in=tokens.expires_in,
        refresh_token=tokens.refresh_token,
        scope=" ".join(tokens.scopes),
    )


class HashedSecretAuthenticator(ClientAuthenticator):
    """Client authentication at the token and revocation endpoints against the stored hash
    of the client's secret (the SDK's own compares a secret kept in the clear)."""

    def __init__(self, provider: Provider) -> None:
        super().__init__(provider)  # type: ignore[arg-type]
        self.crewboard = provider

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()
        client_id = form.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("client_id is missing.")
        try:
            found = await self.crewboard.client_with_secret(client_id)
        except DocumentRefused as error:
            raise AuthenticationError(
                f"The app's metadata document is refused: {error}."
            ) from error
        if found is None:
            raise AuthenticationError("The client_id is not known here; register the app again.")
        client, secret_hash = found
        if client.auth_method == "none":
            return _as_sdk_client(client)
        given = _client_secret(request, client.auth_method, form.get("client_secret"), client_id)
        if not check_secret(secret_hash, given):
            raise AuthenticationError("The client secret is wrong.")
        return _as_sdk_client(client)


def _client_secret(request: Request, method: str, posted: object, client_id: str) -> str | None:
    if method == "client_secret_post":
        return posted if isinstance(posted, str) else None
    header = request.headers.get("authorization", "")
    if not header.startswith("Basic "):
        raise AuthenticationError("Send the client secret with HTTP Basic authentication.")
    try:
        user, _, secret = base64.b64decode(header[6:]).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError) as error:
        raise AuthenticationError("The Basic authentication header is malformed.") from error
    if unquote(user) != client_id:
        raise AuthenticationError("The Basic authentication names another client.")
    return unquote(secret)


class RevocationEndpoint:
    """RFC 7009 revocation. The SDK's handler wants a `client_secret` form field from every
    client, which a public client (and one using HTTP Basic) never sends; this one takes the
    client the authenticator accepted. Unknown or another client's tokens answer 200 too."""

    def __init__(self, provider: Provider, authenticator: HashedSecretAuthenticator) -> None:
        self.provider = provider
        self.authenticator = authenticator

    async def handle(self, request: Request) -> Response:
        try:
            client = await self.authenticator.authenticate_request(request)
        except AuthenticationError as error:
            return JSONResponse(
                {"error": "invalid_client", "error_description": error.message},
                401,
                headers=_NO_STORE,
            )
        secret = (await request.form()).get("token")
        if not isinstance(secret, str) or not secret:
            return JSONResponse(
                {"error": "invalid_request", "error_description": "token is missing."},
                400,
                headers=_NO_STORE,
            )
        await to_thread.run_sync(
            grants.revoke_secret, self.provider.db, str(client.client_id), secret
        )
        return Response(status_code=200, headers=_NO_STORE)


def authorization_metadata(settings: Settings) -> OAuthMetadata:
    """RFC 8414 metadata. The issuer is the public URL exactly as configured (no slash added):
    clients compare it with the resource's origin character for character."""
    base = settings.public_url
    methods = ["none", "client_secret_post", "client_secret_basic"]
    return OAuthMetadata.model_validate(
        {
            "issuer": base,
            "authorization_endpoint": base + AUTHORIZE_PATH,
            "token_endpoint": base + TOKEN_PATH,
            "registration_endpoint": (
                base + REGISTER_PATH if settings.oauth_dynamic_registration else None
            ),
            "revocation_endpoint": base + REVOKE_PATH,
            "scopes_supported": SCOPES,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": methods,
            "revocation_endpoint_auth_methods_supported": methods,
            "code_challenge_methods_supported": ["S256"],
            "service_documentation": base + "/",
            "client_id_metadata_document_supported": settings.oauth_client_documents,
            "authorization_response_iss_parameter_supported": True,
        }
    )


def _endpoint(handler: Any, limit: int = FORM_BODY_LIMIT, *, cors: bool = True) -> ASGIApp:
    """A handler behind a body bound; an endpoint apps call from a browser answers CORS."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        response = await handler(Request(scope, receive))
        await response(scope, receive, send)

    limited = RequestBodyLimitMiddleware(app, limit)
    if not cors:
        return limited
    return CORSMiddleware(
        limited,
        allow_origins=["*"],
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=["authorization", "content-type", "mcp-protocol-version"],
    )


class RegistrationThrottle(LoginThrottle):
    """At most LIMIT client registrations per address in WINDOW seconds, per node: anyone
    may register, so an address cannot fill the database with clients."""

    LIMIT = 30
    WINDOW = 60 * 60.0


def oauth_routes(db: Database, settings: Settings) -> list[Route]:
    """The authorization server's routes, or none when OAuth is off."""
    if not settings.oauth_enabled:
        return []
    provider = Provider(db, settings)
    authenticator = HashedSecretAuthenticator(provider)
    metadata = MetadataHandler(authorization_metadata(settings))
    authorize = AuthorizationHandler(provider)  # type: ignore[arg-type]

    async def authorize_endpoint(request: Request) -> Response:
        client_id = request.query_params.get("client_id") if request.method == "GET" else None
        if client_id and is_document_id(client_id):
            try:  # a document that cannot be used: say why, instead of "not found"
                await provider.client_with_secret(client_id)
            except DocumentRefused as error:
                return JSONResponse(
                    {"error": "invalid_client", "error_description": f"{error}."},
                    400,
                    headers=_NO_STORE,
                )
        return await authorize.handle(request)

    routes = [
        Route(
            "/.well-known/oauth-authorization-server",
            _endpoint(metadata.handle),
            methods=["GET", "OPTIONS"],
        ),
        Route(
            "/.well-known/openid-configuration",
            _endpoint(metadata.handle),
            methods=["GET", "OPTIONS"],
        ),
        # A person's browser is sent here: no CORS (nothing reads the answer but the browser).
        Route(AUTHORIZE_PATH, _endpoint(authorize_endpoint, cors=False), methods=["GET", "POST"]),
        Route(
            TOKEN_PATH,
            _endpoint(TokenHandler(provider, authenticator).handle),  # type: ignore[arg-type]
            methods=["POST", "OPTIONS"],
        ),
        Route(
            REVOKE_PATH,
            _endpoint(RevocationEndpoint(provider, authenticator).handle),
            methods=["POST", "OPTIONS"],
        ),
    ]
    if settings.oauth_dynamic_registration:
        options = ClientRegistrationOptions(
            enabled=True,
            valid_scopes=SCOPES,
            default_scopes=[s.value for s in DEFAULT_SCOPES],
        )
        register = RegistrationHandler(provider, options=options)  # type: ignore[arg-type]
        throttle = RegistrationThrottle()

        async def register_endpoint(request: Request) -> Response:
            address = request.client.host if request.client else "unknown"
            wait = throttle.retry_after(address)
            if wait:
                return JSONResponse(
                    {
                        "error": "invalid_client_metadata",
                        "error_description": f"Too many registrations from {address}; try "
                        f"again in {wait} s, or reuse the client you registered.",
                    },
                    429,
                    headers={"Retry-After": str(wait), **_NO_STORE},
                )
            response = await register.handle(request)
            if response.status_code == 201:
                throttle.failed(address)  # counts the registrations made, not failures
            return response

        routes.append(
            Route(
                REGISTER_PATH,
                _endpoint(register_endpoint, REGISTRATION_BODY_LIMIT),
                methods=["POST", "OPTIONS"],
            )
        )
    return routes
