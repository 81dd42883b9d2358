r"""IPOPT settings of the warm-started subproblems of a homotopy, by profile.

Subproblem :math:`k > 0` of a homotopy starts from the primal-dual point
:math:`(x_{k-1}, \lambda_{k-1}, z_{k-1})` of subproblem :math:`k - 1`: IPOPT's
``warm_start_init_point=yes`` takes the multipliers as given, the ``warm_start_*`` pushes keep
the iterates as close to their bounds as the previous solution was, and a small initial barrier
parameter :math:`\mu_0` keeps IPOPT from first moving back to the central path. A profile
(:class:`WarmStart`, ``SolveOptions.warm_start``) names one such set; the reformulation's own
additions and the user's ``ipopt_options`` come on top of it, in that order.
"""

from __future__ import annotations

from typing import Any

from mcpkit.solving.options import WarmStart

#: The ``warm_start_*`` settings every profile shares: multipliers taken as given, primal and
#: dual iterates pushed off their bounds by at most 1e-9.
_WARM_POINT: dict[str, Any] = {
    "warm_start_init_point": "yes",
    "warm_start_bound_push": 1e-9,
    "warm_start_bound_frac": 1e-9,
    "warm_start_mult_bound_push": 1e-9,
    "warm_start_slack_bound_frac": 1e-9,
    "warm_start_slack_bound_push": 1e-9,
}


#: IPOPT settings of each :class:`WarmStart` profile, by IPOPT name.
WARM_START_PROFILES: dict[WarmStart, dict[str, Any]] = {
    WarmStart.STANDARD: {**_WARM_POINT, "mu_init": 1e-5},
    WarmStart.BEST_OF_TWO: {**_WARM_POINT, "mu_init": 1e-5},
    WarmStart.ADAPTIVE: {
        **_WARM_POINT, "mu_init": 1e-4, "mu_strategy": "adaptive", "mu_oracle": "quality-function",
    },
}  # fmt: skip


def warm_start_options(profile: WarmStart | str = WarmStart.STANDARD) -> dict[str, Any]:
    """A copy of the IPOPT settings of ``profile`` (:data:`WARM_START_PROFILES`)."""
    return dict(WARM_START_PROFILES[WarmStart.parse(profile)])
