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

from notebooks import code, main, md, notebook, setup, solution

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
    setup(SETUP)


# ============================================================================= checkpoint 1.1
notebook("ch1-1")
page_top(
    "ch1-1", "检查点 1.1 · 用 α 和 β 做诊断", "Checkpoint 1.1 · Diagnosing with α and β",
    r"""
这一页是 §1.2 末尾检查点 1.1 的 <<n_exercises()>> 道题（{doc}`../../chapters/zh/ch1/02-performance-models`）。每题先给题目；推导收在“参考解答”下拉框里，
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
链路一代比一代快，α 却降得慢，于是算作“小”的消息越来越大。
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

所以这个说法**不对**，只能说对大张量“接近”成立：$S$ 永远小于 2，消息远大于 $n^*$ 时才趋近 2（<<fmt_bytes(sizes[-1])>> 时是 <<S[-1]:.6f>>×），
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


# ============================================================================= checkpoint 1.4
notebook("ch1-4")
md(r"""
(zh-ch1-4-exercises)=
# 检查点 1.4 · 要不要压缩梯度

[English version](../en/ch1-4.ipynb)

这一页解答 §1.6 检查点 1.4 的 <<n_exercises()>> 道题（{doc}`../../chapters/zh/ch1/06-compression`）。每题先给题目；推导收在“参考解答”下拉框里，负责计算的代码及其输出也默认折叠——先自己想，再展开对照。

解答里的数没有一个是手填的：构建这一页时由 `commbook` 现算，再写进文字；每个代码单元末尾的 `assert`
用另一种算法把结果核对一遍。题目给定的数与正文取自同一处（`commbook.book.ch1.compression_numbers`），改了那里，这一页会跟着变。

KB、MB、GB 一律按十进制（1 MB = <<MB:,.0f>> 字节）；带宽指单方向。
""", r"""
(en-ch1-4-exercises)=
# Checkpoint 1.4 · Deciding on gradient compression

[中文版 / Chinese version](../zh/ch1-4.ipynb)

This page works through the <<n_exercises()>> questions of Checkpoint 1.4, in §1.6
({doc}`../../chapters/en/ch1/06-compression`). Each problem is stated first; the reasoning sits
in a collapsed "Solution" box, and the code that computes the numbers, with its output, is
collapsed as well. Think first, then open them.

No number in the solutions is typed: `commbook` computes each one when the page is built, and
the builder writes it into the text. The `assert` at the end of each code cell checks the result
by a second route. The givens come from the same place as the page's
(`commbook.book.ch1.compression_numbers`); change them there and this page follows.

Units: KB, MB and GB are decimal (1 MB = <<MB:,.0f>> bytes); bandwidths are one direction.
""")
setup(SETUP)

# ----------------------------------------------------------------------------- exercise 1
md(r"""
(zh-ch1-4-ex-1)=
## 练习 1 · 1 位 SGD 与 1 位 Adam

不带误差反馈的 1 位 SGD 为什么收敛不了，而先预热的 1 位 Adam 却能收敛？两者各自怎样对待压缩时丢掉的信息？
用正文收敛图的最小二乘问题（<<p.workers>> 个工作节点，$d$ = <<p.dim>>）做实验：1 位符号压缩分别带与不带误差反馈；1 位 Adam 取不同的预热比例。
""", r"""
(en-ch1-4-ex-1)=
## Exercise 1 · 1-bit SGD and 1-bit Adam

Why does 1-bit SGD without error feedback fail to converge, while 1-bit Adam with a warm-up
converges? How does each treat the information compression throws away? Try it on the
least-squares problem of the page's convergence figure (<<p.workers>> workers,
$d$ = <<p.dim>>): 1-bit sign compression with and without error feedback, and 1-bit Adam with
several warm-up shares.
""")
solution(r"""
**1 位 SGD，不带误差反馈。** 每一步只发梯度的符号和一个平均幅度，丢掉的部分当场作废，下一步从头再来。
于是被丢掉的信息每步都朝同一方向缺一块：在最优点处，各节点压缩后再平均的更新并不为零（范数 <<bias:.2g>>，不压缩时只剩不到 1e-12 的舍入误差），
最优点不再是不动点。在这个问题上它没有发散，而是停在一个有偏的点：<<sgd_no.steps>> 步后相对超额损失为 <<sgd_no.final:.2g>>。
带上误差反馈，丢掉的部分记在残差里、下一步补上，同样的压缩降到 <<sgd_ef.final:.2g>>，低了 <<sgd_no.final / sgd_ef.final:,.0f>> 倍。

**1 位 Adam。** 它同时做了三件事：(1) 预热阶段用全精度的 Adam，让二阶矩估计稳定下来，然后冻结它，此后压缩不会再污染预条件子；
(2) 压缩的对象是动量而不是原始梯度，动量本身是许多步梯度的平滑；(3) 每个工作节点和汇总端都保留压缩残差，下次压缩前加回去——这正是误差反馈。
信息没有丢，只是晚到。预热太短时，冻结的方差估计还不可靠：

| 预热比例 | 预热步数 | 最终相对超额损失 | 通信量比 Adam 少 |
|---|---|---|---|
<<table_zh>>

预热 <<100 * warmups[-1]:g>>% 时降到 <<adam[warmups[-1]].final:.2g>>；只预热 1 步时停在 <<adam[warmups[0]].final:.2g>>。预热越长，通信省得越少：
按比特算是 $1/(f + (1-f)/32)$，这里每个张量只有 <<p.dim>> 个值，缩放因子不可忽略，所以实测是 $1/(f + (1-f)/r)$，$r$ = <<r_sign:.3g>> 为符号压缩在 $d$ = <<p.dim>> 时的压缩比。
""", r"""
**1-bit SGD without error feedback.** Each step sends the signs of the gradient and one mean
magnitude; what was dropped is forgotten, and the next step starts afresh. The missing part
errs the same way step after step: at the optimum, the workers' compressed updates averaged
together are not zero (norm <<bias:.2g>>, against rounding error under 1e-12 uncompressed), so the
optimum is no longer a fixed point. On this problem it does not blow up; it settles at a biased
point, with a relative excess loss of <<sgd_no.final:.2g>> after <<sgd_no.steps>> steps. With
error feedback the dropped part waits in the residual and goes out later, and the same
compressor reaches <<sgd_ef.final:.2g>>, <<sgd_no.final / sgd_ef.final:,.0f>> times lower.

**1-bit Adam** does three things at once: (1) warm-up runs full-precision Adam until the
second-moment estimate is stable, then freezes it, so compression can no longer disturb the
preconditioner; (2) it compresses the momentum, itself a smoothing of many steps' gradients,
not the raw gradient; (3) every worker, and the side that averages, keeps its compression
residual and adds it back before compressing again: error feedback. Information is delayed,
not lost. With too short a warm-up the frozen variance is not yet reliable:

| warm-up share | warm-up steps | final relative excess loss | less traffic than Adam |
|---|---|---|---|
<<table_en>>

