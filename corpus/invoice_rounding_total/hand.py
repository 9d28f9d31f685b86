from decimal import ROUND_HALF_UP, Decimal
lines = [(3, Decimal("12.45"), Decimal("0.07")), (7, Decimal("2.45"), Decimal("0.19")), (1, Decimal("38.00"), Decimal("0.07")), (5, Decimal("41.15"), Decimal("0.19"))]
total = sum(qty * price * (1 + vat) for qty, price, vat in lines).quantize(Decimal("0.01"), ROUND_HALF_UP)
assert total == Decimal("345.87"), f"total mismatch: expected 345.87, got {total}"
