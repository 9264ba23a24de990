"""The Pages workflow's supply chain (issue 26, item 11): every action pinned by a full commit SHA
(a tag can be moved to other code), and each job holding only the permissions it needs: the build
job, which installs 100+ packages and runs their code, may read the repository and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "pages.yml"
TEXT = WORKFLOW.read_text(encoding="utf-8")
FLOW = yaml.safe_load(TEXT)


def test_every_action_is_pinned_by_a_full_commit_sha_with_its_tag_named():
    uses = re.findall(r"^\s*(?:- )?uses: (\S+)(.*)$", TEXT, re.M)
    assert len(uses) == 4
    for action, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action
        assert re.fullmatch(r"\s+# v\d+\.\d+\.\d+", comment), (action, comment)


def test_each_job_holds_only_the_permissions_it_needs():
    assert FLOW["permissions"] == {}
    assert FLOW["jobs"]["build"]["permissions"] == {"contents": "read"}
    assert FLOW["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