With <<100 * warmups[-1]:g>>% of warm-up it reaches <<adam[warmups[-1]].final:.2g>>; with a
single warm-up step it stalls at <<adam[warmups[0]].final:.2g>>. The longer the warm-up, the
less it saves: $1/(f + (1-f)/32)$ in bits, and here, with only <<p.dim>> values per tensor, the
scale counts too, so the measured saving is $1/(f + (1-f)/r)$ with $r$ = <<r_sign:.3g>>, sign
compression's ratio at $d$ = <<p.dim>>.
""")
code(r'''
from fractions import Fraction

import numpy as np

from commbook import compression as cz
from commbook.book.ch1 import compression_numbers as cn

p = cz.least_squares()                                   # the page's problem, seed 0
sgd_no = cz.train_sgd(p, cz.Sign(), feedback=False)
sgd_ef = cz.train_sgd(p, cz.Sign())
bias, exact0 = cz.update_at_optimum(p, cz.Sign()), cz.update_at_optimum(p)
print(f"sign, no EF: {sgd_no.final:.2e}   sign + EF: {sgd_ef.final:.2e}   "
      f"|update at optimum|: {bias:.3g} ({tr('不压缩', 'uncompressed')} < 1e-12)")   # rounding error: its digits vary by CPU

warmups = (1 / 800, 0.05, 0.1, 0.2)
adam = {f: cz.train_onebit_adam(p, warmup=f) for f in warmups}
full = cz.train_adam(p)
r_sign = cz.Sign().ratio(p.dim)
lines = []
for f, run in adam.items():
    saving = full.bytes_up / run.bytes_up
    assert same(saving, cz.onebit_adam_ratio(f, bits=r_sign))      # 1/(f + (1 − f)/r), from the payloads
    lines.append(f"| {100 * f:.3g}% | {max(1, round(f * run.steps))} | {run.final:.2g} | {saving:.3g}× |")
    print(f"warm-up {100 * f:6.3g}%: final {run.final:.2e}, {saving:.3g}x less than Adam")
table_zh = table_en = "\n".join(lines)
assert sgd_no.final >= 100 * sgd_ef.final and bias > 1e-3 > 1e-12 > exact0
assert adam[0.2].final <= 1e-5 and all(adam[f].final >= 100 * adam[0.2].final for f in warmups[:-1])
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 2
md(r"""
(zh-ch1-4-ex-2)=
## 练习 2 · 压缩能否缩短一步

反向传播耗时 <<c / ms:,.0f>> ms，梯度 all-reduce 耗时 <<ts[0] / ms:,.0f>> ms 或 <<ts[1] / ms:,.0f>> ms。把梯度压缩 <<r>>×（不计编码开销），每步时间怎样变化？
分两种极端情形回答：通信与计算完全不重叠；通信完全藏在反向传播后面（完美重叠）。
""", r"""
(en-ch1-4-ex-2)=
## Exercise 2 · Does compression shorten the step?

The backward pass takes <<c / ms:,.0f>> ms and the gradient all-reduce <<ts[0] / ms:,.0f>> ms or
<<ts[1] / ms:,.0f>> ms. How does the step change if the gradients are compressed <<r>>×
(encoding overhead ignored)? Answer for the two extremes: no overlap at all between
communication and computation, and communication hidden completely behind the backward pass
(perfect overlap).
""")
solution(r"""
不重叠时一步是 $c + T/r$，完美重叠时是 $\max(c, T/r)$（$c$ 为反向传播，$T$ 为 all-reduce）：

| all-reduce | 不重叠：压缩前 → 后 | 加速 | 完美重叠：压缩前 → 后 | 加速 |
|---|---|---|---|---|
<<table_zh>>

all-reduce 只要 <<ts[0] / ms:,.0f>> ms 时，不重叠的情况下压缩省下 <<(rows[0][0] - rows[0][1]) / ms:,.0f>> ms；可一旦能重叠，通信本来就藏在反向传播后面，压缩一毫秒也省不下，
算上编码开销反而更慢。all-reduce 要 <<ts[1] / ms:,.0f>> ms 时，通信是瓶颈，两种情形下压缩都有明显收益；完美重叠时一步降到反向传播本身的 <<c / ms:,.0f>> ms。
一般地，有重叠时只有 $T > c$ 的那部分通信是暴露在外的，压缩最多只能把它削掉。
""", r"""
Without overlap a step is $c + T/r$; with perfect overlap it is $\max(c, T/r)$ ($c$ the
backward pass, $T$ the all-reduce):

| all-reduce | no overlap: before → after | speedup | perfect overlap: before → after | speedup |
|---|---|---|---|---|
<<table_en>>

With a <<ts[0] / ms:,.0f>> ms all-reduce, compression saves <<(rows[0][0] - rows[0][1]) / ms:,.0f>> ms
without overlap; with overlap the communication was already hidden behind the backward pass,
compression saves nothing, and its encoding overhead would make the step slower. With a
<<ts[1] / ms:,.0f>> ms all-reduce communication is the bottleneck, and compression pays in both
cases; with perfect overlap the step falls to the <<c / ms:,.0f>> ms of the backward pass itself.
In general, with overlap only the part of communication beyond $c$ is exposed, and that is the
most compression can remove.
""")
code(r'''
cp = cn.CHECKPOINT_1_4
c, ts, r = cp["backward"], cp["allreduce"], cp["ratio"]
rows, lines = [], []
for t in ts:
    seq0, seq1 = cz.step_time(c, t), cz.step_time(c, t, r)
    ov0, ov1 = cz.step_time(c, t, overlap=True), cz.step_time(c, t, r, overlap=True)
    assert same(seq0, c + t) and same(seq1, c + t / r) and same(ov0, max(c, t)) and same(ov1, max(c, t / r))
    rows.append((seq0, seq1, ov0, ov1))
    lines.append(f"| {t / ms:,.0f} ms | {seq0 / ms:,.0f} → {seq1 / ms:,.0f} ms | {seq0 / seq1:.3g}× "
                 f"| {ov0 / ms:,.0f} → {ov1 / ms:,.0f} ms | {ov0 / ov1:.3g}× |")
    print(f"all-reduce {t / ms:6,.0f} ms: no overlap {seq0 / ms:6,.0f} -> {seq1 / ms:6,.0f} ms, "
          f"perfect overlap {ov0 / ms:6,.0f} -> {ov1 / ms:6,.0f} ms")
table_zh = table_en = "\n".join(lines)
assert rows[0][2] == rows[0][3] == c and rows[1][3] == c            # hidden already / hidden after
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 3
md(r"""
(zh-ch1-4-ex-3)=
## 练习 3 · 误差累加器的稳态

