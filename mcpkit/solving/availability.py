"""Run-time detection of backends and solvers (``mcpkit info``).

Nothing is downloaded and nothing is cached across processes: every check looks at what is
installed now. IPOPT through CasADi is always present after ``pip install``; an ``ipopt``
executable (for Pyomo) and PATH are optional.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from mcpkit.errors import SolverNotAvailableError

PATH_HOWTO = (
    "PATH is not available. Get it in one of two ways:\n"
    "  * pip install gamspy            (bundles PATH under a demo license with size limits), or\n"
    "  * put the `pathampl` executable on your PATH (PATH's AMPL interface, used through "
    "Pyomo's 'path' solver).\n"
    "Without PATH, method='auto' uses mcpkit's own engines (newton, then lemke for LCPs, then the "
    "scholtes homotopy); or ask for one of them by name."
)


@dataclass(frozen=True)
class Component:
    """One backend or solver as found on this machine."""

    name: str
    """Short name (``casadi``, ``ipopt-casadi``, ``ipopt-exe``, ``path-ampl``, ``path-gamspy``)."""
    available: bool
    """Whether mcpkit can use it now."""
    version: str
    """Version string, or ``""`` when unknown or absent."""
    location: str
    """Where it was found (module file or executable path), or why it is absent."""


def _module_version(name: str) -> tuple[str, str] | None:
    try:
        mod = importlib.import_module(name)
    except Exception:  # any import failure means "not usable"
        return None
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = str(getattr(mod, "__version__", ""))
    return version, str(getattr(mod, "__file__", ""))


def idaes_bin_dirs() -> list[Path]:
    """Folders where ``idaes get-extensions`` puts solver binaries (if any exist)."""
    dirs: list[Path] = []
    env = os.environ.get("IDAES_BIN_DIR")
    if env:
        dirs.append(Path(env))
    try:
        import idaes  # type: ignore[import-not-found]

        dirs.append(Path(idaes.bin_directory))  # type: ignore[attr-defined]
    except Exception:
        pass
    dirs.append(Path.home() / ".idaes" / "bin")
    return [d for d in dirs if d.is_dir()]


def find_executable(name: str) -> str | None:
    """Locate ``name`` on ``PATH`` or in idaes-pse's binary folders."""
    found = shutil.which(name)
    if found:
        return found
    for d in idaes_bin_dirs():
        cand = shutil.which(name, path=str(d))
        if cand:
            return cand
    return None


@functools.lru_cache(maxsize=1)
def _gamspy_path() -> tuple[bool, str, str]:
    info = _module_version("gamspy")
    if info is None:
        return False, "", "gamspy not installed (pip install gamspy)"
    try:
        import gamspy.utils as gutils  # type: ignore[import-not-found]

        try:  # gamspy >= 1.x wants the gamspy_base system directory
            import gamspy_base  # type: ignore[import-not-found]

            installed = gutils.getInstalledSolvers(gamspy_base.directory)
        except (ImportError, TypeError, AttributeError):
            installed = gutils.getInstalledSolvers()  # older gamspy: no argument
        solvers = [s.upper() for s in installed]
    except Exception as exc:  # pragma: no cover - depends on the gamspy build
        return False, info[0], f"gamspy present but its solver list failed: {exc}"
    if "PATH" not in solvers:
        return False, info[0], f"gamspy {info[0]} has no PATH solver (installed: {solvers})"
    refused = _gamspy_probe()
    if refused:
        return False, info[0], f"gamspy {info[0]}: PATH refused a 1-variable probe ({refused})"
    return True, info[0], info[1]


