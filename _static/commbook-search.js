// The search page in the reader's language (issue 19 §2).  Loaded on search.html only
// (_ext/commbook_weight.py drops it from every other page).
//
// * Language: the search boxes of a page add lang=zh|en to the query
//   (commbook-reader.js); without it, the language of the last page read
//   (localStorage "commbook-lang").  Results of the other language are hidden behind one
//   button; in Chinese, the page's own strings (title, status lines) are Chinese.
// * Snippets: Sphinx 7.4's searchtools.js takes a result's snippet from the page's HTML
//   text (Search.htmlToText), where formulas are still TeX ("\(k\)") and table cells run
//   together.  Here a formula reads as its plain text (\(p\) → p, \alpha → α) and every
//   cell, row, paragraph and heading ends with a space.
// This file comes before searchtools.js in <head>: it starts at DOMContentLoaded, before
// searchtools.js's own handler (registered later) runs the query.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var results = document.getElementById("search-results");
  if (!results || typeof Search === "undefined") return;

  var params = new URLSearchParams(location.search);
  var lang = params.get("lang");
  try {
    if (lang !== "zh" && lang !== "en") lang = localStorage.getItem("commbook-lang");
  } catch (e) { /* storage blocked: no remembered language */ }
  if (lang !== "zh" && lang !== "en") lang = null;

  var ZH = {
    "Search": "搜索",
    "Searching": "正在搜索",
    "Search Results": "搜索结果",
    "Preparing search...": "正在准备搜索……",
    "Search finished, found ${resultCount} page(s) matching the search query.":
      "搜索完成，共有 ${resultCount} 个页面与查询相符。",
    "Your search did not match any documents. Please make sure that all words are spelled correctly and that you've selected enough categories.":
      "没有找到相符的页面。请检查拼写，或换一个更短的词再试。"
  };
  var OTHER = {
    zh: {show: "另有 {n} 个英文页面相符，点此显示", shown: "已显示英文页面",
         found: "搜索完成，共有 {n} 个中文页面与查询相符。"},
    en: {show: "Show {n} more matching pages in Chinese", shown: "Chinese pages shown",
         found: "Search finished, found {n} page(s) in English matching the search query."}
  };

  if (lang === "zh") {
    Documentation.addTranslations({messages: ZH, plural_expr: "0", locale: "zh_CN"});
    document.documentElement.lang = "zh-Hans";
    document.title = document.title.replace(/^Search\b/, "搜索");
    var h1 = document.querySelector(".bd-search-container h1");
    if (h1) h1.textContent = "搜索";
    document.querySelectorAll("form.bd-search input[type=search]").forEach(function (input) {
      input.placeholder = "搜索本书……";
      input.setAttribute("aria-label", "搜索本书……");
    });
  }

  // ---- snippets without TeX, with spaces between cells and blocks
  var TEX = [[/\\(?:alpha)\b/g, "α"], [/\\(?:beta)\b/g, "β"], [/\\(?:gamma)\b/g, "γ"],
    [/\\(?:cdot)\b/g, "·"], [/\\(?:times)\b/g, "×"], [/\\(?:approx)\b/g, "≈"], [/\\(?:le|leq)\b/g, "≤"],
    [/\\(?:ge|geq)\b/g, "≥"], [/\\(?:to|rightarrow)\b/g, "→"], [/\\(?:sum)\b/g, "Σ"],
    [/\\(?:infty)\b/g, "∞"], [/\\frac\{([^{}]*)\}\{([^{}]*)\}/g, "$1/$2"],
    [/\\(?:left|right|displaystyle|,|;|!|quad|qquad)/g, " "], [/\\[a-zA-Z]+/g, ""], [/[{}]/g, ""],
    [/\\/g, ""], [/\s+/g, " "]];

  function plainTex(tex) {
    var text = tex.replace(/^\s*(\\\(|\\\[|\$\$?)/, "").replace(/(\\\)|\\\]|\$\$?)\s*$/, "");
    TEX.forEach(function (rule) { text = text.replace(rule[0], rule[1]); });
    return text.trim();
  }

  var BLOCKS = "p, li, td, th, tr, h1, h2, h3, h4, h5, h6, dt, dd, caption, figcaption, pre, div.math";
  var original = Search.htmlToText;
  Search.htmlToText = function (htmlString, anchor) {
    var doc = new DOMParser().parseFromString(htmlString, "text/html");
    doc.querySelectorAll("span.math, div.math").forEach(function (el) {
      el.textContent = " " + plainTex(el.textContent) + " ";
    });
    doc.querySelectorAll(BLOCKS).forEach(function (el) { el.appendChild(doc.createTextNode(" ")); });
    var text = original(doc.documentElement.outerHTML, anchor);
    return text.replace(/\s+/g, " ");
  };

  // ---- results of the reader's language first; the other language on request
  if (!lang) return;
  var other = lang === "zh" ? "en" : "zh";
  var hidden = 0;
  var button = null;

  function isOther(li) {
    var a = li.querySelector("a");
    var href = a ? a.getAttribute("href") || "" : "";
    return new RegExp("(^|/)(chapters|exercises)/" + other + "/").test(href);
  }

  function showOthers() {
    results.classList.add("commbook-search-all");
    button.textContent = OTHER[lang].shown;
    button.disabled = true;
  }

  function update() {
    var status = Search.status;
    if (status && Search._pulse_status === -1 && /\d/.test(status.textContent) && !status.dataset.commbook) {
      var shown = results.querySelectorAll("li:not(.commbook-search-other-lang)").length;
      status.dataset.commbook = "1";
      status.textContent = OTHER[lang].found.replace("{n}", shown);
    }
    if (!hidden || results.classList.contains("commbook-search-all")) return;
    if (!button) {
      button = document.createElement("button");
      button.type = "button";
      button.className = "btn btn-sm commbook-search-other";
      button.addEventListener("click", showOthers);
      results.appendChild(button);
    }
    var text = OTHER[lang].show.replace("{n}", hidden);
    if (button.textContent !== text) button.textContent = text;  // (a change is a mutation)
  }

  new MutationObserver(function (changes) {
    changes.forEach(function (change) {
      change.addedNodes.forEach(function (node) {
        if (node.nodeName === "LI" && isOther(node)) {
          node.classList.add("commbook-search-other-lang");
          hidden += 1;
        }
      });
    });
    update();
  }).observe(results, {childList: true, subtree: true});
});
