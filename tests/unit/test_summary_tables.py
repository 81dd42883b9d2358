"""The shared summary formatter (mcpkit.solving.tables): 4 significant digits, aligned, short lists."""

from __future__ import annotations

import math

import numpy as np

from mcpkit.solving.tables import format_summary, format_table, format_value


def test_values_print_with_four_significant_digits() -> None:
    assert format_value(0.12345678901234567) == "0.1235"
    assert format_value(1.2345678e-7) == "1.235e-07"
    assert format_value(-0.0) == "0"
    assert format_value(math.nan) == "nan" and format_value(-math.inf) == "-inf"
    assert format_value(None) == "-" and format_value(True) == "True" and format_value(np.int64(7)) == "7"
    assert format_value([0.1, 2.0]) == "[0.1, 2]"


def test_long_lists_are_shortened_with_their_count() -> None:
    v = list(np.arange(30) / 3)
    assert format_value(v) == "[0, 0.3333, 0.6667, …, 9.333, 9.667] (30 values)"


def test_summary_keys_align_and_nested_parts_indent() -> None:
    text = format_summary(
        {
            "solved": True,
            "max_residual": 1.234567e-9,
            "closed_form": {"p_n": 0.0981, "v_x": 0.950950000001},
            "routes": [{"route": "a/b", "iterations": 5}, {"route": "longer/c", "iterations": 12}],
        }
    )
    lines = text.splitlines()
    assert lines[0] == "solved        True"
    assert lines[1] == "max_residual  1.235e-09"
    assert lines[2:5] == ["closed_form:", "  p_n  0.0981", "  v_x  0.951"]
    assert lines[5:] == [
        "routes:",
        "  route     iterations",
        "  a/b                5",
        "  longer/c          12",
    ]


def test_table_rows_may_miss_columns() -> None:
    assert format_table([{"a": 1}, {"b": "x"}]).splitlines() == ["a  b", "1  -", "-  x"]


def test_print_of_a_composite_result_is_its_summary_table() -> None:
    from mcpkit.solving.result import CompositeResult, ToleranceCheck

    res = CompositeResult(kind="demo:x", parts=[ToleranceCheck("error", 1e-9, 1e-6)], details={"h": 1 / 3})
    lines = str(res).splitlines()
    assert lines[0] == "kind         demo:x" and lines[-1] == "h            0.3333"
