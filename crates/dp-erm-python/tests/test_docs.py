"""The Python code blocks of docs/python.md run as written against the installed package
(a doc example that raised would be the first thing a new user meets)."""

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "python.md"


def _blocks():
    if not DOC.exists():  # a test run outside the repository
        return []
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


BLOCKS = _blocks()


def test_the_page_has_its_examples():
    if not DOC.exists():
        pytest.skip(f"{DOC} not found (tests run outside the repository)")
    assert len(BLOCKS) >= 2, f"expected the worked example and the calculator in {DOC}"


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_block_runs(index):
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter("ignore")
        exec(compile(BLOCKS[index], f"{DOC.name} block {index}", "exec"), {})
