"""Generate (and execute) the exercise notebooks of chapter 1 (collective communication):
one notebook per checkpoint, ``exercises/{zh,en}/ch1-<k>.ipynb``.

    .venv/bin/python exercises/src/build_ch1.py                  # write and execute all
    .venv/bin/python exercises/src/build_ch1.py --only ch1-1     # one notebook
    .venv/bin/python exercises/src/build_ch1.py --no-exec        # write only
    .venv/bin/python exercises/src/build_ch1.py --out DIR        # write DIR/zh, DIR/en instead

Layout.  Each checkpoint is a section of this file that starts with ``notebook("ch1-<k>")``;
the ``md``/``code``/``solution`` calls after it add cells to that notebook.  A new checkpoint
(1.2, 1.3, 1.4) is a new section: nothing else changes.  The notebooks of one checkpoint share
every code cell (only the ``LANG = ...`` line differs) and carry their own markdown.

**No number in a solution is typed** (as in ``build_p5.py``).  Markdown may hold placeholders
``<<expr>>`` or ``<<expr:spec>>``; the builder runs the code cells of a notebook in order, in one
namespace as the kernel would, and evaluates each placeholder in the namespace left by the next
code cell (the cell of the same exercise, which computes the numbers, prints them and asserts
them).  A float needs a format spec; an unknown name or a failed assert stops the build.  The
givens of each statement come from :mod:`commbook.book.ch1.models` (the same objects the pages
glue), so a statement and its solution cannot drift apart.  The chapter's checkpoints publish
no answers: each ``assert`` checks a computed value against an independent calculation (the
closed form written out, or a bound that must hold).

Outputs are committed, so that ``pytest --nbval exercises/`` can compare them; they are
deterministic.  Cell ids are fixed (``<notebook>-<index>``) so that regenerating gives no
spurious diff.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import math
import re
from fractions import Fraction
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
SOLUTION_TAGS = ["hide-input", "hide-output"]
PLACEHOLDER = re.compile(r"<<(.+?)>>", re.S)

# ----------------------------------------------------------------------------- cells
# NOTEBOOKS[name] is a list of ("md", {"zh": ..., "en": ...}) or ("code", source, tags).
# A code source may contain the placeholder {LANG}; nothing else differs per language.

NOTEBOOKS: dict[str, list[tuple]] = {}
_current: list[str] = []


def notebook(name: str) -> None:
    """Start the notebook ``name`` (``exercises/{zh,en}/<name>.ipynb``): the cells that follow go there."""
    if name in NOTEBOOKS:
        raise ValueError(f"notebook {name!r} is defined twice")
    NOTEBOOKS[name] = []
    _current[:] = [name]


def _cells() -> list[tuple]:
    if not _current:
        raise RuntimeError("call notebook(name) before adding cells")
    return NOTEBOOKS[_current[0]]


def md(zh: str, en: str) -> None:
    _cells().append(("md", {"zh": zh.strip("\n"), "en": en.strip("\n")}))


def code(source: str, tags: list[str] | None = None) -> None:
    _cells().append(("code", source.strip("\n"), list(SOLUTION_TAGS if tags is None else tags)))


def solution(zh: str, en: str) -> None:
    """The written solution, folded into a dropdown until the reader opens it."""
    md(f"::::{{dropdown}} 参考解答\n{zh.strip()}\n::::",
       f"::::{{dropdown}} Solution\n{en.strip()}\n::::")


# ----------------------------------------------------------------------------- formatting
def tex_sci(x: float) -> str:
    """Engineering notation: 2e-6 -> 2\\times10^{-6}; 1e10 -> 10\\times10^{9}."""
    e = 3 * math.floor(math.log10(abs(x)) / 3)
    m = f"{x / 10 ** e:.3g}"
    return f"10^{{{e}}}" if m == "1" else f"{m}\\times10^{{{e}}}"


def tex_frac(x) -> str:
    """A fraction as \\frac{a}{b} (or a whole number)."""
    f = Fraction(x).limit_denominator(10_000)
    return str(f.numerator) if f.denominator == 1 else f"\\frac{{{f.numerator}}}{{{f.denominator}}}"


def _n_exercises(name: str) -> int:
    return sum(c[0] == "md" and "\n## 练习 " in "\n" + c[1]["zh"] for c in NOTEBOOKS[name])


HELPERS = {"tex_sci": tex_sci, "tex_frac": tex_frac}


def render(text: str, ns: dict, where: str) -> str:
    """Replace every <<expr>> / <<expr:spec>> by its value, computed in ``ns``."""
    def value(m: re.Match) -> str:
        expr, spec = m.group(1), ""
        if ":" in expr:
            expr, spec = expr.rsplit(":", 1)
        try:
            v = eval(expr, {**ns, **HELPERS})
        except Exception as exc:
            raise RuntimeError(f"{where}: cannot evaluate <<{m.group(1)}>>: {exc!r}") from exc
        if isinstance(v, float) and not spec:
            raise RuntimeError(f"{where}: <<{m.group(1)}>> is a float and needs a format spec")
        return format(v, spec)
    return PLACEHOLDER.sub(value, text)


SETUP = r'''
LANG = "{LANG}"

import math

from commbook.book.ch1 import models as m
from commbook.cost import half_bandwidth_point, p2p_time
from commbook.hardware import IB_NDR_CHAPTER, NVLINK4_CHAPTER, Link
from commbook.llm import LLAMA31_70B, tp_message_bytes
from commbook.parallelism import DDP_BUCKET_CAP_BYTES
from commbook.units import GB, KB, MB, MiB, fmt_bytes, fmt_time, ms, us


def same(x, y):
    """Two computations of the same time or size agree (up to floating-point rounding)."""
    return math.isclose(x, y, rel_tol=1e-12)


def tr(zh, en):
    """The label in the page's language (only printed labels differ between the two pages)."""
    return zh if LANG == "zh" else en


