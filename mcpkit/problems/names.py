"""Names shared by every layer: the CasADi function name of any label."""

from __future__ import annotations

import re


def casadi_name(name: str) -> str:
    """A valid CasADi function name from any label (letters first, single underscores).

    Examples
    --------
    >>> casadi_name("my MCP (v2)")
    'my_MCP_v2'
    >>> casadi_name("3-body")
    'f_3_body'
    """
    out = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]", "_", name)).strip("_")
    return out if out[:1].isalpha() else f"f_{out}"
