"""What a page says, read off Flutter's semantics tree, and the English words left in it."""

from __future__ import annotations

import re

from tests.unit.test_strings import ALLOWED_LATIN

# Text that is data, not words of the UI: model ids (keyframe-demo-cpr@g1-…), file names, numbers,
# paths and addresses. A token with a digit, '-', '_', '.', '/', '@' or ':' inside is such data.
_DATA = re.compile(r"[0-9\-_./@:\\]")


def screen_text(page) -> str:
    """Every label and text the semantics tree exposes (what a screen reader would say)."""
    return page.evaluate(
        """() => {
            const parts = [];
            for (const el of document.querySelectorAll('flt-semantics, flt-semantics-container, [aria-label]')) {
                const label = el.getAttribute('aria-label');
                if (label) parts.push(label);
                for (const node of el.childNodes) {
                    if (node.nodeType === Node.TEXT_NODE && node.textContent.trim()) parts.push(node.textContent);
                }
            }
            for (const el of document.querySelectorAll('flt-semantics span, flt-semantics input')) {
                parts.push(el.innerText || el.value || '');
            }
            return parts.join('\\n');
        }"""
    )


def english_words(text: str, allowed: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Latin words of two or more letters that are neither names nor data, in order of first sight."""
    seen: list[str] = []
    for token in re.split(r"[\s,;()（），。；：、“”\"'!?！？·|\[\]{}<>=+*%#~…—–]+", text):
        if not token or _DATA.search(token):
            continue
        for word in re.findall(r"[A-Za-z]{2,}", token):
            if word not in ALLOWED_LATIN and word not in allowed and word not in seen:
                seen.append(word)
    return seen
