/* commbook: the explorers on the static page (issue 19 §3).
 *
 * Each <div class="commbook-interactive"> holds, as JSON, an explorer's states precomputed
 * by commbook at build time over a grid of its controls (code/commbook/book/explorers/static.py).
 * _ext/commbook_interactive.py serves this file as _static/commbook-interactive.js on the
 * pages that hold such a view, and only there.  This script draws the controls (native <select> and <input type="range"> with <label>s:
 * keyboard-operable), and on every change redraws the figure with Vega-Lite
 * (_static/commbook-vega.js, served with the site, fetched when a view nears the screen)
 * and swaps in the state's table.
 * The figure follows the theme's dark mode (html[data-theme]).  Without JavaScript, and
 * in print, the static rendering of the starting state stays.
 */
(function () {
  "use strict";

  function isDark() {
    return document.documentElement.getAttribute("data-theme") === "dark";
  }

  function cssVar(name, fallback) {
    var v = getComputedStyle(document.documentElement).getPropertyValue(name);
    return (v && v.trim()) || fallback;
  }

  function theme() {
    var dark = isDark();
    return {
      dark: dark,
      background: dark ? cssVar("--pst-color-background", "#121212") : "#ffffff",
      text: dark ? "#e6e6e6" : "#222222",
      grid: dark ? "#3a3a3a" : "#e3e3e3",
      domain: dark ? "#9a9a9a" : "#555555"
    };
  }

  /* A grey of the light figure (black labels, grey markers) turned for a dark background;
     colours with a hue stay as they are. */
  function colour(hex, th) {
    if (!th.dark || typeof hex !== "string" || hex.length !== 7) return hex;
    var r = parseInt(hex.slice(1, 3), 16), g = parseInt(hex.slice(3, 5), 16), b = parseInt(hex.slice(5, 7), 16);
    if (Math.max(r, g, b) - Math.min(r, g, b) > 24) return hex;
    var l = 255 - Math.round((r + g + b) / 3);
    l = Math.max(60, Math.min(235, l));
    var h = l.toString(16);
    if (h.length < 2) h = "0" + h;
    return "#" + h + h + h;
  }

  function labelExpr(ticks, labels) {
    if (!ticks || !ticks.length) return undefined;
    var expr = "''";
    for (var i = ticks.length - 1; i >= 0; i--) {
      var t = ticks[i], tol = Math.abs(t) * 1e-6 + 1e-12;
      expr = "abs(datum.value - (" + t + ")) <= " + tol + " ? " + JSON.stringify(labels[i] || "") + " : " + expr;
    }
    return expr;
  }

  function channel(ax, key, th, showAxis) {
    var a = ax[key], lim = a.lim.slice().sort(function (p, q) { return p - q; });
    var scale = { type: a.scale === "log" ? "log" : "linear", domain: lim, nice: false, zero: false };
    if (a.lim[0] > a.lim[1]) scale.reverse = true;
    /* every layer carries the same axis: Vega-Lite merges them (an axis: null on one layer
       would drop it) */
    var axis = { title: a.label || null, grid: true, values: a.ticks, labelExpr: labelExpr(a.ticks, a.tick_labels),
                 labelFlush: false, labelOverlap: true };
    return { scale: scale, axis: ax.diagram ? null : axis };
  }

  function xy(ax, th, fieldX, fieldY, first) {
    var cx = channel(ax, "x", th, first), cy = channel(ax, "y", th, first);
    var enc = {};
    enc.x = { field: fieldX, type: "quantitative", scale: cx.scale, axis: cx.axis };
    enc.y = { field: fieldY, type: "quantitative", scale: cy.scale, axis: cy.axis };
    return enc;
  }

  function layersOf(ax, series, marks, th) {
    var layers = [], first = true;
    function push(layer) {
      layers.push(layer);
      first = false;
    }
    series.forEach(function (s) {
      if (s.rule) {
        var enc = {}, c = channel(ax, s.rule, th, first);
        enc[s.rule] = { datum: s.at, type: "quantitative", scale: c.scale, axis: c.axis };
        push({ data: { values: [{}] }, mark: { type: "rule", color: colour(s.color, th), strokeWidth: s.width, opacity: s.alpha,
                       strokeDash: s.dash || undefined, clip: true }, encoding: enc });
        return;
      }
      var values = [];
      for (var i = 0; i < s.x.length; i++) {
        if (s.x[i] !== null && s.y[i] !== null) values.push({ x: s.x[i], y: s.y[i], i: i });
      }
      if (!values.length) return;
      if (s.dash !== undefined) {
        var line = { data: { values: values }, mark: { type: "line", color: colour(s.color, th), strokeWidth: s.width * 1.2,
                     opacity: s.alpha, strokeDash: s.dash || undefined, clip: true, interpolate: "linear" },
                     encoding: xy(ax, th, "x", "y", first) };
        line.encoding.order = { field: "i", type: "quantitative" };
        push(line);
      }
      if (s.marker) {
        var path = s.marker.charAt(0) === "M";
        push({ data: { values: values },
               mark: { type: "point", shape: s.marker, filled: !path, color: colour(s.color, th), opacity: 1,
                       size: Math.pow(s.size * 1.4, 2), strokeWidth: path ? 2 : 1, clip: true },
               encoding: xy(ax, th, "x", "y", first) });
      }
    });
    var rects = [], points = [], arrows = [], texts = [];
    marks.forEach(function (m) {
      if (m.point) points.push({ x: m.point[0], y: m.point[1], c: colour(m.color, th), s: m.size });
      else if (m.arrow) arrows.push({ x: m.arrow[0], y: m.arrow[1], x2: m.arrow[2], y2: m.arrow[3], c: colour(m.color, th) });
      else if (m.text !== undefined) texts.push({ x: m.at[0], y: m.at[1], t: m.text, c: colour(m.color, th) });
      else rects.push({ x: m.x, x2: m.x2, y: m.y, y2: m.y2, c: colour(m.color, th) });
    });
    if (rects.length) {
      var enc = xy(ax, th, "x", "y", first);
      enc.x2 = { field: "x2" };
      enc.y2 = { field: "y2" };
      enc.color = { field: "c", type: "nominal", scale: null, legend: null };
      push({ data: { values: rects }, mark: { type: "rect", clip: true }, encoding: enc });
    }
    if (arrows.length) {
      var ea = xy(ax, th, "x", "y", first);
      ea.x2 = { field: "x2" };
      ea.y2 = { field: "y2" };
      ea.color = { field: "c", type: "nominal", scale: null, legend: null };
      push({ data: { values: arrows }, mark: { type: "rule", strokeWidth: 1.5, clip: true }, encoding: ea });
    }
    if (points.length) {
      var ep = xy(ax, th, "x", "y", first);
      ep.fill = { field: "c", type: "nominal", scale: null, legend: null };
      ep.size = { field: "s", type: "quantitative", scale: null, legend: null };
      push({ data: { values: points }, mark: { type: "circle", opacity: 1, stroke: th.domain, strokeWidth: 0.8 },
             encoding: ep });
    }
    if (texts.length) {
      var et = xy(ax, th, "x", "y", first);
      et.text = { field: "t" };
      push({ data: { values: texts }, mark: { type: "text", fontSize: 10, color: th.text }, encoding: et });
    }
    return layers;
  }

  function chartSpec(data, state, width, th) {
    var charts = state[0].map(function (entry) {
      var ax = data.axes[entry[0]];
      var series = entry[1].map(function (i) { return data.series[i]; });
      var marks = entry[2].map(function (i) { return data.bars[i]; });
      var w = width, h = Math.round(Math.min(380, Math.max(200, width * 0.58)));
      if (ax.diagram) {
        var dx = Math.abs(ax.x.lim[1] - ax.x.lim[0]), dy = Math.abs(ax.y.lim[1] - ax.y.lim[0]);
        h = Math.round(Math.min(420, w * dy / Math.max(dx, 1e-9)));
        w = Math.round(h * dx / Math.max(dy, 1e-9));
      }
      return { title: ax.title ? { text: ax.title, color: th.text } : undefined, width: w, height: h,
               layer: layersOf(ax, series, marks, th) };
    });
    var spec = charts.length === 1 ? charts[0] : { vconcat: charts };
    spec.$schema = "https://vega.github.io/schema/vega-lite/v6.json";
    spec.background = th.background;
    spec.config = {
      view: { stroke: th.diagram ? null : th.grid },
      axis: { labelColor: th.text, titleColor: th.text, gridColor: th.grid, domainColor: th.domain,
              tickColor: th.domain, labelFontSize: 11, titleFontSize: 12 },
      title: { color: th.text, fontSize: 13 },
      text: { color: th.text }
    };
    return spec;
  }

  function legend(box, data, state, th) {
    box.textContent = "";
    var seen = {};
    state[0].forEach(function (entry) {
      entry[1].forEach(function (i) {
        var s = data.series[i];
        if (!s.label || seen[s.label]) return;
        seen[s.label] = true;
        var item = document.createElement("span");
        item.className = "commbook-interactive-key";
        var sw = document.createElement("span");
        sw.className = "commbook-interactive-swatch";
        sw.style.borderTopColor = colour(s.color, th);
        sw.style.borderTopStyle = s.dash ? "dashed" : "solid";
        item.appendChild(sw);
        item.appendChild(document.createTextNode(s.label));
        box.appendChild(item);
      });
    });
  }

  function setup(root, n) {
    var script = root.querySelector("script.commbook-interactive-data");
    if (!script || !window.vega || !window.vegaLite || root.classList.contains("commbook-interactive-live")) return;
    var data = JSON.parse(script.textContent);
    var picked = data.controls.map(function (c) { return c.start; });
    var view = document.createElement("div");
    view.className = "commbook-interactive-view";
    var form = document.createElement("div");
    form.className = "commbook-interactive-controls";
    form.setAttribute("role", "group");
    var chart = document.createElement("div");
    chart.className = "commbook-interactive-chart";
    var keys = document.createElement("div");
    keys.className = "commbook-interactive-legend";
    var table = document.createElement("div");
    table.className = "commbook-interactive-table";
    table.setAttribute("aria-live", "polite");
    var vegaView = null, drawn = -1;

    data.controls.forEach(function (c, k) {
      var id = "commbook-ix-" + n + "-" + c.name;
      var wrap = document.createElement("div");
      wrap.className = "commbook-interactive-control";
      var label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = c.label;
      wrap.appendChild(label);
      var input;
      if (c.kind === "select") {
        input = document.createElement("select");
        c.labels.forEach(function (text, i) {
          var o = document.createElement("option");
          o.value = String(i);
          o.textContent = text;
          input.appendChild(o);
        });
        input.value = String(c.start);
        wrap.appendChild(input);
      } else {
        input = document.createElement("input");
        input.type = "range";
        input.min = "0";
        input.max = String(c.labels.length - 1);
        input.step = "1";
        input.value = String(c.start);
        var out = document.createElement("output");
        out.htmlFor = id;
        out.textContent = c.labels[c.start];
        input.setAttribute("aria-valuetext", c.labels[c.start]);
        wrap.appendChild(input);
        wrap.appendChild(out);
        input.addEventListener("input", function () {
          out.textContent = c.labels[+input.value];
          input.setAttribute("aria-valuetext", c.labels[+input.value]);
        });
      }
      input.id = id;
      input.name = c.name;
      var onChange = function () {
        picked[k] = +input.value;
        draw();
      };
      input.addEventListener("input", onChange);
      input.addEventListener("change", onChange);
      form.appendChild(wrap);
    });

    function draw(force) {
      var key = picked.join("-");
      var state = data.states[key];
      if (!state) return;
      var th = theme();
      var width = Math.max(240, Math.min(720, (chart.clientWidth || root.clientWidth || 640) - 90));
      var sig = key + "|" + th.dark + "|" + width;
      if (sig === drawn && !force) return;
      drawn = sig;
      chart.setAttribute("data-state", key);
      chart.setAttribute("data-theme", th.dark ? "dark" : "light");
      table.innerHTML = data.tables[state[1]];
      legend(keys, data, state, th);
      var spec = chartSpec(data, state, width, th);
      var compiled = window.vegaLite.compile(spec).spec;
      if (vegaView) vegaView.finalize();
      chart.textContent = "";
      vegaView = new window.vega.View(window.vega.parse(compiled), { renderer: "svg", container: chart, hover: false });
      vegaView.runAsync().catch(function (err) {
        chart.textContent = String(err);
      });
    }

    view.appendChild(form);
    view.appendChild(chart);
    view.appendChild(keys);
    view.appendChild(table);
    if (data.note) {
      var note = document.createElement("p");
      note.className = "commbook-interactive-note";
      note.innerHTML = data.note;            /* the book's own words (texts/common.toml) */
      view.appendChild(note);
    }
    root.insertBefore(view, root.firstChild);
    root.classList.add("commbook-interactive-live");
    draw();
    new MutationObserver(function () { draw(); }).observe(document.documentElement,
      { attributes: true, attributeFilter: ["data-theme"] });
    var timer = null;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { draw(); }, 200);
    });
  }

  /* The chart library (772 KB) is fetched once a view comes near the screen, not with
     the page: a reader who never scrolls to an explorer does not download it. */
  var BUNDLE = (function () {
    var me = document.currentScript && document.currentScript.src;
    return me ? me.replace(/commbook-interactive\.js(\?.*)?$/, "commbook-vega.js") : "_static/commbook-vega.js";
  })();
  var loading = null;

  function library(then) {
    if (window.vega && window.vegaLite) return then();
    if (!loading) {
      loading = [];
      var tag = document.createElement("script");
      tag.src = BUNDLE;
      tag.onload = function () { loading.forEach(function (f) { f(); }); };
      document.head.appendChild(tag);
    }
    loading.push(then);
  }

  function start() {
    var roots = document.querySelectorAll("div.commbook-interactive");
    if (!roots.length) return;
    var all = function () {
      library(function () {
        for (var i = 0; i < roots.length; i++) setup(roots[i], i);
      });
    };
    if (!("IntersectionObserver" in window)) return all();
    var seen = new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) {
        seen.disconnect();
        all();
      }
    }, { rootMargin: "800px 0px" });
    for (var i = 0; i < roots.length; i++) seen.observe(roots[i]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
