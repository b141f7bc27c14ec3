"""parse_nccl_tests on hostile logs (issue 17 §1): no row lost, no value silently wrong.

The reference in every test is the parse of the untouched log (whose rows
tests/test_measure.py checks against their own algbw = size/time and busbw = algbw × factor):
a log with extra lines inside its tables must give the same rows; a log with one cell
damaged must either give the right value or raise ``ValueError`` naming that line and column.
"""
from __future__ import annotations

import re

import pytest

from commbook.measure import LOG_DIR, parse_nccl_tests

H100 = (LOG_DIR / "h100x8_nvswitch_nccl2.29.2_nccl-tests.log").read_text(encoding="utf-8")
A100 = (LOG_DIR / "a100x8_nvswitch_nccl-tests_allreduce.txt").read_text(encoding="utf-8")
OLD = (LOG_DIR / "multinode" / "a100x128_coreweave_ib_sharp_allreduce.log").read_text(encoding="utf-8")
GLOO = (LOG_DIR.parents[0] / "gloo" / "gloo_p2.log").read_text(encoding="utf-8")
INFO = "node-1:4180122:4180399 [0] NCCL INFO Channel 00/32 : 0 1 2 3 4 5 6 7"


def _row_lines(text: str) -> list[int]:
    """0-based indices of the table rows: lines that start with a digit (the logs' rows)."""
    return [i for i, ln in enumerate(text.splitlines()) if re.match(r"\s*\d", ln)]


def _insert_after(text: str, picks: dict[int, str]) -> str:
    """Insert picks[k] after the k-th row line of the text."""
    lines = text.splitlines()
    rows = _row_lines(text)
    out = []
    for i, ln in enumerate(lines):
        out.append(ln)
        for k, extra in picks.items():
            if i == rows[k]:
                out.append(extra)
    return "\n".join(out) + "\n"


def _rows(runs):
    return [r.rows for r in runs]


def _error(text: str) -> str:
    with pytest.raises(ValueError) as info:
        parse_nccl_tests(text)
    return str(info.value)


# ---------------------------------------------------------------- rows after a non-row line
@pytest.mark.parametrize("extra", [INFO, "", "#", "# a comment inside the table",
                                   "[1,0]<stdout>:warning: something", "   ",
                                   "2026-12-01 20:14:15,123 INFO bench: still running"],
                         ids=["nccl-info", "blank", "hash", "comment", "mpi-prefix", "spaces", "logging"])
@pytest.mark.parametrize("name,text", [("h100", H100), ("a100", A100), ("old", OLD), ("gloo", GLOO)])
def test_rows_after_a_non_row_line_are_kept(name, text, extra):
    """Lines inserted after the 1st, 3rd and 5th row of the first table (and the 12th row
    of the log): every row of the untouched log is still parsed, with the same values."""
    ref = parse_nccl_tests(text)
    n = len(_row_lines(text))
    picks = {k: extra for k in (0, 2, 4, 11) if k < n - 1}
    got = parse_nccl_tests(_insert_after(text, picks))
    assert _rows(got) == _rows(ref)
    assert [r.collective for r in got] == [r.collective for r in ref]
    if extra.strip("# "):
        assert any(extra.strip("# ") in note for note in got[0].notes)


def test_nccl_debug_info_interleaved_everywhere():
    """NCCL_DEBUG=INFO prints lines between any two rows: all rows kept, the INFO lines as notes."""
    n = len(_row_lines(H100))
    got = parse_nccl_tests(_insert_after(H100, {k: INFO for k in range(n)}))
    assert _rows(got) == _rows(parse_nccl_tests(H100))
    assert sum(INFO in note for note in got[0].notes) == len(got[0].rows)


# ---------------------------------------------------------------- a truncated last row
def _cuts(text: str, which: int = -1):
    """The text cut at every character of its ``which``-th row line (no newline after)."""
    lines = text.splitlines()
    i = _row_lines(text)[which]
    head = "\n".join(lines[:i]) + "\n"
    row = lines[i]
    for k in range(len(row.rstrip()) - 1, len(row.rstrip().split()[0]), -1):
        yield i + 1, head + row[:k], row[:k]


