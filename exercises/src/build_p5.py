"""Generate (and execute) exercises/zh/p5.ipynb and exercises/en/p5.ipynb.

The two notebooks share every code cell (only the ``LANG = ...`` line differs) and
carry their own markdown.  Run from the repository root:

    .venv/bin/python exercises/src/build_p5.py                # write and execute both
    .venv/bin/python exercises/src/build_p5.py --no-exec      # write only
    .venv/bin/python exercises/src/build_p5.py --out DIR      # write DIR/zh, DIR/en instead

**No number in a solution is typed.**  Markdown may hold placeholders ``<<expr>>`` or
``<<expr:spec>>``; the builder runs the code cells in order, in one namespace as the
kernel would, and evaluates each placeholder in the namespace left by the next code cell
(the cell of the same exercise: the one that computes the numbers, prints them and
asserts them against the published answers, at the precision each is published).  A
float needs a format spec; an unknown name or a failed assert stops the build.  So the
prose, the printed output and the asserts all come from the same computation, and
``tests/test_exercises.py`` regenerating the notebooks catches a stale page.
Statements keep their givens (the link speeds, the sizes) typed; the code asserts that
``commbook`` uses the same ones.

Outputs are committed, so that ``pytest --nbval exercises/`` can compare them; they are
deterministic (printed, formatted numbers only).  Cell ids are fixed so that
regenerating gives no spurious diff.
"""
from __future__ import annotations

from notebooks import code, main, md, notebook, setup, solution

notebook("p5")

# ----------------------------------------------------------------------------- page top
md(r"""
(zh-p5-exercises)=
# P5 练习

[English version](../en/p5.ipynb)

P5 的 <<n_exercises()>> 道练习都在这一页。每题先给题目；推导放在“参考解答”下拉框里，
负责计算的代码及其输出也默认收起——先自己动手，再展开对照。带 💻 标记的题，`commbook` 的模拟器可以直接拿来核对。

解答里出现的数，没有一个是手填的：构建这一页时，`commbook` 把它们现算出来再填进文字。
每个代码单元最后的 `assert` 再把算出的数与这道题公布的答案比一比，允许的误差就是公布答案本身的舍入精度
（答案写到小数点后一位，算出的数四舍五入到这一位就必须和它相同）。改动 `commbook` 里的任何硬件常数，这些断言都会报错。

KB、MB、GB 一律按十进制（1 MB = <<MB:,.0f>> 字节）；带宽指单方向的 GB/s。
""", r"""
(en-p5-exercises)=
# P5 Exercises

[中文版 / Chinese version](../zh/p5.ipynb)

This page collects the <<n_exercises()>> exercises of part P5. Each one states the problem and
then gives a worked solution: the reasoning sits in a collapsed "Solution" box, and the
code that computes the numbers, with its output, is collapsed as well. Try each problem
before you open them. Exercises marked 💻 can be checked directly with the `commbook`
simulator.

No number in the solutions is typed: `commbook` computes each one when the page is
built, and the builder writes it into the text. The `assert` at the end of each code
cell compares the computed value with the published answer, to the precision that
answer is given (an answer given to one decimal place must match the computed value
rounded to that place). If a hardware constant in `commbook` changes, these asserts fail.

Units: KB, MB and GB are decimal (1 MB = <<MB:,.0f>> bytes); bandwidths are GB/s in one direction.
""")

setup(r'''
LANG = "{LANG}"

import math
from dataclasses import replace
from fractions import Fraction

from commbook.collectives import (
    all_gather, all_reduce, broadcast, t_all_gather, t_allreduce_hierarchical,
    t_broadcast, t_formula, t_reduce_scatter)
from commbook.comm_sim import VirtualCluster
from commbook.cost import (
    all_to_all_bounds, chain_broadcast_optimum, crossover_rd_ring,
    effective_bandwidth, half_bandwidth_point, p2p_time)
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from commbook.llm import (
    DEEPSEEK_V3, LLAMA31_70B, LLAMA31_70B_MHA, LLAMA31_8B, kv_bytes, kv_transfer_time,
    moe_cross_node_bytes, tp_allreduces_per_step, tp_comm_time, tp_message_bytes)
from commbook.topology import Switch, TwoLevel
from commbook.units import GB, KB, MB, fmt_bytes, ms, us


def rounds_to(value, stated, step):
    """True when `value`, rounded to the nearest `step`, gives the published answer `stated`."""
    return abs(value - stated) <= step / 2 * (1 + 1e-9)


def same(x, y):
    """Two computations of the same time or size agree (up to floating-point rounding)."""
    return math.isclose(x, y, rel_tol=1e-12)


def tr(zh, en):
    """The label in the page's language (only printed labels differ between the two pages)."""
    return zh if LANG == "zh" else en


AGREES = tr("✓ 与公布的答案一致", "✓ agrees with the published answer")
''')