沿用正文表 4 的玩具压缩器：输入达到 <<dec(thr)>> 就发送一个单位，否则不发，并带误差反馈。若每一步的真实梯度都是 $g$ = <<dec(g)>>，
误差累加器 $e_t$ 最后会进入什么样的稳态？发送的规律、平均每步发送量、$e_t$ 的取值范围各是什么？
""", r"""
(en-ch1-4-ex-3)=
## Exercise 3 · The steady state of the error accumulator

Take the toy compressor of the page's Table 4: it sends one unit when its input reaches
<<dec(thr)>> and nothing otherwise, with error feedback. If the true gradient is $g$ = <<dec(g)>> at every
step, what steady state does the accumulator $e_t$ reach? What pattern of transmissions, what
mean transmission per step, and what range of $e_t$?
""")
solution(r"""
从 $e_1 = 0$ 出发，残差第 <<s.transient + s.period + 1>> 步回到起点，之后每 <<s.period>> 步重复一次（没有过渡段）。一个周期的轨迹：

| 步 | $e_t$ | $g + e_t$ | $v_t$ | $e_{t+1}$ |
|---|---|---|---|---|
<<trace_md>>

- 发送规律：<<pattern_text>>，每 <<s.period>> 步发 <<sum(pattern)>> 次；
- 平均每步发送 <<dec(s.mean_v)>>，恰好等于 $g$。这不是巧合：一个周期结束时残差回到原值，裂项求和 $\sum v_t = \sum g_t + e_1 - e_{K+1}$ 里的残差项相消；
- $e_t$ 在 [<<dec(s.e_min)>>, <<dec(s.e_max)>>] 之间，送进压缩器的 $g + e_t$ 在 [<<dec(s.acc_min)>>, <<dec(s.acc_max)>>] 之间。一般地，只要 $0 \le g \le 1$，残差总落在 [门槛 − 1, 门槛) 里：低于门槛就不发、残差只增不减，一旦达到门槛就减掉一个单位。

顺带一提：若用二进制浮点数来算，第 5 步的 $g + e_5$ 应当正好是 <<dec(thr)>>，实际却是 <<repr(float_acc)>>，比门槛小了一点点，于是这一步没有发送（前 5 步发送 <<float_sent>>，精确计算是 <<exact_sent>>）。这就是正文和这里都用精确有理数的原因。
""", r"""
Starting from $e_1 = 0$, the residual is back where it started at step
<<s.transient + s.period + 1>>, and from then on everything repeats every <<s.period>> steps
(there is no transient). One period of the trace:

| step | $e_t$ | $g + e_t$ | $v_t$ | $e_{t+1}$ |
|---|---|---|---|---|
<<trace_md>>

- Pattern: <<pattern_text>>, <<sum(pattern)>> transmissions every <<s.period>> steps;
- mean transmission <<dec(s.mean_v)>> per step, exactly $g$. Not by chance: over a period the
  residual returns to its value, so in the telescoping sum $\sum v_t = \sum g_t + e_1 - e_{K+1}$
  the residual terms cancel;
- $e_t$ stays in [<<dec(s.e_min)>>, <<dec(s.e_max)>>], and the compressor's input $g + e_t$ in
  [<<dec(s.acc_min)>>, <<dec(s.acc_max)>>]. In general, for $0 \le g \le 1$ the residual stays in
  [threshold − 1, threshold): below the threshold nothing is sent and it only grows; at the
  threshold one unit is taken off.

An aside: in binary floating point, $g + e_5$ should be exactly <<dec(thr)>> but comes out as
<<repr(float_acc)>>, a hair below the threshold, so nothing is sent at step 5 (the first 5 steps send
<<float_sent>>; exactly, <<exact_sent>>). That is why the page and this exercise compute with
exact rationals.
""")
code(r'''
g, thr = cp["g"], cp["threshold"]
dec = cz.decimal_text
s = cz.steady_state(g, cz.Threshold(thr))
pattern = [int(v) for v in s.pattern]
cycle = s.rows[s.transient:]
trace_md = "\n".join(f"| {r.step} | {dec(r.e)} | {dec(r.acc)} | {int(r.v)} | {dec(r.e_next)} |" for r in cycle)
pattern_text = ", ".join(map(str, pattern))
print(tr("周期", "period"), s.period, " pattern", pattern, " mean v =", dec(s.mean_v),
      f" e in [{dec(s.e_min)}, {dec(s.e_max)}]")

e, seq = Fraction(0), []                                 # the recurrence written out, two periods
for _ in range(2 * s.period):
    acc = g + e
    v = 1 if acc >= thr else 0
    e, seq = acc - v, seq + [v]
assert seq == pattern * 2 and e == 0 and s.transient == 0
assert s.mean_v == g == Fraction(sum(pattern), s.period)
assert thr - 1 <= s.e_min and s.e_max < thr

ef = cz.ErrorFeedback(cz.Threshold(thr))                 # the same five steps in float64
float_sent = [int(ef.step(np.array([float(g)]))[1][0]) for _ in range(4)]
float_acc = float(g) + float(ef.error[0])
float_sent = float_sent + [int(float_acc >= float(thr))]
exact_sent = [int(r.v) for r in s.rows[:5]]
assert float_acc < float(thr) and float_sent != exact_sent
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 4
md(r"""
(zh-ch1-4-ex-4)=
## 练习 4 · top-k 还是量化

一个模型有 <<d / 1e6:,.0f>> M 个参数，FP32 梯度共 <<fmt_bytes(4 * d)>>，在表 1 那种 <<link.beta * 8 / 1e9:g>> Gb/s 以太网（β = <<link.beta / GB:g>> GB/s）上同步。
按编码规则算出每种方案实际要发送的字节数（数值、索引、缩放因子都算上）和单程发送时间；top-k 要保留多少比例以下，才比 INT8 或 1 位量化发得少？你会怎么选？
""", r"""
(en-ch1-4-ex-4)=
## Exercise 4 · Top-k or quantization?

A model has <<d / 1e6:,.0f>> M parameters, <<fmt_bytes(4 * d)>> of FP32 gradients, synchronised
over Table 1's <<link.beta * 8 / 1e9:g>> Gb/s Ethernet (β = <<link.beta / GB:g>> GB/s). From the
encoding rules, how many bytes does each scheme really send (values, indices and scales
counted), and how long does one transfer take? Below which kept share does top-k send less
than INT8 or 1-bit quantization? Which would you choose?
""")
solution(r"""
| 方案 | 每个值的字节数 | 消息大小 | 相对 FP32 | 发送时间 $n/\beta$ |
|---|---|---|---|---|
<<table_zh>>

top-k 每保留一个值要发 8 字节（FP32 数值 + INT32 索引），INT8 分块（每 128 个一个缩放因子）平均每个值 <<per_int8:.4g>> 字节，1 位符号约 <<per_sign:.4g>> 字节。
所以 top-k 只有在保留比例低于 <<per_int8 / 8:.1%>> 时才比 INT8 省，低于 <<per_sign / 8:.2%>> 时才比 1 位省；
若按不超过 <<2**16:,>> 个元素一段编号、用 16 位索引（每个保留值 6 字节），两条线放宽到 <<per_int8 / 6:.1%>> 和 <<per_sign / 6:.2%>>。

