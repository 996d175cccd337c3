"""The lines every dialog shows above a URL it offers to open: the site (the registrable
domain, with its punycode form beside the Unicode one), the host when it says more, and
each look-alike warning, from :func:`portico.policy.url_review.review_url`."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtWidgets import QLabel, QVBoxLayout

from portico.policy.url_review import UrlReview, review_url
from portico.text import visible
from portico.ui.dialogs.base import selectable_label
from portico.ui.palette import set_tone


@dataclass
class UrlLines:
    review: UrlReview
    site_label: QLabel
    host_label: QLabel | None = None
    warning_labels: list[QLabel] = field(default_factory=list)


def add_url_lines(layout: QVBoxLayout, url: str, *, what: str = "The site is") -> UrlLines:
    review = review_url(url)
    site = selectable_label(visible(f"{what} {review.site}"))
    site.setAccessibleName("site")
    font = site.font()
    font.setBold(True)
    site.setFont(font)
    layout.addWidget(site)
    lines = UrlLines(review, site)
    if review.host and review.host != (review.registrable_domain or review.host):
        lines.host_label = selectable_label(visible(f"Host: {review.host_line}"))
        lines.host_label.setAccessibleName("host")
        layout.addWidget(lines.host_label)
    for warning in review.warnings:
        label = selectable_label(visible(f"Warning: {warning}"))
        set_tone(label, "error")
        label.setAccessibleName("warning")
        lines.warning_labels.append(label)
        layout.addWidget(label)
    return lines
