"""Make transformers' own response parsing run on retort.

transformers binds the two names in several modules:
``transformers.utils.chat_parsing`` (and its ``response_parser``
submodule) defines them, and ``transformers.tokenization_utils_base``
imports them by name (``ResponseParser`` and ``parse_response as
_template_parse_response``), which is what tokenizers'
``parse_response`` / ``get_response_parser`` call. The serving CLI
(``transformers.cli.serving.utils``) imports ``ResponseParser`` too. Each
binding is replaced, and put back by ``unpatch_transformers``.
"""

from __future__ import annotations

import importlib
import sys

from ._native import ResponseParser, parse_response

# module -> {attribute: the retort object that replaces it}
_REQUIRED = {
    "transformers.utils.chat_parsing": {"ResponseParser": ResponseParser, "parse_response": parse_response},
    "transformers.utils.chat_parsing.response_parser": {
        "ResponseParser": ResponseParser,
        "parse_response": parse_response,
    },
    "transformers.tokenization_utils_base": {
        "ResponseParser": ResponseParser,
        "_template_parse_response": parse_response,
    },
}
# Patched only when already imported: importing them pulls in optional
# dependencies; imported later, they pick the patched names up themselves.
_IF_LOADED = {
    "transformers.cli.serving.utils": {"ResponseParser": ResponseParser},
}

# (module, attribute) -> the original object, while patched.
_originals: dict[tuple[str, str], object] = {}


def patch_transformers() -> None:
    """Makes ``transformers.utils.chat_parsing.parse_response`` /
    ``ResponseParser`` and tokenizers' ``parse_response`` /
    ``get_response_parser`` use retort. Idempotent; undone by
    ``unpatch_transformers()``. Raises ``ImportError`` without transformers."""
    targets = [(importlib.import_module(m), attrs) for m, attrs in _REQUIRED.items()]
    targets += [(sys.modules[m], attrs) for m, attrs in _IF_LOADED.items() if m in sys.modules]
    for module, attrs in targets:
        for attr, replacement in attrs.items():
            current = getattr(module, attr, None)
            if current is None or current is replacement:
                continue
            _originals.setdefault((module.__name__, attr), current)
            setattr(module, attr, replacement)


def unpatch_transformers() -> None:
    """Puts transformers' own ``parse_response`` / ``ResponseParser`` back
    wherever ``patch_transformers()`` replaced them. Idempotent."""
    for (name, attr), original in list(_originals.items()):
        module = sys.modules.get(name)
        if module is not None:
            setattr(module, attr, original)
        del _originals[(name, attr)]


def transformers_patched() -> bool:
    """Whether ``patch_transformers()`` is in effect."""
    return bool(_originals)
