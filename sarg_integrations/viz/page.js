(function () {
  "use strict";
  var root = document.documentElement;
  var errorBox = document.getElementById("sarg-errors");
  function reportError(message) {
    root.setAttribute("data-sarg-render", "error");
    errorBox.classList.add("shown");
    errorBox.appendChild(document.createTextNode("Rendering error: " + message));
    errorBox.appendChild(document.createElement("br"));
  }
  window.addEventListener("error", function (event) { reportError(String(event.message)); });
  var consoleError = console.error;
  console.error = function () {
    reportError(Array.prototype.map.call(arguments, String).join(" "));
    return consoleError.apply(console, arguments);
  };

  var SVG = "http:" + "//www.w3.org/2000/svg";  // the SVG namespace name, never fetched
  var COL = 280, ROW = 92, BOX_W = 176, LINE_H = 15, PAD = 30, OTHER = "#9a9a9a";

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (key) { node.setAttribute(key, String(attrs[key])); });
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function html(name, text, parent, cls) {
    var node = document.createElement(name);
    if (text !== null && text !== undefined) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function tint(hex) {
    var out = "#";
    for (var i = 1; i < 7; i += 2) {
      var c = parseInt(hex.substr(i, 2), 16);
      var v = Math.round(c + (255 - c) * 0.82).toString(16);
      out += v.length < 2 ? "0" + v : v;
    }
    return out;
  }

  function render(data) {
    var colours = {};
    data.chains.forEach(function (c) { colours[c.number] = c.colour; });
    var canvas = document.getElementById("sarg-canvas");
    var width = Math.max(1, data.columns) * COL + 2 * PAD - (COL - BOX_W);
    var height = Math.max(1, data.rows) * ROW + 2 * PAD;
    var svg = el("svg", {id: "sarg-graph", width: width, height: height,
      viewBox: "0 0 " + width + " " + height, role: "img",
      "aria-label": "reasoning graph"}, canvas);
    var defs = el("defs", {}, svg);
    function marker(id, colour) {
      var m = el("marker", {id: id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 10,
        markerHeight: 10, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse"}, defs);
      el("path", {d: "M0,0 L10,5 L0,10 z", fill: colour}, m);
    }
    marker("arrow-other", OTHER);
    data.chains.forEach(function (c) { marker("arrow-chain-" + c.number, c.colour); });

    var boxes = {};
    data.nodes.forEach(function (n) {
      var h = n.lines.length * LINE_H + 14;
      var cx = PAD + n.x * COL + BOX_W / 2, cy = PAD + n.y * ROW + ROW / 2;
      boxes[n.id] = {x: cx - BOX_W / 2, y: cy - h / 2, w: BOX_W, h: h, cx: cx, cy: cy};
    });

    var edgeLayer = el("g", {"class": "edges"}, svg);
    var labelLayer = el("g", {"class": "edge-labels"}, svg);
    var nodeLayer = el("g", {"class": "nodes"}, svg);
    var items = [];

    data.edges.forEach(function (e, index) {
      var a = boxes[e.source], b = boxes[e.target];
      var chain = e.chains.length ? e.chains[0] : 0;
      var colour = chain ? colours[chain] : OTHER;
      var x1, y1, x2, y2, d, mx, my;
      if (b.cx > a.cx + 1) {
        x1 = a.x + a.w; y1 = a.cy; x2 = b.x; y2 = b.cy;
        var dx = (x2 - x1) / 2;
        d = "M" + x1 + "," + y1 + " C" + (x1 + dx) + "," + y1 + " " + (x2 - dx) + "," + y2 +
          " " + x2 + "," + y2;
        mx = (x1 + x2) / 2; my = (y1 + y2) / 2;
      } else {
        x1 = a.cx; y1 = a.y; x2 = b.cx; y2 = b.y;
        var lift = 46 + Math.abs(x1 - x2) * 0.12;
        var top = Math.min(y1, y2) - lift;
        d = "M" + x1 + "," + y1 + " C" + x1 + "," + top + " " + x2 + "," + top +
          " " + x2 + "," + y2;
        mx = (x1 + x2) / 2; my = top + lift * 0.25;
      }
      var g = el("g", {"class": "edge" + (chain ? " chain-edge" : ""), "data-index": index,
        "data-source": e.source, "data-target": e.target,
        "data-chains": e.chains.join(" ")}, edgeLayer);
      el("path", {"class": "hit", d: d}, g);
      el("path", {"class": "line", d: d, stroke: colour, "stroke-width": chain ? 3.2 : 1.4,
        "marker-end": "url(#" + (chain ? "arrow-chain-" + chain : "arrow-other") + ")"}, g);
      var lg = el("g", {"class": "edge-label", "data-index": index}, labelLayer);
      var t = el("text", {x: mx, y: my + 4, "text-anchor": "middle", "font-size": 11.5,
        fill: chain ? colour : "#555", stroke: "#fff", "stroke-width": 4, "paint-order": "stroke",
        "font-weight": chain ? "600" : "400"}, lg);
      t.textContent = e.label;
      var bb = t.getBBox();
      if (bb.width) {
        lg.insertBefore(el("rect", {x: bb.x - 3, y: bb.y - 1,
          width: bb.width + 6, height: bb.height + 2,
          rx: 3, fill: "#fff", "fill-opacity": 0.9}), t);
      }
      items.push({kind: "edge", data: e, nodes: [g, lg], chains: e.chains});
      [g, lg].forEach(function (target) {
        target.addEventListener("mouseenter", function () { if (!pinned) { showEdge(e); } });
        target.addEventListener("click", function (ev) {
          ev.stopPropagation(); pin(g, function () { showEdge(e); });
        });
      });
    });

    data.nodes.forEach(function (n) {
      var b = boxes[n.id];
      var chain = n.chains.length ? n.chains[0] : 0;
      var cls = "node" + (chain ? " chain-node" : "") + (n.entry ? " entry-node" : "");
      var g = el("g", {"class": cls,
        "data-id": n.id, "data-chains": n.chains.join(" ")}, nodeLayer);
      el("rect", {x: b.x, y: b.y, width: b.w, height: b.h, rx: 8, ry: 8,
        fill: chain ? tint(colours[chain]) : "#f4f4f4",
        stroke: n.entry ? "#111" : (chain ? colours[chain] : "#bbb"),
        "stroke-width": n.entry ? 3 : 1.3}, g);
      if (n.entry) {
        var badge = el("text", {x: b.x + 6, y: b.y - 5, "font-size": 10.5, fill: "#111",
          "font-weight": "700"}, g);
        badge.textContent = "\u25B6 entry" +
          (n.similarity !== null ? " (" + n.similarity.toFixed(2) + ")" : "");
      }
      n.lines.forEach(function (line, i) {
        var t = el("text", {x: b.cx, y: b.y + 7 + LINE_H * (i + 0.8), "text-anchor": "middle",
          "font-size": 12.5, fill: "#111", "font-weight": chain ? "600" : "400"}, g);
        t.textContent = line;
      });
      var title = el("title", {}, g);
      title.textContent = n.id;
      items.push({kind: "node", data: n, nodes: [g], chains: n.chains});
      g.addEventListener("mouseenter", function () { if (!pinned) { showNode(n); } });
      g.addEventListener("click", function (ev) {
        ev.stopPropagation(); pin(g, function () { showNode(n); });
      });
    });

    var details = document.getElementById("sarg-details");
    var pinned = null;
    function pin(g, show) {
      if (pinned) { pinned.classList.remove("selected"); }
      pinned = g; g.classList.add("selected"); show();
    }
    svg.addEventListener("click", function () {
      if (pinned) { pinned.classList.remove("selected"); pinned = null; }
    });
    function clear() { while (details.firstChild) { details.removeChild(details.firstChild); } }
    function showEdge(e) {
      clear();
      var head = html("div", null, details);
      html("strong", e.source, head);
      head.appendChild(document.createTextNode(" \u2014[" + e.label + "]\u2192 "));
      html("strong", e.target, head);
      html("div", "relation type: " + (e.types.join(", ") || "-") +
        (e.chains.length ? "; in chain " + e.chains.join(", ") : "; not in a kept chain"),
        details, "chain-docs");
      e.evidence.forEach(function (ev) {
        var box = html("div", null, details, "sentence");
        html("div", "document " + ev.document, box, "doc");
        html("div", ev.sentence || "(no sentence recorded)", box);
      });
    }
    function showNode(n) {
      clear();
      html("strong", n.id, details);
      if (n.entry) {
        var sim = n.similarity === null ? "?" : n.similarity.toFixed(3);
        html("div", "entry node, similarity " + sim, details);
      }
      if (n.aliases.length > 1) { html("div", "aliases: " + n.aliases.join("; "), details); }
      html("div", "documents: " + (n.documents.join(", ") || "-"), details, "doc");
      if (n.chains.length) {
        html("div", "in chain " + n.chains.join(", "), details, "chain-docs");
      }
    }

    var list = document.getElementById("sarg-chains");
    if (!data.chains.length) {
      var none = data.fallback_reason ? "No chain kept: " + data.fallback_reason : "No chain kept.";
      html("div", none, list, "chain-docs");
    }
    var active = null;
    data.chains.forEach(function (c) {
      var item = html("div", null, list, "chain-item");
      item.setAttribute("data-chain", c.number);
      var sw = html("span", null, item, "swatch");
      sw.style.background = c.colour;
      var body = html("div", null, item);
      html("div", "[" + c.number + "] score " + c.score.toFixed(3), body, "chain-docs");
      html("div", c.text, body, "chain-text");
      html("div", "cites: " + c.documents.join(", "), body, "chain-docs");
      item.addEventListener("click", function () {
        var on = active !== c.number;
        active = on ? c.number : null;
        Array.prototype.forEach.call(list.children, function (child) {
          child.classList.toggle("active", on && child === item);
        });
        svg.classList.toggle("focus", on);
        items.forEach(function (it) {
          var member = it.chains.indexOf(c.number) >= 0;
          it.nodes.forEach(function (node) { node.classList.toggle("dim", on && !member); });
        });
      });
    });
    root.setAttribute("data-sarg-render", "ok");
    var drawn = nodeLayer.querySelectorAll(".chain-node").length;
    root.setAttribute("data-sarg-chain-nodes", String(drawn));
  }

  try {
    render(JSON.parse(document.getElementById("sarg-data").textContent));
  } catch (err) {
    reportError(err && err.message ? err.message : String(err));
  }
})();
