"""Safe rendering of model output: nothing in an answer makes the browser fetch anything.

Markdown answers render with raw HTML escaped and remote images shown as links (an `<img>` pointing at a
model-chosen URL is a zero-click exfiltration channel: the query string carries whatever the model read).
`-f html` answers go through nh3 (Rust's ammonia: a maintained allow-list sanitizer) with remote image
sources removed. Both libraries load on first use, so `import a0nb` stays fast."""
from __future__ import annotations

import html as _html
from typing import Any

_INLINE = ("data:",)  # image sources that cause no request


def _is_inline(url: str) -> bool:
    return url.strip().lower().startswith(_INLINE)


def image_link(alt: str, url: str) -> str:
    """A remote image as a link the user may choose to open (nothing is fetched when rendered)."""
    label = alt.strip() or "image"
    return (f'<a href="{_html.escape(url, quote=True)}" rel="noopener noreferrer nofollow" target="_blank">'
            f"[image: {label}]</a>")


_RENDER: Any = None


def markdown_html(text: str) -> str:
    """Markdown to HTML: raw HTML escaped, remote images as links, unsafe link schemes dropped (mistune)."""
    global _RENDER
    if _RENDER is None:
        import mistune

        class Renderer(mistune.HTMLRenderer):
            def image(self, text: str, url: str, title: str | None = None) -> str:
                if _is_inline(url):
                    return super().image(text, url, title)
                return image_link(text, url)

        _RENDER = mistune.create_markdown(escape=True, renderer=Renderer(escape=True),
                                          plugins=["strikethrough", "table"])
    return str(_RENDER(text))


def _attribute(element: str, attribute: str, value: str) -> str | None:
    if attribute in ("src", "srcset", "poster", "background") and not _is_inline(value):
        return None
    return value


def sanitize_html(text: str) -> str:
    """HTML from the model, safe to display: an allow-list of tags and attributes (no script, style, iframe,
    forms or event handlers), and no remote image sources."""
    import nh3
    return str(nh3.clean(text, attribute_filter=_attribute, link_rel="noopener noreferrer nofollow"))


__all__ = ["markdown_html", "sanitize_html", "image_link"]
