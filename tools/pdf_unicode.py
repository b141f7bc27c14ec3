"""Make the text of Chromium's PDFs search and copy as the reader typed it.

Chromium writes a font's ToUnicode map from the font's own cmap, glyph by glyph, and a
glyph that several code points share gets the lowest of them.  Noto Sans CJK draws 大 and
the Kangxi radical ⼤ (U+2F24), 页 and the radical ⻚ (U+2EDA), the en dash and the figure
dash (U+2012) with one glyph each: the printed Chinese text then extracts (and is searched
and copied) with radicals in place of some four hundred common characters.  ``preferred``
reads the font's cmap and names, for every radical or compatibility code point, the
ideograph that shares its glyph (and the en dash for the figure dash); ``fix_tounicode``
rewrites one ToUnicode CMap with it; ``fix_writer`` every one of a pypdf PdfWriter's fonts.
"""

from __future__ import annotations

import re
import subprocess

RADICALS = [(0x2E80, 0x2FDF), (0xF900, 0xFAFF)]  # CJK/Kangxi radicals, compatibility ideographs
IDEOGRAPHS = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF)]
BLOCK = re.compile(r"(\d+)\s+begin(bfchar|bfrange)(.*?)end\2", re.S)
HEX = re.compile(r"<([0-9A-Fa-f]+)>")


def _within(cp: int, ranges: list[tuple[int, int]]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def preferred(family: str = "Noto Sans CJK SC") -> dict[int, int]:
    """Code point -> the one to extract instead, from ``family``'s cmap (fontconfig finds
    the file); empty when no such font is installed."""
    from fontTools.ttLib import TTFont

    try:
        found = subprocess.run(["fc-match", "-f", "%{file}:%{index}", family], capture_output=True,
                               text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    path, _, index = found.rpartition(":")
    if family.split()[0].lower() not in path.lower():
        return {}
    cmap = TTFont(path, fontNumber=int(index or 0), lazy=True).getBestCmap()
    shared: dict[str, list[int]] = {}
    for cp, glyph in cmap.items():
        shared.setdefault(glyph, []).append(cp)
    out = {}
    for cp, glyph in cmap.items():
        if _within(cp, RADICALS):
            ideographs = [c for c in shared[glyph] if _within(c, IDEOGRAPHS)]
            if ideographs:
                out[cp] = min(ideographs)
    if 0x2012 in cmap and cmap.get(0x2013) == cmap[0x2012]:
        out[0x2012] = 0x2013
    return out


def fix_tounicode(cmap: str, mapping: dict[int, int]) -> str | None:
    """``cmap`` (a ToUnicode CMap's text) with every single-code-point target in ``mapping``
    replaced; ``None`` when nothing changes.  Ranges that hold one are written out as chars."""
    pairs: list[tuple[str, str]] = []
    changed = False
    for _, kind, body in BLOCK.findall(cmap):
        values = HEX.findall(body)
        step = 2 if kind == "bfchar" else 3
        for k in range(0, len(values) - step + 1, step):
            if kind == "bfchar":
                src, dst = values[k], values[k + 1]
                items = [(src, dst)]
            else:
                lo, hi, dst = values[k], values[k + 1], values[k + 2]
                if len(dst) != 4:  # a range onto a multi-code-unit string: leave as written
                    items = [(f"{c:0{len(lo)}X}", dst) for c in range(int(lo, 16), int(hi, 16) + 1)]
                else:
                    items = [(f"{c:0{len(lo)}X}", f"{int(dst, 16) + c - int(lo, 16):04X}")
                             for c in range(int(lo, 16), int(hi, 16) + 1)]
            for src, dst in items:
                if len(dst) == 4 and int(dst, 16) in mapping:
                    dst, changed = f"{mapping[int(dst, 16)]:04X}", True
                pairs.append((src, dst))
    if not changed:
        return None
    blocks = []
    for k in range(0, len(pairs), 100):  # at most 100 entries a block (PDF 32000 9.10.3)
        chunk = pairs[k:k + 100]
        blocks.append(f"{len(chunk)} beginbfchar\n" + "".join(f"<{s}> <{d}>\n" for s, d in chunk) + "endbfchar")
    start, end = BLOCK.search(cmap).start(), list(BLOCK.finditer(cmap))[-1].end()
    return cmap[:start] + "\n".join(blocks) + cmap[end:]


def fix_writer(writer: object, mapping: dict[int, int]) -> int:
    """Rewrite the ToUnicode map of every font on ``writer``'s pages; returns how many changed."""
    from pypdf.generic import DecodedStreamObject, NameObject

    if not mapping:
        return 0
    seen, changed = set(), 0

    def fonts(resources: object) -> list[object]:
        resources = resources.get_object() if resources is not None else {}
        out = list((resources.get("/Font") or {}).values())
        for xobject in (resources.get("/XObject") or {}).values():
            if xobject.get_object().get("/Subtype") == "/Form":
                out += fonts(xobject.get_object().get("/Resources"))
        return out

    for page in writer.pages:
        for ref in fonts(page.get("/Resources")):
            key = getattr(ref, "idnum", id(ref))
            font = ref.get_object()
            if key in seen or "/ToUnicode" not in font:
                continue
            seen.add(key)
            text = fix_tounicode(font["/ToUnicode"].get_object().get_data().decode("latin-1"), mapping)
            if text is not None:
                stream = DecodedStreamObject()
                stream.set_data(text.encode("latin-1"))
                font[NameObject("/ToUnicode")] = writer._add_object(stream.flate_encode())
                changed += 1
    return changed
