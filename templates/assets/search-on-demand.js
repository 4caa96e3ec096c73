/* tycheon site: mkdocs-material's search index and search worker are fetched only when a reader starts a
   search (focuses the search field, opens the search dialog, or arrives with ?q=), not by every page.
   mkdocs-material (9.8) has no setting for this; its bundle fetches search/search_index.json by
   XMLHttpRequest (search_index.js by a <script> from file://) and starts workers/search.*.js at load.
   Loaded as a polyfill, before the theme's bundle, this holds those three requests until the reader
   starts a search, then lets them through in order; nothing else is changed. */
(function () {
  "use strict";
  var INDEX = /\/search\/search_index\.js(?:on)?(?:[?#]|$)/;
  var WORKER = /\/workers\/search\.[^\/]*\.js(?:[?#]|$)/;
  var started = false;
  var waiting = [];

  function whenStarted(fn) { if (started) { fn(); } else { waiting.push(fn); } }
  function start() {
    if (started) { return; }
    started = true;
    waiting.splice(0).forEach(function (fn) { fn(); });
  }
  function absolute(url) {
    try { return new URL(String(url), location.href).href; } catch (err) { return String(url); }
  }

  /* the site ships the index once, as search/search_index.js ("var __index = " and the JSON; the build's
     hooks remove the JSON copy, benchmarks/render/hooks.py): over http(s) the theme's request for the JSON
     reads the script's copy, its first PREFIX.length characters dropped */
  var JSON_INDEX = /\/search\/search_index\.json(?=[?#]|$)/;
  var PREFIX = "var __index = ";
  var response = Object.getOwnPropertyDescriptor(XMLHttpRequest.prototype, "response");
  var responseText = Object.getOwnPropertyDescriptor(XMLHttpRequest.prototype, "responseText");
  function withoutPrefix(xhr, descriptor) {
    return function () {
      var body = descriptor.get.call(xhr);
      return xhr.readyState === 4 && body && typeof body.slice === "function" ? body.slice(PREFIX.length) : body;
    };
  }

  /* the index over http(s): XMLHttpRequest, held at send() */
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    var args = Array.prototype.slice.call(arguments);
    var href = absolute(url);
    this.__tycheonHeld = INDEX.test(href);
    if (JSON_INDEX.test(href)) {
      args[1] = href.replace(JSON_INDEX, "/search/search_index.js");
      Object.defineProperty(this, "response", { configurable: true, get: withoutPrefix(this, response) });
      Object.defineProperty(this, "responseText", { configurable: true, get: withoutPrefix(this, responseText) });
    }
    return open.apply(this, args);
  };
  XMLHttpRequest.prototype.send = function () {
    var xhr = this;
    var args = arguments;
    if (xhr.__tycheonHeld && !started) { whenStarted(function () { send.apply(xhr, args); }); return undefined; }
    return send.apply(xhr, args);
  };

  /* the index from file://: a <script src=".../search_index.js"> appended to <head>, held */
  var head = document.head;
  var append = head.appendChild;
  head.appendChild = function (node) {
    if (!started && node && node.tagName === "SCRIPT" && INDEX.test(absolute(node.src))) {
      whenStarted(function () { append.call(head, node); });
      return node;
    }
    return append.call(this, node);
  };

  /* the search worker: a stand-in that queues messages and listeners until the search starts */
  var RealWorker = window.Worker;
  function HeldWorker(url, options) {
    if (!WORKER.test(absolute(url))) { return new RealWorker(url, options); }
    var real = null;
    var queue = [];
    var listeners = [];
    var stopped = false;
    whenStarted(function () {
      if (stopped) { return; }
      real = new RealWorker(url, options);
      listeners.forEach(function (l) { real.addEventListener(l[0], l[1], l[2]); });
      queue.splice(0).forEach(function (args) { real.postMessage.apply(real, args); });
    });
    this.postMessage = function () { if (real) { real.postMessage.apply(real, arguments); } else { queue.push(arguments); } };
    this.addEventListener = function (type, listener, opts) {
      if (real) { real.addEventListener(type, listener, opts); } else { listeners.push([type, listener, opts]); }
    };
    this.removeEventListener = function (type, listener, opts) {
      if (real) { real.removeEventListener(type, listener, opts); return; }
      listeners = listeners.filter(function (l) { return !(l[0] === type && l[1] === listener); });
    };
    this.terminate = function () { stopped = true; if (real) { real.terminate(); } };
  }
  window.Worker = HeldWorker;

  /* what starts a search: the field gets focus (click, tap, or the theme's s / f / "/" shortcuts), the
     search toggle opens, or the page was opened with a query */
  document.addEventListener("focusin", function (event) {
    if (event.target && event.target.matches && event.target.matches("input.md-search__input")) { start(); }
  }, true);
  document.addEventListener("change", function (event) {
    if (event.target && event.target.id === "__search" && event.target.checked) { start(); }
  }, true);
  if (/[?&]q=/.test(location.search)) { start(); }
})();
