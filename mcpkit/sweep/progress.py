"""The sweep's progress bar: rows done of the total; solved, not solved, errors, running; the rate.

A :mod:`tqdm` bar (``tqdm.auto``: a widget in notebooks) on stderr. ``running`` is the number
of tasks the scheduler has handed to workers (:meth:`distributed.Client.processing`, at most one
per worker thread), asked at most every ``poll_seconds``. With ``enabled=False`` every method does nothing.
"""

from __future__ import annotations

import time
from typing import Any

from mcpkit.sweep.tasks import ERROR_STATUS


class SweepProgress:
    """Counts of finished rows and a bar showing them.

    Attributes
    ----------
    solved, not_solved, errors
        Rows finished with a solved verdict, without one, and with an error (``status="error"``).
    skipped
        Rows already present when the sweep started (resume); counted in the bar's start.
    """

    def __init__(
        self, total: int, skipped: int = 0, *, enabled: bool = True, poll_seconds: float = 0.5
    ) -> None:
        self.total = total
        self.skipped = skipped
        self.solved = self.not_solved = self.errors = 0
        self.running = 0
        self.poll_seconds = poll_seconds
        self._last_poll = -float("inf")
        self.bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=skipped, unit="task", desc="sweep", dynamic_ncols=True)
            self._postfix()

    @property
    def done(self) -> int:
        """Rows finished in this run."""
        return self.solved + self.not_solved + self.errors

    def row(self, row: dict[str, Any]) -> None:
        """Count one finished row."""
        if row.get("status") == ERROR_STATUS:
            self.errors += 1
        elif row.get("solved"):
            self.solved += 1
        else:
            self.not_solved += 1
        if self.bar is not None:
            self.bar.update(1)
            self._postfix()

    def poll(self, client: Any) -> None:
        """Refresh ``running`` from the scheduler (at most every ``poll_seconds``)."""
        now = time.monotonic()
        if self.bar is None or now - self._last_poll < self.poll_seconds:
            return
        self._last_poll = now
        try:
            threads = client.nthreads()
            self.running = sum(min(len(v), threads.get(w, 1)) for w, v in client.processing().items())
        except Exception:  # a scheduler that does not answer: keep the last count
            return
        self._postfix()

    def _postfix(self) -> None:
        self.bar.set_postfix(
            solved=self.solved,
            not_solved=self.not_solved,
            errors=self.errors,
            running=self.running,
            refresh=False,
        )

    def close(self) -> None:
        """Close the bar."""
        if self.bar is not None:
            self.bar.close()
