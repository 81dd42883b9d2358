r"""Mathematical programs with complementarity constraints (MPCCs), in one package.

.. math::

    \min_x f(x; p)\ \text{s.t.}\ g_l \le g(x; p) \le g_u,\ x_l \le x \le x_u,\
    H_l \le H(x; p) \le H_u \perp G(x; p),\ G_l \le G(x; p) \le G_u .

* :class:`MPCC` (in :mod:`mcpkit.problems.mpcc`, the problem layer, so that lowerings and solvers
  import it without running this package): the one MPCC class (general pair bounds; the
  standard :math:`0 \le G \perp H \ge 0` by default) and its residuals;
* :class:`ToStandardMPCC` (in :mod:`mcpkit.lowering.standard`): the one lowering to the standard
  form; :mod:`mcpkit.lowering.from_pyomo`: Pyomo models with complementarity as an MPCC;
* :mod:`~mcpkit.lowering.pyomo_nl`: the Pyomo backend's lowering (CasADi graph -> Pyomo -> NL -> CasADi);
* :mod:`~mcpkit.orchestration.mpcc_solver`: :class:`MPCCSolver` / :func:`solve_mpcc` with a backend switch,
  returning :class:`~mcpkit.solving.result.MPCCResult`;
* :mod:`~mcpkit.stationarity.certificate`: weak, C, M, S and B stationarity of a point;
* :mod:`~mcpkit.stationarity.lpec`, :mod:`~mcpkit.stationarity.refine`: the LPEC (enumeration or MILP) and the
  B-stationarity refinement every solve runs (:class:`RefineOptions`);
* :mod:`~mcpkit.formats.mpcc_json`: the CasADi MPCC JSON format (nosnoc, MPECLib, MacMPEC, NOSBENCH).

``mcpkit.solve(mpcc)`` and ``mcpkit solve FILE.json`` end here.
"""

from mcpkit.formats.mpcc_json import load_mpcc_json
from mcpkit.lowering.standard import ToStandardMPCC
from mcpkit.orchestration.mpcc_solver import MPCCSolver, solve_mpcc
from mcpkit.problems.mpcc import MPCC
from mcpkit.problems.names import casadi_name
from mcpkit.stationarity.refine import RefineOptions

__all__ = [
    "MPCC", "MPCCSolver", "RefineOptions", "ToStandardMPCC", "casadi_name", "load_mpcc_json", "solve_mpcc",
]  # fmt: skip
