"""The built site works where a teacher puts it (README, "部署" and "课堂离线使用").

* **A static host under a sub-path**, as GitHub Pages serves a project site
  (``https://<user>.github.io/f11/``): the output folder copied as it is under ``/f11/``
  of a plain static server (Python's ``http.server``, no rewrites, no index magic beyond
  ``index.html``).  Every page loads with no missing file and no script error, the root
  redirect lands on the first page, the lab computes and the Chinese search finds a word.
* **A zip opened from file://** in a classroom without network: the folder zipped, unzipped
  elsewhere and opened from disk.  The chapter's lab computes, and search lists the chapter
  (its summaries need fetch(), which browsers refuse on file://; the result links still come).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
import urllib.parse
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.build, pytest.mark.browser]

PAGES = ["book/index.html", "book/f11-attention.html", "book/lab.html", "book/notation.html",
         "search.html", "genindex.html"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def host(built_site, tmp_path_factory):
    """The site copied to ``/f11/`` of a plain static server; yields its base URL."""
    root = tmp_path_factory.mktemp("host")
    shutil.copytree(built_site, root / "f11")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/f11/"
    server.shutdown()


def _lab_answers(page) -> None:
    cell = page.locator('[data-attention-lab] td[data-matrix="A"][data-row="1"][data-col="0"]').first
    before = cell.get_attribute("data-value")
    slider = page.locator('[data-attention-lab] input[data-param="Wq[0,0]"]').first
    slider.focus()
    for _ in range(4):
        slider.press("ArrowRight")
    page.wait_for_function("([el, v]) => el.getAttribute('data-value') !== v", arg=[cell.element_handle(), before])


def test_under_a_sub_path_every_page_loads_whole_and_the_lab_and_search_work(host, new_page):
    rec = new_page(fresh=True)  # every file requested: none may escape the sub-path
    rec.page.goto(host, wait_until="networkidle")  # the root redirect
    assert rec.page.url == host + "book/index.html"
    for page in PAGES:
        rec.page.goto(host + page, wait_until="networkidle")
        assert rec.page.title(), page
    # Everything from the /f11/ folder: no absolute "/_static/..." escaping the sub-path.
    escaped = [u for u in rec.requests if u.startswith(host.split("/f11/")[0]) and "/f11/" not in u]
    assert escaped == []
    assert rec.failed == [] and rec.console_errors == [] and rec.page_errors == []
    assert rec.external_requests() == []
    rec.page.goto(host + "book/f11-attention.html", wait_until="networkidle")
    _lab_answers(rec.page)
    rec.page.goto(host + "search.html?q=" + urllib.parse.quote("因果掩码"))
    rec.page.wait_for_selector("#search-results li a[href*='f11-attention']", timeout=15000)


def test_a_zip_of_the_site_opened_from_disk_computes_and_searches(built_site, tmp_path, new_page):
    archive = tmp_path / "f11-site.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(built_site.rglob("*")):
            if f.is_file():
                z.write(f, Path("f11") / f.relative_to(built_site))
    unpacked = tmp_path / "classroom"
    with zipfile.ZipFile(archive) as z:
        z.extractall(unpacked)
    site = (unpacked / "f11").resolve()
    rec = new_page()
    rec.page.goto((site / "index.html").as_uri(), wait_until="load")
    rec.page.wait_for_url("**/book/index.html")
    rec.page.goto((site / "book" / "f11-attention.html").as_uri(), wait_until="load")
    rec.page.wait_for_selector('[data-attention-lab][data-lab-ready="true"]', timeout=15000)
    _lab_answers(rec.page)
    assert rec.page_errors == []
    rec.page.goto((site / "search.html").as_uri() + "?q=" + urllib.parse.quote("份额"))
    rec.page.wait_for_selector("#search-results li a[href*='f11-attention']", timeout=15000)