# ----------------------------------------------------------------------------- exercise 1
md(r"""
(zh-p5-ex-1)=
## 练习 1 · 半带宽点

一条 InfiniBand NDR 链路，启动延迟 α = 5 µs，单向带宽 β = 50 GB/s。它的半带宽点 $n_{1/2}$ 是多大？
分别发一条 25 KB 和一条 2.5 MB 的消息，各用多长时间，实际拿到多少带宽（占 β 的百分之几）？
""", r"""
(en-p5-ex-1)=
## Exercise 1 · Half-bandwidth point

An InfiniBand NDR link has a start-up latency α = 5 µs and a one-way bandwidth
β = 50 GB/s. What is its half-bandwidth point $n_{1/2}$? For one 25 KB message and one
2.5 MB message, how long does the transfer take, and what bandwidth does it actually
achieve, as a share of β?
""")
solution(r"""
半带宽点就是 α 与 β 的乘积：$n_{1/2} = \alpha\beta = <<tex_sci(a)>>\ \text{s} \times <<tex_sci(b)>>\ \text{B/s} = <<n_half/KB:.0f>>$ KB。

- <<small/KB:.0f>> KB：$T = <<a/us:.0f>> + <<small/KB:.0f>>\,\text{KB}/(<<b/GB:.0f>>\,\text{GB/s}) = <<a/us:.0f>> + <<small/b/us:.1f>> = <<T[small]/us:.1f>>$ µs，实得 $<<small/KB:.0f>>\,\text{KB}/<<T[small]/us:.1f>>\,\mu\text{s} \approx <<BW[small]/GB:.1f>>$ GB/s，只有 β 的约 <<BW[small]/b:.0%>>。
- <<large/MB:.1f>> MB：$T = <<a/us:.0f>> + <<large/b/us:.0f>> = <<T[large]/us:.0f>>$ µs，实得约 <<BW[large]/GB:.1f>> GB/s，是 β 的约 <<BW[large]/b:.0%>>。

一般地，实得带宽占 β 的比例是 $n/(n + n_{1/2})$：<<small/KB:.0f>> KB 是 $<<tex_frac(X[small])>>\,n_{1/2}$，得 $<<tex_frac(X[small] / (1 + X[small]))>>$；<<large/MB:.1f>> MB 是 $<<tex_frac(X[large])>>\,n_{1/2}$，得 $<<tex_frac(X[large] / (1 + X[large]))>>$。
""", r"""
The half-bandwidth point is the product of the two parameters:
$n_{1/2} = \alpha\beta = <<tex_sci(a)>>\ \text{s} \times <<tex_sci(b)>>\ \text{B/s} = <<n_half/KB:.0f>>$ KB.

- <<small/KB:.0f>> KB: $T = <<a/us:.0f>> + <<small/KB:.0f>>\,\text{KB}/(<<b/GB:.0f>>\,\text{GB/s}) = <<a/us:.0f>> + <<small/b/us:.1f>> = <<T[small]/us:.1f>>$ µs, so the link delivers
  $<<small/KB:.0f>>\,\text{KB}/<<T[small]/us:.1f>>\,\mu\text{s} \approx <<BW[small]/GB:.1f>>$ GB/s, only about <<BW[small]/b:.0%>> of β.
- <<large/MB:.1f>> MB: $T = <<a/us:.0f>> + <<large/b/us:.0f>> = <<T[large]/us:.0f>>$ µs, about <<BW[large]/GB:.1f>> GB/s, roughly <<BW[large]/b:.0%>> of β.

In general the share of β a message obtains is $n/(n + n_{1/2})$: <<small/KB:.0f>> KB is
$<<tex_frac(X[small])>>\,n_{1/2}$ and gets $<<tex_frac(X[small] / (1 + X[small]))>>$; <<large/MB:.1f>> MB is
$<<tex_frac(X[large])>>\,n_{1/2}$ and gets $<<tex_frac(X[large] / (1 + X[large]))>>$.
""")
code(r'''
a, b = IB_NDR.alpha, IB_NDR.beta
assert same(a, 5 * us) and same(b, 50 * GB)                  # the link of the statement
n_half = half_bandwidth_point(a, b)
print(f"n_1/2 = αβ = {n_half / KB:.1f} KB")
assert rounds_to(n_half / KB, 250, 1)

small, large = 25 * KB, 2.5 * MB
T, BW, X = {}, {}, {}
for n, t_stated, bw_stated, pct_stated in ((small, 5.5, 4.5, 9), (large, 55, 45.5, 91)):
    T[n], BW[n] = p2p_time(n, a, b), effective_bandwidth(n, a, b)
    X[n] = Fraction(n / n_half).limit_denominator(1000)      # n in units of n_1/2
    print(f"n = {fmt_bytes(n):>6s} = {X[n]} n_1/2:  T = {T[n] / us:5.2f} µs,  "
          f"n/T = {BW[n] / GB:6.3f} GB/s = {BW[n] / b:.1%} × β = {X[n] / (1 + X[n])} β")
    assert rounds_to(T[n] / us, t_stated, 0.1)
    assert rounds_to(BW[n] / GB, bw_stated, 0.1)
    assert rounds_to(100 * BW[n] / b, pct_stated, 1)
    assert same(BW[n] / b, n / (n + n_half)) and same(BW[n] / b, float(X[n] / (1 + X[n])))
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 2
md(r"""
(zh-p5-ex-2)=
## 练习 2 · ring all-reduce 的时间公式

环上有 $p$ 个设备，各持 $n$ 字节，要做一次 all-reduce。给出它的用时公式。另外请解释：一步之中，设备送出的为何只是 $n/p$ 字节，而不是整份 $n$？
""", r"""
(en-p5-ex-2)=
## Exercise 2 · The ring all-reduce formula

$p$ devices, each holding $n$ bytes, run an all-reduce around a ring. Derive the time
it takes, and explain why in every step each device sends only $n/p$ bytes.
""")
solution(r"""
先把每个设备的缓冲区等分成 $p$ 块，每块 $n/p$ 字节。

1. **第一阶段 reduce-scatter，共 $p-1$ 步。** 所有设备同时把手里的一块交给环上的下家，下家把它累加进自己的同号块。
   一块数据被接力转发 $p-1$ 次，沿途收齐了其他所有设备的贡献；这一阶段结束时，每个设备各自握有一块已经加总完毕的结果。
2. **第二阶段 all-gather，也是 $p-1$ 步。** 加总好的块再沿环接力一圈，每步每个设备转出一块，转完后人人都集齐 $p$ 块。

同一步里，每个设备只用自己通往下家的那条链路，链路上走的只是 $n/p$ 字节，于是一步耗时 $\alpha + \frac{n}{p\beta}$。两阶段合计 $2(p-1)$ 步：

$$
T_\text{ring} = 2(p-1)\left(\alpha + \frac{n}{p\beta}\right) = 2(p-1)\,\alpha + \frac{2(p-1)}{p}\cdot\frac{n}{\beta}.
$$

**为什么只发 $n/p$：** 任何一块数据要做的事只有两件：转一圈把各家的贡献收齐，再转一圈把结果送到各家。
切成 $p$ 块以后，$p$ 条链路每一步都在同时搬运互不相同的块，既没有闲置的链路，也没有哪条链路要扛下整个缓冲区。
所以带宽项 $\frac{2(p-1)}{p}\cdot\frac{n}{\beta}$ 随 $p$ 增大只会逼近 $2n/\beta$，恰好等于 all-reduce 中每个设备至少要送出的 $\frac{2(p-1)}{p}n$ 字节这一下界；
付出的代价是 α 项随 $p$ 线性增长。

下面的代码在模拟器里（NVLink 4 交换机，α = <<alpha/us:.0f>> µs，β = <<beta/GB:.0f>> GB/s）运行 ring all-reduce，核对总时间、步数、每步时间以及每个设备发出的字节是否都与公式吻合。
""", r"""
Cut each device's buffer into $p$ chunks of $n/p$ bytes.

1. **Reduce-scatter, $p-1$ steps.** In every step each device sends one chunk to its
   successor on the ring, which adds it to its own copy of that chunk. A chunk that
   starts at one device is forwarded $p-1$ times and picks up every other device's
   contribution on the way; at the end each device owns one fully reduced chunk.
2. **All-gather, $p-1$ steps.** The finished chunks travel around the ring once more,
   one chunk per device per step, until every device has all $p$ of them.

In every step all devices send at once, each over its own link to the next device, and
each link carries only $n/p$ bytes, so a step takes $\alpha + \frac{n}{p\beta}$. There
are $2(p-1)$ steps:

$$
T_\text{ring} = 2(p-1)\left(\alpha + \frac{n}{p\beta}\right) = 2(p-1)\,\alpha + \frac{2(p-1)}{p}\cdot\frac{n}{\beta}.
$$

**Why only $n/p$:** every chunk has to go around the ring once to be summed and once to
be distributed. Cutting the data into $p$ chunks keeps all $p$ links busy with different
chunks in every step; no link sits idle and none has to carry the whole buffer. The
bandwidth term $\frac{2(p-1)}{p}\cdot\frac{n}{\beta}$ therefore only approaches
$2n/\beta$ as $p$ grows, which meets the lower bound of $\frac{2(p-1)}{p}n$ bytes that
each device must send in any all-reduce; the price is an α term that grows linearly in $p$.

The code below runs the ring all-reduce in the simulator (an NVLink 4 switch,
α = <<alpha/us:.0f>> µs, β = <<beta/GB:.0f>> GB/s) and checks that the total time, the number of steps, the time
of each step and the bytes each device sends all match the formula.
""")
code(r'''
alpha, beta = NVLINK4.alpha, NVLINK4.beta
for p in (2, 4, 8, 16):
    for n in (64 * KB, 4 * MB, 256 * MB):
        run = all_reduce(VirtualCluster(Switch(p, NVLINK4)), nbytes=n)
        formula = t_formula("ring", p, n, alpha, beta)
        assert same(run.time, formula) and same(formula, 2 * (p - 1) * (alpha + n / (p * beta)))
        assert run.rounds == 2 * (p - 1)
        assert all(same(t, alpha + n / (p * beta)) for t in run.round_times)
        assert all(same(s, 2 * (p - 1) / p * n) for s in run.bytes_sent)
    print(f"p = {p:2d}, n = 256 MB:  {tr('模拟器', 'simulator')} {run.time / us:8.2f} µs = "
          f"{tr('公式', 'formula')} {formula / us:8.2f} µs;  {run.rounds} {tr('步', 'steps')}, "
          f"{tr('每个设备发出', 'each device sends')} {run.bytes_sent[0] / MB:.0f} MB")
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 3
md(r"""
(zh-p5-ex-3)=
## 练习 3 · 递归倍增与 ring 的交叉点 💻

16 个设备经 NVLink 互连（α = 2 µs，β = 450 GB/s）。消息长到多大时，递归倍增 all-reduce 和 ring all-reduce 耗时相等？
已知 $p = 8$ 时这个交叉点是 <<n8/MB:.2f>> MB，那么 $p = 16$ 时它会往大还是往小移动？
""", r"""
(en-p5-ex-3)=
## Exercise 3 · Where recursive doubling and ring cross 💻

Sixteen devices are connected by NVLink (α = 2 µs, β = 450 GB/s). At what message size
do the recursive-doubling all-reduce and the ring all-reduce take the same time? For
$p = 8$ that size is <<n8/MB:.2f>> MB; is it larger or smaller for $p = 16$?
""")
solution(r"""
递归倍增走 $\log_2 p$ 步，每步交换整个缓冲区；ring 走 $2(p-1)$ 步，每步只传 $n/p$。$p = <<p>>$ 时让两边相等：

$$
<<rd_steps>>\left(\alpha + \frac{n}{\beta}\right) = <<ring_steps>>\,\alpha + <<ring_share:g>>\,\frac{n}{\beta}
\quad\Longrightarrow\quad <<rd_steps - ring_share:g>>\,\frac{n}{\beta} = <<ring_steps - rd_steps>>\,\alpha
\quad\Longrightarrow\quad n_\times = \frac{<<ring_steps - rd_steps>>\,\alpha\beta}{<<rd_steps - ring_share:g>>} \approx <<n16/MB:.1f>>\ \text{MB}.
$$

比 $p = 8$ 时的 <<n8/MB:.2f>> MB 更大。设备一多，ring 的启动次数 $2(p-1)$ 按线性涨，递归倍增的 $\log_2 p$ 只按对数涨；
ring 多交的这部分 α，得靠更大的消息、用带宽上的优势慢慢补回来。消息小于 $n_\times$ 时递归倍增占优，大于 $n_\times$ 时 ring 占优。
代码分别用 `t_formula("ring", ...)` 和 `t_formula("rd", ...)` 在交叉点及其两侧各算一次来验证。
""", r"""
Recursive doubling takes $\log_2 p$ steps that each exchange the whole buffer; the ring
takes $2(p-1)$ steps of $n/p$ each. For $p = <<p>>$, set the two equal:

$$
<<rd_steps>>\left(\alpha + \frac{n}{\beta}\right) = <<ring_steps>>\,\alpha + <<ring_share:g>>\,\frac{n}{\beta}
\quad\Longrightarrow\quad <<rd_steps - ring_share:g>>\,\frac{n}{\beta} = <<ring_steps - rd_steps>>\,\alpha
\quad\Longrightarrow\quad n_\times = \frac{<<ring_steps - rd_steps>>\,\alpha\beta}{<<rd_steps - ring_share:g>>} \approx <<n16/MB:.1f>>\ \text{MB}.
$$

That is larger than the <<n8/MB:.2f>> MB of $p = 8$. With more devices the ring's start-ups,
$2(p-1)$, grow linearly while recursive doubling's $\log_2 p$ grows only
logarithmically, so the ring needs a bigger message before its bandwidth advantage pays
for the extra α. Below $n_\times$ recursive doubling is faster, above it the ring is.
The code checks this with `t_formula("ring", ...)` and `t_formula("rd", ...)` at the
crossover and on either side of it.
""")
code(r'''
p, alpha, beta = 16, NVLINK4.alpha, NVLINK4.beta
assert same(alpha, 2 * us) and same(beta, 450 * GB)          # the link of the statement
rd_steps, ring_steps = int(math.log2(p)), 2 * (p - 1)        # the α counts
ring_share = 2 * (p - 1) / p                                 # the ring's factor on n/β
n16 = crossover_rd_ring(p, alpha, beta)
n8 = crossover_rd_ring(8, alpha, beta)
print(f"{rd_steps}(α + n/β) = {ring_steps}α + {ring_share:g}·n/β  ⟹  "
      f"{rd_steps - ring_share:g}·n/β = {ring_steps - rd_steps}α")
print(f"n× (p = 16) = {n16 / MB:.2f} MB,  n× (p = 8) = {n8 / MB:.2f} MB")
assert (rd_steps, ring_steps, ring_share) == (4, 30, 1.875)
assert same(n16, (ring_steps - rd_steps) * alpha * beta / (rd_steps - ring_share))
assert same(n16, 26 * alpha * beta / 2.125)
assert rounds_to(n16 / MB, 11.0, 0.1) and rounds_to(n8 / MB, 7.92, 0.01) and n16 > n8

for n in (n16 / 2, n16, 2 * n16):
    ring, rd = t_formula("ring", p, n, alpha, beta), t_formula("rd", p, n, alpha, beta)
    print(f"n = {n / MB:6.2f} MB:  ring {ring / us:6.2f} µs,  rd {rd / us:6.2f} µs")
assert same(t_formula("ring", p, n16, alpha, beta), t_formula("rd", p, n16, alpha, beta))
assert t_formula("rd", p, n16 / 2, alpha, beta) < t_formula("ring", p, n16 / 2, alpha, beta)
assert t_formula("ring", p, 2 * n16, alpha, beta) < t_formula("rd", p, 2 * n16, alpha, beta)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 4
md(r"""
(zh-p5-ex-4)=
## 练习 4 · 一次 all-gather 要多久

一个节点里的 8 块 H100 用 NVLink 相连。一个 bf16 张量，形状 [1024, 16384]，按行平均切给 8 块 GPU，现在要做 all-gather
把完整张量拼回每块 GPU。只看带宽时要多久？把启动延迟也算上呢？
""", r"""
(en-p5-ex-4)=
## Exercise 4 · How long does one all-gather take?

The 8 H100s of one node are connected by NVLink. A bf16 tensor of shape [1024, 16384] is
split by rows into 8 equal shards, one per GPU, and an all-gather rebuilds the full
tensor on every GPU. How long does it take if only bandwidth counts? And with the
start-up latency included?
""")
solution(r"""
先算张量有多大：$<<shape[0]>> \times <<shape[1]>>$ 个 bf16 元素，每个 <<bytes_per>> 字节，合计 $<<tex_int(n)>>$ 字节，约 <<n/MB:.1f>> MB。

all-gather 做完，每块 GPU 手上都得有整个张量，可它原本只存着其中的 $<<tex_frac(1 / p)>>$；
差的那 $<<tex_frac((p - 1) / p)>>$，也就是约 <<received/MB:.1f>> MB，全要经 NVLink 收进来。
按 <<beta/GB:.0f>> GB/s 计，单是搬这些字节就要约 <<t_bw/us:.0f>> µs。

ring 共走 <<p - 1>> 步，每一步开头都要付一次 α，累计 <<t_alpha/us:.0f>> µs，与带宽部分相加约 <<t_all/us:.0f>> µs。
《How to Scale Your Model》第 12 章也算过这个例子，它只计带宽，结果与上面只看带宽的那个数相同。
""", r"""
The full tensor is $<<shape[0]>> \times <<shape[1]>> \times <<bytes_per>> = <<tex_int(n)>>$ bytes, about <<n/MB:.1f>> MB. In
a ring all-gather every GPU must receive the other <<p - 1>> shards, $<<tex_frac((p - 1) / p)>> \times <<n/MB:.1f>>$ MB
≈ <<received/MB:.1f>> MB, which at <<beta/GB:.0f>> GB/s takes about <<t_bw/us:.0f>> µs. The ring has <<p - 1>> steps and each pays α
once more, $<<p - 1>>\alpha = <<t_alpha/us:.0f>>$ µs, for about <<t_all/us:.0f>> µs in total. Chapter 12 of How to Scale Your
Model works the same problem with bandwidth only and gets the same bandwidth-only figure.
""")
code(r'''
p, shape, bytes_per = 8, (1024, 16384), 2                    # 8 GPUs, a bf16 tensor
alpha, beta = NVLINK4.alpha, NVLINK4.beta
n = shape[0] * shape[1] * bytes_per                          # bytes of the full tensor
received = (p - 1) / p * n
t_bw = t_all_gather("ring", p, n, 0.0, beta)                 # bandwidth term only
t_alpha = (p - 1) * alpha
t_all = t_all_gather("ring", p, n, alpha, beta)
t_sim = all_gather(VirtualCluster(Switch(p, NVLINK4)), nbytes=n).time
print(f"{tr('张量', 'tensor')} {n:,} B = {n / MB:.2f} MB;  {tr('每块 GPU 收到', 'each GPU receives')} "
      f"{received / MB:.2f} MB")
print(f"{tr('只算带宽', 'bandwidth only')}: {t_bw / us:.2f} µs;  + {p - 1}α = {t_alpha / us:.0f} µs: "
      f"{t_all / us:.2f} µs ({tr('模拟器', 'simulator')}: {t_sim / us:.2f} µs)")
assert n == 33_554_432 and rounds_to(n / MB, 33.6, 0.1) and rounds_to(received / MB, 29.4, 0.1)
assert same(t_bw, received / beta) and rounds_to(t_bw / us, 65, 1)
assert same(t_all, t_bw + t_alpha) and rounds_to(t_alpha / us, 14, 1)
assert same(t_all, t_sim) and rounds_to(t_all / us, 79, 1)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 5
md(r"""
(zh-p5-ex-5)=
## 练习 5 · all-to-all 的两个下界

一次 all-to-all 中，每块 GPU 拿出 64 MB 数据参与交换。参与的 GPU 共 64 块，共用一台无阻塞交换机，每块接入的端口带宽是 50 GB/s。
从对分带宽和从每块 GPU 的出口带宽出发，分别能得到多大的时间下界？实际卡住交换的是哪一个？
""", r"""
(en-p5-ex-5)=
## Exercise 5 · The two lower bounds of all-to-all

64 GPUs hang off one non-blocking switch, each through a 50 GB/s port, and each GPU
holds 64 MB for an all-to-all. What lower bound does the bisection bandwidth give, and
what bound does each GPU's egress bandwidth give? Which one actually limits the exchange?
""")
solution(r"""
- **从切口看（对分下界）。** 设想把 <<p>> 块 GPU 一刀切成两组。all-to-all 里每块 GPU 要给所有对手各送一份，
  对手中有一半在刀口另一侧，因此单方向穿过刀口的总量是 $p\,n/4 = <<p>> \times <<n/MB:.0f>>\ \text{MB}/4 = <<crossing/GB:.3f>>$ GB。
  刀口两边能同时收发的端口各有 <<p // 2>> 个，合起来 $<<p // 2>> \times <<port/GB:.0f>> = <<bisection_bw/GB:.0f>>$ GB/s，
  所以这一份流量最快也要 <<bisection/ms:.2f>> ms。
- **从端口看（出口下界）。** 一块 GPU 的数据里只有 $<<tex_frac(1 / p)>>$ 是留给自己的，剩下的 $<<tex_frac((p - 1) / p)>>$ 都只能从它唯一的那个
  <<port/GB:.0f>> GB/s 端口出去：$<<tex_frac((p - 1) / p)>> \times <<n/MB:.0f>>\ \text{MB}/<<port/GB:.0f>>\ \text{GB/s} \approx <<egress/ms:.2f>>$ ms。

两个下界都得满足，真正说了算的是较大的那个，也就是出口的 <<egress/ms:.2f>> ms。
交换机无阻塞，内部有的是带宽；把速度压住的，是每块 GPU 只有一个端口往外发。
""", r"""
- **Bisection bound.** Split the <<p>> GPUs into two halves. Every GPU sends half of its
  data to the other half, so $p\,n/4 = <<p>> \times <<n/MB:.0f>>\ \text{MB}/4 = <<crossing/GB:.3f>>$ GB cross the
  cut in each direction. The cut has <<p // 2>> ports, a bisection bandwidth of
  $<<p // 2>> \times <<port/GB:.0f>> = <<bisection_bw/GB:.0f>>$ GB/s, so this takes at least <<bisection/ms:.2f>> ms.
- **Egress bound.** Every GPU must send $<<tex_frac((p - 1) / p)>>$ of its data out through its own
  <<port/GB:.0f>> GB/s port: $<<tex_frac((p - 1) / p)>> \times <<n/MB:.0f>>\ \text{MB}/<<port/GB:.0f>>\ \text{GB/s} \approx <<egress/ms:.2f>>$ ms.

The egress bound is the larger one, so it is the one that binds: a non-blocking switch
has bandwidth to spare inside, and the bottleneck is each GPU's own port.
""")
code(r'''
p, n, port = 64, 64 * MB, IB_NDR.beta
assert same(port, 50 * GB)                                   # the port of the statement
bisection_bw = Switch(p, IB_NDR).bisection_bandwidth
crossing = p * n / 4                                         # bytes across the cut, each way
egress, bisection = all_to_all_bounds(p, n, port, bisection_bw)
print(f"p·n/4 = {crossing / GB:.3f} GB;  {tr('对分带宽', 'bisection bandwidth')} {bisection_bw / GB:.0f} GB/s")
print(f"{tr('对分下界', 'bisection bound')} {bisection / ms:.3f} ms,  {tr('出口下界', 'egress bound')} {egress / ms:.3f} ms")
assert same(bisection_bw, p // 2 * port)
assert same(bisection, crossing / bisection_bw) and same(egress, (p - 1) / p * n / port)
assert rounds_to(crossing / GB, 1.024, 0.001) and rounds_to(bisection_bw / GB, 1600, 1)
assert rounds_to(bisection / ms, 0.64, 0.01) and rounds_to(egress / ms, 1.26, 0.01)
assert egress > bisection
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 6
md(r"""
(zh-p5-ex-6)=
## 练习 6 · 层次化 all-reduce

4 个节点，每个节点 8 块 GPU（节点内 NVLink 450 GB/s，节点间每块 GPU 一块 50 GB/s 的 InfiniBand 网卡），all-reduce 512 MB。
只算带宽项，估计层次化算法每个阶段的时间和总时间，再与 32 块 GPU 直接做一个扁平 ring 比较。
""", r"""
(en-p5-ex-6)=
## Exercise 6 · Hierarchical all-reduce

Four nodes of 8 GPUs each (NVLink at 450 GB/s inside a node, one 50 GB/s InfiniBand NIC
per GPU between nodes) all-reduce 512 MB. Counting bandwidth terms only, estimate the
time of each phase of the hierarchical algorithm and the total, and compare with one
flat ring over all 32 GPUs.
""")
solution(r"""
1. **节点内 reduce-scatter（走 NVLink）：** $<<tex_frac((g - 1) / g)>> \times <<n/MB:.0f>>\ \text{MB}/<<nv0.beta/GB:.0f>>\ \text{GB/s} \approx <<rs/ms:.1f>>$ ms。这一步之后，每块 GPU 负责 <<shard/MB:.0f>> MB，存的是本节点在这一段上的累加结果。
2. **节点间 all-reduce（走 InfiniBand）：** 每个节点拿出编号相同的那块 GPU，凑成一条“轨道”；<<g>> 条轨道互不干扰，同时各跑一个 <<nodes>> 节点的 ring，每条处理 <<shard/MB:.0f>> MB：
   $2 \times <<tex_frac((nodes - 1) / nodes)>> \times <<shard/MB:.0f>>\ \text{MB}/<<ib0.beta/GB:.0f>>\ \text{GB/s} = <<inter/ms:.2f>>$ ms。
3. **节点内 all-gather（走 NVLink）：** 是第 1 步倒过来，同样约 <<ag/ms:.1f>> ms。

三段相加约 <<total/ms:.1f>> ms。扁平 ring 把 <<nodes * g>> 块 GPU 串成一个大环，环上总有几段要跨节点，每一步都被这些慢链路拖住：
$2 \times <<tex_frac((nodes * g - 1) / (nodes * g))>> \times <<n/MB:.0f>>\ \text{MB}/<<ib0.beta/GB:.0f>>\ \text{GB/s} \approx <<flat/ms:.1f>>$ ms。
层次化大约快 <<flat / hier:.0f>> 倍：InfiniBand 只需搬 $<<tex_frac(1 / g)>>$ 的数据，其余都交给快 <<nv0.beta / ib0.beta:.0f>> 倍的 NVLink。
""", r"""
1. **Reduce-scatter inside each node (NVLink):** $<<tex_frac((g - 1) / g)>> \times <<n/MB:.0f>>\ \text{MB}/<<nv0.beta/GB:.0f>>\ \text{GB/s} \approx <<rs/ms:.1f>>$ ms;
   afterwards each GPU holds a <<shard/MB:.0f>> MB partial sum.
2. **All-reduce across nodes (InfiniBand):** the <<g>> "rails" each run a <<nodes>>-node ring at the
   same time, on <<shard/MB:.0f>> MB each: $2 \times <<tex_frac((nodes - 1) / nodes)>> \times <<shard/MB:.0f>>\ \text{MB}/<<ib0.beta/GB:.0f>>\ \text{GB/s} = <<inter/ms:.2f>>$ ms.
3. **All-gather inside each node (NVLink):** the mirror of phase 1, about <<ag/ms:.1f>> ms.

The total is about <<total/ms:.1f>> ms. A flat ring waits for the slow inter-node links in every
step: $2 \times <<tex_frac((nodes * g - 1) / (nodes * g))>> \times <<n/MB:.0f>>\ \text{MB}/<<ib0.beta/GB:.0f>>\ \text{GB/s} \approx <<flat/ms:.1f>>$ ms.
The hierarchical algorithm is about <<flat / hier:.0f>> times faster because InfiniBand only carries
$<<tex_frac(1 / g)>>$ of the data; everything else moves over NVLink, which is <<nv0.beta / ib0.beta:.0f>> times faster.
""")
code(r'''
nodes, g, n = 4, 8, 512 * MB
assert same(NVLINK4.beta, 450 * GB) and same(IB_NDR.beta, 50 * GB)   # the links of the statement
nv0 = Link("NVLink, bandwidth only", 0.0, NVLINK4.beta, "exercise 6: α = 0")
ib0 = Link("InfiniBand, bandwidth only", 0.0, IB_NDR.beta, "exercise 6: α = 0")
shard = n / g                                                # what each rail all-reduces
rs = t_reduce_scatter("ring", g, n, 0.0, nv0.beta)
inter = t_formula("ring", nodes, shard, 0.0, ib0.beta)
ag = t_all_gather("ring", g, n, 0.0, nv0.beta)
total = rs + inter + ag

cluster = VirtualCluster(TwoLevel(nodes, g, nv0, ib0))
hier = all_reduce(cluster, nbytes=n, algorithm="hierarchical").time
flat = all_reduce(cluster, nbytes=n, channels=1).time
print(f"reduce-scatter {rs / ms:.4f} ms + {tr('节点间', 'inter-node')} all-reduce {inter / ms:.4f} ms "
      f"+ all-gather {ag / ms:.4f} ms = {total / ms:.4f} ms ({tr('模拟器', 'simulator')}: {hier / ms:.4f} ms)")
print(f"{tr('扁平 ring', 'flat ring')}: {flat / ms:.3f} ms = {flat / hier:.2f} × {tr('层次化', 'hierarchical')}")
assert same(total, hier) and same(total, t_allreduce_hierarchical(nodes, g, n, nv0, ib0))
assert same(inter, 2 * (nodes - 1) / nodes * shard / ib0.beta)
assert rounds_to(rs / ms, 1.0, 0.1) and rounds_to(ag / ms, 1.0, 0.1)
assert rounds_to(inter / ms, 1.92, 0.01) and rounds_to(total / ms, 3.9, 0.1)
P = nodes * g
assert same(flat, 2 * (P - 1) / P * n / ib0.beta) and rounds_to(flat / ms, 19.8, 0.1)
assert rounds_to(flat / hier, 5, 1)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 7
md(r"""
(zh-p5-ex-7)=
## 练习 7 · 张量并行的通信账 💻

Llama-3.1-8B（32 层，$d_\text{model}$ = 4096）以 TP = 4、batch B = 16 做 decode。每生成一步要做几次 all-reduce，每次传多少字节？
这些 all-reduce 在 NVLink（α = 2 µs，β = 450 GB/s）上分别用 ring 和递归倍增执行，一步下来各花多少时间？
""", r"""
(en-p5-ex-7)=
## Exercise 7 · The communication bill of tensor parallelism 💻

Llama-3.1-8B (32 layers, $d_\text{model}$ = 4096) decodes with TP = 4 and batch B = 16.
How many all-reduces does one step need, and how many bytes does each carry? How long do
they take on NVLink (α = 2 µs, β = 450 GB/s) with the ring, and with recursive doubling?
""")
solution(r"""
按 Megatron 的切法，张量并行在每层要做 <<per_layer>> 次 all-reduce：注意力之后一次、MLP 之后一次，
于是一步共 $<<per_layer>> \times <<model.n_layers>> = <<count>>$ 次。每次传的是 $B \times d_\text{model}$ 个 bf16 值：
$<<tokens>> \times <<model.d_model>> \times <<bf16>> = <<tex_int(n)>>$ 字节（约 <<n/KB:.0f>> KB），它在 NVLink 上走一趟只要 $n/\beta \approx <<n/beta/us:.2f>>$ µs。

- ring（$p = <<p>>$）：$<<ring_steps>>\alpha + <<ring_share:g>>\,n/\beta \approx <<ring_steps * alpha/us:.0f>> + <<ring_share * n/beta/us:.2f>> = <<ring/us:.1f>>$ µs，<<count>> 次合计约 <<count * ring/ms:.2f>> ms。
- 递归倍增：$<<rd_steps>>(\alpha + n/\beta) = <<rd_steps>> \times (<<alpha/us:.0f>> + <<n/beta/us:.2f>>) \approx <<rd/us:.1f>>$ µs，<<count>> 次合计约 <<count * rd/ms:.2f>> ms。

这条消息比 NVLink 的半带宽点（<<n_half/KB:.0f>> KB）小得多，耗时几乎全花在 α 上，所以步数少的递归倍增快了约 <<ring / rd:.1f>> 倍。
代码用 `t_formula` 逐次计算，并与 `commbook.llm.tp_comm_time` 给出的整步时间对照。
""", r"""
Megatron-style tensor parallelism does <<per_layer>> all-reduces per layer (one after attention,
one after the MLP), so a step needs $<<per_layer>> \times <<model.n_layers>> = <<count>>$ of them. Each carries
$B \times d_\text{model} \times <<bf16>>$ bytes $= <<tokens>> \times <<model.d_model>> \times <<bf16>> = <<tex_int(n)>>$ bytes
(<<n/KB:.0f>> KB); one pass over NVLink takes $n/\beta \approx <<n/beta/us:.2f>>$ µs.

- Ring ($p = <<p>>$): $<<ring_steps>>\alpha + <<ring_share:g>>\,n/\beta \approx <<ring_steps * alpha/us:.0f>> + <<ring_share * n/beta/us:.2f>> = <<ring/us:.1f>>$ µs, about <<count * ring/ms:.2f>> ms for all <<count>>.
- Recursive doubling: $<<rd_steps>>(\alpha + n/\beta) = <<rd_steps>> \times (<<alpha/us:.0f>> + <<n/beta/us:.2f>>) \approx <<rd/us:.1f>>$ µs, about <<count * rd/ms:.2f>> ms for all <<count>>.

The message is far below NVLink's half-bandwidth point (<<n_half/KB:.0f>> KB), so the time is almost
all α, and recursive doubling, with fewer steps, is about <<ring / rd:.1f>> times faster. The code
computes each all-reduce with `t_formula` and checks the step total against
`commbook.llm.tp_comm_time`.
""")
code(r'''
model, p, tokens, bf16 = LLAMA31_8B, 4, 16, 2
alpha, beta = NVLINK4.alpha, NVLINK4.beta
assert (model.n_layers, model.d_model) == (32, 4096)         # the model of the statement
assert same(alpha, 2 * us) and same(beta, 450 * GB)          # the link of the statement
count = tp_allreduces_per_step(model)
per_layer = count // model.n_layers                          # after attention, after the MLP
n = tp_message_bytes(model, tokens=tokens, bytes_per_value=bf16)
ring_steps, ring_share, rd_steps = 2 * (p - 1), 2 * (p - 1) / p, int(math.log2(p))
ring = t_formula("ring", p, n, alpha, beta)
rd = t_formula("rd", p, n, alpha, beta)
n_half = half_bandwidth_point(alpha, beta)
print(tr(f"每步 {count} 次 all-reduce，每次 {n:,.0f} B", f"{count} all-reduces per step, {n:,.0f} B each")
      + f";  n/β = {n / beta / us:.4f} µs")
print(f"ring: {ring / us:.3f} µs × {count} = {count * ring / ms:.4f} ms")
print(f"rd:   {rd / us:.3f} µs × {count} = {count * rd / ms:.4f} ms   (ring / rd = {ring / rd:.2f})")
assert per_layer == 2 and count == per_layer * model.n_layers == 64 and n == tokens * model.d_model * bf16 == 131_072
assert rounds_to(n / beta / us, 0.29, 0.01)
assert same(ring, ring_steps * alpha + ring_share * n / beta) and same(rd, rd_steps * (alpha + n / beta))
assert rounds_to(ring / us, 12.4, 0.1) and rounds_to(count * ring / ms, 0.80, 0.01)
assert rounds_to(rd / us, 4.6, 0.1) and rounds_to(count * rd / ms, 0.29, 0.01)
assert rounds_to(n_half / KB, 900, 1)
assert same(tp_comm_time(model, tokens=tokens, tp=p), count * ring)
assert same(tp_comm_time(model, tokens=tokens, tp=p, algorithm="rd"), count * rd)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 8
md(r"""
(zh-p5-ex-8)=
## 练习 8 · 搬运 KV cache

某模型用 MHA：80 层，64 个 KV 头，每头 $d_\text{head}$ = 128，KV 以 BF16 存放。一条 8192 token 的提示，KV cache 占多少字节？
通过一块 50 GB/s 的网卡把它发出去需要多长时间？若模型改用 GQA（8 个 KV 头），又若在 GQA 的基础上把 KV 存成 FP8，结果各是多少？
""", r"""
(en-p5-ex-8)=
## Exercise 8 · Moving the KV cache

A model with MHA attention has 80 layers and 64 KV heads of $d_\text{head}$ = 128, with
the KV cache stored in BF16. How large is the KV cache of one 8192-token prompt, and how
long does it take to send it through one 50 GB/s NIC? What if the model used GQA with 8
KV heads instead, and what if on top of that the cache were stored in FP8?
""")
solution(r"""
每个 token 在每一层都要存一份 K 和一份 V：$2 \times <<mha.n_layers>> \times <<mha.n_kv_heads>> \times <<mha.head_dim>> \times <<bf16>> = <<tex_int(per_token)>>$ 字节，约 <<per_token/MB:.2f>> MB。
乘上 <<tokens>> 个 token 约为 <<size["MHA, BF16"]/GB:.1f>> GB，一块 <<IB_NDR.beta/GB:.0f>> GB/s 的网卡要发约 <<secs["MHA, BF16"]/ms:.0f>> ms。

- GQA-<<gqa.n_kv_heads>>：KV 头只剩 $<<tex_frac(gqa.n_kv_heads / mha.n_kv_heads)>>$，约 <<size["GQA-8, BF16"]/GB:.2f>> GB，约 <<secs["GQA-8, BF16"]/ms:.0f>> ms。
- 再换 FP8：每个值从 <<bf16>> 字节降到 <<fp8>> 字节，体积再减一半，约 <<size["GQA-8, FP8"]/GB:.2f>> GB，约 <<secs["GQA-8, FP8"]/ms:.0f>> ms。

（代码算出的传输时间里还含一次 α = <<IB_NDR.alpha/us:.0f>> µs，与几十毫秒相比可以不计。）
""", r"""
Each token stores one K and one V in every layer:
$2 \times <<mha.n_layers>> \times <<mha.n_kv_heads>> \times <<mha.head_dim>> \times <<bf16>> = <<tex_int(per_token)>>$ bytes ≈ <<per_token/MB:.2f>> MB. Times <<tokens>>
tokens that is about <<size["MHA, BF16"]/GB:.1f>> GB, which one <<IB_NDR.beta/GB:.0f>> GB/s NIC sends in about <<secs["MHA, BF16"]/ms:.0f>> ms.

- GQA-<<gqa.n_kv_heads>>: $<<tex_frac(gqa.n_kv_heads / mha.n_kv_heads)>>$ of the KV heads, about <<size["GQA-8, BF16"]/GB:.2f>> GB and <<secs["GQA-8, BF16"]/ms:.0f>> ms.
- Plus FP8: <<fp8>> byte per value instead of <<bf16>> halves it again, about <<size["GQA-8, FP8"]/GB:.2f>> GB and <<secs["GQA-8, FP8"]/ms:.0f>> ms.

(The transfer times in the code also include one α = <<IB_NDR.alpha/us:.0f>> µs, negligible next to tens of
milliseconds.)
""")
code(r'''
mha, tokens, bf16, fp8 = LLAMA31_70B_MHA, 8192, 2, 1
gqa = replace(mha, n_kv_heads=8)
assert mha.n_layers == 80 and mha.n_kv_heads == 64 and mha.head_dim == 128   # the model of the statement
assert same(IB_NDR.beta, 50 * GB)                                            # the NIC of the statement
assert gqa.kv_bytes_per_token() == LLAMA31_70B.kv_bytes_per_token()
per_token = mha.kv_bytes_per_token()
print(f"{tr('每 token', 'per token')}: {per_token:,.0f} B = {per_token / MB:.3f} MB")
assert per_token == 2 * mha.n_layers * mha.n_kv_heads * mha.head_dim * bf16
assert per_token == 2 * 80 * 64 * 128 * 2 and rounds_to(per_token / MB, 2.62, 0.01)

size, secs = {}, {}
cases = (("MHA, BF16", mha, bf16, 21.5, 0.1, 430, 10),
         ("GQA-8, BF16", gqa, bf16, 2.68, 0.01, 54, 1),
         ("GQA-8, FP8", gqa, fp8, 1.34, 0.01, 27, 1))
for name, model, nbytes, size_stated, size_step, t_stated, t_step in cases:
    size[name] = kv_bytes(model, tokens=tokens, bytes_per_value=nbytes)
    secs[name] = kv_transfer_time(model, tokens=tokens, nics=1, link=IB_NDR, bytes_per_value=nbytes)
    print(f"{name:12s} {size[name] / GB:7.3f} GB  {secs[name] / ms:7.2f} ms")
    assert same(secs[name], IB_NDR.alpha + size[name] / IB_NDR.beta)
    assert rounds_to(size[name] / GB, size_stated, size_step) and rounds_to(secs[name] / ms, t_stated, t_step)
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 9
md(r"""
(zh-p5-ex-9)=
## 练习 9 · 流水线广播的最优分块

8 个设备由 ICI 连成一条链（α = 1 µs，β = 45 GB/s），要把 8 MB 广播出去：消息切成 $k$ 块，像流水线一样逐块往下传。
根据时间公式，$k$ 取多少时广播最快（记作 $k^*$）？那时的用时 $T^*$ 是多少？
""", r"""
(en-p5-ex-9)=
## Exercise 9 · The best chunk count for a pipelined broadcast

Eight devices connected by ICI (α = 1 µs, β = 45 GB/s) broadcast 8 MB along a chain,
with the message cut into $k$ chunks that flow through the chain as a pipeline. Use the
formula to find the optimal chunk count $k^*$ and the time $T^*$ it gives.
""")
solution(r"""
链式流水线一共要走 $p - 2 + k$ 步，每步传一块：$T(k) = (p-2+k)\left(\alpha + \frac{n}{k\beta}\right)$。对 $k$ 求导并令导数为零：

$$
k^* = \sqrt{\frac{(p-2)\,n}{\alpha\beta}} = \sqrt{\frac{<<p - 2>> \times <<tex_sci(n)>>}{<<tex_sci(a)>> \times <<tex_sci(b)>>}} = \sqrt{<<inner:.0f>>} \approx <<k_star:.0f>>,
\qquad
T^* = \left(\sqrt{(p-2)\,\alpha} + \sqrt{n/\beta}\right)^2 = \left(\sqrt{<<(p - 2) * a/us:.0f>>\ \mu\text{s}} + \sqrt{<<n / b/us:.1f>>\ \mu\text{s}}\right)^2 = (<<root_alpha:.2f>> + <<root_beta:.2f>>)^2 \approx <<t_star/us:.0f>>\ \mu\text{s}.
$$

块数必须是整数。在模拟器里取 $k = <<k_sim[0]>>$ 跑一遍，得到 <<t_sim[k_sim[0]]/us:.2f>> µs；最优点附近 $T(k)$ 非常平坦，$k = <<k_sim[1]>>$ 也只快了约 <<(t_sim[k_sim[0]] - t_sim[k_sim[1]])/us:.2f>> µs。
""", r"""
The chain pipeline takes $p - 2 + k$ steps of one chunk each:
$T(k) = (p-2+k)\left(\alpha + \frac{n}{k\beta}\right)$. Setting the derivative in $k$ to zero gives

$$
k^* = \sqrt{\frac{(p-2)\,n}{\alpha\beta}} = \sqrt{\frac{<<p - 2>> \times <<tex_sci(n)>>}{<<tex_sci(a)>> \times <<tex_sci(b)>>}} = \sqrt{<<inner:.0f>>} \approx <<k_star:.0f>>,
\qquad
T^* = \left(\sqrt{(p-2)\,\alpha} + \sqrt{n/\beta}\right)^2 = \left(\sqrt{<<(p - 2) * a/us:.0f>>\ \mu\text{s}} + \sqrt{<<n / b/us:.1f>>\ \mu\text{s}}\right)^2 = (<<root_alpha:.2f>> + <<root_beta:.2f>>)^2 \approx <<t_star/us:.0f>>\ \mu\text{s}.
$$

The chunk count must be a whole number. The simulator with $k = <<k_sim[0]>>$ gives <<t_sim[k_sim[0]]/us:.2f>> µs; the
curve is flat near the optimum: $k = <<k_sim[1]>>$ is only about <<(t_sim[k_sim[0]] - t_sim[k_sim[1]])/us:.2f>> µs faster.
""")
code(r'''
p, n, a, b = 8, 8 * MB, ICI_V5E.alpha, ICI_V5E.beta
assert same(a, 1 * us) and same(b, 45 * GB)                  # the link of the statement
inner = (p - 2) * n / (a * b)
k_star, t_star = chain_broadcast_optimum(p, n, a, b)
root_alpha, root_beta = math.sqrt((p - 2) * a / us), math.sqrt(n / b / us)   # in √µs
print(f"k* = sqrt({inner:.1f}) = {k_star:.2f};  "
      f"T* = ({root_alpha:.2f} + {root_beta:.2f})² µs = {t_star / us:.2f} µs")
assert same(k_star, math.sqrt(inner)) and same(t_star / us, (root_alpha + root_beta) ** 2)
assert rounds_to(inner, 1067, 1) and rounds_to(k_star, 33, 1)
assert rounds_to(n / b / us, 177.8, 0.1)
assert rounds_to(root_alpha, 2.45, 0.01) and rounds_to(root_beta, 13.33, 0.01)
assert rounds_to(t_star / us, 249, 1)

cluster = VirtualCluster(Switch(p, ICI_V5E))
t_sim = {}
k_sim = (32, 33)                                             # two whole chunk counts around k*
for k in k_sim:
    t_sim[k] = broadcast(cluster, nbytes=n, algorithm="chain", chunks=k).time
    assert same(t_sim[k], t_broadcast("chain", p, n, a, b, chunks=k))
    print(f"{tr('模拟器', 'simulator')}, k = {k}: {t_sim[k] / us:.3f} µs")
assert rounds_to(t_sim[k_sim[0]] / us, 249.11, 0.01) and t_sim[k_sim[1]] < t_sim[k_sim[0]]
print(AGREES)
''')

# ----------------------------------------------------------------------------- exercise 10
md(r"""
(zh-p5-ex-10)=
## 练习 10 · MoE 分发的节点数限制

DeepSeek-V3 的路由守着一条规矩：一个 token 选中的专家，至多分布在 4 个节点上。假如撤掉这条规矩，它挑中的 8 个专家有可能落在 8 个不同的节点。
那样的话，一次分发穿过节点间网络的字节数，最坏会涨到原来的几倍？
""", r"""
(en-p5-ex-10)=
## Exercise 10 · Capping the nodes of MoE dispatch

DeepSeek-V3 routes each token to experts on at most 4 nodes. Without that cap, the 8
experts a token picks could sit on 8 different nodes. By how much could the cross-node
bytes of the dispatch grow, at most?
""")
solution(r"""
先看撤掉规矩后的最坏情形：<<top_k>> 个专家各占一个节点，token 的隐藏向量（FP8 分发，每个值 <<fp8>> 字节，共 $d$ 字节）
要经 InfiniBand 分别送往 <<top_k>> 个节点，合计 $<<free / d:.0f>>d$ 字节。

有这条规矩时，目的节点至多 <<max_nodes>> 个，而且每个目的节点只收一份：这份数据先落到该节点上与发送方同号的那块 GPU，
再由它经 NVLink 分给本节点上被选中的几个专家。于是穿过节点间网络的流量封顶在 $<<capped / d:.0f>>d$ 字节。

所以撤掉规矩，节点间字节最坏变成原来的 <<free / capped:.0f>> 倍；反过来看，这条规矩最多把它们压到原来的 $<<tex_frac(capped / free)>>$。
它的代价在路由一侧：挑专家时多了一道约束，token 有时拿不到打分最高的那几个专家。
""", r"""
Without the cap, in the worst case a token sends one copy to each of <<top_k>> nodes: $<<free / d:.0f>>d$
bytes over InfiniBand (with FP8 dispatch, <<fp8>> byte per value). With the cap it reaches
at most <<max_nodes>> nodes: each copy goes to the GPU with the same index on the target node, which
forwards it over NVLink to the selected experts on that node, so at most $<<capped / d:.0f>>d$ bytes.
Dropping the cap can therefore multiply the cross-node bytes by <<free / capped:.0f>>; put the other way, the cap
cuts them to at most $<<tex_frac(capped / free)>>$. The price is one more constraint on routing, which may steer a
token away from its best experts.
""")
code(r'''
model, fp8 = DEEPSEEK_V3, 1
d, top_k, max_nodes = model.d_model, model.top_k, model.max_nodes_per_token
free = moe_cross_node_bytes(model, tokens=1, bytes_per_value=fp8)
capped = moe_cross_node_bytes(model, tokens=1, bytes_per_value=fp8, max_nodes=max_nodes)
print(f"d = {d}:  {tr('不限制', 'uncapped')} {free:,.0f} B = {free / d:.0f}d,  "
      f"{tr(f'最多 {max_nodes} 个节点', f'at most {max_nodes} nodes')} {capped:,.0f} B = {capped / d:.0f}d,  "
      f"{free / capped:.1f} ×")
assert top_k == 8 and max_nodes == 4                         # the model of the statement
assert free == top_k * d * fp8 and capped == max_nodes * d * fp8 and free / capped == 2
print(AGREES)
''')



if __name__ == "__main__":
    main(__doc__.splitlines()[0])
