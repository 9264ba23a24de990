"""binder/zh_captions.py: jupyterlab-myst's caption numbers in Chinese (表 1, 图 1), as the site's.

The rewrite is run on the template as jupyterlab-myst 2.7.0 minifies it and the result is
evaluated by Node for each kind; tests/test_binder_reading.py checks what JupyterLab and
Notebook 7 then show.  Quick tier: no Jupyter, no browser."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "binder"))
import zh_captions  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from test_twin_node import node_eval  # noqa: E402

# mystmd's caption template as jupyterlab-myst 2.7.0's static/8352.*.js holds it (a no-break space
# in "Figure %s:"), with its helper io() that upper-cases the kind.
BUNDLE = ('function io(e){"code"===e&&(e="program");const t=e.includes(":")?e.split(":")[1]:e;'
          'return`${t.slice(0,1).toUpperCase()}${t.slice(1)}\u00a0%s`}'
          'function tpl(a,o){return !o||"equation"!==a&&"subequation"!==a?o?"({subEnumerator})":'
          'a?`${io(a)}:`:"Figure\u00a0%s:":"(%s)"}')


def templates(bundle: str) -> dict:
    kinds = ["table", "figure", "code", "equation", ""]
    out = node_eval(bundle + f";console.log(JSON.stringify({json.dumps(kinds)}.map(k => tpl(k, false))))")
    return dict(zip(kinds, json.loads(out)))


def test_tables_and_figures_are_numbered_in_chinese_and_other_kinds_stay():
    before = templates(BUNDLE)
    assert before["table"] == "Table\u00a0%s:"  # the snippet is the English original
    new, count = zh_captions.rewrite(BUNDLE)
    assert count == 1
    after = templates(new)
    assert after["table"] == "表 %s" and after["figure"] == "图 %s" and after[""] == "图 %s"
    assert after["code"] == before["code"] == "Program\u00a0%s:" and after["equation"] == before["equation"]


def test_a_rewritten_bundle_is_left_alone(tmp_path, monkeypatch, capsys):
    static = tmp_path / "jupyterlab-myst" / "static"
    static.mkdir(parents=True)
    (static / "8352.js").write_text(BUNDLE, "utf-8")
    monkeypatch.setattr(zh_captions, "bundles", lambda: sorted(static.glob("*.js")))
    assert zh_captions.main() == 0
    once = (static / "8352.js").read_text("utf-8")
    assert zh_captions.MARK in once and "rewritten now" in capsys.readouterr().out
    assert zh_captions.main() == 0
    assert (static / "8352.js").read_text("utf-8") == once and "already rewritten" in capsys.readouterr().out


@pytest.mark.parametrize("found", [False, True])
def test_another_version_changes_nothing_and_says_why(tmp_path, monkeypatch, capsys, found):
    static = tmp_path / "jupyterlab-myst" / "static"
    static.mkdir(parents=True)
    other = BUNDLE.replace("`${io(a)}:`", "`${io(a)}.`")  # a template this file does not know
    (static / "8352.js").write_text(other, "utf-8")
    monkeypatch.setattr(zh_captions, "bundles", lambda: sorted(static.glob("*.js")) if found else [])
    assert zh_captions.main() == 0
    assert (static / "8352.js").read_text("utf-8") == other
    err = capsys.readouterr().err
    assert ("did not find jupyterlab-myst's caption template" in err and "'Table 1:'" in err) if found \
        else "not installed here" in err
