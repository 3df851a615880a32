"""fitted_answer keeps the rows fit_rows keeps, and gives the JSON of the answer it made."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from crewboard.contract.reply import Reply, compact, fit_rows, fitted_answer
from crewboard.mcp.render import success


def answer(shown: list[Any]) -> dict[str, Any]:
    return {"rows": shown, "count": len(shown), "hasMore": bool(shown) and len(shown) % 2 == 1}


rows = st.lists(
    st.dictionaries(st.sampled_from(["key", "title", "note"]), st.text(max_size=60), max_size=3),
    max_size=40,
)


@given(rows=rows, budget=st.integers(min_value=1, max_value=3000))
def test_fitted_answer_is_the_answer_for_the_rows_fit_rows_keeps(
    rows: list[Any], budget: int
) -> None:
    body, text = fitted_answer(rows, answer, budget)
    assert body == answer(fit_rows(rows, budget))
    assert text == compact(body)


def test_a_page_that_fits_is_answered_with_every_row() -> None:
    page = [{"key": f"CRW-{n}", "title": "é" * 10} for n in range(200)]
    body, text = fitted_answer(page, answer)
    assert body["count"] == 200
    assert success(Reply(body, text=text)).content[0].text == compact(body)  # type: ignore[union-attr]


def test_a_page_over_the_budget_is_cut_by_encoded_size() -> None:
    page = [{"key": f"CRW-{n}", "title": "é" * 100} for n in range(10)]
    body, _ = fitted_answer(page, answer, budget=1000)
    kept = body["count"]
    assert 0 < kept < 10
    # A row costs its JSON and a separator: the kept list's JSON is within a byte of the budget.
    assert len(compact(page[:kept]).encode()) - 1 <= 1000 < len(compact(page[: kept + 1]).encode())
