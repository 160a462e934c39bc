"""Token prices from the plan and the cost of one call (credit §5: usage and cost).

The plan's forecaster options carry a pricing table, USD per million tokens::

    {"<model>": {"input_per_mtok": 3.0, "output_per_mtok": 15.0,
                 "cache_write_per_mtok": 3.75, "cache_read_per_mtok": 0.3}, ...}

(the two cache prices optional: a missing one is the input price), and an
optional ``"batch_discount"``: the share of every price taken off for a call
sent through the provider's batch API (Anthropic Message Batches, OpenAI
Batch: 0.5, half price). A table that does not set it gets
:data:`OFFICIAL_BATCH_DISCOUNT` (0.5) at the official endpoints
(``api.anthropic.com``, ``api.openai.com``) and 0 elsewhere (a local or
third-party server: no discount unless the table says so;
:func:`default_batch_discount`). A batch call costs ``(1 − batch_discount)``
times the formula below. The cost of
a call with ``i`` input tokens in all — of which ``w`` were written to the
provider's prompt cache and ``r`` read from it — and ``o`` output tokens is

    cost = ((i − w − r) · input + w · cache_write + r · cache_read
            + o · output) / 1 000 000   [USD],

and what caching saved is the cost of the same tokens at the input price
minus that (negative when a write was never read back). Anthropic bills a
5-minute cache write at 1.25 × and a read at 0.1 × the input price; OpenAI
writes at no extra cost and reads at 0.5 × (0.1 × for newer models).

The price is looked up under the *requested* model (the one the plan pays
for); a returned model id that differs is recorded but never re-priced. The
upper bound used by the budget (:mod:`foreseen.credit.run.budget`) is the same
formula with ``o = max_tokens``, ``i`` an over-estimate of the prompt's
tokens (:func:`prompt_token_bound`) and no cache read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from foreseen.core.errors import UserInputError

PER_MILLION = 1_000_000.0


@dataclass(frozen=True)
class Price:
    """USD per million input, output, cache-write and cache-read tokens (module docstring)."""

    input_per_mtok: float
    output_per_mtok: float
    #: None: cache writes cost the input price
    cache_write_per_mtok: float | None = None
    #: None: cache reads cost the input price
    cache_read_per_mtok: float | None = None
    #: the share of the price taken off in a batch (None: the endpoint's default)
    batch_discount: float | None = None

    def cost(self, input_tokens: int, output_tokens: int, *, cache_write_tokens: int = 0,
             cache_read_tokens: int = 0) -> float:
        """``((i − w − r)·input + w·cache_write + r·cache_read + o·output) / 10⁶``.

        ``input_tokens`` counts every input token, the cached ones included.
        """
        write = self.input_per_mtok if self.cache_write_per_mtok is None \
            else self.cache_write_per_mtok
        read = self.input_per_mtok if self.cache_read_per_mtok is None \
            else self.cache_read_per_mtok
        plain = input_tokens - cache_write_tokens - cache_read_tokens
        return (plain * self.input_per_mtok + cache_write_tokens * write
                + cache_read_tokens * read + output_tokens * self.output_per_mtok) / PER_MILLION

    def to_json(self) -> dict[str, float]:
        """The prices; a cache price only when set (tables frozen before them are unchanged)."""
        out = {"input_per_mtok": self.input_per_mtok, "output_per_mtok": self.output_per_mtok}
        if self.cache_write_per_mtok is not None:
            out["cache_write_per_mtok"] = self.cache_write_per_mtok
        if self.cache_read_per_mtok is not None:
            out["cache_read_per_mtok"] = self.cache_read_per_mtok
        if self.batch_discount is not None:
            out["batch_discount"] = self.batch_discount
        return out


CACHE_PRICES = ("cache_write_per_mtok", "cache_read_per_mtok")
#: the batch APIs' discount at the official endpoints (Anthropic and OpenAI: half price)
OFFICIAL_BATCH_DISCOUNT = 0.5
OFFICIAL_HOSTS = frozenset({"api.anthropic.com", "api.openai.com"})


def default_batch_discount(base_url: str) -> float:
    """:data:`OFFICIAL_BATCH_DISCOUNT` at an official endpoint's host, else 0 (module docstring)."""
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "").lower()
    return OFFICIAL_BATCH_DISCOUNT if host in OFFICIAL_HOSTS else 0.0