怎么选：INT8 分块量化的 <<r_int8:.3g>>× 够用时，它是稳妥的选择——每个分量都在，误差有界，收敛几乎不受影响。需要的压缩比远高于此时（例如跨数据中心），
只能用 1 位（<<r_sign_d:.0f>>×）或保留比例低于 <<per_sign / 8:.2%>> 的 top-k，而且两者都必须配误差反馈。稀疏化还有一笔账：各节点保留的索引不同，压缩后的梯度没法在环形 all-reduce 里逐段相加，
实际系统往往改用 all-gather 收集稀疏载荷，流量比 $n/r$ 更大。
""", r"""
| scheme | bytes per value | message | vs FP32 | transfer time $n/\beta$ |
|---|---|---|---|---|
<<table_en>>

Top-k sends 8 bytes per kept value (an FP32 value and an INT32 index); block INT8 (a scale per
128) <<per_int8:.4g>> bytes per value on average, 1-bit sign about <<per_sign:.4g>>. So top-k
sends less than INT8 only below a kept share of <<per_int8 / 8:.1%>>, and less than 1 bit only
below <<per_sign / 8:.2%>>; with 16-bit indices counted within segments of at most
<<2**16:,>> elements (6 bytes per kept value) the limits move to <<per_int8 / 6:.1%>> and
<<per_sign / 6:.2%>>.

The choice: when block INT8's <<r_int8:.3g>>× is enough, it is the safe option: every
coordinate is kept, the error is bounded, and convergence hardly suffers. When far more is
needed (across data centres, say), only 1 bit (<<r_sign_d:.0f>>×) or top-k keeping less than
<<per_sign / 8:.2%>> will do, and either needs error feedback.
Sparsification carries one more cost: the workers keep different indices, so the compressed
gradients cannot be added chunk by chunk inside a ring all-reduce; real systems often
all-gather the sparse payloads instead, which moves more than $n/r$.
""")
code(r'''
from commbook.hardware import ROCE_100G

link, d = ROCE_100G, 250_000_000                           # 1 GB of FP32 gradients
schemes = [("FP32", cz.Identity()), ("FP16", cz.FP16()), ("INT8", cz.Int8()),
           (tr("INT8，每 128 个一块", "INT8, blocks of 128"), cz.Int8(128)), (tr("1 位符号", "1-bit sign"), cz.Sign()),
           ("top-10%", cz.TopK(0.1)), ("top-1%", cz.TopK(0.01)), ("top-0.1%", cz.TopK(0.001))]
lines = []
for name, op in schemes:
    n = op.encoded_bytes(d)
    lines.append(f"| {name} | {n / d:.4g} | {fmt_bytes(n)} | {op.ratio(d):.4g}× | {fmt_time(n / link.beta, 3)} |")
    print(f"{name:22s} {fmt_bytes(n):>9s}  {op.ratio(d):8.4g}x  {fmt_time(n / link.beta, 3):>9s}")
table_zh = table_en = "\n".join(lines)
per_int8, per_sign = cz.Int8(128).encoded_bytes(d) / d, cz.Sign().encoded_bytes(d) / d
r_int8, r_sign_d = cz.Int8(128).ratio(d), cz.Sign().ratio(d)

g = np.random.default_rng(0).standard_normal(1_000_064)   # the closed forms against real payloads
for _, op in schemes:
    assert op.encode(g).nbytes == op.encoded_bytes(g.size)
assert same(per_int8, 1 + 4 / 128) and abs(per_sign - 1 / 8) < 1e-6
assert cz.TopK(per_int8 / 8 * 0.99).encoded_bytes(d) < cz.Int8(128).encoded_bytes(d) < cz.TopK(per_int8 / 8 * 1.01).encoded_bytes(d)
print(CHECKED)
''')


# ============================================================================= checkpoint 1.2
notebook("ch1-2")
page_top(
    "ch1-2", "检查点 1.2 · ring 的运作", "Checkpoint 1.2 · The mechanics of the ring",
    r"""
这一页是 §1.4 中检查点 1.2 的 <<n_exercises()>> 道题（{doc}`../../chapters/zh/ch1/04-allreduce-algorithms`）。每题先给题目；推导收在“参考解答”下拉框里，
负责计算的代码及其输出也默认折叠——先自己想，再展开对照。所有 all-reduce 都在 `commbook` 的模拟器上真实跑过：
每块 GPU 挂在一台交换机上，每一轮付一次 α，端口把本轮要收发的字节依次送完。
""",
    r"""
This page works through the <<n_exercises()>> questions of Checkpoint 1.2, in §1.4
({doc}`../../chapters/en/ch1/04-allreduce-algorithms`). Each problem is stated first; the reasoning
sits in a collapsed "Solution" box, and the code that computes the numbers, with its output, is
collapsed as well. Think first, then open them. Every all-reduce here really runs on the
`commbook` simulator: each GPU hangs off one switch, every round costs α once, and a port
pushes the bytes of a round through one after the other.
""")

# ----------------------------------------------------------------------------- exercise 1
md(r"""
(zh-ch1-2-ex-1)=
## 练习 1 · 一共多少步

$N$ 块 GPU 连成的环，做完一整次 all-reduce 需要多少个前后相接的步骤？在 $N$ = <<", ".join(map(str, ps))>> 上用模拟器数一数。
""", r"""
(en-ch1-2-ex-1)=
## Exercise 1 · How many steps

How many sequential steps does a ring of $N$ GPUs need for a whole all-reduce? Count them on
the simulator for $N$ = <<", ".join(map(str, ps))>>.
""")
solution(r"""
reduce-scatter 要 $N-1$ 步：每一步里每块部分和沿环前进一站，走完 $N-1$ 站才把所有 GPU 的贡献收齐。all-gather 再走 $N-1$ 步，把完成的块送到其余 $N-1$ 块 GPU。合计 $2(N-1)$ 步：

| $N$ | 模拟器数出的步数 | $2(N-1)$ |
|---|---|---|
<<rows_md>>

步数随 $N$ 线性增长，每一步都要付一次 α；这就是 ring 的延迟项 $2(N-1)\alpha$。
""", r"""
The reduce-scatter takes $N-1$ steps: in each, every partial sum moves one stop around the ring,
and it needs $N-1$ stops to collect every GPU's contribution. The all-gather takes another $N-1$
to carry each finished chunk to the other $N-1$ GPUs. In all, $2(N-1)$ steps:

| $N$ | steps counted by the simulator | $2(N-1)$ |
|---|---|---|
<<rows_md>>

