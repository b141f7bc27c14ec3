"""Mirror, never copy: the Chinese prose of the book does not repeat the sources' wording.

The sources are the two seed texts in ``../shared/seeds`` (the P5 lecture and the textbook
chapter on collective communication).  The prose checked is every Chinese page
(``chapters/zh/**/*.md``, outside code cells), the markdown cells of every Chinese
exercise notebook (``exercises/zh/*.ipynb``) and the Chinese of the book layer's text files
(``code/commbook/book/texts/*.toml``: table titles, headers and notes, figure labels; each
entry is a paragraph of its own).  Headings, table rows, directive titles and
the front matter are left out: they may keep a section's title.

Both sides are reduced to their Chinese characters only: Latin words, digits,
punctuation, math and whitespace are removed, so that a copied sentence cannot hide
behind an inserted "ring", a changed number or a swapped comma.  Two checks run on that
text:

1. **Copied runs.**  Every run of ``WINDOW`` = 9 consecutive Chinese characters of a page
   is looked up among the runs of the seeds.  Nine characters is about two clauses'
   worth of content words: long enough that two independent writers rarely produce it,
   short enough that a copied clause is found even when it was cut in two by one
   changed character.  Two kinds of window are ignored, because any writer on the
   subject produces them:

   * stock phrasing: a window that occurs ``COMMON`` = 3 or more times in the seeds
     themselves (the sources' own set phrases, e.g. the name of an algorithm followed
     by a particle);
   * terminology: a window that, once the terms of ``TERMS`` (the field's standard
     names, which the book must use) are taken out, keeps fewer than ``MIN_FREE`` = 4
     characters.

2. **Paraphrased sentences.**  Sentences (split on 。！？；, on paragraph breaks and on list
   items) of at least ``MIN_SENTENCE`` = 12 Chinese characters are compared with every
   seed sentence (split on 。！？； and newlines) by ``difflib.SequenceMatcher``; the most
   similar one must have a ratio below ``MAX_RATIO`` = 0.6.  The ratio is
   2·matched / (len(a) + len(b)): at 0.6 a 20-character sentence shares 12 characters,
   in order, with a seed sentence of its own length, which is a sentence rebuilt from
   the source's clauses rather than one written anew.  Sentences written freshly on the
   same facts stay well below that: on the P5 pages when this test was written, half of
   all sentences had their closest seed sentence below 0.34 and three quarters below
   0.46.  Sentences shorter than 12 characters ("结果见下表") are too short for the ratio
   to mean anything, and a flagged pair must also share at least ``MIN_MATCHED`` = 10
   characters: once Latin words and numbers are stripped, a 12–15-character sentence
   reaches 0.6 with 8 shared characters, mostly the terms both texts must use (a
   sentence like "每个设备至少要发出 … 字节" against any seed sentence about the same
   lower bound), which is the short technical phrase any writer produces.  A multiset
   character-count bound (the ratio is at most 2·Σ min(count) / (len(a) + len(b)))
   discards almost every seed sentence before SequenceMatcher runs.

3. **Paraphrased long sentences.**  A sentence of at least ``LONG_SENTENCE`` = 20 Chinese
   characters must stay below ``LONG_MAX_RATIO`` = 0.5 against every seed sentence: a long
   sentence at 0.5 follows the source clause by clause with synonyms swapped in, which
   reads as a translation of the source rather than the book's own structure.  A sentence
   that must stay close (a definition in its standard wording, a section title in prose)
   is listed with the reason in ``tests/no_copy_allowlist.txt`` (page, the sentence's first
   12 Chinese characters, reason; tab-separated).

Where the seeds are not present, every test here skips and names the missing path;
when the environment variable CI is "true" a missing seed is a failure instead.
"""
from __future__ import annotations

import difflib
import functools
import json
import os
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"
SEED_FILES = ("000_f4bc3ec11c2e0189.txt", "002_2174494e163e2331.txt")

