"""Domain records to rows and back: most fields are a column of the same name, copied as is,
so a repository names only the fields it converts (an enum from its text, a tuple from a JSON
list, a dict copied out of the row)."""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Row, Table

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")


@cache
def _field_names(record_type: type[DataclassInstance]) -> frozenset[str]:
    return frozenset(field.name for field in fields(record_type) if field.init)


def record_from_row(record_type: type[R], row: Row[Any], **converted: Any) -> R:
    """The record whose fields are the row's columns of the same names, but for `converted`.

    Raises:
        KeyError: a field is neither converted nor a column of the row, or a converted name is
            no field (a mapper out of step with its table or its record).
    """
    names = _field_names(record_type)
    if not converted.keys() <= names:
        raise KeyError(f"not fields of {record_type.__name__}: {converted.keys() - names}")
    columns = row._mapping
    values = {name: converted[name] if name in converted else columns[name] for name in names}
    return record_type(**values)


def record_values(record: DataclassInstance, table: Table, **converted: Any) -> dict[str, Any]:
    """The values that store `record` in `table`: every column named like one of its fields
    takes that field's value, but for `converted` (which may name further columns too)."""
    names = _field_names(type(record))
    copied = {c.name: getattr(record, c.name) for c in table.columns if c.name in names}
    return copied | converted