The count grows linearly in $N$, and each step pays α once: this is the ring's latency term
$2(N-1)\alpha$.
""")
code(r'''
from commbook.book.ch1 import allreduce_numbers as an

ps = (4, 8, 64, 1024)
lines = []
for p in ps:
    rounds = an.run("ring", p, 1 * MB, m.BOX_LINKS["cp1.2"]).rounds     # a size-only run
    lines.append(f"| {p:,} | {rounds:,} | {2 * (p - 1):,} |")
    print(f"N = {p:5d}: {rounds:5d} {tr('步', 'steps')}")
    assert rounds == 2 * (p - 1) == an.alpha_steps("ring", p)
rows_md = "\n".join(lines)
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 2
md(r"""
(zh-ch1-2-ex-2)=
## 练习 2 · 为什么带宽最优

解释 ring 为什么是带宽最优的。就每块 GPU 而言，缓冲区 $M$ 的每个字节要在网络上走几趟？用模拟器数出 $M$ = <<fmt_bytes(n)>> 时每块 GPU 发出的字节，与下界 $2(N-1)/N \cdot M$ 比较。
""", r"""
(en-ch1-2-ex-2)=
## Exercise 2 · Why bandwidth-optimal

Explain why the ring is bandwidth-optimal. How many times does each byte of the buffer $M$ cross
the network, per GPU? Count on the simulator the bytes each GPU sends for $M$ = <<fmt_bytes(n)>>
and compare them with the bound $2(N-1)/N \cdot M$.
""")
solution(r"""
任何 all-reduce 里，每块 GPU 都至少要发出 $2(N-1)/N \cdot M$ 字节：一份 reduce-scatter 量的自家部分和，加一份 all-gather 量的成品。
ring 把缓冲区切成 $N$ 块，$2(N-1)$ 步里每步发一块 $M/N$，恰好就是这么多，一个字节不多；而且每一步里每块 GPU 都在发，没有哪条链路闲着。

| $N$ | 每块 GPU 发出（模拟器） | 下界 | 以 $M$ 计 |
|---|---|---|---|
<<rows_md>>

所以每个字节大约走两趟：一趟作为部分和（reduce-scatter），一趟作为成品（all-gather）；确切地说是 $2(N-1)/N$ 趟，$N$ 越大越接近 2，却不会随 $N$ 增长。
""", r"""
Any all-reduce makes each GPU send at least $2(N-1)/N \cdot M$ bytes: a reduce-scatter's worth of
its own partial sums and an all-gather's worth of finished data. The ring cuts the buffer into
$N$ chunks and sends one chunk of $M/N$ in each of its $2(N-1)$ steps: exactly that much, not a
byte more, and every GPU sends in every step, so no link is idle.

| $N$ | sent per GPU (simulator) | bound | in units of $M$ |
|---|---|---|---|
<<rows_md>>

So each byte crosses the network about twice: once as a partial sum (reduce-scatter) and once
finished (all-gather); exactly $2(N-1)/N$ times, approaching 2 as $N$ grows, and never more.
""")
code(r'''
from commbook.cost import lower_bound_bytes

n = 1 * GB
lines = []
for p in (4, 8, 64):
    sent = an.run("ring", p, n, m.BOX_LINKS["cp1.2"]).bytes_sent
    bound = lower_bound_bytes("all_reduce", p, n)
    lines.append(f"| {p} | {fmt_bytes(sent.max(), digits=4)} | {fmt_bytes(bound, digits=4)} | {bound / n:.4g} |")
    print(f"N = {p:3d}: {tr('每块 GPU 发出', 'sent per GPU')} {fmt_bytes(sent.min(), digits=4)} … "
          f"{fmt_bytes(sent.max(), digits=4)}, {tr('下界', 'bound')} {fmt_bytes(bound, digits=4)}")
    assert same(sent.min(), bound) and same(sent.max(), bound)            # every GPU, exactly the bound
    assert same(bound / n, 2 * (p - 1) / p) and bound / n < 2
rows_md = "\n".join(lines)
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 3
md(r"""
(zh-ch1-2-ex-3)=
## 练习 3 · 一块慢 GPU

<<p>> 块 GPU 组成的环对 <<fmt_bytes(n)>> 做 all-reduce，链路 <<link.beta/GB:g>> GB/s，为了只看带宽取 α = 0。
其中一块 GPU 的端口只有正常速度的 $<<tex_frac(speed)>>$，也就是慢了 <<1/speed-1:.0%>>。整个集合操作的用时会怎样？慢的是哪一块有关系吗？
换成二项树，慢卡分别是根（0 号）、一个内部节点（<<inner>> 号）和一片叶子（<<leaf>> 号）时又如何？
""", r"""
(en-ch1-2-ex-3)=
## Exercise 3 · One slow GPU

A ring of <<p>> GPUs all-reduces <<fmt_bytes(n)>> over <<link.beta/GB:g>> GB/s links, with α = 0 so
that only bandwidth counts. One GPU's port runs at $<<tex_frac(speed)>>$ of the normal speed, that
is <<1/speed-1:.0%>> slower. What happens to the time of the whole collective? Does it matter which
GPU is slow? And on a binomial tree, with the slow GPU as the root (rank 0), an inner node (rank
<<inner>>) or a leaf (rank <<leaf>>)?
""")
solution(r"""
ring 是步调一致的：每一步里每块 GPU 都要把 $M/N$ 发给下家，这一步要等最慢的那块发完才算结束。慢卡在**每一步**都在发和收，
所以每一步都被拖长到 <<1/speed:g>> 倍，整个 all-reduce 也就慢到 <<ring_ratio:g>> 倍（<<fmt_time(ring_base)>> → <<fmt_time(ring_slow)>>），
不管慢的是哪一块：模拟器对 <<p>> 个位置逐一试过，结果都一样。

二项树不同，只有碰到慢卡的那几轮会变慢（二项树每一轮都发整个缓冲区，每轮 $M/\beta$）：

| 慢卡 | 碰到它的轮次 / 总轮数 | 用时之比 |
|---|---|---|
<<tree_md_zh>>

根和靠近根的内部节点每一轮都在收发，慢多少整棵树就慢多少；叶子只在第一轮发、最后一轮收，<<tree_rounds>> 轮里只拖慢 <<len(tree[leaf].slowed_rounds)>> 轮。
ring 把工作均摊给所有人，换来的代价就是：任何一块慢卡都会拖累全体。
""", r"""
The ring runs in lock step: in every step each GPU sends $M/N$ to its successor, and the step is
over only when the slowest one has finished. The slow GPU sends and receives in **every** step,
so every step takes <<1/speed:g>> times as long, and so does the all-reduce: <<ring_ratio:g>>×
(<<fmt_time(ring_base)>> → <<fmt_time(ring_slow)>>), whichever GPU it is — the simulator tried all
<<p>> positions and got the same time.

A binomial tree is different: only the rounds that touch the slow GPU slow down (each round of
the tree moves the whole buffer, $M/\beta$):

| slow GPU | rounds that touch it / all rounds | time ratio |
|---|---|---|
<<tree_md_en>>

