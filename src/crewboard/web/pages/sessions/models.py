"""Web pages: the models spec sessions run on. Settings → Models, for the server's owner only:
the providers (where each reads its key from, never a key) and models, with forms to add,
replace and remove them. And a project's default model, for the project's admins.

A provider's key is never typed into a form: the owner names the environment variable or the
absolute path of the file the server reads it from when a turn runs.
"""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from crewboard.contract.sessions import present
from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, ValidationFailed
from crewboard.services.sessions import conversation, models
from crewboard.web.context import Page, action, page, project_routes
from crewboard.web.forms import show_refusal

MODELS = "/settings/models"


def models_page(page_: Page) -> Response:
    return _models(page_, typed={})


def _models(page_: Page, *, typed: dict[str, str], status_code: int = 200) -> Response:
    config = present.config_view(conversation.owner_model_config(page_.db, page_.actor))
    return page_.render(
        "settings_models.html", status_code=status_code, title="Models", config=config,
        kinds=models.KINDS, defaults=models.DEFAULT_BASE, typed=typed,
    )  # fmt: skip


def _timeout(raw: str) -> float:
    """Raises: ValidationFailed."""
    try:
        return float(raw) if raw.strip() else 60.0
    except ValueError:
        raise ValidationFailed.field("timeoutSeconds", "must be a number of seconds.") from None


def put_provider(page_: Page) -> Response:
    typed = {name: page_.field(name).strip() for name in ("id", "kind", "base_url", "key_from",
                                                          "key", "timeout", "retries")}  # fmt: skip
    where = typed["key"] or None
    try:
        conversation.owner_model_config(page_.db, page_.actor)  # the owner, before checking more
        values = models.check_provider(
            provider_id=typed["id"], kind=typed["kind"], base_url=typed["base_url"] or None,
            key_env=where if typed["key_from"] == "env" else None,
            key_file=where if typed["key_from"] == "file" else None,
            timeout=_timeout(typed["timeout"]),
            max_retries=parse_whole("maxRetries", typed["retries"] or "3"),
        )  # fmt: skip
        models.do_put_provider(page_.db, page_.actor, values, stream=page_.has_field("stream"))
    except CrewboardError as error:
        show_refusal(page_, error)
        return _models(page_, typed=typed, status_code=error.http_status)
    return page_.redirect(MODELS, notice=f"Saved the provider {values.id}.")


def put_model(page_: Page) -> Response:
    typed = {name: page_.field(name).strip() for name in ("model_id", "provider", "model",
                                                          "label", "max_tokens")}  # fmt: skip
    try:
        made = models.do_put_model(
            page_.db, page_.actor, model_id=typed["model_id"], provider_id=typed["provider"],
            model=typed["model"], label=typed["label"] or None,
            max_tokens=parse_whole("maxTokens", typed["max_tokens"] or "4096"),
            is_default=page_.has_field("default"),
        )  # fmt: skip
    except CrewboardError as error:
        show_refusal(page_, error)
        return _models(page_, typed=typed, status_code=error.http_status)
    return page_.redirect(MODELS, notice=f"Saved the model {made.id}.")


def remove(page_: Page) -> Response:
    what = "provider" if page_.field("what") == "provider" else "model"
    ident = page_.field("id")
    models.do_delete(page_.db, page_.actor, what=what, ident=ident)
    return page_.redirect(MODELS, notice=f"Removed the {what} {ident}.")


# --- a project's default ------------------------------------------------------------------------


def project_model_page(page_: Page) -> Response:
    choices = present.choices_view(
        conversation.session_choices(page_.db, page_.actor, project=page_.project_key)
    )
    return page_.render(
        "settings_sessions.html", title=f"{page_.project_key} spec sessions", choices=choices,
        here=page_.path("settings/spec-sessions"),
    )  # fmt: skip


def set_project_model(page_: Page) -> Response:
    chosen = page_.field("model") or None
    models.set_project_model(page_.db, page_.actor, project=page_.project_key, model_id=chosen)
    notice = f"New sessions run on {chosen}." if chosen else "New sessions run on the default."
    return page_.redirect(page_.path("settings/spec-sessions"), notice=notice)


ROUTES: list[BaseRoute] = [
    Route(MODELS, page(models_page), methods=["GET"]),
    Route(MODELS + "/providers", action(put_provider), methods=["POST"]),
    Route(MODELS + "/models", action(put_model), methods=["POST"]),
    Route(MODELS + "/remove", action(remove), methods=["POST"]),
    *project_routes("settings/spec-sessions", get=project_model_page, post=set_project_model),
]
