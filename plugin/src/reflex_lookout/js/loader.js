// Lookout's loader (prototype for issue #16): an inline classic script in every page's <head>,
// after <script type="application/json" id="lookout-monitoring-config"> and before the app's
// module scripts. It records what happens until @sentry/react (loaded lazily by root.jsx) takes
// over, then hands everything over; if the page goes away first, it sends what it holds itself.
//
// window.lookout (the app's API, same names as today):
//   captureException(error, hint) -> event id     captureMessage(message, captureContext) -> id
//   logger.{trace,debug,info,warn,error,fatal}     lastEventId()   flush(timeout) -> Promise<bool>
//   reactErrorHandler(error, errorInfo)            config   tracing (false until tracing arrives)
// Private handshake with root.jsx / the SDK chunk (underscore names):
//   _load: set by root.jsx: starts the SDK import (called at once when an error is recorded)
//   _want: 1 when an error was recorded before root.jsx registered _load
//   _take(): hands the records over (once) and stops the loader; returns {q, trace, trap}
//   _trace: {t: trace id, s: span id, r: sample rand, p: sampled} of the page load
(function (w, d, n) {
  var C = JSON.parse(d.getElementById("lookout-monitoring-config").textContent);
  Error.stackTraceLimit = 50; // what the SDK's GlobalHandlers sets: deep stacks from the first byte
  var L = (w.lookout = { config: C, tracing: false });
  var Q = []; // records, oldest first: {k: kind, t: seconds, i: event id, ...}
  var done = 0; // 1 once the SDK has taken over
  var last; // the last event id handed out
  var ignore = C.ignoreErrors.map(function (p) { return new RegExp(p); });
  var now = function () { return Date.now() / 1e3; };
  var hex = function (bytes) {
    return Array.prototype.map
      .call(crypto.getRandomValues(new Uint8Array(bytes)), function (b) { return (b + 256).toString(16).slice(1); })
      .join("");
  };
  // Texts from the page (messages, values, breadcrumbs) are cut to maxStackLineLength characters.
  var cut = function (v) {
    v = String(v);
    return v.length > C.maxStackLineLength ? v.slice(0, C.maxStackLineLength) + "\u2026" : v;
  };
  var R = Math.random();
  var trace = (L._trace = { t: hex(16), s: hex(8), r: R, p: R < C.tracesSampleRate });

  // Reflex's hook for each event it sends: the page load's traceparent, until tracing replaces it.
  w.__reflex_otel = {
    onEventSend: function (e) {
      e.traceparent = "00-" + trace.t + "-" + trace.s + (trace.p ? "-01" : "-00");
    },
  };

  function wake() {
    L._load ? L._load() : (L._want = 1);
  }

  function push(r) {
    if (done || Q.length > 200) return;
    r.t = now();
    Q.push(r);
    if (r.i) wake();
    return r;
  }

  // Breadcrumbs: at most maxBreadcrumbs kept (the newest), as the SDK does.
  function crumb(b) {
    var crumbs = Q.filter(function (r) { return r.k == "b"; });
    if (crumbs.length >= C.maxBreadcrumbs) Q.splice(Q.indexOf(crumbs[0]), 1);
    var r = push({ k: "b", b: b });
    if (r) b.timestamp = r.t;
  }

  // Sentry's ignoreErrors: the message, the value, and "type: value" are each tested.
  function noise(type, value) {
    return [value, type + ": " + value].some(function (s) {
      return ignore.some(function (re) { return re.test(s); });
    });
  }
  function isRedirect(v) {
    return typeof Response != "undefined" && v instanceof Response && v.status > 299 && v.status < 400;
  }
  function isError(v) {
    return v instanceof Error || (v && v.stack && v.message != null);
  }
  function describe(v) {
    return isError(v) ? [cut(v.name || "Error"), cut(v.message)] : ["Error", cut(v)];
  }
  function id() {
    return (last = hex(16));
  }

  // One error: dropped as noise (never wakes the SDK) or recorded with a new event id.
  function error(kind, value, extra) {
    var dv = describe(value);
    if (isRedirect(value) || noise(dv[0], dv[1])) return;
    extra = extra || {};
    extra.k = kind;
    extra.e = value;
    extra.i = extra.i || id();
    push(extra);
    return extra.i;
  }

  // window.onerror / onunhandledrejection. The browser calls the handler stored through the real
  // setter (`dispatch`, set once here); the own accessor defined over it then catches what scripts
  // do: Reflex's later assignment becomes the app's handler, and its direct calls
  // (`window.onerror(...)` for rx.call_script errors) reach `dispatch` too. `dispatch` calls the
  // monitor (the loader's recorder, then Sentry's handler once the SDK took over), then the app's.
  var apps = {}, monitors = {};
  function trap(name, monitor) {
    if (monitor) monitors[name] = monitor; // none: the accessor back, the monitor kept
    if (!(name in apps)) {
      apps[name] = w[name];
      w[name] = function () {
        var a = monitors[name] && monitors[name].apply(this, arguments);
        var b = apps[name] && apps[name].apply(this, arguments);
        return a === true || b === true;
      };
      monitors.d = monitors.d || {};
      monitors.d[name] = w[name];
    }
    Object.defineProperty(w, name, {
      configurable: true,
      get: function () { return monitors.d[name]; },
      set: function (h) { apps[name] = h; },
    });
  }
  trap("onerror", function (msg, url, line, col, err) {
    error("e", err || msg, { u: url, l: line, c: col });
  });
  trap("onunhandledrejection", function (ev) {
    error("r", ev && "reason" in ev ? ev.reason : ev);
  });

  // The SDK's API, queued with ids handed out now (replayed with the same ids).
  L.captureException = function (err, hint) {
    return error("x", err, { h: hint, i: hint && hint.event_id }) || id();
  };
  L.captureMessage = function (message, ctx) {
    push({ k: "m", m: message, h: ctx, i: id() });
    return last;
  };
  L.reactErrorHandler = function (err, info) {
    error("react", err, { h: info && info.componentStack });
  };
  L.lastEventId = function () { return last; };
  L.logger = {};
  "trace debug info warn error fatal".split(" ").forEach(function (level) {
    L.logger[level] = function () { push({ k: "log", f: level, a: arguments }); };
  });
  L.flush = function () {
    send();
    return Promise.resolve(true);
  };
  L._trap = trap;
  L._take = function () {
    var taken = done ? [] : Q.filter(function (r) { return !r.s; });
    done = 1;
    w.removeEventListener("beforeunload", send);
    Q = [];
    return taken;
  };

  // Breadcrumbs: clicks, navigations, console errors.
  d.addEventListener("click", function (ev) {
    var el = ev.target, path = [];
    for (var i = 0; el && el.tagName && i < 5; i++, el = el.parentElement)
      path.unshift(el.tagName.toLowerCase() + (el.id ? "#" + el.id : ""));
    crumb({ category: "ui.click", message: cut(path.join(" > ")) });
  }, true);
  var from = location.href;
  function navigated() {
    var to = location.href;
    if (to != from) crumb({ category: "navigation", data: { from: cut(from), to: cut((from = to)) } });
  }
  ["pushState", "replaceState"].forEach(function (name) {
    var original = history[name];
    history[name] = function () {
      var result = original.apply(this, arguments);
      if (!done) navigated();
      return result;
    };
  });
  w.addEventListener("popstate", navigated);
  var consoleError = console.error;
  console.error = function () {
    if (!done) crumb({ category: "console", level: "error", message: cut([].join.call(arguments, " ")) });
    return consoleError.apply(this, arguments);
  };

  // When the page is hidden or left before the SDK has taken over: each error and message as an
  // envelope of its own (the header names the DSN and the event id), by beacon, else by fetch, at
  // most loaderEnvelopeMaxBytes: the older half of the breadcrumbs goes first, then the outer half of
  // the frames, then what the app's hint added.
  function frames(stack) {
    var out = [];
    String(stack || "")
      .split("\n")
      .forEach(function (line) {
        if (line.length > C.maxStackLineLength) return;
        // Chrome: "    at fn (url:1:2)" or "    at url:1:2"; Firefox, Safari: "fn@url:1:2"
        var m = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?$/.exec(line) || /^(.*?)@(.+?):(\d+):(\d+)$/.exec(line);
        if (m) out.unshift({ function: (m[1] || "?").replace(/^async /, ""), filename: m[2], lineno: +m[3], colno: +m[4], in_app: true });
      });
    return out.slice(-C.maxStackFrames);
  }
  function event(r, crumbs) {
    var ev = {
      event_id: r.i,
      timestamp: r.t,
      platform: "javascript",
      level: "error",
      environment: C.environment,
      release: C.release || undefined,
      sdk: { name: "lookout.loader", version: "1" },
      request: { url: location.href, headers: { "User-Agent": n.userAgent } },
      contexts: { trace: { trace_id: trace.t, span_id: trace.s } },
      breadcrumbs: crumbs.slice(-C.maxBreadcrumbs),
      tags: { "lookout.sent_by": "loader" },
    };
    if (r.k == "m") {
      ev.message = cut(r.m);
      ev.level = typeof r.h == "string" ? r.h : (r.h && r.h.level) || "info";
    } else {
      var dv = describe(r.e), st = frames(r.e && r.e.stack);
      if (!st.length && r.u) st = [{ function: "?", filename: r.u, lineno: r.l, colno: r.c, in_app: true }];
      ev.exception = {
        values: [{
          type: dv[0],
          value: dv[1],
          stacktrace: st.length ? { frames: st } : undefined,
          mechanism: { type: r.k == "x" ? "generic" : r.k == "react" ? "auto.function.react.error_handler" : r.k == "e" ? "auto.browser.global_handlers.onerror" : "auto.browser.global_handlers.onunhandledrejection", handled: r.k == "x" },
        }],
      };
    }
    var ids = w._sentryDebugIds, images = [];
    for (var key in ids) {
      var file = frames(key).pop();
      file = file && file.filename;
      if (file && JSON.stringify(ev.exception || "").indexOf(file) > -1) images.push({ type: "sourcemap", code_file: file, debug_id: ids[key] });
    }
    if (images.length) ev.debug_meta = { images: images };
    var h = r.h;
    if (h && typeof h == "object") ["tags", "extra", "fingerprint", "level", "user", "contexts"].forEach(function (key) {
      if (h[key]) ev[key] = key == "tags" || key == "contexts" ? Object.assign(ev[key] || {}, h[key]) : h[key];
    });
    return ev;
  }
  function send() {
    if (done) return;
    var crumbs = [];
    Q.forEach(function (r) {
      if (r.k == "b") return crumbs.push(r.b);
      if (!r.i || r.s) return;
      r.s = 1; // sent: the SDK will not replay it
      var head =
        JSON.stringify({ event_id: r.i, sent_at: new Date().toISOString(), dsn: C.dsn, sdk: { name: "lookout.loader", version: "1" } }) +
        '\n{"type":"event"}\n';
      var ev = event(r, crumbs.slice()), body, st = ev.exception && ev.exception.values[0].stacktrace;
      for (var step = 0; step < 30; step++) {
        try {
          body = head + JSON.stringify(ev);
        } catch (e) {
          body = 0; // what the app's hint added cannot be written (a cycle): it goes
        }
        if (body && new Blob([body]).size <= C.loaderEnvelopeMaxBytes) break;
        if (body && ev.breadcrumbs.length) ev.breadcrumbs = ev.breadcrumbs.slice(ev.breadcrumbs.length + 1 >> 1);
        else if (body && st && st.frames.length > 1) st.frames = st.frames.slice(st.frames.length >> 1);
        else ["extra", "contexts", "user", "tags", "fingerprint"].forEach(function (key) { delete ev[key]; });
      }
      if (body)
        (n.sendBeacon && n.sendBeacon(C.tunnel, body)) || fetch(C.tunnel, { method: "POST", body: body, keepalive: true });
    });
  }
  // beforeunload too: Chromium closing a tab whose document is still loading skipped pagehide's beacon
  // in about half of the e2e trials, never beforeunload's. It goes once the SDK takes over (`_take`).
  w.addEventListener("pagehide", send);
  w.addEventListener("beforeunload", send);
  d.addEventListener("visibilitychange", function () {
    if (d.visibilityState == "hidden") send();
  });
})(window, document, navigator);