@pytest.mark.parametrize("name,text", [("a100", A100), ("old", OLD), ("h100", H100), ("gloo", GLOO)])
def test_truncated_last_row_is_refused(name, text):
    """Cut anywhere inside the last row: never a row with a cut value.  Either the cut row is
    refused (ValueError naming its line and a column) or, when the cut only removed spaces,
    the row equals the untouched one."""
    ref = parse_nccl_tests(text)
    last_row = ref[-1].rows[-1]
    lines = text.splitlines()
    idx = _row_lines(text)[-1]
    for lineno, cut, row_text in _cuts(text):
        tail = "\n".join(lines[idx + 1:])
        for variant in (cut, cut + "\n", cut + "\n" + tail):
            try:
                runs = parse_nccl_tests(variant)
            except ValueError as e:
                assert f"line {lineno}" in str(e), (row_text, str(e))
                assert "column" in str(e), (row_text, str(e))
                continue
            assert runs[-1].rows[-1] == last_row, (row_text, runs[-1].rows[-1])


def test_truncated_busbw_of_the_a100_log():
    """The issue's example: the A100 log cut after '... 46.80 1.40 2' (busbw was 2.45)."""
    lines = A100.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.strip().startswith("65_536"))
    cut = "\n".join(lines[:i]) + "\n" + lines[i][:lines[i].index("2.45") + 1]
    assert cut.endswith("46.80    1.40    2")
    msg = _error(cut)
    assert f"line {i + 1}" in msg and "busbw" in msg


def test_truncated_error_column_of_the_old_layout():
    """'5e-07' cut to '5e-0' would read 5.0, '5' would read 5.0: refused."""
    for keep in ("5e-0", "5"):
        cut = OLD.rstrip().rsplit("\n", 3)[0]                     # up to the last row
        cut = cut[:cut.rindex("5e-07")] + keep
        msg = _error(cut)
        assert "error" in msg and re.search(r"line \d+", msg), msg


# ---------------------------------------------------------------- damaged cells
TABLE = ("#       size         count      type   redop    root     time   algbw   busbw  #wrong\n"
         "        1024           256     float     sum      -1    10.00    0.10    0.18       0\n"
         "        2048           512     float     sum      -1    10.24    0.20    0.35       0\n"
         "        4096          1024     float     sum      -1    11.00    0.37    0.65       0\n")
COLS = ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong")


def _damage(col: str, value: str, row: int = 1) -> str:
    lines = TABLE.splitlines()
    cells = lines[1 + row].split()
    cells[COLS.index(col)] = value
    lines[1 + row] = "  ".join(cells)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("col,value", [
    ("time", "1,5"), ("busbw", "0,35"), ("algbw", "nan"), ("busbw", "inf"), ("time", "-nan"),
    ("time", "-10.24"), ("algbw", "-0.20"), ("busbw", "-0.35"), ("time", "Infinity"),
    ("size", "2K"), ("size", "2,048"[:3]), ("size", "-2048"), ("size", "2048.0"), ("count", "5,12"),
    ("count", "-512"), ("#wrong", "-1"), ("#wrong", "1.5"), ("root", "-2"), ("size", "nan"),
    ("time", "10.24.1"), ("busbw", "0.35e"),
])
def test_damaged_cell_is_refused_with_line_and_column(col, value):
    msg = _error(_damage(col, value))
    assert "line 3" in msg and repr(col) in msg, msg


@pytest.mark.parametrize("col,value,expect", [
    ("size", "2_048", 2048), ("size", "2,048", 2048), ("count", "1,024", None),
])
def test_digit_separators_read_right(col, value, expect):
    text = _damage(col, value) if col == "size" else _damage(col, value, row=2)
    (run,) = parse_nccl_tests(text)
    if col == "size":
        assert run.rows[1].size == expect
    else:
        assert run.rows[2].count == 1024


def test_a_row_that_is_not_a_row_inside_a_table_is_not_dropped():
    """A size column with '2K' used to end the table: the rows after it were notes."""
    msg = _error(_damage("size", "2K", row=0))
    assert "line 2" in msg and "'size'" in msg


def test_root_minus_one_and_zero_bandwidth_are_fine():
    (run,) = parse_nccl_tests(_damage("algbw", "0.00", row=0).replace("0.18", "0.00"))
    assert run.rows[0].root == -1 and run.rows[0].unstated.algbw == 0.0


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_any_newline(newline):
    """Windows (CRLF) and old Mac (CR) line ends: the same runs as with LF."""
    for text in (H100, A100, OLD):
        assert parse_nccl_tests(text.replace("\n", newline)) == parse_nccl_tests(text)