def _discount(model: str, value: Any) -> float | None:
    """A ``batch_discount`` in [0, 1), or None when absent."""
    if value is None:
        return None
    number = _price_number(model, "batch_discount", value)
    if number >= 1:
        raise UserInputError(f"pricing for {model!r}: batch_discount must be in [0, 1)"
                             " (the share of the price taken off; 0.5 is half price)")
    return number


def _price_number(model: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserInputError(f"pricing for {model!r}: {key} must be a number")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise UserInputError(f"pricing for {model!r}: {key} must be finite and >= 0")
    return number


@dataclass(frozen=True)
class PricingTable:
    """Model name → :class:`Price`; parsed from the plan's ``pricing`` option."""

    prices: Mapping[str, Price]

    @classmethod
    def from_json(cls, obj: Mapping[str, Any] | None) -> PricingTable:
        """Parse ``{model: {"input_per_mtok", "output_per_mtok"}}``; refuse anything else."""
        if obj is None:
            return cls({})
        if not isinstance(obj, Mapping):
            raise UserInputError("pricing must be an object: model -> prices")
        prices: dict[str, Price] = {}
        for model, entry in obj.items():
            if not isinstance(entry, Mapping):
                raise UserInputError(f"pricing for {model!r} must be an object")
            extra = sorted(set(entry) - {"input_per_mtok", "output_per_mtok", *CACHE_PRICES,
                                         "batch_discount"})
            if extra:
                raise UserInputError(f"pricing for {model!r}: unknown field {extra[0]!r}")
            write, read = (None if entry.get(key) is None
                           else _price_number(model, key, entry.get(key))
                           for key in CACHE_PRICES)
            prices[str(model)] = Price(
                _price_number(model, "input_per_mtok", entry.get("input_per_mtok")),
                _price_number(model, "output_per_mtok", entry.get("output_per_mtok")),
                write, read, _discount(str(model), entry.get("batch_discount")))
        return cls(prices)

    def to_json(self) -> dict[str, dict[str, float]]:
        return {model: price.to_json() for model, price in sorted(self.prices.items())}

    def price(self, model: str) -> Price | None:
        """The model's price, or None when the table does not list it."""
        return self.prices.get(model)

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None, *,
             cache_write_tokens: int | None = None,
             cache_read_tokens: int | None = None) -> float | None:
        """Cost of one call in USD; None when the model is unpriced or usage is missing."""
        price = self.price(model)
        if price is None or input_tokens is None or output_tokens is None:
            return None
        return price.cost(input_tokens, output_tokens,
                          cache_write_tokens=cache_write_tokens or 0,
                          cache_read_tokens=cache_read_tokens or 0)


    def batch_factor(self, model: str, base_url: str) -> float:
        """What a batch call pays of the online price: ``1 − batch_discount``.

        The model's ``batch_discount`` when the table sets it, else the
        endpoint's default (:func:`default_batch_discount`).
        """
        price = self.price(model)
        discount = None if price is None else price.batch_discount
        return 1.0 - (default_batch_discount(base_url) if discount is None else discount)


def prompt_token_bound(text: str) -> int:
    """An over-estimate of a prompt's token count: its UTF-8 byte count.

    Byte-level BPE tokenisers (GPT, Claude, Llama families) never produce more
    tokens than bytes, so ``len(text.encode())`` bounds the true count from
    above (plus a small allowance the caller adds for the message framing).
    """
    return len(text.encode("utf-8"))
