"""Warehouses: one found by its name (`find_warehouse`), and those a person works in
(users.warehouses): the one place they are enforced.

Every stock reader (stats, search, material details, reports) takes `sites=` as a required keyword
argument, so none can forget it: quantities, values, movements and locations outside a person's
warehouses are neither shown nor counted. The catalogue (codes, names, specs, units) stays visible
to everyone. A booking outside them is refused (`check_booking`). docs/permissions.md, "Warehouses".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import bindparam, cast, false, func, or_, select, true
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from inventory_ai.errors import Forbidden, InvalidInput, NotFound
from inventory_ai.models import User, Warehouse
from inventory_ai.services import audit
from inventory_ai.services.search_index import normalise
from inventory_ai.statements import BuiltOnce, Direct, Prepared


@dataclass(frozen=True)
class Sites:
    """Every warehouse (`ids` None), or these warehouses (ids and codes; possibly none at all)."""

    ids: frozenset[int] | None = None
    codes: frozenset[str] = frozenset()

    @property
    def everywhere(self) -> bool:
        return self.ids is None

    def allows(self, warehouse_id: int | None) -> bool:
        return self.ids is None or warehouse_id in self.ids

    def where(self, column):
        """A SQL condition keeping only rows of these warehouses (`column` holds a warehouse id)."""
        if self.ids is None:
            return true()
        return column.in_(sorted(self.ids)) if self.ids else false()

    def visible(self, warehouse: Warehouse) -> bool:
        """For booking_effect.effect_view: may this person see that warehouse's figures."""
        return self.allows(warehouse.id)


ALL = Sites()


def unknown_codes(session: Session, codes: Iterable[str]) -> list[str]:
    """The codes that name no warehouse, in the order given."""
    known = set(session.scalars(select(Warehouse.code)))
    return [c for c in codes if c not in known]


def clean_codes(session: Session, codes: list[str] | None) -> list[str] | None:
    """A user's warehouses as stored: upper-cased, each once, sorted; None stays None (every
    warehouse). InvalidInput (422) naming the codes no warehouse has."""
    if codes is None:
        return None
    wanted = sorted({str(c).strip().upper() for c in codes})
    unknown = unknown_codes(session, wanted)
    if unknown:
        raise InvalidInput(
            f"no warehouse {', '.join(unknown)}", {"fields": {"warehouses": f"unknown: {', '.join(unknown)}"}}
        )
    return wanted


def narrows(session: Session, before: list[str] | None, after: list[str] | None) -> bool:
    """Whether a change of a person's warehouses takes one away (None is every warehouse: so is a
    list of every warehouse there is)."""
    if after is None:
        return False
    had = set(session.scalars(select(Warehouse.code))) if before is None else set(before)
    return not set(after) >= had


def of_codes(where: Session | Direct, codes: list[str] | None) -> Sites:
    if codes is None:
        return ALL
    if not codes:
        return Sites(frozenset(), frozenset())
    found = _WAREHOUSES.get((len(codes),), lambda: _warehouses_with(len(codes)))
    rows = found.rows(where, {f"code{i}": code for i, code in enumerate(codes)})
    return Sites(frozenset(id for id, _code in rows), frozenset(code for _id, code in rows))


def _warehouses_with(count: int) -> Prepared:
    codes = [bindparam(f"code{i}") for i in range(count)]
    return Prepared(select(Warehouse.id, Warehouse.code).where(Warehouse.code.in_(codes)))


def codes_of(session: Session, user: User) -> list[str] | None:
    """A person's warehouse codes as stored now; None: every warehouse."""
    return session.scalar(select(User.warehouses).where(User.id == user.id))


# Built once: every chat message, page and approval reads them (of_user), straight through the
# DBAPI (statements.py): in a direct transaction too (the intake's of a new conversation).
_CODES_OF = Prepared(select(User.warehouses).where(User.id == bindparam("user")))
_WAREHOUSES = BuiltOnce()  # by how many codes a person has
# PostgreSQL: the codes and their warehouses in one statement, a row per warehouse the person's
# list names (one row with no warehouse for a list that names none, or for every warehouse). `?`
# is true for a code that is an element of the JSON array; never for JSON null or SQL NULL.
_users, _warehouses = User.__table__, Warehouse.__table__
_SITES_OF = Prepared(
    select(_users.c.warehouses, _warehouses.c.id, _warehouses.c.code)
    .select_from(_users.outerjoin(_warehouses, cast(_users.c.warehouses, JSONB).has_key(_warehouses.c.code)))
    .where(_users.c.id == bindparam("user"))
)


def of_user(where: Session | Direct, user: User | int) -> Sites:
    """A person's warehouses as the database has them now (not as a cached user object has them):
    a change an admin made applies to that person's next request, on every worker and host."""
    user_id = user if isinstance(user, int) else user.id
    if _dialect(where).name == "postgresql":  # one statement, one round trip
        return _joined(_SITES_OF.rows(where, {"user": user_id}))
    rows = _CODES_OF.rows(where, {"user": user_id})
    return of_codes(where, rows[0][0] if rows else None)


