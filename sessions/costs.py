"""What exams cost (issue #35, "cost in plain sight"): the priced provider usage of sessions,
read for the pages and the API that staff look at.

The bot prices each session's usage as it runs (``bot.usage.flush_usage`` with
``VIVA_PRICING``) into the session's ``bot_usage`` row: a total, a currency, per
``component:provider:model`` the counters and the cost, and the keys no price was found for.
This module reads those rows through the session's ``bot_usage`` relation (``sessions`` stands
below ``bot`` and imports nothing of it) and sums them: for one session, or for many (a
sitting, a cohort) with the mean per exam. Usage without a price is *flagged*, never hidden:
its cost is counted as zero and its keys are listed, so a total with unpriced usage is a lower
bound and says so. Sessions with no usage (not started, text exams with the offline examiner
before any usage was flushed) count as exams with no cost recorded.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Final

from sessions.models import ExamSession

COMPONENTS: Final = ("llm", "stt", "tts")
"""The priced components, in the order pages list them."""
CENT_PLACES: Final = Decimal("0.0001")


@dataclass(frozen=True, slots=True)
class ProviderCost:
    """The cost of one ``component:provider:model``."""

    component: str
    provider: str
    model: str
    cost: Decimal
    priced: bool = True
    """False when the price table has no price for it (its cost counts as zero)."""


@dataclass(frozen=True, slots=True)
class ExamCost:
    """The cost of one or more exams in one currency."""

    currency: str
    exams: int
    """Exams counted (with or without recorded usage)."""
    priced_exams: int
    """Exams with recorded usage."""
    total: Decimal
    by_component: dict[str, Decimal] = field(default_factory=dict)
    by_provider: tuple[ProviderCost, ...] = ()
    unpriced: tuple[str, ...] = ()
    """``component:provider:model`` keys used without a price (their cost counts as zero)."""

    @property
    def per_exam(self) -> Decimal:
        """The mean cost of an exam with recorded usage."""
        if not self.priced_exams:
            return Decimal("0")
        return (self.total / self.priced_exams).quantize(CENT_PLACES)

    def as_json(self) -> dict[str, object]:
        """The API's form: amounts as decimal strings, so no float rounding reaches a client."""
        return {
            "currency": self.currency,
            "exams": self.exams,
            "examsWithUsage": self.priced_exams,
            "total": str(self.total.quantize(CENT_PLACES)),
            "perExam": str(self.per_exam),
            "byComponent": {
                name: str(amount.quantize(CENT_PLACES))
                for name, amount in self.by_component.items()
            },
            "byProvider": [
                {
                    "component": item.component,
                    "provider": item.provider,
                    "model": item.model,
                    "cost": str(item.cost.quantize(CENT_PLACES)),
                    "priced": item.priced,
                }
                for item in self.by_provider
            ],
            "unpriced": list(self.unpriced),
            "complete": not self.unpriced,
        }


def _amount(value: object) -> Decimal:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return Decimal("0")


def costs_of(session_ids: Iterable[uuid.UUID | str]) -> list[ExamCost]:
    """The cost of the sessions ``session_ids``, one :class:`ExamCost` per currency used (the
    site's pricing has one; an old row may carry another), the most used first. Empty when
    none of them has recorded usage. Callers pass sessions the user may already see."""
    rows = list(
        ExamSession.objects.filter(pk__in=list(session_ids)).values_list(
            "bot_usage__currency", "bot_usage__cost", "bot_usage__breakdown", "bot_usage__unpriced"
        )
    )
    exams = len(rows)
    by_currency: dict[str, list[tuple[object, object, object]]] = {}
    for currency, cost, breakdown, unpriced in rows:
        if currency is not None:
            by_currency.setdefault(str(currency), []).append((cost, breakdown, unpriced))
    return [
        _summed(currency, exams, used)
        for currency, used in sorted(by_currency.items(), key=lambda item: -len(item[1]))
    ]


def _summed(currency: str, exams: int, used: list[tuple[object, object, object]]) -> ExamCost:
    total = Decimal("0")
    components = dict.fromkeys(COMPONENTS, Decimal("0"))
    providers: dict[tuple[str, str, str], Decimal] = {}
    unpriced: set[str] = set()
    for cost, breakdown, missing in used:
        total += _amount(cost)
        for name, entry in (breakdown if isinstance(breakdown, dict) else {}).items():
            component, provider, model = [*str(name).split(":", 2), "", ""][:3]
            amount = _amount(entry.get("cost", "0") if isinstance(entry, dict) else "0")
            components[component] = components.get(component, Decimal("0")) + amount
            key = (component, provider, model)
            providers[key] = providers.get(key, Decimal("0")) + amount
        unpriced.update(str(key) for key in (missing if isinstance(missing, list) else []))
    return ExamCost(
        currency=currency,
        exams=exams,
        priced_exams=len(used),
        total=total,
        by_component=components,
        by_provider=tuple(
            ProviderCost(
                component=c, provider=p, model=m, cost=amount, priced=f"{c}:{p}:{m}" not in unpriced
            )
            for (c, p, m), amount in sorted(providers.items())
        ),
        unpriced=tuple(sorted(unpriced)),
    )


def cost_of(session_id: uuid.UUID | str) -> ExamCost | None:
    """The cost of one session, or None when it has no recorded usage."""
    found = costs_of([session_id])
    return found[0] if found else None
