"""The batch discount in the pricing table: parsed, defaulted by endpoint, applied."""

from __future__ import annotations

import pytest

from foreseen.core.digest import sha256_json
from foreseen.core.errors import UserInputError
from foreseen.credit.backends.http.pricing import (
    OFFICIAL_BATCH_DISCOUNT,
    PricingTable,
    default_batch_discount,
)
from foreseen.credit.backends.registry import make_backend

from support.http import backend_options

BASE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0}


@pytest.mark.parametrize(("url", "discount"), [
    ("https://api.anthropic.com", 0.5), ("https://api.openai.com/v1", 0.5),
    ("https://API.Anthropic.com/", 0.5), ("http://127.0.0.1:8080/v1", 0.0),
    ("https://api.anthropic.com.example.net", 0.0), ("https://openrouter.ai/api/v1", 0.0)])
def test_the_default_discount_is_the_official_endpoints_half_price(url: str,
                                                                     discount: float) -> None:
    assert OFFICIAL_BATCH_DISCOUNT == 0.5
    assert default_batch_discount(url) == discount
    assert PricingTable.from_json({"m": BASE}).batch_factor("m", url) == 1.0 - discount


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 0.999])
def test_a_discount_in_zero_to_one_is_taken_and_overrides_the_default(value: float) -> None:
    table = PricingTable.from_json({"m": {**BASE, "batch_discount": value}})
    assert table.batch_factor("m", "https://api.anthropic.com") == pytest.approx(1.0 - value)
    assert table.to_json()["m"]["batch_discount"] == value


@pytest.mark.parametrize("value", [1, 1.0, 1.5, -0.1, "half", True, float("nan")])
def test_a_discount_outside_zero_to_one_is_refused(value: object) -> None:
    with pytest.raises(UserInputError, match="batch_discount"):
        PricingTable.from_json({"m": {**BASE, "batch_discount": value}})


def test_a_table_without_the_discount_freezes_as_before() -> None:
    """Plans frozen before the discount existed keep their configuration (and digest)."""
    table = PricingTable.from_json({"m": BASE})
    assert table.to_json() == {"m": BASE}
    assert sha256_json(table.to_json()) == sha256_json({"m": BASE})


def test_an_unpriced_model_gets_the_endpoints_default() -> None:
    assert PricingTable.from_json({}).batch_factor("m", "https://api.openai.com/v1") == 0.5


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_the_backend_prices_a_batch_answer_at_its_factor(api: str) -> None:
    model = "claude-test" if api == "anthropic" else "gpt-test"
    backend = make_backend({"backend": "anthropic" if api == "anthropic" else
                            "openai_compatible", "options": backend_options(
                                api, "http://127.0.0.1:9",
                                pricing={model: {**BASE, "batch_discount": 0.4}})})
    assert backend.batch_factor() == pytest.approx(0.6)  # type: ignore[attr-defined]
