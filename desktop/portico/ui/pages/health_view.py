"""Health on the Overview: connect time, call latency p50 / p95 over the last hour, errors,
reconnects, a stdio process's memory, and a sparkline of the latest call latencies."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from portico.runtime.health import HealthSnapshot
from portico.ui.pages.common import esc
from portico.ui.palette import tone_color


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    ms = seconds * 1000
    return f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"


def _bytes(count: int | None) -> str:
    if count is None:
        return "—"
    mib = count / (1024 * 1024)
    return f"{mib:.1f} MiB" if mib < 1024 else f"{mib / 1024:.2f} GiB"


def health_rows(health: HealthSnapshot) -> list[tuple[str, str]]:
    calls = "no calls in the last hour" if not health.calls else f"{health.calls}"
    rows = [
        ("Connect time", _ms(health.connect_seconds)),
        ("Calls (last hour)", calls),
        ("Latency p50 / p95", f"{_ms(health.p50)} / {_ms(health.p95)}"),
        ("Errors (last hour)", str(health.errors)),
        ("Reconnects", str(health.restarts)),
    ]
    if health.memory_bytes is not None:
        rows.append(("Memory (process)", _bytes(health.memory_bytes)))
    return rows


class Sparkline(QWidget):
    """A small line of the latest call latencies, highest point at the top."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values: tuple[float, ...] = ()
        self.setAccessibleName("latency sparkline")
        self.setMinimumHeight(36)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(240, 40)

    def set_values(self, values: tuple[float, ...]) -> None:
        self.values = values
        if values:
            self.setAccessibleDescription(
                f"{len(values)} calls, from {_ms(min(values))} to {_ms(max(values))}"
            )
        self.update()

    def points(self) -> list[QPointF]:
        values = self.values
        if not values:
            return []
        rect = QRectF(self.rect()).adjusted(2, 3, -2, -3)
        top = max(values) or 1.0
        step = rect.width() / max(1, len(values) - 1)
        return [
            QPointF(rect.left() + i * step, rect.bottom() - (v / top) * rect.height())
            for i, v in enumerate(values)
        ]

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        base = self.palette().color(QPalette.ColorRole.Base)
        painter.fillRect(self.rect(), base)
        points = self.points()
        if len(points) == 1:
            points = [QPointF(2, points[0].y()), QPointF(self.width() - 2, points[0].y())]
        if not points:
            painter.setPen(tone_color("muted"))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no calls yet")
            return
        path = QPainterPath(points[0])
        for point in points[1:]:
            path.lineTo(point)
        painter.setPen(QPen(tone_color("info"), 1.6))
        painter.drawPath(path)


class HealthView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("server health")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 8, 0, 0)
        column.addWidget(QLabel("<b>Health</b>"))
        self.table = QLabel()
        self.table.setTextFormat(Qt.TextFormat.RichText)
        self.table.setAccessibleName("health figures")
        self.table.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(self.table)
        self.caption = QLabel("Latency of the latest calls")
        column.addWidget(self.caption)
        self.sparkline = Sparkline()
        column.addWidget(self.sparkline)
        self.health: HealthSnapshot | None = None

    def show_health(self, health: HealthSnapshot | None) -> None:
        self.health = health
        self.setVisible(health is not None)
        if health is None:
            return
        html = "".join(
            f"<tr><td style='padding-right:14px'><b>{esc(k)}</b></td><td>{esc(v)}</td></tr>"
            for k, v in health_rows(health)
        )
        self.table.setText(f"<table cellspacing='3'>{html}</table>")
        self.sparkline.set_values(health.recent)
