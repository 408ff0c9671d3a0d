"""Render a page body for a person to read: SKILL.md-shaped Markdown or storage-format XHTML.

A draft is model-written text, so nothing in it is trusted: Markdown is escaped before it is
shaped, and XHTML keeps only an allowlist of structural tags with every attribute dropped.
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser

from django.utils.safestring import SafeString, mark_safe

ALLOWED_TAGS = frozenset(
    "p br h1 h2 h3 h4 h5 h6 ul ol li pre code strong em b i blockquote table thead tbody tr th td hr".split()
)
DROPPED_WITH_CONTENT = frozenset({"script", "style", "iframe", "object", "embed", "template"})
VOID_TAGS = frozenset({"br", "hr"})

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")


def render_body(body: str) -> SafeString:
    """Safe HTML for ``body``: XHTML when it starts with a tag, Markdown otherwise."""
    text = body or ""
    if text.lstrip().startswith("<"):
        return mark_safe(sanitize_html(text))
    return mark_safe(markdown_to_html(text))


class _Sanitizer(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.dropping = 0

    def handle_starttag(self, tag, attrs):
        if tag in DROPPED_WITH_CONTENT:
            self.dropping += 1
        elif not self.dropping and tag in ALLOWED_TAGS:
            self.out.append(f"<{tag}>")

    def handle_endtag(self, tag):
        if tag in DROPPED_WITH_CONTENT:
            self.dropping = max(0, self.dropping - 1)
        elif not self.dropping and tag in ALLOWED_TAGS and tag not in VOID_TAGS:
            self.out.append(f"</{tag}>")

    def handle_data(self, data):
        if not self.dropping:
            self.out.append(escape(data, quote=False))


def sanitize_html(text: str) -> str:
    parser = _Sanitizer()
    parser.feed(text)
    parser.close()
    return "".join(parser.out)


def _inline(text: str) -> str:
    """Escape, then the two inline marks a skill body uses: `code` and **bold**."""
    html = escape(text, quote=False)
    html = re.sub(r"`([^`]+)`", r"<code>\1</code>", html)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", html)


def markdown_to_html(text: str) -> str:
    """Headings, bullet and numbered lists, fenced code and paragraphs; anything else is text."""
    out: list[str] = []
    open_list: str | None = None
    paragraph: list[str] = []
    lines = iter(text.splitlines())

    def flush():
        nonlocal open_list
        if paragraph:
            out.append("<p>" + "<br>".join(_inline(p) for p in paragraph) + "</p>")
            paragraph.clear()
        if open_list:
            out.append(f"</{open_list}>")
            open_list = None

    for line in lines:
        if line.strip().startswith("```"):
            flush()
            code = []
            for inner in lines:
                if inner.strip().startswith("```"):
                    break
                code.append(inner)
            out.append("<pre><code>" + escape("\n".join(code), quote=False) + "</code></pre>")
            continue
        heading, bullet, numbered = _HEADING.match(line), _BULLET.match(line), _NUMBERED.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif bullet or numbered:
            kind = "ul" if bullet else "ol"
            if paragraph or open_list != kind:
                flush()
                out.append(f"<{kind}>")
                open_list = kind
            item = bullet or numbered
            assert item is not None
            out.append(f"<li>{_inline(item.group(1))}</li>")
        elif not line.strip():
            flush()
        else:
            if open_list:
                flush()
            paragraph.append(line)
    flush()
    return "\n".join(out)