WINDOW = 9          # Chinese characters in a compared run
COMMON = 3          # a window found this often in the seeds is stock phrasing
MIN_FREE = 4        # a window needs this many characters outside TERMS to count
MIN_SENTENCE = 12   # shorter sentences are not compared
MAX_RATIO = 0.6     # SequenceMatcher ratio at or above which a sentence is a copy
MIN_MATCHED = 10    # ... provided the two share at least this many characters
LONG_SENTENCE = 20  # sentences this long ...
LONG_MAX_RATIO = 0.5  # ... must stay below this ratio (unless allowlisted with a reason)
ALLOWLIST = Path(__file__).with_name("no_copy_allowlist.txt")

# Standard terms of the field, in the form both the sources and the book must write them.
TERMS = sorted("""
集合通信 集合操作 点对点 通信原语 启动延迟 单向带宽 带宽项 延迟项 半带宽点 有效带宽 实得带宽
对分带宽 二分带宽 出口带宽 胖树 环面 交换机 无阻塞 网卡 节点内 节点间 跨节点 每块 每个设备
递归倍增 递归减半 蝴蝶 双二叉树 二叉树 流水线 分块 层次化 分层 扁平 环形 全归约 归约 广播 散射
聚集 规约 张量并行 数据并行 流水线并行 专家并行 序列并行 梯度同步 梯度 参数服务器 分片
交叉点 切换点 下界 上界 带宽最优 延迟最优 通信量 通信时间 计算时间 重叠 同步 异步 解码 预填充
专家 路由 注意力 模型 权重 张量 缓冲区 消息 字节 设备 链路 拓扑 带宽 延迟 时间 公式 算法 步数
""".split(), key=len, reverse=True)

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SENTENCE_END = re.compile(r"[。！？；]")
FENCE = re.compile(r"^(`{3,}|:{3,})(.*)$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


# ----------------------------------------------------------------------------- seeds
@dataclass
class Seeds:
    windows: Counter            # every WINDOW-run of the seeds -> how often it occurs
    sentences: list[str]        # the seeds' sentences, Chinese characters only
    lengths: np.ndarray         # len() of each sentence
    counts: np.ndarray          # counts[i, j]: occurrences of vocab[j] in sentence i
    vocab: dict[str, int]


def _cjk(text: str) -> str:
    return "".join(CJK.findall(text))


def _windows(run: str) -> list[str]:
    return [run[i:i + WINDOW] for i in range(len(run) - WINDOW + 1)]


@functools.lru_cache(maxsize=None)
def _load_seeds() -> Seeds | str:
    """The seeds, or the reason they cannot be read."""
    missing = [SEEDS / name for name in SEED_FILES if not (SEEDS / name).is_file()]
    if missing:
        return "seed text not found: " + ", ".join(str(p) for p in missing)
    windows: Counter = Counter()
    sentences: list[str] = []
    for name in SEED_FILES:
        text = (SEEDS / name).read_text(encoding="utf-8")
        windows.update(_windows(_cjk(text)))
        for piece in re.split(r"[。！？；\n]", text):
            s = _cjk(piece)
            if len(s) >= MIN_SENTENCE // 2:
                sentences.append(s)
    sentences = sorted(set(sentences))
    vocab = {ch: j for j, ch in enumerate(sorted(set("".join(sentences))))}
    counts = np.zeros((len(sentences), len(vocab)), dtype=np.int16)
    for i, s in enumerate(sentences):
        for ch, c in Counter(s).items():
            counts[i, vocab[ch]] = c
    lengths = np.array([len(s) for s in sentences])
    return Seeds(windows, sentences, lengths, counts, vocab)


def seeds() -> Seeds:
    """The seeds; skip (naming the path) where they are absent, fail instead under CI."""
    loaded = _load_seeds()
    if isinstance(loaded, str):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{loaded} (CI=true: the no-copy check must run)")
        pytest.skip(loaded)
    return loaded


# ----------------------------------------------------------------------------- prose
def prose_lines(path: Path) -> list[tuple[str, str]]:
    """(where, text) of the prose lines of a page or of a notebook's markdown cells.

    ``where`` is the line number in a page, "cell C line L" in a notebook, the key in a text
    file.  Lines that are not prose are kept as "" so that paragraphs can be told apart."""
    if path.suffix == ".toml":
        out = []
        for key, entry in tomllib.loads(path.read_text(encoding="utf-8")).items():
            out += [(f"[{key}]", entry["zh"]), ("", "")]
        return out
    if path.suffix == ".ipynb":
        out: list[tuple[str, str]] = []
        for ci, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "markdown":
                lines = "".join(cell["source"]).splitlines()
                out += [(f"cell {ci} line {no}", text) for no, text in _prose(lines, 1)]
                out.append(("", ""))
        return out
    lines = path.read_text(encoding="utf-8").splitlines()
    start = 0
    if lines and lines[0].strip() == "---":             # front matter
        start = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0) + 1
    return [(str(no), text) for no, text in _prose(lines[start:], start + 1)]


