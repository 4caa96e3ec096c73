/* tycheon site: sortable tables and offline plotly charts. No network, no dependencies besides the
   plotly.min.js bundle shipped next to this file, which is fetched only by pages that have a chart, after
   the page itself has loaded (pages without a chart never download it). */
(function () {
  "use strict";

  /* assets/ folder of this script, taken while it runs (currentScript is null afterwards). */
  var ASSETS = (function () {
    var src = document.currentScript ? document.currentScript.src : "";
    return src ? src.replace(/[^\/]*$/, "") : "assets/";
  })();

  function cellKey(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) { return numeric ? null : ""; }
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    if (!numeric) { return raw.toLowerCase(); }
    if (raw === "") { return null; }
    var value = parseFloat(raw.replace(/,/g, ""));
    return isNaN(value) ? null : value;
  }

  /* Stable sort on one column; missing numbers always go last, whichever the direction. */
  function sortTable(table, index, descending) {
    var header = table.tHead.rows[0].cells[index];
    var numeric = header.getAttribute("data-type") === "number";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, position) {
      return { row: row, key: cellKey(row, index, numeric), position: position };
    });
    rows.sort(function (a, b) {
      if (a.key === null && b.key === null) { return a.position - b.position; }
      if (a.key === null) { return 1; }
      if (b.key === null) { return -1; }
      var order = a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
      if (descending) { order = -order; }
      return order !== 0 ? order : a.position - b.position;
    });
    rows.forEach(function (entry) { body.appendChild(entry.row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }

  function makeSortable(table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.setAttribute("tabindex", "0");
      th.setAttribute("role", "columnheader button");
      th.title = "Sort by this column";
      var activate = function () {
        var descending = th.getAttribute("aria-sort") === "ascending";
        sortTable(table, index, descending);
      };
      th.addEventListener("click", function (event) {
        if (event.target.closest && event.target.closest("a")) { return; }  /* a glossary link, not a sort */
        activate();
      });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); activate(); }
      });
    });
  }

  /* A figure may carry layout.meta.narrow for screens under 600 px: "layout" overrides (dotted paths),
     per-trace overrides ("traces"), and "labels": trace n's name written beside its marker, on side labels[n]. */
  function narrow(figure, width) {
    var alt = figure.layout.meta && figure.layout.meta.narrow;
    if (!alt || width >= 600) { return figure; }
    (alt.labels || []).forEach(function (side, index) {
      var trace = figure.data[index];
      if (trace) {
        Object.assign(trace, { mode: "markers+text", text: [trace.name], textposition: "middle " + side,
                               cliponaxis: false, textfont: { size: 11 } });
      }
    });
    Object.keys(alt.traces || {}).forEach(function (index) {
      var trace = figure.data[Number(index)];
      if (trace) { Object.assign(trace, alt.traces[index]); }
    });
    Object.keys(alt.layout || {}).forEach(function (path) {
      var parts = path.split("."), target = figure.layout;
      for (var i = 0; i < parts.length - 1; i++) { target = target[parts[i]] = target[parts[i]] || {}; }
      target[parts[parts.length - 1]] = alt.layout[path];
    });
    return figure;
  }

  /* A critical-difference diagram from the compact spec a leaderboard ships (benchmarks/render/charts.py:
     cd_spec), built exactly as cd_figure_from_spec builds it there: m = [label, mean rank, colour, symbol]
     per model, g = clique bars [i, j], cd / ccd = [value shown, bar end], x = axis range. */
  function cliqueLetter(n) {
    var letters = "";
    n += 1;
    while (n) { var rem = (n - 1) % 26; n = (n - 1 - rem) / 26; letters = String.fromCharCode(97 + rem) + letters; }
    return letters;
  }

  function cdFigure(spec) {
    var methods = spec.m, k = methods.length, groups = spec.g;
    var ranks = methods.map(function (m) { return m[1]; });
    var data = methods.map(function (m, row) {
      return { mode: "markers", x: [m[1]], y: [row], name: m[0], marker: { color: m[2], symbol: m[3] } };
    });
    var level = (100 * k - 40) / 100, gx = [], gy = [];
    groups.forEach(function (g, n) {
      var i = g[0], j = g[1];
      level = (100 * k - 40 + 35 * (n + 1)) / 100;
      var span = methods[i][0] + " to " + methods[j][0] + ", " + (j - i + 1) + " models";
      data.push({ mode: "lines+text", x: [ranks[i], ranks[j]], y: [level, level], text: [cliqueLetter(n), ""],
                  textposition: "middle left", cliponaxis: false, line: { color: "#555", width: 5 },
                  hovertemplate: "group " + cliqueLetter(n) + " (" + span + "): not significantly different<extra></extra>" });
      for (var m = i; m <= j; m++) { gx.push(ranks[m], ranks[m], null); gy.push(m, level, null); }
    });
    if (gx.length) {
      data.push({ mode: "lines", x: gx.slice(0, -1), y: gy.slice(0, -1),
                  line: { color: "#999", width: 1, dash: "dot" }, hoverinfo: "skip" });
    }
    var low = ranks.length ? Math.min.apply(null, ranks) : 1.0, tickvals = [], ticktext = [], labels = {};
    [["cd", "Nemenyi CD", "solid", -1.3], ["ccd", "conservative CD", "dot", -0.7]].forEach(function (ref) {
      if (!spec[ref[0]]) { return; }
      var text = ref[1] + " = " + spec[ref[0]][0], y = ref[3];
      data.push({ mode: "lines+markers", x: [low, spec[ref[0]][1]], y: [y, y],
                  line: { color: "#0072B2", width: 3, dash: ref[2] },
                  marker: { symbol: "line-ns-open", size: 10, color: "#0072B2", line: { width: 0 } },
                  hovertemplate: text + "<extra></extra>" });
      tickvals.push(y);
      ticktext.push(text);
      labels[String(data.length - 1)] = { y: [y * 1.6, y * 1.6], mode: "lines+markers+text", text: [text, ""],
                                           textposition: "top right", textfont: { size: 11 } };
    });
    var top = (100 * k + 10 + 35 * groups.length) / 100, middle = (spec.x[0] + spec.x[1]) / 2;
    return { data: data, layout: {
      height: Math.trunc(150 + 34 * k + 18 * Math.max(level - k + 0.4, 0) / 0.35),
      margin: { l: 260, r: 30, t: 20, b: 50 }, showlegend: false, hoverlabel: { namelength: -1 },
      template: { data: { scatter: [{ marker: { size: 12, line: { color: "#000", width: 1 } },
                                      hovertemplate: "mean rank %{x:.3f}" }] } },
      xaxis: { title: { text: "mean rank over complete blocks (1 = best)" }, range: spec.x.slice(), zeroline: false,
               showgrid: true, automargin: true },
      yaxis: { tickvals: tickvals.concat(methods.map(function (m, i) { return i; })),
               ticktext: ticktext.concat(methods.map(function (m) { return m[0]; })), range: [top, -1.8],
               zeroline: false, showgrid: false },
      font: { size: 13 },
      meta: { narrow: {
        layout: { margin: { l: 16, r: 16, t: 20, b: 50 }, "yaxis.showticklabels": false, "yaxis.range": [top, -2.6],
                  "font.size": 11 },
        labels: ranks.map(function (rank) { return rank < middle ? "right" : "left"; }),
        traces: labels } }
    } };
  }
  window.tycheon = { cdFigure: cdFigure, unpackPanels: unpackPanels };

  function draw(charts) {
    charts.forEach(function (el) {
      if (!el.isConnected) { return; }  /* its panel was swapped out while plotly.js loaded */
      if (el.closest("[hidden]")) { return; }  /* hidden again while plotly.js loaded: drawn when shown */
      el.removeAttribute("aria-busy");
      if (el.hasAttribute("data-drawn")) { window.Plotly.Plots.resize(el); return; }
      el.setAttribute("data-drawn", "");
      var source = el.hasAttribute("data-figure") ? el.getAttribute("data-figure")
        : document.getElementById(el.getAttribute("data-figure-id")).textContent;
      var parsed = JSON.parse(source);
      var figure = narrow(el.hasAttribute("data-cd") ? cdFigure(parsed) : parsed, el.clientWidth);
      window.Plotly.newPlot(el, figure.data, figure.layout, { displaylogo: false, responsive: true, showSendToCloud: false });
    });
  }

  function fail(charts) {
    charts.forEach(function (el) { el.textContent = "The chart library (assets/plotly.min.js) did not load."; });
  }

  /* Load plotly.js once, after the window's load event, then draw the given charts (and any asked for
     while it loads). */
  var waiting = null;
  function drawWhenLoaded(charts) {
    if (!charts.length) { return; }
    if (typeof window.Plotly !== "undefined") { draw(charts); return; }
    charts.forEach(function (el) { el.setAttribute("aria-busy", "true"); });
    if (waiting) { waiting.push.apply(waiting, charts); return; }
    waiting = charts.slice();
    var start = function () {
      var script = document.createElement("script");
      script.src = ASSETS + "plotly.min.js";
      script.async = true;
      script.onload = function () {
        if (typeof window.Plotly === "undefined") { fail(waiting); } else { draw(waiting); }
      };
      script.onerror = function () { fail(waiting); };
      document.head.appendChild(script);
    };
    if (document.readyState === "complete") { start(); } else { window.addEventListener("load", start); }
  }

  /* A chart picker (<select class="tyc-picker">, options naming panels) shows one panel at a time; a chart
     is drawn when its panel is first shown, so a page of many charts draws one. */
  function showPanel(select, id) {
    Array.prototype.forEach.call(select.options, function (option) {
      var panel = document.getElementById(option.value);
      if (panel) { panel.hidden = option.value !== id; }
    });
    select.value = id;
    var panel = document.getElementById(id);
    if (panel) { drawWhenLoaded(Array.prototype.slice.call(panel.querySelectorAll(".tyc-chart"))); }
  }

  function initPickers() {
    document.querySelectorAll("select.tyc-picker").forEach(function (select) {
      select.addEventListener("change", function () { showPanel(select, select.value); });
      /* a link to a chart in a hidden panel opens that panel */
      var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
      var panel = target && target.closest(".tyc-chart-panel");
      if (panel && Array.prototype.some.call(select.options, function (o) { return o.value === panel.id; })) {
        showPanel(select, panel.id);
      }
    });
  }

  function drawCharts(root) {
    var charts = root.querySelectorAll(".tyc-chart[data-figure], .tyc-chart[data-figure-id]");
    drawWhenLoaded(Array.prototype.filter.call(charts, function (el) { return !el.closest("[hidden]"); }));
  }

  /* Every data table gets a "Download CSV" link that writes the table as shown (a leaderboard's numbers at
     full precision are in its benchmark's leaderboards CSV, linked below it). */
  function csvCell(text) {
    var t = text.replace(/\s+/g, " ").trim();
    return /[",\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }

  function tableCsv(table) {
    return Array.prototype.map.call(table.rows, function (row) {
      return Array.prototype.map.call(row.cells, function (cell) { return csvCell(cell.textContent); }).join(",");
    }).join("\n") + "\n";
  }

  function addCsvLink(table, index) {
    var link = document.createElement("a");
    link.className = "tyc-csv";
    link.href = "#";
    link.textContent = "Download this table as CSV";
    link.addEventListener("click", function (event) {
      event.preventDefault();
      var blob = new Blob([tableCsv(table)], { type: "text/csv" });
      var a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = (document.title.split(" - ")[0] || "table").replace(/[^A-Za-z0-9]+/g, "-") + "-" + (index + 1) + ".csv";
      document.body.appendChild(a);
      a.click();
      setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
    });
    var holder = document.createElement("p");
    holder.className = "tyc-download";
    holder.appendChild(link);
    var box = table.closest(".tyc-table-wrap") || table;
    box.parentNode.insertBefore(holder, box.nextSibling);
  }

  /* a box that scrolls sideways must be reachable by keyboard (WCAG 2.1.1): focusable while it scrolls */
  function markOne(el) {
    if (el.scrollWidth > el.clientWidth + 1) {
      el.setAttribute("tabindex", "0");
      if (!el.hasAttribute("aria-label") && el.tagName !== "TABLE") {
        /* a label needs a role on a div or pre (aria-prohibited-attr): a named region */
        if (!el.hasAttribute("role")) { el.setAttribute("role", "region"); }
        el.setAttribute("aria-label", "scrollable content");
      }
    } else if (el.getAttribute("tabindex") === "0" && el.tagName !== "TH") {
      el.removeAttribute("tabindex");
    }
  }

  function markScrollable(root) {
    (root || document).querySelectorAll("table.tyc-table, .tyc-table-wrap, .md-typeset pre, .tyc-math").forEach(markOne);
  }

  /* Tables far from the screen are not laid out (tycheon.css: content-visibility: auto), so until a reader
     nears one its height is an estimate from its row count and whether it scrolls sideways is unknown:
     it is measured again when the browser lays it out. */
  function deferTables(root) {
    root.querySelectorAll("table.tyc-table").forEach(function (table) {
      table.style.containIntrinsicHeight = "auto " + (3 * table.rows.length + 1).toFixed(1) + "em";
      table.addEventListener("contentvisibilityautostatechange", function (event) {
        if (event.skipped) { return; }
        markOne(table);
        var wrap = table.closest(".tyc-table-wrap");
        if (wrap) { markOne(wrap); }
      });
    });
  }

  /* What every part of a page gets once it is in the document: the page at load, a leaderboard panel when
     it is swapped in. */
  var csvTables = 0;
  function initIn(root) {
    deferTables(root);
    markScrollable(root);
    root.querySelectorAll("table.tyc-table:not(.tyc-kv)").forEach(function (table) {
      if (table.closest(".tyc-notscored")) { return; }  /* a list of skipped models, not data */
      if (table.tHead && table.tBodies.length && table.tBodies[0].rows.length) { addCsvLink(table, csvTables++); }
    });
    root.querySelectorAll("table.tyc-sortable").forEach(makeSortable);
    drawCharts(root);
  }

  /* A leaderboard page (benchmarks/render/panels.py) holds one panel per metric: the shown one as HTML, the
     others in script#tyc-panels as base64 of gzip-compressed JSON {metric: html}. A metric tab, or a link
     to the page at #metric, swaps that metric's panel in. */
  function unpackPanels(text) {
    var binary = atob(text.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) { bytes[i] = binary.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function initPanels() {
    var holder = document.getElementById("tyc-panel");
    if (!holder) { return; }
    var packed = document.getElementById("tyc-panels");
    var tabs = Array.prototype.slice.call(document.querySelectorAll(".tyc-metric-tabs a[data-metric]"));
    var panels = {};
    panels[holder.getAttribute("data-metric")] = holder.innerHTML;  /* as shipped, before initIn */
    var loading = null;
    var every = function () {
      if (!loading) {
        loading = packed ? unpackPanels(packed.textContent).then(function (more) {
          Object.keys(more).forEach(function (metric) { panels[metric] = more[metric]; });
          return panels;
        }) : Promise.resolve(panels);
      }
      return loading;
    };
    var show = function (metric) {
      if (metric === holder.getAttribute("data-metric")) { return; }
      every().then(function (all) {
        if (!Object.prototype.hasOwnProperty.call(all, metric)) { return; }
        holder.innerHTML = all[metric];
        holder.setAttribute("data-metric", metric);
        tabs.forEach(function (a) {
          var on = a.getAttribute("data-metric") === metric;
          a.classList.toggle("tyc-current", on);
          if (on) { a.setAttribute("aria-current", "true"); } else { a.removeAttribute("aria-current"); }
        });
        initIn(holder);
      }).catch(function (error) {
        holder.setAttribute("data-error", String(error));  /* the shown panel stays */
      });
    };
    var fromHash = function () {
      var id = decodeURIComponent(location.hash.slice(1));
      var tab = tabs.filter(function (a) { return a.getAttribute("href") === "#" + id; })[0];
      if (tab) { show(tab.getAttribute("data-metric")); }
    };
    window.addEventListener("hashchange", fromHash);
    fromHash();
    /* another unit or demand class opens at the metric the reader picked (that page's headline otherwise) */
    document.querySelectorAll(".tyc-switch a:not([data-metric])").forEach(function (a) {
      a.addEventListener("click", function () {
        var picked = tabs.filter(function (t) { return t.getAttribute("href") === location.hash; })[0];
        if (picked) { a.href = a.href.split("#")[0] + location.hash; }
      });
    });
  }

  function init() {
    window.addEventListener("resize", function () { markScrollable(document); });
    /* the theme's search dialog has no accessible name */
    document.querySelectorAll(".md-search[role=dialog]:not([aria-label])").forEach(function (el) {
      el.setAttribute("aria-label", "Search");
    });
    initPickers();
    initIn(document);
    initPanels();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
