"""Every conformance vector, shared and the repository's own, through the
package: the whole text and every chunking, compared with the reference's
results as Python objects."""

from __future__ import annotations

import pytest

import retort
from vectors import (
    OWN_CASES,
    OWN_TEMPLATES,
    SHARED,
    SHARED_CASES,
    SHARED_FILES,
    SHARED_TEMPLATES,
    load_cases,
    problems,
    run,
    strict_equal,
)


def _params():
    params = []
    for name in SHARED_FILES:
        path = SHARED_CASES / f"{name}.jsonl"
        if path.exists():
            params += [pytest.param(c, id=f"{name}:{c['id']}") for c in load_cases(path, SHARED_TEMPLATES)]
        else:
            params.append(
                pytest.param(
                    None,
                    id=f"{name}:absent",
                    marks=pytest.mark.skip(reason=f"{path} is absent: the shared vectors are not beside the repository"),
                )
            )
    for path in sorted(OWN_CASES.glob("*.jsonl")):
        params += [pytest.param(c, id=f"{path.stem}:{c['id']}") for c in load_cases(path, OWN_TEMPLATES)]
    return params


def _parser(case):
    return retort.ResponseParser(case["template"], prefix=case["prefix"], tools=case.get("tools"))


@pytest.mark.parametrize("case", _params())
def test_vector(case):
    expected = case["expected"]
    if "template_error" in expected:
        with pytest.raises(ValueError) as info:
            retort.Template(case["template"])
        # The reference's loader raised ValueError with this message; so
        # must every entry point.
        assert str(info.value) == expected["template_error"]["message"]
        with pytest.raises(ValueError) as info:
            retort.ResponseParser(case["template"], prefix=case["prefix"])
        assert str(info.value) == expected["template_error"]["message"]
        return
    whole = expected["whole"]
    found = problems(whole, run(_parser, case, [case["text"]]), "whole")
    for i, chunks in enumerate(case.get("chunkings", [])):
        found += problems(whole, run(_parser, case, chunks), f"stream #{i}")
    # The one-shot function gives the same message (or raises the same class).
    try:
        message = retort.parse_response(case["text"], case["template"], prefix=case["prefix"], tools=case.get("tools"))
    except Exception as e:  # noqa: BLE001
        if whole.get("error", {}).get("type") != type(e).__name__ or whole["error"]["message"] != str(e):
            found.append(f"parse_response: unexpected {type(e).__name__}: {e}")
    else:
        if "error" in whole or not strict_equal(whole["message"], message):
            found.append(f"parse_response: {message!r}")
    assert not found, "\n".join(found)


def test_shared_vectors_present_or_reported():
    """Says loudly when the shared vectors were not found, so a run without
    them cannot pass for a full one unnoticed."""
    if not SHARED_CASES.exists():
        pytest.skip(f"no shared vectors at {SHARED} (set RETORT_SHARED)")
    assert all((SHARED_CASES / f"{n}.jsonl").exists() for n in SHARED_FILES)