The root and the inner node next to it send or receive in every round, so the whole tree slows
down as much as they do; a leaf sends in the first round and receives in the last, and slows only
<<len(tree[leaf].slowed_rounds)>> of <<tree_rounds>> rounds. Spreading the work evenly, as the ring does, means that any straggler
holds everyone back.
""")
code(r'''
from fractions import Fraction

S = an.STRAGGLER
p, n, link, speed = S["p"], S["n"], S["link"], S["speed"]
ring = [an.straggler("ring", k) for k in range(p)]
ring_base, ring_slow, ring_ratio = ring[0].base_s, ring[0].time_s, ring[0].ratio_x
assert link is m.BOX_LINKS["cp1.2"] and link.alpha == 0
assert all(same(r.time_s, ring_slow) for r in ring)                       # whichever GPU is slow
assert same(ring_ratio, 1 / speed) and len(ring[0].slowed_rounds) == ring[0].rounds
assert same(ring_base, 2 * (p - 1) / p * n / link.beta)                    # the closed form, α = 0
print(f"ring: {fmt_time(ring_base)} -> {fmt_time(ring_slow)}  ({ring_ratio:g}x, {tr('任一块都一样', 'any GPU')})")

inner, leaf = 4, 1
tree = {k: an.straggler("tree", k) for k in (0, inner, leaf)}
tree_rounds = tree[0].rounds
names = {0: ("根（0 号）", "root (rank 0)"), inner: (f"内部节点（{inner} 号）", f"inner node (rank {inner})"),
         leaf: (f"叶子（{leaf} 号）", f"leaf (rank {leaf})")}
zh, en = [], []
for k, r in tree.items():
    h = len(r.slowed_rounds)
    assert r.slowed_rounds == r.touching_rounds                      # slowed exactly where it takes part
    assert same(r.ratio_x, (tree_rounds - h + h / speed) / tree_rounds)     # independent count, rounds of M/β
    zh.append(f"| {names[k][0]} | {h} / {tree_rounds} | {r.ratio_x:.4g}× |")
    en.append(f"| {names[k][1]} | {h} / {tree_rounds} | {r.ratio_x:.4g}× |")
    print(f"tree, {tr(*names[k]):22s} {h}/{tree_rounds} {tr('轮', 'rounds')}  {r.ratio_x:.4g}x")
assert len(tree[leaf].slowed_rounds) == 2 and same(tree[0].ratio_x, 1 / speed)
tree_md_zh, tree_md_en = "\n".join(zh), "\n".join(en)
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 4
md(r"""
(zh-ch1-2-ex-4)=
## 练习 4 · 每一步都既发又收？

判断对错：在 ring all-reduce 的每一步里，每块 GPU 都既在发送也在接收。用示例 1.1 的 <<len(facts.sum)>> 块 GPU 的记录核对，
再和二项树比一比。
""", r"""
(en-ch1-2-ex-4)=
## Exercise 4 · Sending and receiving in every step?

True or false: in every step of a ring all-reduce, every GPU both sends and receives. Check it
on the record of Example 1.1's <<len(facts.sum)>> GPUs, and compare with a binomial tree.
""")
solution(r"""
**对。** 示例 1.1 的 <<facts.rounds>> 步里，每一步的发送方恰好是全部 <<facts.p>> 块 GPU，接收方也是全部 <<facts.p>> 块：
GPU $i$ 发给 $i+1$，同时从 $i-1$ 收。环上每条链路每一步都在用，这正是前一题里带宽被用满的原因。
二项树就不是这样：<<tree_p>> 块 GPU 时，各轮的发送方依次只有 <<senders>> 个。
""", r"""
**True.** In each of the <<facts.rounds>> steps of Example 1.1 the senders are all <<facts.p>>
GPUs and so are the receivers: GPU $i$ sends to $i+1$ while it receives from $i-1$. Every link of the
ring is in use in every step, which is why the bandwidth is fully used (exercise 2). A binomial
tree is not like that: on <<tree_p>> GPUs its rounds have only <<senders>> senders.
""")
code(r'''
res = an.ring_trace()
facts = an.trace_facts(res)
for k, step in enumerate(res.trace, start=1):
    src, dst = sorted(step.round.src.tolist()), sorted(step.round.dst.tolist())
    print(f"{step.round.label:16s} senders {src}  receivers {dst}")
    assert src == dst == list(range(facts.p))
assert facts.every_rank_sends_and_receives and facts.rounds == 2 * (facts.p - 1)
act = an.tree_activity()
tree_p, senders = act.p, ", ".join(map(str, act.senders))
assert max(act.senders) < tree_p
print(CHECKED)
''')


# ============================================================================= checkpoint 1.3
notebook("ch1-3")
page_top(
    "ch1-3", "检查点 1.3 · 选择 all-reduce 算法", "Checkpoint 1.3 · Choosing an all-reduce algorithm",
    r"""
这一页是 §1.4 末尾检查点 1.3 的 <<n_exercises()>> 道题（{doc}`../../chapters/zh/ch1/04-allreduce-algorithms`）。每题先给题目；推导收在“参考解答”下拉框里，
负责计算的代码及其输出也默认折叠——先自己想，再展开对照。
""",
    r"""
This page works through the <<n_exercises()>> questions of Checkpoint 1.3, at the end of §1.4
({doc}`../../chapters/en/ch1/04-allreduce-algorithms`). Each problem is stated first; the reasoning
sits in a collapsed "Solution" box, and the code that computes the numbers, with its output, is
collapsed as well. Think first, then open them.
""")

# ----------------------------------------------------------------------------- exercise 1
md(r"""
(zh-ch1-3-ex-1)=
## 练习 1 · 带宽项差在哪里

解释为什么 ring 的带宽项接近 $2M/\beta$，而树要多付 $\mathcal{O}(\log N)$ 倍。在 $N$ = <<p>> 块 GPU 上用模拟器量出两者带宽项的系数
（α = 0 时用时乘以 $\beta/M$）。
""", r"""
(en-ch1-3-ex-1)=
## Exercise 1 · Where the bandwidth terms differ