CHECKED = tr("✓ 与独立计算一致", "✓ agrees with the independent calculation")
'''


def page_top(name: str, title_zh: str, title_en: str, intro_zh: str, intro_en: str) -> None:
    """The title cell of a checkpoint notebook and its setup code cell."""
    md(rf"""
(zh-{name}-exercises)=
# {title_zh}

[English version](../en/{name}.ipynb)

{intro_zh.strip()}

解答里的数没有一个是手填的：构建这一页时由 `commbook` 现算，再写进文字；每个代码单元末尾的 `assert`
用另一种算法把结果核对一遍。题目中的链路参数与正文的例题框取自同一处（`commbook.book.ch1.models`），改了那里，这一页会跟着变。

KB、MB、GB 一律按十进制（1 MB = <<MB:,.0f>> 字节），KiB、MiB 是二进制；带宽指单方向。
""", rf"""
(en-{name}-exercises)=
# {title_en}

[中文版 / Chinese version](../zh/{name}.ipynb)

{intro_en.strip()}

No number in the solutions is typed: `commbook` computes each one when the page is built, and
the builder writes it into the text. The `assert` at the end of each code cell checks the result
by a second route. The links of the statements come from the same place as the worked boxes of
the chapter (`commbook.book.ch1.models`); change them there and this page follows.

Units: KB, MB and GB are decimal (1 MB = <<MB:,.0f>> bytes), KiB and MiB binary; bandwidths
are one direction.
""")
    code(SETUP, tags=[])


# ============================================================================= checkpoint 1.1
notebook("ch1-1")
page_top(
    "ch1-1", "检查点 1.1 · 用 α 和 β 做诊断", "Checkpoint 1.1 · Diagnosing with α and β",
    r"""
这一页是 §1.2 末尾检查点 1.1 的 <<n_exercises()>> 道题（{doc}`../../chapters/zh/ch1/02-performance-models`）。每题先给题目；推导收在"参考解答"下拉框里，
负责计算的代码及其输出也默认折叠——先自己想，再展开对照。
""",
    r"""
This page works through the <<n_exercises()>> questions of Checkpoint 1.1, at the end of §1.2
({doc}`../../chapters/en/ch1/02-performance-models`). Each problem is stated first; the reasoning
sits in a collapsed "Solution" box, and the code that computes the numbers, with its output, is
collapsed as well. Think first, then open them.
""")

# ----------------------------------------------------------------------------- exercise 1
md(r"""
(zh-ch1-1-ex-1)=
## 练习 1 · 受延迟支配还是受带宽支配

链路的启动延迟 α = <<a/us:g>> µs，单向带宽 β = <<b/GB:g>> GB/s。在它上面发一条 <<n/KB:g>> KB 的消息，
这次传输受延迟支配还是受带宽支配？用时多少，其中启动延迟占几成？
""", r"""
(en-ch1-1-ex-1)=
## Exercise 1 · Latency-bound or bandwidth-bound

A link has a start-up latency α = <<a/us:g>> µs and a one-way bandwidth β = <<b/GB:g>> GB/s.
Is a <<n/KB:g>> KB message on it latency-bound or bandwidth-bound? How long does it take, and
what share of that time is start-up?
""")
solution(r"""
先求两项相等的临界大小：$n^* = \alpha\beta = <<tex_sci(a)>>\ \text{s} \times <<tex_sci(b)>>\ \text{B/s} = <<n_star/KB:g>>$ KB。
消息只有 <<n/KB:g>> KB，不到 $n^*$ 的 <<n/n_star:.0%>>，所以**受延迟支配**。

用时 $T = \alpha + n/\beta = <<a/us:g>> + <<n/b/us:g>> = <<t/us:g>>$ µs，其中启动延迟占 $<<tex_frac(share)>> \approx$ <<share:.0%>>。
换句话说，β 再翻几番，这条消息也快不了多少；要让它变快，得从 α 下手。
""", r"""
First the size at which the two terms are equal: $n^* = \alpha\beta = <<tex_sci(a)>>\ \text{s} \times <<tex_sci(b)>>\ \text{B/s} = <<n_star/KB:g>>$ KB.
The message is <<n/KB:g>> KB, <<n/n_star:.0%>> of $n^*$, so it is **latency-bound**.

It takes $T = \alpha + n/\beta = <<a/us:g>> + <<n/b/us:g>> = <<t/us:g>>$ µs, and start-up is
$<<tex_frac(share)>> \approx$ <<share:.0%>> of that. However much β grows, this message barely
speeds up; the lever is α.
""")
code(r'''
link, n = m.CHECKPOINT_1_1["link"], m.CHECKPOINT_1_1["message"]
a, b = link.alpha, link.beta
n_star = half_bandwidth_point(a, b)
t = p2p_time(n, a, b)
share = a / t
verdict = m.regime(n, link)
print(f"n* = {fmt_bytes(n_star)},  n = {fmt_bytes(n)}  ->  {verdict}-bound")
print(f"T = {t / us:g} µs,  {tr('启动延迟占', 'start-up share')} {share:.1%}")
assert same(n_star, a * b) and n < n_star and verdict == "latency"
assert same(t, a + n / b) and same(share, 1 / (1 + n / n_star))
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 2
md(r"""
(zh-ch1-1-ex-2)=
## 练习 2 · α 减半，谁得益

假设软件栈的改进让 α 减半。下面两种通信，哪一种的用时缩短得更多（按比例算）？
- 张量并行：模型的每一层都会发起一次 all-reduce，以 <<tp_model>> 解码一个 token 为例，消息是 <<tp_n:,.0f>> 字节的激活，走节点内的 NVLink 4.0（表 1：α = <<tp_link.alpha/us:g>> µs，β = <<tp_link.beta/GB:g>> GB/s）；
- 数据并行：PyTorch DDP 默认的梯度桶，<<dp_n/MiB:g>> MiB（<<dp_n:,.0f>> 字节），走节点间的 InfiniBand NDR（表 1：α = <<dp_link.alpha/us:g>> µs，β = <<dp_link.beta/GB:g>> GB/s）。

只看一条消息的 $\alpha + n/\beta$。
""", r"""
(en-ch1-1-ex-2)=
## Exercise 2 · Who gains from halving α

Better software halves α. Which of these two transfers gets faster, in proportion?
- Tensor parallelism: the all-reduce of every layer; decoding one token of <<tp_model>>, the
  message is <<tp_n:,.0f>> bytes of activations, over NVLink 4.0 inside the node (Table 1:
  α = <<tp_link.alpha/us:g>> µs, β = <<tp_link.beta/GB:g>> GB/s);
- Data parallelism: one gradient bucket of PyTorch DDP's default size, <<dp_n/MiB:g>> MiB
  (<<dp_n:,.0f>> bytes), over InfiniBand NDR between nodes (Table 1: α = <<dp_link.alpha/us:g>> µs,
  β = <<dp_link.beta/GB:g>> GB/s).

Consider one message, $\alpha + n/\beta$.
""")
solution(r"""
| | 消息 | $n^*$ | $T$ | α 的占比 | α 减半后的 $T$ | 加速 |
|---|---|---|---|---|---|---|
| 张量并行 | <<fmt_bytes(tp_n)>> | <<fmt_bytes(tp_link.n_half)>> | <<tp_t/us:.3f>> µs | <<tp_share:.1%>> | <<tp_t2/us:.3f>> µs | <<tp_x:.2f>>× |
| 数据并行 | <<fmt_bytes(dp_n)>> | <<fmt_bytes(dp_link.n_half)>> | <<dp_t/us:.1f>> µs | <<dp_share:.2%>> | <<dp_t2/us:.1f>> µs | <<dp_x:.4f>>× |

张量并行的消息只有 NVLink 临界大小的 <<tp_n/tp_link.n_half:.1%>>，用时几乎全是启动延迟，α 减半差不多就让它快一倍。
数据并行的梯度桶是 InfiniBand 临界大小的 <<dp_n/dp_link.n_half:.0f>> 倍，α 减半只省下 <<dp_saved/us:g>> µs，不到用时的 <<dp_saving:.1%>>。
**张量并行得益多得多**：它的消息小、次数多（<<tp_model>> 每个 token 要做 <<tp_calls>> 次），又正卡在前向计算的关键路径上；
而数据并行的大梯度桶本就受带宽支配，还能和反向计算重叠。若按环形 all-reduce 计，每次调用要付 $2(p-1)$ 次 α，结论只会更鲜明。
""", r"""
| | message | $n^*$ | $T$ | share of α | $T$ with α halved | speedup |
|---|---|---|---|---|---|---|
| tensor parallel | <<fmt_bytes(tp_n)>> | <<fmt_bytes(tp_link.n_half)>> | <<tp_t/us:.3f>> µs | <<tp_share:.1%>> | <<tp_t2/us:.3f>> µs | <<tp_x:.2f>>× |
| data parallel | <<fmt_bytes(dp_n)>> | <<fmt_bytes(dp_link.n_half)>> | <<dp_t/us:.1f>> µs | <<dp_share:.2%>> | <<dp_t2/us:.1f>> µs | <<dp_x:.4f>>× |

The tensor-parallel message is <<tp_n/tp_link.n_half:.1%>> of NVLink's critical size, so its
time is almost all start-up, and halving α nearly doubles its speed. The data-parallel bucket is
<<dp_n/dp_link.n_half:.0f>> times InfiniBand's critical size; halving α saves <<dp_saved/us:g>> µs,
less than <<dp_saving:.1%>> of its time. **Tensor parallelism gains far more**: its messages are
small and frequent (<<tp_calls>> per token for <<tp_model>>) and sit on the critical path of the
forward pass, while data parallelism's large buckets are bandwidth-bound and can overlap with
the backward pass. Counted as ring all-reduces, which pay α $2(p-1)$ times per call, the contrast
only sharpens.
""")
code(r'''
from commbook.llm import tp_allreduces_per_step

tp_model, tp_calls = LLAMA31_70B.name, tp_allreduces_per_step(LLAMA31_70B)
tp_n, tp_link = tp_message_bytes(LLAMA31_70B, tokens=1), NVLINK4_CHAPTER
dp_n, dp_link = DDP_BUCKET_CAP_BYTES, IB_NDR_CHAPTER


def halved(link):
    return Link(link.name, link.alpha / 2, link.beta, link.source)


rows = {}
for name, n, link in ((tr("张量并行", "tensor parallel"), tp_n, tp_link),
                      (tr("数据并行", "data parallel"), dp_n, dp_link)):
    t, t2 = p2p_time(n, link.alpha, link.beta), p2p_time(n, link.alpha / 2, link.beta)
    assert same(t2, p2p_time(n, halved(link).alpha, halved(link).beta))
    rows[name] = (t, link.alpha / t, t2, t / t2)
    print(f"{name:16s} n = {fmt_bytes(n):>8s}  T = {t / us:9.3f} µs  α {link.alpha / t:6.2%}  "
          f"-> {t2 / us:9.3f} µs  ({t / t2:.4f}x)")
(tp_t, tp_share, tp_t2, tp_x), (dp_t, dp_share, dp_t2, dp_x) = rows.values()
dp_saved, dp_saving = dp_t - dp_t2, 1 - dp_t2 / dp_t
assert m.regime(tp_n, tp_link) == "latency" and m.regime(dp_n, dp_link) == "bandwidth"
assert 1 < dp_x < tp_x < 2                                  # halving α can never more than double
assert same(tp_x, 1 / (1 - tp_share / 2)) and same(dp_saved, dp_link.alpha / 2)
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 3
md(r"""
(zh-ch1-1-ex-3)=
## 练习 3 · 链路提速后的临界大小

网络从 <<r0/1e9:g>> Gb/s 升级到 <<r1/1e9:g>> Gb/s，软件栈不变，α 仍是 <<a/us:g>> µs。临界大小 $n^* = \alpha\beta$ 怎样变化？
一条 <<probe/KB:g>> KB 的消息，升级前后分别属于哪一类？
""", r"""
(en-ch1-1-ex-3)=
## Exercise 3 · The critical size after a faster link

The network is upgraded from <<r0/1e9:g>> Gb/s to <<r1/1e9:g>> Gb/s with the same software, so
α stays <<a/us:g>> µs. How does the critical size $n^* = \alpha\beta$ change? Which kind is a
<<probe/KB:g>> KB message before and after the upgrade?
""")
solution(r"""
线路速率除以 8 就是每秒字节数：β 从 <<b0/GB:g>> GB/s 变成 <<b1/GB:g>> GB/s。α 不变，$n^*$ 与 β 同比例增长：

$$n^*_\text{前} = <<tex_sci(a)>> \times <<tex_sci(b0)>> = <<n0/KB:g>>\ \text{KB}, \qquad n^*_\text{后} = <<tex_sci(a)>> \times <<tex_sci(b1)>> = <<n1/KB:g>>\ \text{KB},$$

扩大到 <<n1/n0:g>> 倍。升级前 <<probe/KB:g>> KB 的消息比 $n^*$ 大，受带宽支配；升级后它比 $n^*$ 小，改受延迟支配——
链路快了，这条消息确实也快了（<<t0/us:g>> → <<t1/us:g>> µs），可它的用时从此以启动为主，再提速就得靠压低 α。
链路一代比一代快，α 却降得慢，于是算作"小"的消息越来越大。
""", r"""
Divide the line rate by 8 for bytes per second: β goes from <<b0/GB:g>> GB/s to <<b1/GB:g>> GB/s.
With α fixed, $n^*$ grows in proportion:

$$n^*_\text{before} = <<tex_sci(a)>> \times <<tex_sci(b0)>> = <<n0/KB:g>>\ \text{KB}, \qquad n^*_\text{after} = <<tex_sci(a)>> \times <<tex_sci(b1)>> = <<n1/KB:g>>\ \text{KB},$$

<<n1/n0:g>> times larger. Before the upgrade a <<probe/KB:g>> KB message is above $n^*$ and
bandwidth-bound; after it, it is below and latency-bound. The faster link does speed it up
(<<t0/us:g>> → <<t1/us:g>> µs), but from then on its time is mostly start-up, and only a lower
α makes it faster still. Bandwidth improves faster than latency falls, so the threshold of a
"small" message keeps rising.
""")
code(r'''
a = m.CHECKPOINT_1_1["link"].alpha
r0, r1 = m.CHECKPOINT_1_1["rates_bps"]
b0, b1 = r0 / 8, r1 / 8                                      # bits/s -> bytes/s
n0, n1 = half_bandwidth_point(a, b0), half_bandwidth_point(a, b1)
probe = math.sqrt(n0 * n1)                                   # a size between the two
before, after = (m.regime(probe, Link("", a, b, "")) for b in (b0, b1))
t0, t1 = p2p_time(probe, a, b0), p2p_time(probe, a, b1)
print(f"n*: {fmt_bytes(n0)} -> {fmt_bytes(n1)}  ({n1 / n0:g}x);  "
      f"{fmt_bytes(probe)}: {before} -> {after}, {t0 / us:g} -> {t1 / us:g} µs")
assert same(n1 / n0, r1 / r0) and n0 < probe < n1
assert (before, after) == ("bandwidth", "latency")
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 4
md(r"""
(zh-ch1-1-ex-4)=
## 练习 4 · 网卡翻倍，大张量就快一倍？

判断对错并说明理由：传输受带宽支配时，把每个节点的网卡数量翻一番，大张量就能传得快一倍。
以表 1 的 InfiniBand NDR（α = <<a/us:g>> µs，每块网卡 β = <<b/GB:g>> GB/s）为例，算出不同大小的消息实际能快多少。
""", r"""
(en-ch1-1-ex-4)=
## Exercise 4 · Twice the NICs, twice as fast?

True or false, and why: when transfers are bandwidth-bound, doubling the NICs of each node
makes a large tensor travel twice as fast. Take Table 1's InfiniBand NDR (α = <<a/us:g>> µs,
β = <<b/GB:g>> GB/s per NIC) and compute the real speedup for messages of several sizes.
""")
solution(r"""
两块网卡能把数据拆成两半并行发送，带宽项减半，α 却一分不少。记 $x = n/n^*$（$n^* = \alpha\beta$ = <<fmt_bytes(n_star)>>），加速比是

$$S(n) = \frac{\alpha + n/\beta}{\alpha + n/(2\beta)} = \frac{1 + x}{1 + x/2} < 2 .$$

| 消息 | $n/n^*$ | 一块网卡 | 两块网卡 | 加速 |
|---|---|---|---|---|
<<table_zh>>

所以这个说法**不对**，只能说对大张量"接近"成立：$S$ 永远小于 2，消息远大于 $n^*$ 时才趋近 2（<<fmt_bytes(sizes[-1])>> 时是 <<S[-1]:.6f>>×），
远小于 $n^*$ 时趋近 1，恰好等于 $n^*$ 时是 $<<tex_frac(S_at_nstar)>>$。而且前提是流量真能均匀拆到两块网卡上，PCIe、交换机和网络的二分带宽也不会接着成为瓶颈。
""", r"""
Two NICs let the data be split in halves sent side by side: the bandwidth term halves, α does
not. With $x = n/n^*$ ($n^* = \alpha\beta$ = <<fmt_bytes(n_star)>>) the speedup is

$$S(n) = \frac{\alpha + n/\beta}{\alpha + n/(2\beta)} = \frac{1 + x}{1 + x/2} < 2 .$$

| message | $n/n^*$ | one NIC | two NICs | speedup |
|---|---|---|---|---|
<<table_en>>

So the claim is **false**, and only approximately true for large tensors: $S$ is always below 2,
approaches 2 only when the message is far above $n^*$ (<<S[-1]:.6f>>× at <<fmt_bytes(sizes[-1])>>),
approaches 1 far below it, and is exactly $<<tex_frac(S_at_nstar)>>$ at $n^*$. It also assumes that
the traffic can really be striped across both NICs, and that PCIe, the switches and the network's
bisection bandwidth do not become the next bottleneck.
""")
code(r'''
link = IB_NDR_CHAPTER
a, b = link.alpha, link.beta
n_star = half_bandwidth_point(a, b)
sizes = [4 * KB, n_star, DDP_BUCKET_CAP_BYTES, m.LLAMA["params"] * m.LLAMA["bytes_per_value"]]
S, lines = [], []
for n in sizes:
    t1, t2 = p2p_time(n, a, b), p2p_time(n, a, 2 * b)
    x = n / n_star
    S.append(t1 / t2)
    assert same(t1 / t2, (1 + x) / (1 + x / 2)) and 1 < t1 / t2 < 2
    ratio = f"{x:,.0f}" if x >= 1000 else f"{x:.4g}"
    lines.append(f"| {fmt_bytes(n)} | {ratio} | {fmt_time(t1, 4)} | {fmt_time(t2, 4)} | {t1 / t2:.6f}× |")
    print(f"{fmt_bytes(n):>8s}  n/n* = {x:10.4g}  {fmt_time(t1, 4):>10s} -> {fmt_time(t2, 4):>10s}  S = {t1 / t2:.6f}")
S_at_nstar = S[1]
assert same(S_at_nstar, 4 / 3) and S == sorted(S)          # S grows with n, from 1 towards 2
table_zh = table_en = "\n".join(lines)
print(CHECKED)
''')


# ----------------------------------------------------------------------------- build
def namespaces(name: str, lang: str) -> dict[int, dict]:
    """Run the code cells of one notebook in order, in one namespace as the kernel would; for
    each code cell (by index) the namespace as that cell leaves it."""
    ns: dict = {"__name__": "__main__"}
    snapshots = {}
    for i, cell in enumerate(NOTEBOOKS[name]):
        if cell[0] == "code":
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell[1].replace("{LANG}", lang), f"<{name} cell {i}>", "exec"), ns)
            snapshots[i] = dict(ns)
    return snapshots