def of_user_at_commit(where: Session | Direct, user: User) -> Callable[[], Sites]:
    """`of_user`, for a writer that needs them only once its transaction has committed: in a
    pipelined direct transaction (PostgreSQL) read inside it but answered with its COMMIT, no wait
    of its own (statements.Prepared.rows_at_commit); elsewhere read now. Returns what gives them."""
    if not isinstance(where, Direct) or where.pipeline is None:
        now = of_user(where, user)
        return lambda: now
    rows = _SITES_OF.rows_at_commit(where, {"user": user.id})
    return lambda: _joined(rows())


def _joined(rows: list[tuple]) -> Sites:
    """Sites from _SITES_OF's rows, as of_codes makes them from the codes: no such person or no
    list, every warehouse; else the warehouses found (codes no warehouse has are left out)."""
    if not rows or rows[0][0] is None:
        return ALL
    found = [(id, code) for _codes, id, code in rows if id is not None]
    return Sites(frozenset(id for id, _code in found), frozenset(code for _id, code in found))


def _dialect(where: Session | Direct):
    return where.dialect if isinstance(where, Direct) else where.get_bind().dialect


def names(session: Session, sites: Sites, language: str = "zh") -> list[str]:
    """The warehouses' names, in the person's language, ordered by code."""
    if sites.ids is None:
        return []
    column = Warehouse.name_zh if language == "zh" else Warehouse.name_en
    return list(session.scalars(select(column).where(sites.where(Warehouse.id)).order_by(Warehouse.code)))


class OutsideSites(Forbidden):
    """A warehouse asked for that the person does not work in (a tool's PermissionDenied): says
    where they work and whom to ask, never the warehouse's figures."""

    def __init__(self, session: Session, sites: Sites, warehouse: Warehouse):
        mine_en = ", ".join(names(session, sites, "en")) or "no warehouse"
        mine_zh = "、".join(names(session, sites, "zh")) or "任何仓库"
        super().__init__(
            f"you work in {mine_en}; {warehouse.name_en} ({warehouse.code}) is outside them: ask someone "
            f"at {warehouse.name_en}",
            {"warehouse": warehouse.code, "your_warehouses": sorted(sites.codes)},
        )
        self.warehouse = warehouse
        # The same in Chinese, for a reply in Chinese (the offline assistant's).
        self.message_zh = (
            f"您负责{mine_zh}；{warehouse.name_zh}不在您的范围内，请询问{warehouse.name_zh}的同事。"
        )


def find_warehouse(session: Session, ref: str) -> Warehouse:
    """A warehouse by code (WH01), Chinese or English name; NotFound lists the warehouses there are."""
    text = (ref or "").strip()
    key = normalise(text)
    warehouse = session.scalar(
        select(Warehouse).where(
            or_(
                Warehouse.code == text.upper(),
                Warehouse.name_zh == text,
                func.lower(Warehouse.name_en) == key,
            )
        )
    )
    if warehouse is None:
        names = ", ".join(
            f"{w.name_zh} ({w.code})" for w in session.scalars(select(Warehouse).order_by(Warehouse.code))
        )
        raise NotFound(f"no warehouse {text!r}; warehouses are: {names}")
    return warehouse


def check_warehouse(session: Session, sites: Sites, warehouse: Warehouse) -> None:
    """Raise OutsideSites unless the person works in `warehouse`."""
    if not sites.allows(warehouse.id):
        raise OutsideSites(session, sites, warehouse)


def checked_warehouse(session: Session, sites: Sites, ref: str) -> Warehouse:
    """The warehouse `ref` names (code or name), if the person works in it; else OutsideSites."""
    warehouse = find_warehouse(session, ref)
    check_warehouse(session, sites, warehouse)
    return warehouse


def check_booking(session: Session, sites: Sites, warehouse: str, to_warehouse: str | None) -> None:
    """A booking (both ends of a transfer) in the person's warehouses, or OutsideSites. Checked when
    it is proposed and again when it is carried out: a scope can shrink while a booking waits."""
    if sites.everywhere:
        return
    for ref in (warehouse, to_warehouse):
        if ref:
            checked_warehouse(session, sites, ref)


def booking_within(session: Session, sites: Sites, arguments: dict) -> bool:
    """Is every warehouse a booking names (both ends of a transfer) one of `sites`? A name that no
    longer resolves counts as outside for a person limited to some warehouses."""
    if sites.everywhere:
        return True
    refs = [arguments.get(k) for k in ("warehouse", "to_warehouse") if isinstance(arguments.get(k), str)]
    try:
        return all(sites.allows(find_warehouse(session, ref).id) for ref in refs)
    except NotFound:
        return False


def first_outside(session: Session, sites: Sites, arguments: dict) -> str | None:
    """The first warehouse a booking names outside `sites` (as named), for the audit trail."""
    for key in ("warehouse", "to_warehouse"):
        ref = arguments.get(key)
        if isinstance(ref, str) and not booking_within(session, sites, {"warehouse": ref}):
            return ref
    return None


def record_denied(session: Session, user: User, where: str, warehouse: str | None, **fields) -> None:
    """A refusal for a warehouse outside the person's, in the audit trail as `denied` (in the
    session's transaction: the caller commits it before answering the refusal)."""
    audit.record(
        session, "warehouse_scope", "denied", user_id=user.id, role=user.role, tool_name=where[:64],
        detail=f"warehouse={warehouse}", **fields,
    )  # fmt: skip
