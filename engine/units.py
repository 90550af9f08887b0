"""Units of the rule language: dimensions as exponent vectors and exact scales."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

BASE_DIMENSIONS = ("tokens", "USD", "s")


@dataclass(frozen=True, slots=True)
class Dimension:
    """A product of base dimensions with integer exponents (tokens, USD, s)."""

    exponents: tuple[int, int, int] = (0, 0, 0)

    def __mul__(self, other: Dimension) -> Dimension:
        a, b = self.exponents, other.exponents
        return Dimension((a[0] + b[0], a[1] + b[1], a[2] + b[2]))

    def __truediv__(self, other: Dimension) -> Dimension:
        a, b = self.exponents, other.exponents
        return Dimension((a[0] - b[0], a[1] - b[1], a[2] - b[2]))

    @property
    def dimensionless(self) -> bool:
        """True for counts and fractions."""
        return self.exponents == (0, 0, 0)

    def render(self) -> str:
        """Human form such as `USD`, `tokens`, `USD/tokens` or `number`."""
        pairs = list(zip(BASE_DIMENSIONS, self.exponents, strict=True))
        top = "*".join(_power(name, exp) for name, exp in pairs if exp > 0)
        bottom = "*".join(_power(name, -exp) for name, exp in pairs if exp < 0)
        if not top and not bottom:
            return "number"
        return (top or "1") + (f"/{bottom}" if bottom else "")


def _power(name: str, exponent: int) -> str:
    return name + (f"^{exponent}" if exponent > 1 else "")


NUMBER = Dimension()
TOKENS = Dimension((1, 0, 0))
MONEY = Dimension((0, 1, 0))
TIME = Dimension((0, 0, 1))


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit as written: its dimension and the factor that converts it to base units."""

    name: str
    dimension: Dimension
    scale: Fraction


UNITS: dict[str, Unit] = {
    unit.name: unit
    for unit in (
        Unit("tokens", TOKENS, Fraction(1)),
        Unit("Mtokens", TOKENS, Fraction(1_000_000)),
        Unit("USD", MONEY, Fraction(1)),
        Unit("USD/Mtokens", MONEY / TOKENS, Fraction(1, 1_000_000)),
        Unit("s", TIME, Fraction(1)),
        Unit("min", TIME, Fraction(60)),
        Unit("h", TIME, Fraction(3600)),
        Unit("%", NUMBER, Fraction(1, 100)),
    )
}


def to_base(value: Fraction, unit: str | None) -> tuple[Fraction, Dimension]:
    """`value` expressed in base units, with its dimension."""
    if unit is None:
        return value, NUMBER
    known = UNITS[unit]
    return value * known.scale, known.dimension
