r"""The better of two homotopy runs: the standard warm starts here, the adaptive ones on another core.

With ``SolveOptions.warm_start="best_of_two"`` an MPCC solve forks one child process before its
homotopy. The child runs the same homotopy (same reformulations, fallbacks, start and time limit)
with the warm-start profile :attr:`~mcpkit.solving.options.WarmStart.ADAPTIVE`; this process
runs it with :attr:`~mcpkit.solving.options.WarmStart.STANDARD`. The two profiles end at
different local solutions on some problems, each better on some (``docs/mpcc_engine.md``).
:func:`better` keeps, of the two outcomes :math:`o_s` (standard) and :math:`o_a` (adaptive),

.. math::

    o_a \ \text{if}\ \bigl(o_a\ \text{meets tol} \wedge \neg\, o_s\ \text{meets tol}\bigr)
    \ \vee\ \bigl(\text{both meet tol} \wedge f(o_a) < f(o_s) - 10^{-8}\max(1, |f(o_s)|)\bigr)
    \ \vee\ \bigl(\text{neither} \wedge \operatorname{key}(o_a) < \operatorname{key}(o_s)\bigr),

else :math:`o_s`. The caller's time limit :math:`S` bounds both: the child's homotopy gets
:data:`CHILD_SHARE` :math:`\cdot S` from the same start, and this process waits for it at most
until then (plus :data:`GRACE_SECONDS`, never past :math:`S`), then ends it and keeps its own
outcome; the rest of :math:`S` is left to the refinement of the point kept. Without ``fork`` or with one
core there is no child: the standard run alone, and the result's ``extra["warm_start"]`` says so.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcpkit.homotopy.loop import HomotopyOutcome

#: Seconds past the child's limit that this process waits for its outcome (its homotopy returns
#: within its limit; this covers pickling the outcome and the pipe), never past the caller's limit.
GRACE_SECONDS = 1.0

#: The child's share of the caller's time limit: a call whose child ran to the whole limit ended
#: after it (NOSBENCH-large CPWF_001_030 and DISCM_001_033, 61 s of 60, on a loaded machine), with
#: no time left to refine the point kept. This share is a hard limit, not an internal budget:
#: the child is another process, whose outcome the caller can only use if it arrives before the
#: caller's own limit with time to refine it, so it is the caller's limit carried over to the
#: child. Inside the child every decision counts IPOPT iterations as in this process
#: (:class:`~mcpkit.homotopy.recovery.RecoveringHomotopy`), so a child that ends within its
#: limit ends the same way under any load.
CHILD_SHARE = 0.8

#: The adaptive point replaces the standard one when its objective is lower by more than this
#: times ``max(1, |f|)`` (two runs ending on one point differ in the last digits).
BETTER_RTOL = 1e-8


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def available() -> bool:
    """Whether a second start can run beside this process: ``fork`` and at least two cores."""
    return "fork" in multiprocessing.get_all_start_methods() and cores() >= 2


def better(
    standard: HomotopyOutcome,
    adaptive: HomotopyOutcome | None,
    objective: Callable[[np.ndarray], float],
    tol: float,
) -> tuple[HomotopyOutcome, str]:
    """The outcome kept (module docstring) and which: ``"standard"`` or ``"adaptive"``."""
    if adaptive is None or adaptive.x is None:
        return standard, "standard"
    if standard.x is None:
        return adaptive, "adaptive"
    ok_s, ok_a = standard.assessment.meets(tol), adaptive.assessment.meets(tol)
    if ok_a != ok_s:
        return (adaptive, "adaptive") if ok_a else (standard, "standard")
    if ok_s:
        fs, fa = objective(standard.x), objective(adaptive.x)
        if np.isfinite(fa) and (not np.isfinite(fs) or fa < fs - BETTER_RTOL * max(1.0, abs(fs))):
            return adaptive, "adaptive"
        return standard, "standard"
    if adaptive.assessment.key(tol) < standard.assessment.key(tol):
        return adaptive, "adaptive"
    return standard, "standard"


@dataclass
class SecondStart:
    """A forked child that runs ``run()`` and sends its :class:`HomotopyOutcome` back.

    ``run`` is called in the child only (``fork``: it need not be picklable); an exception there
    is sent back as its text, and :meth:`collect` returns ``None`` with the reason in
    :attr:`note`.
    """

    run: Callable[[], HomotopyOutcome]
    process: Any = None
    conn: Any = None
    note: str = ""

    def start(self) -> SecondStart:
        """Fork the child; it runs :attr:`run` and exits."""
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe(duplex=False)
        self.conn = parent
        self.process = ctx.Process(target=_child, args=(self.run, child), daemon=True)
        self.process.start()
        child.close()
        return self

    def collect(self, deadline: float | None) -> HomotopyOutcome | None:
        """The child's outcome, waiting until ``deadline`` (perf_counter; ``None``: as long as it
        takes); then the child is ended and ``None`` returned."""
        wait = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
        try:
            if self.conn.poll(wait):
                kind, payload = pickle.loads(self.conn.recv_bytes())
                if kind == "ok":
                    return payload  # type: ignore[no-any-return]
                self.note = f"the second start failed: {payload}"
            else:
                self.note = "the second start did not finish within the time limit"
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            self.note = f"the second start ended without a result ({type(exc).__name__})"
        finally:
            self.stop()
        return None

    def stop(self) -> None:
        """End the child (if still running) and close the pipe."""
        if self.process is not None:
            if self.process.is_alive():
                self.process.terminate()
            self.process.join(timeout=5)
            self.process = None
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def child_limit(limit: float | None) -> float | None:
    """The child's time limit: :data:`CHILD_SHARE` of the caller's (``None``: none)."""
    return None if limit is None else CHILD_SHARE * limit


def wait_until(t0: float, limit: float | None) -> float | None:
    """Until when (perf_counter) the caller waits for a child started at ``t0``: its limit plus
    :data:`GRACE_SECONDS`, never past the caller's limit (``None``: no limit)."""
    if limit is None:
        return None
    return t0 + min(CHILD_SHARE * limit + GRACE_SECONDS, limit)


def _child(run: Callable[[], HomotopyOutcome], conn: Any) -> None:
    """The child's body: run, send ``("ok", outcome)`` or ``("error", text)``, exit."""
    try:
        message = ("ok", run())
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent as text
        message = ("error", f"{type(exc).__name__}: {str(exc)[:200]}")
    try:
        conn.send_bytes(pickle.dumps(message))
    finally:
        conn.close()
        os._exit(0)  # no atexit handlers or inherited finalizers of the parent
