"""Number the chapter's tables (and figures) in JupyterLab as the site does: 表 1, not "Table 1:".

jupyterlab-myst 2.7 builds a caption's number from a template it hard-codes (its copy of
mystmd's ``${Kind} %s:``), with no setting and no frontmatter option that reaches it (the
frontmatter's ``numbering`` only changes cross-references). binder/postBuild runs this file once,
in the environment Binder made from binder/requirements.txt (where jupyterlab-myst is pinned):
it rewrites that one template in the extension's bundle so that a table reads 表 %s and a figure
图 %s (Sphinx's numfig_format in Chinese, as on the site); every other kind is left as it was.

Run again, it finds the bundle already rewritten and says so.  If the template is not where this
version of jupyterlab-myst keeps it (another version), it changes nothing and says why on stderr;
tests/test_binder_reading.py then fails on the English labels, so a version bump cannot hide it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# The minified template in mystmd's caption numbering (jupyterlab-myst 2.7.0):
# kind ? `${upperFirst(kind)} %s:` : "Figure %s:" (a no-break space before %s)
TEMPLATE = re.compile(r"(?P<kind>\w+)\?`\$\{(?P<upper>\w+)\((?P=kind)\)\}:`:\"Figure[ \u00a0]%s:\"")
CHINESE = '{table:"表 %s",figure:"图 %s"}'
MARK = CHINESE + "["


def bundles() -> list[Path]:
    """jupyterlab-myst's static JavaScript files, in every folder JupyterLab reads extensions from."""
    from jupyter_core.paths import jupyter_path

    found = []
    for folder in jupyter_path("labextensions"):
        static = Path(folder) / "jupyterlab-myst" / "static"
        if static.is_dir():
            found += sorted(static.glob("*.js"))
    return found


def rewrite(text: str) -> tuple[str, int]:
    """``text`` with the caption template made Chinese for tables and figures, and how many were."""
    def chinese(m: re.Match) -> str:
        kind, upper = m["kind"], m["upper"]
        return f'{kind}?({CHINESE}[{kind}]||`${{{upper}({kind})}}:`):"图 %s"'
    return TEMPLATE.subn(chinese, text)


def main() -> int:
    files = bundles()
    if not files:
        print("zh_captions: jupyterlab-myst is not installed here (no labextensions/jupyterlab-myst/static): "
              "nothing to change", file=sys.stderr)
        return 0
    done = already = 0
    for path in files:
        text = path.read_text("utf-8")
        if MARK in text:
            already += 1
            continue
        new, count = rewrite(text)
        if count:
            path.write_text(new, "utf-8")
            done += count
    if done or already:
        print(f"zh_captions: tables and figures in JupyterLab are numbered 表 %s / 图 %s "
              f"({'rewritten now' if done else 'already rewritten'}: {files[0].parent})")
        return 0
    print(f"zh_captions: did not find jupyterlab-myst's caption template in {files[0].parent} "
          "(another version than binder/requirements.txt pins?); its tables keep the English "
          "'Table 1:' label", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
