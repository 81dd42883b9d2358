"""The documentation site: built with ``-W``, opened in headless Chromium, internal links checked.

Marked ``docs`` (excluded from the default run): ``pip install -e ".[docs]"`` then
``pytest -m docs``. The build executes the tutorials and gallery cards (myst-nb, cached in
``docs/_build/.jupyter_cache``). The browser check needs Debian's ``chromium``
(``apt-get install chromium``) and skips with the reason when it is absent.
"""

from __future__ import annotations

import html.parser
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
OUT = DOCS / "_build" / "html"
FIRST_TUTORIAL = "tutorials/01_complementarity_in_ten_minutes.html"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--virtual-time-budget=15000",
]


@pytest.fixture(scope="module")
def site() -> Path:
    """Build the site once with warnings as errors (``sphinx-build -W -b html docs docs/_build/html``)."""
    pytest.importorskip("myst_nb", reason='the docs extra is not installed (pip install -e ".[docs]")')
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(DOCS), str(OUT)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    print(f"docs build: {time.perf_counter() - t0:.1f} s")
    return OUT


def test_site_builds_with_every_section(site: Path) -> None:
    for page in ("index.html", FIRST_TUTORIAL, "gallery/index.html", "api/index.html", "benchmarks.html"):
        assert (site / page).is_file(), page
    tutorials = sorted((site / "tutorials").glob("*.html"))
    assert len(tutorials) >= 6, [t.name for t in tutorials]
    # executed notebooks: the first tutorial shows the LCP's solution computed at build time
    text = (site / FIRST_TUTORIAL).read_text(encoding="utf-8")
    assert "0.33333333 0.33333333" in text and "cell_output" in text
    # MathJax is served from the site itself (no CDN: the check below runs offline)
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert "_static/mathjax/tex-chtml.js" in (site / "index.html").read_text(encoding="utf-8")


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        for key in ("href", "src"):
            if a.get(key) and tag in {"a", "img", "link", "script"}:
                self.links.append(a[key] or "")


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_no_broken_internal_links(site: Path) -> None:
    """Every relative href/src of every built page names an existing file (and anchor)."""
    pages = sorted(site.rglob("*.html"))
    parsed = {page: _parse(page) for page in pages}
    broken: list[str] = []
    checked = 0
    for page, p in parsed.items():
        for link in p.links:
            u = urlsplit(link)
            if u.scheme or link.startswith(("//", "mailto:", "javascript:")):
                continue  # external: not checked (the network is closed)
            target = page if not u.path else (page.parent / unquote(u.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {link}")
            elif u.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(u.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)} -> {link} (no such anchor)")
    assert checked > 100
    assert not broken, "\n".join(broken[:50])


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if found:
            return found
    pytest.skip("Chromium is not installed (Debian: apt-get install chromium); browser check skipped")


def _run_chromium(exe: str, args: list[str], profile: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip


@pytest.mark.parametrize("page", ["index.html", FIRST_TUTORIAL])
def test_math_renders_in_a_real_browser(site: Path, page: str, tmp_path: Path) -> None:
    """Chromium loads the page offline, MathJax typesets every formula, and a screenshot is taken."""
    exe = _chromium()
    url = (site / page).as_uri()
    with tempfile.TemporaryDirectory() as profile:
        dom = _run_chromium(exe, ["--dump-dom", url], profile)
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout
    n_math = text.count("<mjx-container")
    n_source = (site / page).read_text(encoding="utf-8").count('class="math notranslate')
    assert n_source > 0, "the page has no math to check"
    assert n_math >= n_source, f"MathJax typeset {n_math} of {n_source} formulas on {page}"
    assert "<mjx-merror" not in text, f"MathJax reported a TeX error on {page}"
    shot = tmp_path / (Path(page).stem + ".png")
    with tempfile.TemporaryDirectory() as profile:
        proc = _run_chromium(exe, [f"--screenshot={shot}", "--window-size=1280,1600", url], profile)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, "blank or missing screenshot"
    keep = os.environ.get("MCPKIT_DOCS_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
