"""People: the household's people, their identities, and who "You" is.

The Home Assistant user who opens the panel is known by the ``X-Remote-User-Id`` header the
trusted proxy sends (``ingress.py`` drops it from anyone else); their identity maps to a
person, or is recorded as unlinked and offered here as a new person or linked to one.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import pgettext
from werkzeug.wrappers import Response as BaseResponse

from ...curator.household import owns_nothing
from ...curator.people import EVERYONE, View, person_in_view
from ...problems import CodedError
from ...stores import KINDS, Person
from ..plumbing.context import curator, settings, stores
from ..plumbing.htmx import see_other
from ..plumbing.ingress import LOGIN_KEY, USER_ID_KEY, USER_KEY
from ..plumbing.messages import describe

bp = Blueprint("people", __name__, url_prefix="/people")

KIND_LABELS = {"ha": "Home Assistant", "slack": "Slack", "name": "Name"}


@bp.app_template_global("you")
def you() -> Person | None:
    """The person of the Home Assistant user who opened the panel (None when the request
    did not come through the trusted proxy, or their identity is linked to nobody yet). A
    user seen for the first time is recorded as unlinked, to be offered on this page."""
    if "you" not in g:
        user_id = request.environ.get(USER_ID_KEY)
        g.you = None
        if user_id:
            label = request.environ.get(USER_KEY) or ""
            try:
                g.you = curator().note_identity("ha", user_id, label=label)
            except (CodedError, OSError):
                g.you = stores().people.resolve("ha", user_id)
    found: Person | None = g.you
    return found


def viewer() -> View:
    """Whose data this request may see and change: the one place the dashboard decides it.

    Through Home Assistant's ingress (the trusted proxy's ``X-Remote-User-Id``), a person sees
    their own private data and the household's; a user linked to no person yet, the
    household's alone; an administrator everyone's when ``memory_admins_see_all`` is on.
    Standalone, or directly with the dashboard token, it is the household's curator view:
    everyone's."""
    if not request.environ.get(USER_ID_KEY):
        return EVERYONE
    if settings().admins_see_all and stores().admins.is_admin(request.environ.get(LOGIN_KEY)):
        return EVERYONE
    mine = you()
    return mine.id if mine is not None else None


@bp.before_app_request
def _keep_to_view() -> None:
    """Every request keeps to its viewer's view (``context.curator`` reads it)."""
    g.view = viewer()


@bp.app_template_global("seeing_all")
def seeing_all() -> bool:
    """True when a Home Assistant user sees every person's data (an administrator, with
    ``memory_admins_see_all``): the pages then say so."""
    return bool(request.environ.get(USER_ID_KEY)) and g.get("view", EVERYONE) is EVERYONE


@bp.app_template_global("visible_people")
def visible_people() -> list[Person]:
    """The people this request may see and act as: themselves (or everyone, for the
    household's curator view); another person is not listed."""
    view = g.get("view", EVERYONE)
    return [p for p in stores().people.people() if view is EVERYONE or p.id == view]


def visible_person(person_id: str | None) -> bool:
    """Whether this request may act as ``person_id`` (None: the household)."""
    return person_in_view(person_id, g.get("view", EVERYONE))


def visible_owners() -> dict[str | None, tuple[int, int]]:
    """How many memories (and characters) each owner this request may see holds: the
    household and the viewer (everyone, for the household's curator view)."""
    return {k: v for k, v in stores().memories.owners().items() if visible_person(k)}


@bp.app_template_global("ha_user_id")
def ha_user_id() -> str | None:
    """The Home Assistant user id the trusted proxy sent, or None."""
    value = request.environ.get(USER_ID_KEY)
    return str(value) if value else None


@bp.app_template_global("person_names")
def person_names() -> dict[str, str]:
    """Each person's id and display name."""
    return stores().people.names()


@bp.app_template_global("whose_label")
def whose_label(person_id: str | None) -> str:
    """Whose a memory is, as a page says it: "You", a person's name or "Household"."""
    if person_id is None:
        return _("Household")
    mine = you()
    if mine is not None and mine.id == person_id:
        return _("You")
    return stores().people.names().get(person_id, person_id)


@bp.app_template_global("speaker_label")
def speaker_label(person_id: str | None) -> str:
    """Who said a thread's message, as the page names them: "You" for the viewer's own, the
    speaker's name (a person removed since keeps theirs), "User" when the host did not say."""
    if person_id is None:
        return _("User")
    mine = you()
    if mine is not None and mine.id == person_id:
        return _("You")
    name = stores().people.names().get(person_id)
    if name is None:
        gone = stores().people.removed(person_id)
        name = gone.name if gone is not None else _("Someone")
    return name


@bp.app_template_global("owners_share")
def owners_share() -> list[tuple[str, int, int]]:
    """Each owner's share of the store (the household first, then each person): label,
    memories, characters; the caps stay per store."""
    shares = stores().memories.owners()
    rows = [(whose_label(None), *shares.get(None, (0, 0)))]
    for person in visible_people():
        items, chars = shares.get(person.id, (0, 0))
        rows.append((whose_label(person.id), items, chars))
    return rows


@bp.app_template_filter("identity_kind")
def identity_kind(kind: str) -> str:
    """A kind of identity as the page's language names it (the products' names as they are)."""
    if kind == "name":
        return pgettext("identity kind", "Name")
    return KIND_LABELS.get(kind, kind)