def build(name: str, lang: str) -> nbformat.NotebookNode:
    """The notebook ``name`` in ``lang``, placeholders filled in, not executed."""
    snapshots = namespaces(name, lang)
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, cell in enumerate(NOTEBOOKS[name]):
        if cell[0] == "md":
            following = [j for j in snapshots if j > i]
            if not following:
                raise RuntimeError(f"{name}: markdown cell {i} has no code cell after it to compute its numbers")
            ns = {**snapshots[min(following)], "n_exercises": lambda: _n_exercises(name)}
            c = nbformat.v4.new_markdown_cell(render(cell[1][lang], ns, f"{name} {lang} cell {i}"))
        else:
            c = nbformat.v4.new_code_cell(cell[1].replace("{LANG}", lang))
            if cell[2]:
                c.metadata["tags"] = cell[2]
        c.id = f"{name}-{i:02d}"
        nb.cells.append(c)
    return nb


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-exec", action="store_true", help="write the notebooks without executing them")
    parser.add_argument("--only", action="append", choices=sorted(NOTEBOOKS),
                        help="build only this notebook (repeatable; default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "exercises",
                        help="folder to write zh/<name>.ipynb and en/<name>.ipynb into (default: exercises/)")
    args = parser.parse_args(argv)
    for name in args.only or NOTEBOOKS:
        for lang in ("zh", "en"):
            nb = build(name, lang)
            path = args.out / lang / f"{name}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            if not args.no_exec:
                NotebookClient(nb, kernel_name="python3", timeout=300, record_timing=False,
                               resources={"metadata": {"path": str(path.parent)}}).execute()
            nbformat.validate(nb)
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
