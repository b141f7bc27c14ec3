"""figure_png records what the browser check needs (issue 19 §1): the smallest font size
of the text a figure draws, its width in inches and the dpi, as PNG text chunks.

The chunks are read back here with a small reader of the PNG format (signature, then
length / type / data / CRC-32 chunks, PNG spec §5), independent of the writer, and the
sizes are the ones the figures below were built with."""
from __future__ import annotations

import struct
import zlib

import pytest
from matplotlib.figure import Figure

from commbook.book import plots

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    assert png[:8] == SIGNATURE, "not a PNG"
    out, pos = [], 8
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + data), f"bad CRC in chunk {kind!r}"
        out.append((kind, data))
        pos += 12 + length
    assert out[0][0] == b"IHDR" and out[-1][0] == b"IEND"
    return out


def _text(png: bytes) -> dict[str, str]:
    return dict(tuple(d.decode("latin-1").split("\0", 1)) for k, d in _chunks(png) if k == b"tEXt")


def _size_px(png: bytes) -> tuple[int, int]:
    kind, data = _chunks(png)[0]
    return struct.unpack(">II", data[:8])


def _figure(smallest: float) -> Figure:
    fig = Figure(figsize=(5.0, 3.0))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label="line")
    ax.set_xlim(0, 1)
    ax.tick_params(labelsize=11)
    ax.set_title("title", fontsize=14)
    ax.legend(fontsize=12)
    ax.annotate("smallest", (0.5, 0.5), fontsize=smallest)
    ax.text(0.2, 0.8, "hidden", fontsize=2.0, visible=False)  # not drawn: not counted
    ax.text(0.2, 0.2, "   ", fontsize=3.0)  # blank: nothing to read
    off = fig.add_axes((0.7, 0.7, 0.2, 0.2))
    off.tick_params(labelsize=2.5)  # its ticks are never drawn: axis("off")
    off.axis("off")
    return fig


@pytest.mark.parametrize("smallest", [6.5, 9.0])
def test_png_records_smallest_font_width_and_dpi(smallest):
    png = plots.figure_png(_figure(smallest), dpi=120)
    meta = _text(png)
    assert float(meta["commbook:min-font-pt"]) == smallest
    assert float(meta["commbook:width-in"]) == 5.0
    assert meta["commbook:dpi"] == "120"
    assert _size_px(png) == (600, 360)  # 5 in x 3 in at 120 dpi


def test_tick_labels_count_only_inside_the_view():
    fig = Figure(figsize=(4.0, 3.0))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_title("t", fontsize=12)
    ax.tick_params(labelsize=7.5)
    assert float(_text(plots.figure_png(fig))["commbook:min-font-pt"]) == 7.5
    ax.set_xticks([])
    ax.set_yticks([])
    assert float(_text(plots.figure_png(fig))["commbook:min-font-pt"]) == 12.0


def test_table_cells_count():
    fig = Figure(figsize=(4.0, 2.0))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.set_title("t", fontsize=12)
    table = ax.table(cellText=[["a", "b"]], loc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(8.0)
    assert float(_text(plots.figure_png(fig))["commbook:min-font-pt"]) == 8.0


def test_a_figure_without_text_says_so():
    fig = Figure(figsize=(2.0, 2.0))
    fig.add_subplot().axis("off")
    assert _text(plots.figure_png(fig))["commbook:min-font-pt"] == "none"


def test_pil_reads_the_same_chunks():
    """The chunks are standard tEXt: an ordinary PNG reader (Pillow) sees them too."""
    import io

    from PIL import Image

    png = plots.figure_png(_figure(7.0))
    assert Image.open(io.BytesIO(png)).text["commbook:min-font-pt"] == "7"


def test_line_end_labels_do_not_overlap():
    """Three lines ending at one point: their end labels are spread apart (no two drawn
    boxes intersect), each in its line's colour, just right of the axes."""
    fig = Figure(figsize=(5.0, 3.0))
    ax = fig.add_subplot()
    lines = [ax.plot([0, 1], [k, 1.0], color=c, label=f"line {k}")[0]
             for k, c in enumerate(("red", "green", "blue"))]
    texts = plots.label_line_ends(ax, lines)
    plots.figure_png(fig)  # lays out and draws (at the PNG's dpi)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = FigureCanvasAgg(fig).get_renderer()  # one renderer at the figure's own dpi,
    fig.draw(renderer)                              # for positions and boxes alike
    boxes = [t.get_window_extent(renderer) for t in texts]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert [t.get_color() for t in texts] == [ln.get_color() for ln in lines]
    assert min(b.x0 for b in boxes) >= ax.get_window_extent().x1
