// What a reader's browser adds to every page (issue 19 §1, §2).
//
// 1. The sidebar buttons.  pydata-sphinx-theme 0.17.1
// (assets/scripts/pydata-sphinx-theme.js, setupMobileSidebarKeyboardHandlers) and
// sphinx-book-theme 1.3.0 (assets/scripts/index.js, fixSidebarToggle) wire only the first
// ".primary-toggle" / ".secondary-toggle" of the page (document.querySelector): the
// header's button, which the book theme hides.  The button a reader sees, in the article
// header, had no handler: ☰ did nothing on a phone and did not fold the sidebar on a
// desktop.  Clicks on the other buttons are handed to the first, whose handlers open the
// drawer (narrow screens) or fold the sidebar (wide ones).
// 2. Wide tables that scroll inside their box take keyboard focus (tabindex 0, named
// after their caption), so the arrow keys scroll them; the shadow that says "more to the
// side" is drawn by commbook.css.  (MathJax makes each display formula focusable
// itself.)  Re-checked when the window changes size and once MathJax has typeset.
// 3. The search boxes of a one-language page ask the search page for that language's
// results first (lang=zh|en, read by commbook-search.js), and the page's language is
// remembered for a search opened elsewhere.
(function () {
  "use strict";

  function forward(selector) {
    var buttons = document.querySelectorAll(selector);
    for (var i = 1; i < buttons.length; i++) {
      buttons[i].addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        buttons[0].click();
      });
    }
  }

  var SCROLLERS = "article table.commbook-table, article .pst-scrollable-table-container, article mjx-container[display=\"true\"]";

  function focusScrollers() {
    document.querySelectorAll(SCROLLERS).forEach(function (box) {
      var wide = box.scrollWidth > box.clientWidth + 1;
      if (wide && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.classList.add("commbook-scrolls");
        if (box.tagName !== "TABLE") box.setAttribute("role", "region");
        var caption = box.querySelector("caption");
        var name = caption ? caption.textContent.trim() : "";
        if (name) box.setAttribute("aria-label", name);
      } else if (!wide && box.classList.contains("commbook-scrolls")) {
        box.removeAttribute("tabindex");
        box.classList.remove("commbook-scrolls");
      }
    });
  }

  function rememberLanguage() {
    var own = /\/(chapters|exercises)\/(zh|en)\//.exec(location.pathname);
    if (!own) return;
    try { localStorage.setItem("commbook-lang", own[2]); } catch (e) { /* storage blocked */ }
    document.querySelectorAll("form.bd-search").forEach(function (form) {
      if (form.querySelector("input[name=lang]")) return;
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = "lang";
      input.value = own[2];
      form.appendChild(input);
    });
  }

  function init() {
    forward(".primary-toggle");
    forward(".secondary-toggle");
    rememberLanguage();
    focusScrollers();
    window.addEventListener("resize", focusScrollers, {passive: true});
    window.addEventListener("load", function () {
      focusScrollers();
      if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
        MathJax.startup.promise.then(focusScrollers);
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
