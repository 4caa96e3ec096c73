/* tycheon site: lets mkdocs-material's search run when the site is opened from file://.
   Browsers refuse `new Worker(...)` for file:// URLs, and mkdocs-material's offline mode would fetch the
   `iframe-worker` polyfill from unpkg.com; this local stand-in runs the worker script in a hidden
   same-origin iframe instead, so the site needs no network. Served over http(s) it does nothing. */
(function () {
  "use strict";
  if (location.protocol !== "file:") { return; }

  function FileWorker(url) {
    var events = document.createDocumentFragment();
    var iframe = document.createElement("iframe");
    var queue = [];
    var ready = false;
    this._events = events;
    this._iframe = iframe;
    iframe.style.display = "none";
    (document.body || document.documentElement).appendChild(iframe);
    var inner = iframe.contentWindow;
    inner.postMessage = function (data) {
      setTimeout(function () { events.dispatchEvent(new MessageEvent("message", { data: data })); }, 0);
    };
    inner.importScripts = function () {
      throw new Error("importScripts is not available to a worker opened from file://");
    };
    function deliver(data) { inner.dispatchEvent(new MessageEvent("message", { data: data })); }
    this.postMessage = function (data) { if (ready) { deliver(data); } else { queue.push(data); } };
    var script = inner.document.createElement("script");
    script.src = new URL(url, location.href).href;
    script.onload = function () { ready = true; queue.splice(0).forEach(deliver); };
    script.onerror = function () { events.dispatchEvent(new Event("error")); };
    inner.document.head.appendChild(script);
  }
  FileWorker.prototype.addEventListener = function (type, listener, options) {
    this._events.addEventListener(type, listener, options);
  };
  FileWorker.prototype.removeEventListener = function (type, listener, options) {
    this._events.removeEventListener(type, listener, options);
  };
  FileWorker.prototype.terminate = function () { this._iframe.remove(); };
  window.Worker = FileWorker;
})();
