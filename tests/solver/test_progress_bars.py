"""No progress bar lands in a file: ``simulate`` draws its ``tqdm`` line only when stderr is a
terminal or a notebook (``progress=True``, the rule of solves), or when forced (``"always"``)."""

from __future__ import annotations

import pytest

from mcpkit.models.stepping import simulate
from mcpkit.models.stewart_trinkle import Contact, NCPStep, Particle, PlaneSurface


def _run(progress: object) -> None:
    st = NCPStep(Particle(), [Contact(PlaneSurface(), 0.3)], 1e-3)
    sim = simulate(st, st.initial_state([0, 0, 0], [0.05, 0.0, 0.0]), 3, progress=progress)
    assert sim.solved


@pytest.mark.solver
def test_no_bar_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """Under pytest's capture stderr is not a terminal: ``True`` and the default draw nothing."""
    for setting in (True, None):
        _run(setting)
        assert "NCPStep" not in capsys.readouterr().err


@pytest.mark.solver
def test_always_draws_the_bar(capsys: pytest.CaptureFixture[str]) -> None:
    """The check above can fail: ``"always"`` writes the bar to the same captured stderr."""
    _run("always")
    assert "NCPStep" in capsys.readouterr().err