def _prose(lines: list[str], first: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    code_fence = None
    for no, line in enumerate(lines, first):
        m = FENCE.match(line.strip())
        if code_fence is not None:
            if m and m.group(1) == code_fence and not m.group(2).strip():
                code_fence = None
            out.append((no, ""))
            continue
        if m and m.group(2).startswith(("{code-cell}", "python", "text", "bash", "{glue")):
            code_fence = m.group(1)
            out.append((no, ""))
        elif m or line.lstrip().startswith(("#", "|", ":")) or line.startswith("(") and line.rstrip().endswith(")="):
            out.append((no, ""))                        # headings, tables, directive titles
        else:
            out.append((no, line))
    return out


def _cjk_with_lines(lines: list[tuple[str, str]]) -> tuple[str, list[str]]:
    chars, where = [], []
    for no, line in lines:
        for ch in CJK.findall(line):
            chars.append(ch)
            where.append(no)
    return "".join(chars), where


def _sentences(lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(first line, Chinese characters) of each sentence of the prose."""
    out: list[tuple[str, str]] = []
    current, first = [], None

    def close():
        nonlocal current, first
        s = "".join(current)
        if s:
            out.append((first, s))
        current, first = [], None

    for no, line in lines:
        if not line.strip() or LIST_ITEM.match(line):
            close()
        for piece in re.split(r"([。！？；])", line):
            if SENTENCE_END.fullmatch(piece):
                close()
                continue
            cjk = _cjk(piece)
            if cjk:
                first = first or no
                current.append(cjk)
    close()
    return out


def _is_term_window(window: str) -> bool:
    rest = window
    for term in TERMS:
        rest = rest.replace(term, "")
    return len(rest) < MIN_FREE


def copied_runs(lines: list[tuple[str, str]], seed: Seeds) -> list[tuple[str, str]]:
    """(line, run) for each maximal run of the prose made of windows found in the seeds."""
    text, where = _cjk_with_lines(lines)
    hit = [0 < seed.windows.get(w, 0) < COMMON and not _is_term_window(w) for w in _windows(text)]
    runs, i = [], 0
    while i < len(hit):
        if not hit[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(hit) and hit[j + 1]:
            j += 1
        runs.append((where[i], text[i:j + WINDOW]))
        i = j + 1
    return runs


def similar_sentences(lines: list[tuple[str, str]], seed: Seeds, min_len: int = MIN_SENTENCE,
                      max_ratio: float = MAX_RATIO) -> list[tuple[str, float, str, str]]:
    """(line, ratio, sentence, seed sentence) for each sentence of at least ``min_len``
    Chinese characters whose ratio to a seed sentence reaches ``max_ratio``."""
    MAX_RATIO = max_ratio
    found = []
    for no, s in _sentences(lines):
        if len(s) < min_len:
            continue
        la = len(s)
        # ratio <= 2*min(la, lb)/(la + lb): only seed sentences of comparable length can reach it
        ok = (seed.lengths >= la * MAX_RATIO / (2 - MAX_RATIO)) & (seed.lengths <= la * (2 - MAX_RATIO) / MAX_RATIO)
        idx = np.nonzero(ok)[0]
        cnt = Counter(s)
        cols = [seed.vocab[ch] for ch in cnt if ch in seed.vocab]
        if not cols or not len(idx):
            continue
        want = np.array([cnt[ch] for ch in cnt if ch in seed.vocab])
        shared = np.minimum(seed.counts[np.ix_(idx, cols)], want).sum(axis=1)
        bound = 2 * shared / (la + seed.lengths[idx])
        best, best_seed = 0.0, ""
        for k in idx[bound >= MAX_RATIO]:
            sm = difflib.SequenceMatcher(None, s, seed.sentences[k], autojunk=False)
            r = sm.ratio()
            if r > best and sum(b.size for b in sm.get_matching_blocks()) >= MIN_MATCHED:
                best, best_seed = r, seed.sentences[k]
        if best >= MAX_RATIO:
            found.append((no, round(best, 3), s, best_seed))
    return found


# ----------------------------------------------------------------------------- tests
TEXT_FILES = sorted((ROOT / "code" / "commbook" / "book" / "texts").glob("*.toml"))
PAGES = (sorted((ROOT / "chapters" / "zh").rglob("*.md")) + sorted((ROOT / "exercises" / "zh").glob("*.ipynb"))
         + TEXT_FILES)
PAGE_IDS = [str(p.relative_to(ROOT)) for p in PAGES]


def test_there_are_pages_to_check():
    assert PAGES, f"no Chinese pages under {ROOT / 'chapters' / 'zh'} or {ROOT / 'exercises' / 'zh'}"
    assert TEXT_FILES, "no text files under code/commbook/book/texts"


def test_text_files_are_read_as_prose(tmp_path):
    f = tmp_path / "t.toml"
    f.write_text('[a]\nen = "x"\nzh = "第一句。第二句"\n[b]\nen = "y"\nzh = "另一条"\n', encoding="utf-8")
    assert prose_lines(f) == [("[a]", "第一句。第二句"), ("", ""), ("[b]", "另一条"), ("", "")]
    assert [s for _, s in _sentences(prose_lines(f))] == ["第一句", "第二句", "另一条"]


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_no_copied_runs(page):
    seed = seeds()
    runs = copied_runs(prose_lines(page), seed)
    assert not runs, f"{page.relative_to(ROOT)} repeats the sources' wording:\n" + "\n".join(
        f"  {page.name}:{no}: {run}" for no, run in runs)


def allowlist() -> dict[tuple[str, str], str]:
    """(page, first 12 Chinese characters) -> reason, from :data:`ALLOWLIST`."""
    out = {}
    if ALLOWLIST.is_file():
        for no, line in enumerate(ALLOWLIST.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            page, start, reason = (line.split("\t") + ["", ""])[:3]
            assert reason.strip(), f"{ALLOWLIST.name}:{no}: an allowed sentence needs its reason"
            out[(page.strip(), start.strip())] = reason.strip()
    return out


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_no_paraphrased_long_sentences(page):
    seed = seeds()
    rel, allowed = str(page.relative_to(ROOT)), allowlist()
    close = [c for c in similar_sentences(prose_lines(page), seed, LONG_SENTENCE, LONG_MAX_RATIO)
             if (rel, c[2][:12]) not in allowed]
    assert not close, f"{rel} has long sentences that follow the sources clause by clause:\n" + "\n".join(
        f"  {page.name}:{no}: ratio {r:.2f}\n    page: {s}\n    seed: {t}" for no, r, s, t in close)


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_no_paraphrased_sentences(page):
    seed = seeds()
    close = similar_sentences(prose_lines(page), seed)
    assert not close, f"{page.relative_to(ROOT)} has sentences rebuilt from the sources:\n" + "\n".join(
        f"  {page.name}:{no}: ratio {r:.2f}\n    page: {s}\n    seed: {t}" for no, r, s, t in close)


def _disguised_copy(seed: Seeds) -> tuple[str, str]:
    """A seed sentence, and the same sentence disguised the way the old check missed.

    The sentence is the first seed sentence of 24–36 characters (at least 22 of them
    Chinese, no Latin or digits) whose windows are all distinctive.  A Latin word goes in
    a quarter of the way along, the character half way along is swapped for another, and
    a number goes in three quarters along: no stretch of 14 characters is left intact,
    while each half keeps more than ``WINDOW`` Chinese characters of the original."""
    for name in SEED_FILES:
        for line in (SEEDS / name).read_text(encoding="utf-8").splitlines():
            for piece in SENTENCE_END.split(line):
                piece = piece.strip()
                if re.search(r"[A-Za-z0-9\s]", piece) or not 24 <= len(piece) <= 36 or len(_cjk(piece)) < 22:
                    continue
                runs = copied_runs([("1", piece)], seed)
                if len(runs) != 1 or runs[0][1] != _cjk(piece):
                    continue
                q = len(piece) // 4
                changed = "乙" if piece[2 * q] != "乙" else "丙"
                disguised = (piece[:q] + " NCCL " + piece[q:2 * q] + changed
                             + piece[2 * q + 1:3 * q] + " 2 " + piece[3 * q:] + "。")
                return piece, disguised
    raise AssertionError("no seed sentence of 24–36 characters with distinctive windows")


def _old_check(text: str, seed_files: list[Path]) -> bool:
    """The check this file replaced: a 14-character run (whitespace removed, >= 9 of them
    Chinese) found verbatim in the seeds."""
    seed = re.sub(r"\s+", "", "".join(p.read_text(encoding="utf-8") for p in seed_files))
    text = re.sub(r"\s+", "", text)
    return any(len(CJK.findall(text[i:i + 14])) >= 9 and text[i:i + 14] in seed
               for i in range(len(text) - 13))


def test_a_disguised_copy_is_caught():
    seed = seeds()
    original, disguised = _disguised_copy(seed)
    assert not _old_check(disguised, [SEEDS / n for n in SEED_FILES]), "the old check would have caught it"
    lines = [("1", disguised)]
    runs = copied_runs(lines, seed)
    assert runs and max(len(r) for _, r in runs) >= WINDOW, (original, disguised)
    close = similar_sentences(lines, seed)
    assert close and close[0][1] >= 0.9, (original, disguised, close)


def test_a_freshly_written_sentence_passes():
    seed = seeds()
    fresh = [("1", "把缓冲区切碎以后，环上的每一段链路在同一时刻都忙着搬不同的碎片，谁也不闲着，"),
             ("2", "所以设备再多，每台机器要发出去的总量也不会超过两倍的原始数据。")]
    assert not copied_runs(fresh, seed)
    assert not similar_sentences(fresh, seed)


def test_a_clause_by_clause_paraphrase_is_caught():
    """A long seed sentence with four of every nine characters swapped keeps the source's
    order, about 0.56 of it: below the short rule's 0.6, caught by the long rule's 0.5."""
    seed = seeds()
    s = next(x for x in seed.sentences if 30 <= len(x) <= 40)
    swapped = "".join("乙" if i % 9 in (0, 2, 4, 6) and ch != "乙" else ch for i, ch in enumerate(s))
    lines = [("1", swapped + "。")]
    assert not similar_sentences(lines, seed)                              # the 0.6 rule misses it
    assert similar_sentences(lines, seed, LONG_SENTENCE, LONG_MAX_RATIO)   # the 0.5 rule does not
