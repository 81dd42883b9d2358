"""Contact and friction models declared through the core MCP layer (installed as ``mcpkit.models``).

* :mod:`~mcpkit.models.stepping`: one MCP per time step, ``simulate`` with per-step verdicts and
  one failure rule; step maps declared once (``DeclaredStep``) for simulation and horizons;
* :mod:`~mcpkit.models.compiled_rollout`: whole trajectories (and batches of them) of a declared step
  model in one compiled CasADi call, :func:`rollout`;
* :mod:`~mcpkit.models.arrays`: the array namespaces (NumPy, CasADi) those step maps are written
  against;
* :mod:`~mcpkit.models.ecp`: equivalent-contact-point planar sliding (Xie and Chakraborty);
* :mod:`~mcpkit.models.stewart_trinkle`: Stewart–Trinkle NCP/LCP time stepping and the vibrating
  plate (Berard et al.);
* :mod:`~mcpkit.models.fclib`: FCLIB 3-D friction-contact problems;
* :mod:`~mcpkit.models.friction`: contact patches, limit surfaces, the configuration-space
  friction cone and planar LuGre (Goyal et al.; Erdmann; Arslan Waltersson and Karayiannidis).
"""

from mcpkit.models.compiled_rollout import (
    CompiledRollout,
    RolloutJacobian,
    RolloutOptions,
    RolloutResult,
    rollout,
)

__all__ = ["CompiledRollout", "RolloutJacobian", "RolloutOptions", "RolloutResult", "rollout"]
