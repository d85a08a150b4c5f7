"""A booking's quantity is a decimal in ASCII digits with at most three decimals, read exactly, never a
guess and never rounded; exact unit conversions are booked."""

from __future__ import annotations

from decimal import Decimal

import pytest

from inventory_ai.errors import InvalidInput
from inventory_ai.services.units import parse_quantity
from tests.support.bookings import BODY, OUT, book, movements


@pytest.mark.parametrize("quantity", ["5_0", "٥", "５", "1_000", "0x10", "5e", ".", "1,5"])
def test_a_quantity_not_written_in_ascii_decimal_digits_is_refused(client, auth, quantity):
    auth.login("admin")
    before = movements()
    response = book(client, {**BODY, "quantity": quantity})
    assert response.status_code == 422, response.get_data(as_text=True)[:300]
    assert "digits 0-9" in str(response.json["error"]), response.json
    assert movements() == before
    with pytest.raises(InvalidInput, match="digits 0-9"):  # the assistant's path: the same rule
        parse_quantity(quantity)


@pytest.mark.parametrize(
    ("quantity", "value"), [(5, "5"), (5.5, "5.5"), ("12.125", "12.125"), ("1E+3", "1E+3")]
)
def test_ordinary_quantities_are_read_exactly(quantity, value):
    assert parse_quantity(quantity) == Decimal(value)


@pytest.mark.parametrize(
    ("quantity", "unit"), [("0.0005", "kg"), ("0.0004", "kg"), ("0.5", "g"), ("1.0001", None)]
)
def test_more_than_three_decimals_is_refused_never_rounded(admin_client, quantity, unit):
    body = dict(OUT, quantity=quantity, **({"unit": unit} if unit else {}))
    response = book(admin_client, body)
    assert response.status_code == 422 and "at most 3 decimals" in response.json["error"]["message"]


def test_three_decimals_and_exact_unit_conversions_are_booked(admin_client):
    assert book(admin_client, dict(OUT, quantity="0.001")).status_code == 201
    response = book(admin_client, dict(OUT, quantity="3", unit="斤"))
    assert response.status_code == 201 and response.json["quantity"] == "1.5"