def _page(status: int = 200, **extra: Any) -> tuple[str, int]:
    people = stores().people
    you()  # an HA user opening this page is recorded first
    shares = visible_owners()
    removed_id = request.args.get("removed", "")
    removed = people.removed(removed_id) if removed_id and not people.get(removed_id) else None
    context = {
        "removed": removed,
        "page_title": _("People"),
        "people": people.people(),
        "unlinked": people.unlinked(),
        "kinds": KINDS,
        "shares": shares,
        "devices": people.devices(),
        "error": None,
    }
    context.update(extra)
    return render_template("people/page.html", **context), status


@bp.get("/")
def index() -> tuple[str, int]:
    """Every person with their identities and share of memory, then the identities seen."""
    return _page()


def _to_people() -> BaseResponse:
    """After a change: back to the People page (303, so a reload does not post again)."""
    return see_other(url_for("people.index"))


def _refused(exc: CodedError) -> tuple[str, int]:
    return _page(422, error=describe(exc))


@bp.post("/new")
def new() -> BaseResponse | tuple[str, int]:
    """A new person: from an identity seen (kind and value), or with a name only."""
    form = request.form
    try:
        if form.get("kind") and form.get("value"):
            curator().person_from(form["kind"], form["value"], name=form.get("name") or None)
        else:
            curator().add_person(form.get("name", ""))
    except CodedError as exc:
        return _refused(exc)
    return _to_people()


@bp.post("/me")
def me() -> BaseResponse | tuple[str, int]:
    """The Home Assistant user who opened the panel becomes a person of their own."""
    user_id = ha_user_id()
    if user_id is None:
        return _page(400, error=_("Only a Home Assistant user can add themselves."))
    try:
        if stores().people.resolve("ha", user_id) is None:
            curator().note_identity("ha", user_id, label=request.environ.get(USER_KEY) or "")
            curator().person_from("ha", user_id)
    except CodedError as exc:
        return _refused(exc)
    back = "memories.index" if request.form.get("next") == "memories" else "people.index"
    return see_other(url_for(back))


@bp.post("/<person_id>/rename")
def rename(person_id: str) -> BaseResponse | tuple[str, int]:
    try:
        curator().rename_person(person_id, name=request.form.get("name", ""))
    except CodedError as exc:
        return _refused(exc)
    return _to_people()


@bp.post("/link")
def link() -> BaseResponse | tuple[str, int]:
    """Map an identity seen (or typed) to the person the form names."""
    form = request.form
    try:
        curator().link_identity(
            form.get("person", ""), kind=form.get("kind", ""), value=form.get("value", "")
        )
    except CodedError as exc:
        return _refused(exc)
    return _to_people()


@bp.post("/<person_id>/unlink")
def unlink(person_id: str) -> BaseResponse | tuple[str, int]:
    try:
        curator().unlink_identity(
            person_id, kind=request.form.get("kind", ""), value=request.form.get("value", "")
        )
    except CodedError as exc:
        return _refused(exc)
    return _to_people()


@bp.post("/<person_id>/remove")
def remove(person_id: str) -> BaseResponse | tuple[str, int]:
    """Take a person off the household (refused while they own memories); the page then
    offers Undo."""
    try:
        curator().remove_person(person_id)
    except CodedError as exc:
        return _refused(exc)
    return see_other(url_for("people.index", removed=person_id))


@bp.post("/<person_id>/restore")
def restore(person_id: str) -> BaseResponse | tuple[str, int]:
    """Undo a removal: the person comes back with their name and identities."""
    try:
        curator().restore_person(person_id)
    except CodedError as exc:
        return _refused(exc)
    return _to_people()


@bp.post("/device")
def device() -> BaseResponse | tuple[str, int]:
    """Whose memory a Home Assistant device answers with: ``choice`` "speaker" (whoever is
    speaking), "household", or "person:<id>"."""
    form = request.form
    choice, _sep, person = form.get("choice", "").partition(":")
    try:
        curator().choose_device(form.get("device", ""), choice=choice, person=person or None)
    except CodedError as exc:
        return _refused(exc)
    return _to_people()


@bp.app_template_global("device_is_yours")
def device_is_yours(person_id: str | None) -> bool:
    """Whether this request may change a device answering with ``person_id``'s memory (None:
    whoever speaks, or the household): not one set to another person."""
    return visible_person(person_id)


@bp.post("/me/link")
def link_me() -> BaseResponse | tuple[str, int]:
    """The Home Assistant user who opened the panel says which person they are: their
    identity is linked to that person (one no other Home Assistant user is linked to)."""
    user_id = ha_user_id()
    if user_id is None:
        return _page(400, error=_("Only a Home Assistant user can add themselves."))
    person = stores().people.get(request.form.get("person", ""))
    if person is None or any(i.kind == "ha" for i in person.identities):
        return _page(422, error=_("Choose a person no other Home Assistant user is linked to."))
    try:
        curator().link_identity(person.id, kind="ha", value=user_id)
    except CodedError as exc:
        return _refused(exc)
    back = "memories.index" if request.form.get("next") == "memories" else "people.index"
    return see_other(url_for(back))


@bp.app_template_global("people_to_claim")
def people_to_claim() -> list[Person]:
    """The people a Home Assistant user seen for the first time may say they are: those no
    Home Assistant user is linked to yet (and, unless this is the household's curator view,
    who own nothing yet: claiming one would show their private data)."""
    free = [p for p in stores().people.people() if not any(i.kind == "ha" for i in p.identities)]
    if g.get("view", EVERYONE) is EVERYONE:
        return free
    return [p for p in free if owns_nothing(stores().curator, p.id)]
