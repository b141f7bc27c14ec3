// Typeset the book's formulas once, at build time (_ext/commbook_math.py runs this with
// node): MathJax 3.2.2 (npm mathjax-full, pinned in package.json), TeX in, CommonHTML out,
// with each formula's MathML beside it for screen readers (assistive-mml).
// stdin:  {"fontURL": "<url of MathJax's woff-v2 fonts, relative to the stylesheet>",
//          "pages": [[[tex, display], ...], ...]}
// stdout: {"pages": [[html | null, ...], ...], "errors": ["<tex>: <message>", ...],
//          "css": "<the stylesheet of every character used, for all pages>"}
"use strict";
const {mathjax} = require("mathjax-full/js/mathjax.js");
const {TeX} = require("mathjax-full/js/input/tex.js");
const {CHTML} = require("mathjax-full/js/output/chtml.js");
const {liteAdaptor} = require("mathjax-full/js/adaptors/liteAdaptor.js");
const {RegisterHTMLHandler} = require("mathjax-full/js/handlers/html.js");
const {AllPackages} = require("mathjax-full/js/input/tex/AllPackages.js");
const {AssistiveMmlHandler} = require("mathjax-full/js/a11y/assistive-mml.js");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const job = JSON.parse(input);
  const adaptor = liteAdaptor();
  AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
  // An error in a formula is thrown (not drawn as a red box), so the build can name it.
  const tex = new TeX({packages: AllPackages, formatError: (_jax, err) => { throw err; }});
  const chtml = new CHTML({fontURL: job.fontURL, adaptiveCSS: true});
  const doc = mathjax.document("", {InputJax: tex, OutputJax: chtml});
  const out = {pages: [], errors: []};
  for (const page of job.pages) {
    out.pages.push(page.map(([source, display]) => {
      try {
        return adaptor.outerHTML(doc.convert(source, {display}));
      } catch (err) {
        out.errors.push(`${source}: ${err.message}`);
        return null;
      }
    }));
  }
  out.css = adaptor.textContent(chtml.styleSheet(doc));
  process.stdout.write(JSON.stringify(out));
});
