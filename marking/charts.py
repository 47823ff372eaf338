"""Server-side SVG charts for the cohort view (no script, no CDN). Each function returns SVG
markup built only from numbers and escaped labels, with a ``<title>`` and ``role="img"`` so a
screen reader announces it; the page also shows the numbers in a table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

LEVEL_COLOURS = {
    "excellent": "#1a6b33",
    "satisfactory": "#0b5cad",
    "partial": "#8a5a00",
    "absent": "#b3261e",
}


def histogram_svg(counts: Sequence[int], *, width: int = 560, height: int = 200) -> SafeString:
    """Exam scores in ten 10-point bins."""
    top = max(counts) if counts and max(counts) > 0 else 1
    pad_left, pad_bottom, pad_top = 32, 28, 12
    plot_w, plot_h = width - pad_left - 8, height - pad_bottom - pad_top
    bar_w = plot_w / max(1, len(counts))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-labelledby="hist-title"><title id="hist-title">Distribution of exam scores '
        f"(candidates per 10-point band)</title>",
        f'<line x1="{pad_left}" y1="{pad_top + plot_h}" x2="{width - 8}" y2="{pad_top + plot_h}" '
        'stroke="#4a5159"/>',
    ]
    for index, count in enumerate(counts):
        h = plot_h * count / top
        x = pad_left + index * bar_w
        y = pad_top + plot_h - h
        parts.append(
            f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{bar_w - 4:.1f}" height="{h:.1f}" '
            f'fill="#0b5cad"><title>{index * 10}-{index * 10 + 10}%: {count}</title></rect>'
        )
        if count:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle" '
                f'font-size="11">{count}</text>'
            )
        parts.append(
            f'<text x="{x + bar_w / 2:.1f}" y="{height - 10}" text-anchor="middle" '
            f'font-size="10">{index * 10}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers only


def levels_svg(levels: Mapping[str, int], label: str, *, width: int = 360) -> SafeString:
    """One stacked bar: how many candidates reached each level of a target."""
    total = sum(levels.values()) or 1
    height = 26
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-levels" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
        f"<title>{escape(label)}: "
        + ", ".join(f"{escape(k)} {v}" for k, v in levels.items())
        + "</title>"
    ]
    x = 0.0
    for name in ("excellent", "satisfactory", "partial", "absent"):
        count = levels.get(name, 0)
        w = width * count / total
        if w > 0:
            parts.append(
                f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" '
                f'fill="{LEVEL_COLOURS[name]}"><title>{name}: {count}</title></rect>'
            )
            if w > 18:
                parts.append(
                    f'<text x="{x + w / 2:.1f}" y="17" text-anchor="middle" font-size="12" '
                    f'fill="#ffffff">{count}</text>'
                )
        x += w
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - escaped labels, numbers


def followups_svg(nodes: Sequence[Mapping[str, Any]], *, width: int = 560) -> SafeString:
    """Mean follow-ups per question, with the min-max range as a whisker."""
    rows = [n for n in nodes if n["candidates"]]
    if not rows:
        return mark_safe("")
    top = max((n["followUps"]["max"] or 0) for n in rows) or 1
    row_h, label_w = 28, 200
    height = row_h * len(rows) + 8
    plot_w = width - label_w - 40
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
        "<title>Follow-up questions per question: mean and range across candidates</title>"
    ]
    for index, node in enumerate(rows):
        y = 4 + index * row_h
        stats = node["followUps"]
        mean, low, high = stats["mean"] or 0, stats["min"] or 0, stats["max"] or 0
        parts.append(
            f'<text x="0" y="{y + 17}" font-size="12">{escape(node["title"][:30])}</text>'
            f'<rect x="{label_w}" y="{y + 6}" width="{plot_w * mean / top:.1f}" height="14" '
            f'fill="#0b5cad"><title>mean {mean}</title></rect>'
            f'<line x1="{label_w + plot_w * low / top:.1f}" y1="{y + 13}" '
            f'x2="{label_w + plot_w * high / top:.1f}" y2="{y + 13}" stroke="#1b1f23" '
            'stroke-width="2"/>'
            f'<text x="{label_w + plot_w + 6}" y="{y + 17}" font-size="12">{mean:g}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - escaped labels, numbers