Explain why the ring's bandwidth term is close to $2M/\beta$ while the tree pays an
$\mathcal{O}(\log N)$ factor more. Measure both coefficients on the simulator for $N$ = <<p>>
GPUs (with α = 0, the time times $\beta/M$).
""")
solution(r"""
ring 把缓冲区切成 $N$ 块，$2(N-1)$ 步里每步只搬一块 $M/N$，每个字节一共只发两趟左右：系数 $2(N-1)/N$ = <<ring_b:.4g>>。
树的每一步都把**整条**消息往上（归约）或往下（广播）送一层，共 $2\lceil\log_2 N\rceil$ 步，每步 $M/\beta$，前后不能重叠：系数 $2\log_2 N$ = <<tree_b:.4g>>，是 ring 的 <<tree_b/ring_b:.3g>> 倍。
多出来的正是那个 $\log_2 N$：树的每一层都让整条消息在关键路径上再走一遍，而且每一层只有一部分链路在忙。
""", r"""
The ring cuts the buffer into $N$ chunks and moves one chunk of $M/N$ in each of its $2(N-1)$
steps, so each byte is sent about twice: coefficient $2(N-1)/N$ = <<ring_b:.4g>>. Every step of
the tree moves the **whole** message one level up (reduce) or down (broadcast), $2\lceil\log_2 N\rceil$
steps of $M/\beta$ each, one after the other: coefficient $2\log_2 N$ = <<tree_b:.4g>>,
<<tree_b/ring_b:.3g>> times the ring's. The extra factor is that $\log_2 N$: every level of the
tree puts the full message on the critical path once more, while only some of the links work.
""")
code(r'''
from commbook.book.ch1 import allreduce_numbers as an

p, n, link = 256, 1 * GB, m.BOX_LINKS["lb1.4"]                # α = 0: bandwidth terms only
ring_b = an.run("ring", p, n, link).time * link.beta / n
tree_b = an.run("tree", p, n, link).time * link.beta / n
print(f"ring: {ring_b:.6g} M/β,  tree: {tree_b:.6g} M/β  ({tree_b / ring_b:.4g}x)")
assert same(ring_b, 2 * (p - 1) / p) and same(tree_b, 2 * math.log2(p))
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 2
md(r"""
(zh-ch1-3-ex-2)=
## 练习 2 · 切换点与一个 <<fmt_bytes(n)>> 的缓冲区

集群有 <<p>> 块 GPU，α = <<link.alpha/us:g>> µs，β = <<link.beta/GB:g>> GB/s。算出 $M_\text{crossover}$，并判断 <<fmt_bytes(n)>> 的梯度缓冲区该用 ring 还是树。
""", r"""
(en-ch1-3-ex-2)=
## Exercise 2 · The switch point and a <<fmt_bytes(n)>> buffer

A cluster has <<p>> GPUs, α = <<link.alpha/us:g>> µs and β = <<link.beta/GB:g>> GB/s. Compute
$M_\text{crossover}$, and decide whether a <<fmt_bytes(n)>> gradient buffer should use the ring or
the tree.
""")
solution(r"""
估算式：$M_\text{crossover} \approx N\alpha\beta/\log_2 N = <<p>> \times <<tex_sci(link.alpha)>> \times <<tex_sci(link.beta)>> / <<log_p>> = $ <<fmt_bytes(approx, digits=4)>>。
用二项树与 ring 的完整公式联立解出的精确值是 <<fmt_bytes(exact, digits=4)>>。<<fmt_bytes(n)>> 比两者都大，**用 ring**，不过优势不大：

| 算法 | 延迟项 | 带宽项 | 合计 |
|---|---|---|---|
| ring | <<ring.latency_s/us:,.1f>> µs | <<ring.bandwidth_s/us:,.1f>> µs | <<ring.total_s/us:,.1f>> µs |
| 二项树 | <<tree.latency_s/us:,.1f>> µs | <<tree.bandwidth_s/us:,.1f>> µs | <<tree.total_s/us:,.1f>> µs |

ring 快 <<1 - ring.total_s/tree.total_s:.1%>>。要是用更粗的 $N\alpha\beta$ = <<fmt_bytes(crude)>> 来判断，就会错选树。
""", r"""
The estimate: $M_\text{crossover} \approx N\alpha\beta/\log_2 N = <<p>> \times <<tex_sci(link.alpha)>> \times <<tex_sci(link.beta)>> / <<log_p>> = $ <<fmt_bytes(approx, digits=4)>>.
Solving the full formulas of the binomial tree and the ring gives exactly <<fmt_bytes(exact, digits=4)>>.
<<fmt_bytes(n)>> is above both: **use the ring**, though its lead is small:

| algorithm | latency term | bandwidth term | total |
|---|---|---|---|
| ring | <<ring.latency_s/us:,.1f>> µs | <<ring.bandwidth_s/us:,.1f>> µs | <<ring.total_s/us:,.1f>> µs |
| binomial tree | <<tree.latency_s/us:,.1f>> µs | <<tree.bandwidth_s/us:,.1f>> µs | <<tree.total_s/us:,.1f>> µs |

The ring is <<1 - ring.total_s/tree.total_s:.1%>> faster. The cruder $N\alpha\beta$ =
<<fmt_bytes(crude)>> would have picked the tree, wrongly.
""")
code(r'''
from commbook.book.ch1 import allreduce_choice as ac
from commbook.collectives import crossover

cp = ac.checkpoint13()
sw, n, ring, tree = cp.switch, cp.n_bytes, cp.ring, cp.tree
p, link = sw.p, m.BOX_LINKS["cp1.3"]
approx, exact, crude, log_p = sw.approx_bytes, sw.exact_bytes, sw.crude_bytes, int(math.log2(sw.p))
assert (sw.alpha_s, sw.beta_Bps) == (link.alpha, link.beta)
assert same(approx, p * link.alpha * link.beta / math.log2(p)) and same(crude, p * link.alpha * link.beta)
assert math.isclose(exact, crossover("ring", "tree", p, link.alpha, link.beta), rel_tol=1e-9)
L = math.ceil(math.log2(p))                                   # the exact solve, written out
assert same(exact, (2 * (p - 1) - 2 * L) * link.alpha * link.beta / (2 * L - 2 * (p - 1) / p))
assert approx < exact < n < crude and cp.choice == "ring" and ring.total_s < tree.total_s
print(f"approx {fmt_bytes(approx, digits=4)}, exact {fmt_bytes(exact, digits=4)}, crude {fmt_bytes(crude)}")
print(f"{fmt_bytes(n)}: ring {ring.total_s / us:,.2f} µs, tree {tree.total_s / us:,.2f} µs -> {cp.choice}")
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 3
md(r"""
(zh-ch1-3-ex-3)=
## 练习 3 · 跟踪一次 reduce-scatter

<<p>> 块 GPU 各持一个 <<p>> 元素的向量：<<inputs>>。跟踪 ring all-reduce 的 reduce-scatter 阶段，并验证每块 GPU 最后拿到的部分和都正确。
""", r"""
(en-ch1-3-ex-3)=
## Exercise 3 · Tracing a reduce-scatter

<<p>> GPUs each hold a vector of <<p>> elements: <<inputs>>. Trace the reduce-scatter phase of a ring
all-reduce, and check that every GPU ends with the right partial sum.
""")
solution(r"""
向量切成 <<p>> 块，每块一个元素。ring 要走 $N-1$ = <<len(steps)>> 步；每一步里 GPU $i$ 把一块累加值发给 $i+1$，接收方把它加到自己的那一块上：

| 步骤 | 消息（发送方 → 接收方：块号） | <<gpu_heads>> |
|---|---|<<"---|" * p>>
<<rows_md_zh>>

