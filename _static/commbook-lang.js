// 中文 / English switch (see _ext/commbook_sphinx.py): follow the reader's position, so
// the link to the twin page lands on the same section there.  data-anchors maps this
// page's section ids to the twin's.  Without JavaScript the link opens the twin's top.
// Chinese pages: sphinx-togglebutton's hints ("Click to show" / "Click to hide") in
// Chinese.  Its let-declared globals come in earlier scripts of <head> and are read when
// the page has loaded, so setting them here is in time.
if ((document.documentElement.lang || "").indexOf("zh") === 0 && typeof toggleHintShow !== "undefined") {
  toggleHintShow = "点击展开";
  toggleHintHide = "点击收起";
}

(function () {
  "use strict";

  function currentSection() {
    // Sections come in document order; the current one is the last whose top has
    // scrolled past the upper third of the window.
    var limit = window.innerHeight / 3;
    var found = null;
    var sections = document.querySelectorAll("article section[id]");
    for (var i = 0; i < sections.length; i++) {
      if (sections[i].getBoundingClientRect().top <= limit) found = sections[i];
    }
    if (found === null && location.hash) {
      found = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    }
    return found;
  }

  function updateLink(link) {
    var anchors;
    try {
      anchors = JSON.parse(link.getAttribute("data-anchors") || "{}");
    } catch (e) {
      return;
    }
    var base = link.getAttribute("href").split("#")[0];
    var section = currentSection();
    var target = section && anchors[section.id];
    // The page's own top-level section maps to the twin's top: no anchor needed.
    var first = document.querySelector("article section[id]");
    link.setAttribute("href", target && section !== first ? base + "#" + target : base);
  }

  function init() {
    // Chinese parts of bilingual pages (the landing page) are declared Chinese too.
    document.querySelectorAll(".commbook-lang-zh").forEach(function (el) {
      el.setAttribute("lang", "zh-Hans");
    });
    document.querySelectorAll("a.commbook-twin-link").forEach(function (link) {
      ["mousedown", "focus", "touchstart", "mouseenter"].forEach(function (ev) {
        link.addEventListener(ev, function () { updateLink(link); }, { passive: true });
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
