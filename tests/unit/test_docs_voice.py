"""The user pages read as a library's documentation, not a work diary.

``docs/*.md`` and ``docs/tutorials/*.md`` (and the gallery cards) name no seed numbers ("seed 004":
cite the paper by its authors and title), no session numbers, no "(not investigated)" or
"reported to the lead", and no git commit hashes: history belongs to the git log, and measured
baselines to ``docs/benchmarks.md``, the one page allowed to name a commit. A hex word is a
commit hash only when this repository knows it (``git cat-file -e``), so hex colours or digests
are not flagged; without git (a source archive) only the textual patterns are checked.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: Pages where history may stay: measured baselines (benchmarks.md) name the commit they ran on.
HISTORY_PAGES = {"benchmarks.md"}

DIARY = {
    "seed number": re.compile(r"\bseeds?\s+0\d\d\b", re.I),
    "session number": re.compile(r"\bsessions?\s+\d+\b", re.I),
    "(not investigated)": re.compile(r"not investigated", re.I),
    "reported to the lead": re.compile(r"reported to the lead", re.I),
}
HEX = re.compile(r"(?<![\w#/.-])[0-9a-f]{7,40}(?![\w/-])")


def user_pages() -> list[Path]:
    pages = sorted(DOCS.glob("*.md")) + sorted((DOCS / "tutorials").glob("*.md"))
    pages += sorted((DOCS / "gallery").glob("*.md"))
    return [p for p in pages if p.name not in HISTORY_PAGES]


def diary_phrases(text: str) -> list[str]:
    """``"what: match"`` for every diary phrase of ``text``."""
    return [f"{what}: {m.group(0)!r}" for what, rx in DIARY.items() for m in rx.finditer(text)]


def hex_words(text: str) -> set[str]:
    """Hex words of 7 to 40 characters with at least one digit and one letter (commit-hash shaped)."""
    return {w for w in HEX.findall(text) if re.search(r"\d", w) and re.search(r"[a-f]", w)}


def is_commit(word: str) -> bool:
    r = subprocess.run(["git", "cat-file", "-e", f"{word}^{{commit}}"], cwd=ROOT, capture_output=True)
    return r.returncode == 0


def test_patterns_catch_diary_text() -> None:
    """The checks can fail: each pattern finds its phrase, and not an ordinary sentence."""
    text = "as in seed 004 (session 17, not investigated; reported to the lead) #a1b2c3d colour"
    assert len(diary_phrases(text)) == 4
    assert diary_phrases("Berard, Nguyen, Trinkle and Anderson, 2008; seeded random radii") == []
    assert hex_words("commit 3b83e39 and colour #a1b2c3d, word deadbeef, 1234567") == {"3b83e39"}


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_user_page_has_no_diary_phrases(page: Path) -> None:
    found = diary_phrases(page.read_text())
    assert not found, f"{page.relative_to(ROOT)}: " + "; ".join(found)


def _commits_named(pages: list[Path]) -> set[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git checkout: commit hashes cannot be told from other hex words")
    if not is_commit("HEAD"):
        pytest.skip("git cannot read this checkout's history")
    return {
        f"{p.relative_to(ROOT)}: {w}" for p in pages for w in sorted(hex_words(p.read_text())) if is_commit(w)
    }


def test_user_pages_name_no_commits() -> None:
    found = _commits_named(user_pages())
    assert not found, "commit hashes outside docs/benchmarks.md: " + ", ".join(sorted(found))