最后 GPU $r$ 的第 $r$ 块是 <<finals>>，正是各列之和 <<col_sums>>（numpy 独立算出）。数字的每一位都标明了它来自哪块 GPU，
可以看出每个和都恰好收齐了 <<p>> 份贡献；其余位置只是途中的中间值。
""", r"""
The vectors are cut into <<p>> chunks of one element. The ring takes $N-1$ = <<len(steps)>> steps; in
each, GPU $i$ sends one running sum to $i+1$, which adds it to its own chunk:

| step | messages (sender → receiver: chunk) | <<gpu_heads>> |
|---|---|<<"---|" * p>>
<<rows_md_en>>

At the end GPU $r$'s chunk $r$ is <<finals>>, exactly the column sums <<col_sums>> (computed
independently with numpy). Each digit of a number shows which GPU it came from, so every sum visibly
holds all <<p>> contributions; the other cells are intermediate values.
""")
code(r'''
import numpy as np

data = an.CHECKPOINT_1_3_TRACE["data"]
p = len(data)
res = an.rs_trace(data)
steps = res.trace
inputs = ", ".join(str(list(v)) for v in data)
gpu_heads = " | ".join(f"GPU {g}" for g in range(p))
zh, en = [], []
for k, st in enumerate(steps, start=1):
    r = st.round
    msgs = ", ".join(f"{s}→{d}: {o}" for s, d, o in zip(r.src.tolist(), r.dst.tolist(), r.soff.tolist()))
    bufs = " | ".join(str(b[0].tolist()) for b in st.state)
    zh.append(f"| 第 {k} 步 | {msgs} | {bufs} |")
    en.append(f"| {k} | {msgs} | {bufs} |")
    print(f"{tr('第', 'step ')}{k}{tr(' 步', '')}: {msgs:28s} {bufs}")
rows_md_zh, rows_md_en = "\n".join(zh), "\n".join(en)
sums = np.sum(np.asarray(data), axis=0)                                   # numpy, independently
assert len(steps) == p - 1 and all(s.round.reduce.all() for s in steps)
assert [int(o[0]) for o in res.outputs] == sums.tolist()
assert [int(steps[-1].state[g][0][g]) for g in range(p)] == sums.tolist()
finals, col_sums = ", ".join(str(int(o[0])) for o in res.outputs), ", ".join(map(str, sums.tolist()))
print(CHECKED)
''')

# ----------------------------------------------------------------------------- exercise 4
md(r"""
(zh-ch1-3-ex-4)=
## 练习 4 · 张量并行里的 ring

张量并行的 all-reduce 消息很小：<<tp_model>> 解码一个 token 时，每次是 <<fmt_bytes(tp_n)>>。在节点内 <<tps[0]>> 块 GPU 的 NVLink 4.0 上
（表 1：α = <<link.alpha/us:g>> µs，β = <<link.beta/GB:g>> GB/s），ring 和二项树各要多久，延迟占几成？若张量并行扩到 <<tps[-1]>> 块 GPU（假设链路不变）又如何？
为什么 ring 的 $\mathcal{O}(N)$ 延迟让它难以胜任张量并行？
""", r"""
(en-ch1-3-ex-4)=
## Exercise 4 · The ring in tensor parallelism

Tensor parallelism all-reduces small messages: decoding one token of <<tp_model>>, each is
<<fmt_bytes(tp_n)>>. On the NVLink 4.0 of <<tps[0]>> GPUs in a node (Table 1: α =
<<link.alpha/us:g>> µs, β = <<link.beta/GB:g>> GB/s), how long do the ring and the binomial tree
take, and what share is latency? And with tensor parallelism over <<tps[-1]>> GPUs (same link)?
Why does the ring's $\mathcal{O}(N)$ latency make it hard to use for tensor parallelism?
""")
solution(r"""
| GPU 数 | ring | 其中延迟 | 二项树 | 其中延迟 |
|---|---|---|---|---|
<<rows_md>>

消息只有 NVLink 临界大小 $\alpha\beta$ = <<fmt_bytes(link.n_half)>> 的 <<tp_n/link.n_half:.1%>>，两种算法的用时几乎全是启动延迟。
ring 要付 $2(N-1)$ 次 α，树只付 $2\log_2 N$ 次；GPU 从 <<tps[0]>> 块增到 <<tps[-1]>> 块，ring 的用时涨到 <<ring_growth:.3g>> 倍，树只涨到 <<tree_growth:.3g>> 倍。
张量并行每个 token、每一层都要做 all-reduce（<<tp_model>> 每个 token <<tp_calls>> 次），又卡在前向计算的关键路径上，ring 线性增长的延迟会直接变成每个 token 的延迟。
""", r"""
| GPUs | ring | of which latency | binomial tree | of which latency |
|---|---|---|---|---|
<<rows_md>>

The message is only <<tp_n/link.n_half:.1%>> of NVLink's critical size $\alpha\beta$ =
<<fmt_bytes(link.n_half)>>, so both algorithms spend nearly all their time on start-up. The ring
pays α $2(N-1)$ times, the tree $2\log_2 N$ times; from <<tps[0]>> to <<tps[-1]>> GPUs the ring's
time grows <<ring_growth:.3g>>-fold and the tree's only <<tree_growth:.3g>>-fold. Tensor
parallelism all-reduces in every layer for every token (<<tp_calls>> times per token for
<<tp_model>>), on the critical path of the forward pass, so the ring's linear latency turns straight
into latency per token.
""")
code(r'''
from commbook.collectives import predict
from commbook.llm import tp_allreduces_per_step

tp_model, tp_calls = LLAMA31_70B.name, tp_allreduces_per_step(LLAMA31_70B)
tp_n, link = tp_message_bytes(LLAMA31_70B, tokens=1), NVLINK4_CHAPTER
tps = (8, 64)
t, lines = {}, []
for p in tps:
    row = {}
    for a in ("ring", "tree"):
        total = predict("all_reduce", a, p, tp_n, link.alpha, link.beta)
        lat = predict("all_reduce", a, p, 0.0, link.alpha, link.beta)
        assert same(lat, (2 * (p - 1) if a == "ring" else 2 * math.log2(p)) * link.alpha)
        row[a] = (total, lat / total)
    t[p] = row
    lines.append(f"| {p} | {fmt_time(row['ring'][0], 4)} | {row['ring'][1]:.2%} | "
                 f"{fmt_time(row['tree'][0], 4)} | {row['tree'][1]:.2%} |")
    print(f"N = {p:3d}: ring {fmt_time(row['ring'][0], 4)} ({row['ring'][1]:.2%} α), "
          f"tree {fmt_time(row['tree'][0], 4)} ({row['tree'][1]:.2%} α)")
rows_md = "\n".join(lines)
ring_growth = t[tps[-1]]["ring"][0] / t[tps[0]]["ring"][0]
tree_growth = t[tps[-1]]["tree"][0] / t[tps[0]]["tree"][0]
assert tp_n < link.n_half and all(r["tree"][0] < r["ring"][0] for r in t.values())
assert ring_growth > tree_growth > 1
print(CHECKED)
''')



if __name__ == "__main__":
    main(__doc__.splitlines()[0])