def _gamspy_probe() -> str:
    """Solve ``0 <= x ⟂ x - 1 >= 0`` with GAMSPy's PATH; ``""`` if it works, else why not.

    GAMSPy bundles PATH under a demo licence that expires (the one seen here on 2026-11-26) and
    refuses models over a size limit; an expired licence must read as "PATH unavailable", so
    availability is decided by a real (tiny) solve, once per process.
    """
    try:
        import gamspy as gp  # type: ignore[import-not-found]

        c = gp.Container()
        x = gp.Variable(c, "x", type="positive")
        e = gp.Equation(c, "e", type="nonbinding")
        e[...] = x - gp.Number(1) == gp.Number(0)
        model = gp.Model(c, "mcpkit_probe", problem="MCP", matches={e: x})
        model.solve(solver="PATH")
        value = float(x.toValue())
    except Exception as exc:  # licence, installation or execution failures all mean "unusable"
        return (str(exc).splitlines() or [type(exc).__name__])[0][:200] or type(exc).__name__
    if abs(value - 1.0) > 1e-6:
        return f"probe returned x = {value}, not 1 (status {model.status})"
    return ""


def ipopt_executable() -> str | None:
    """Path of a usable ``ipopt`` executable (system PATH or idaes-pse), or None."""
    return find_executable("ipopt")


def pathampl_executable() -> str | None:
    """Path of the ``pathampl`` executable, or None."""
    return find_executable("pathampl")


def path_available() -> bool:
    """Whether PATH can be used (``pathampl`` executable or GAMSPy's PATH)."""
    return pathampl_executable() is not None or _gamspy_path()[0]


def gamspy_status() -> tuple[bool, str]:
    """``(usable, where or why not)`` for GAMSPy's bundled PATH."""
    ok, version, where = _gamspy_path()
    return ok, (f"gamspy {version} ({where}); demo licence, size-limited" if ok else where)


def path_status() -> tuple[bool, str]:
    """``(usable, where or why not)`` for PATH through any interface."""
    exe = pathampl_executable()
    if exe is not None:
        return True, f"pathampl {exe}"
    ok, where = gamspy_status()
    return ok, (where if ok else f"no pathampl executable on PATH; {where}")


def path_unavailable_reason() -> str | None:
    """``None`` when PATH can be used, else why not (the probe's words for a refused licence):
    the reason a test that needs PATH skips with."""
    ok, where = path_status()
    return None if ok else where


def require_path() -> str:
    """Which PATH interface to use (``"ampl"`` or ``"gamspy"``); raise
    :class:`~mcpkit.errors.SolverNotAvailableError` with the reason and the how-to if none."""
    if pathampl_executable() is not None:
        return "ampl"
    if _gamspy_path()[0]:
        return "gamspy"
    raise SolverNotAvailableError(f"PATH is not usable here: {path_status()[1]}.\n{PATH_HOWTO}")


def components() -> list[Component]:
    """Every backend and solver mcpkit knows about, with availability, version and location."""
    out: list[Component] = []
    for mod in ("casadi", "pyomo", "sympy", "numpy", "scipy"):
        info = _module_version(mod)
        out.append(
            Component(mod, info is not None, info[0] if info else "", info[1] if info else "not installed")
        )
    cas = _module_version("casadi")
    ipopt_ok = False
    where = "casadi not installed"
    if cas is not None:
        import casadi as ca

        ipopt_ok = bool(ca.has_nlpsol("ipopt"))
        where = f"casadi plugin in {Path(cas[1]).parent}" if ipopt_ok else "casadi lacks the ipopt plugin"
    out.append(Component("ipopt-casadi", ipopt_ok, "bundled with casadi " + (cas[0] if cas else ""), where))
    exe = ipopt_executable()
    out.append(
        Component(
            "ipopt-exe",
            exe is not None,
            "",
            exe
            or "no `ipopt` executable on PATH or in idaes-pse's bin folder "
            "(Pyomo models are routed to CasADi's IPOPT instead)",
        )
    )
    pexe = pathampl_executable()
    out.append(Component("path-ampl", pexe is not None, "", pexe or "no `pathampl` executable on PATH"))
    g_ok, g_ver, g_where = _gamspy_path()
    out.append(Component("path-gamspy", g_ok, g_ver, g_where))
    return out
