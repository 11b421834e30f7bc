// Lookout's SDK chunk (written by reflex_lookout's Monitoring.pre_compile as .web/app/lookout_sdk.js): imported by
// root.jsx (browser.js) only through import(), so that Vite gives @sentry/react a chunk of its own,
// fetched after the page is interactive, or at once when the loader has recorded an error. Named
// imports only (a namespace import defeats tree-shaking). Its configuration is the loader's
// (window.lookout.config, parsed from the page's JSON): the options of init() are the ones the SDK
// had when root.jsx started it before hydration. start() takes over from the loader (loader.js) and
// replays what it recorded, once, with the loader's event ids and timestamps.
import {
  init, defaultStackParser, captureException, captureEvent, getCurrentScope, addBreadcrumb,
  addEventProcessor, captureReactException, reactErrorHandler, lastEventId, flush, logger,
  getClient, browserTracingIntegration, startBrowserTracingPageLoadSpan,
  startBrowserTracingNavigationSpan, startInactiveSpan, getTraceData,
} from "@sentry/react";
// Sentry's feedback widget when Monitoring(feedback=True), else an empty module (browser.py `feedback_module`):
// imported statically, so that it joins this chunk (a dynamic import would add Vite's preload helper as a
// chunk of its own, with no source map).
import { start as startFeedback } from "$/app/lookout_feedback.js";

const L = typeof window !== "undefined" ? window.lookout : undefined;
const C = L ? L.config : {};
const NAME_SOURCE = "sentry.segment.name.source";
const HANDLERS = ["onerror", "onunhandledrejection"];
const CAPTURE_CONTEXT_KEYS = ["user", "level", "extra", "contexts", "tags", "fingerprint", "propagationContext"];

function stackParser(stack, skipFirstLines = 0, framesToPop = 0) {
  const lines = String(stack).split("\n").filter((line) => line.length <= C.maxStackLineLength);
  return defaultStackParser(lines.join("\n"), skipFirstLines, framesToPop).slice(-C.maxStackFrames);
}
function isRedirect(value) {
  return typeof Response !== "undefined" && value instanceof Response && value.status >= 300 && value.status < 400;
}
function beforeSend(event, hint) {
  return isRedirect(hint && hint.originalException) ? null : event;
}
function beforeSendTransaction(event) {
  const trace = (event.contexts && event.contexts.trace) || {};
  const data = trace.data || {};
  if (data["lookout.route_id"] === C.notFoundRouteId) return null;
  if (trace.op === "navigation" && data["lookout.rendered"] !== true) return null;
  return event;
}

let started = false;
const stamps = new Map(); // event id -> the loader's timestamp, for replayed events

export function start() {
  if (started || !L) return;
  started = true;
  // Sentry's global handlers are set through a plain property, then become the loader's monitor.
  for (const name of HANDLERS) Object.defineProperty(window, name, { value: null, writable: true, configurable: true });
  try {
    startSdk();
  } catch (error) {
    // The loader stays in charge (its accessors back, its recorder still the monitor): what it
    // holds is sent by its beacon when the page goes away.
    for (const name of HANDLERS) L._trap(name);
    console.error("Lookout: the monitoring SDK did not start", error);
    return;
  }
  for (const name of HANDLERS) L._trap(name, window[name]);
  handOver();
  if (C.feedback) startFeedback(getClient());
}

function startSdk() {
  init({
    dsn: C.dsn,
    tunnel: C.tunnel,
    environment: C.environment,
    release: C.release || undefined,
    tracesSampleRate: C.tracesSampleRate,
    traceLifecycle: "static",
    beforeSendLog: C.enableLogs ? undefined : () => null,
    debug: C.debug,
    maxBreadcrumbs: C.maxBreadcrumbs,
    transportOptions: { bufferSize: C.transportBufferSize },
    stackParser,
    ignoreErrors: C.ignoreErrors.map((pattern) => new RegExp(pattern)),
    beforeSend,
    beforeSendTransaction,
  });
}

// In one synchronous task, so that nothing slips between the handover and the replay.
function handOver() {
  getCurrentScope().setPropagationContext({ ...getCurrentScope().getPropagationContext(), traceId: L._trace.t, sampleRand: L._trace.r, propagationSpanId: L._trace.s });
  addEventProcessor((event) => {
    const t = stamps.get(event.event_id);
    if (t !== undefined) {
      stamps.delete(event.event_id);
      event.timestamp = t;
    }
    return event;
  });
  const records = L._take();
  Object.assign(L, {
    captureException,
    captureMessage: (message, context) => getCurrentScope().captureMessage(message, typeof context === "string" ? context : undefined, typeof context === "string" || !context ? undefined : { captureContext: context }),
    logger, lastEventId, flush, reactErrorHandler: reactErrorHandler(),
  });
  for (const r of records) replay(r);
}

function replay(r) {
  const hint = { event_id: r.i };
  if (r.i) stamps.set(r.i, r.t);
  const unhandled = (type) => ({ ...hint, mechanism: { handled: false, type } });
  switch (r.k) {
    case "b": return addBreadcrumb(r.b);
    case "e":
      if (r.e instanceof Error) return captureException(r.e, unhandled("auto.browser.global_handlers.onerror"));
      return captureEvent({ level: "error", exception: { values: [{ type: "Error", value: String(r.e), stacktrace: { frames: [{ filename: r.u, lineno: r.l, colno: r.c, function: "?", in_app: true }] } }] } }, unhandled("auto.browser.global_handlers.onerror"));
    case "r": return captureException(r.e, unhandled("auto.browser.global_handlers.onunhandledrejection"));
    case "react": return captureReactException(r.e, { componentStack: r.h }, unhandled("auto.function.react.error_handler"));
    case "x": {
      const h = r.h;
      const context = typeof h === "function" || (h && Object.keys(h).some((k) => CAPTURE_CONTEXT_KEYS.includes(k)));
      return captureException(r.e, context ? { ...hint, captureContext: h } : { ...h, ...hint });
    }
    case "m": {
      const level = typeof r.h === "string" ? r.h : undefined;
      return getCurrentScope().captureMessage(r.m, level, level || !r.h ? hint : { ...hint, captureContext: r.h });
    }
    case "log": return logger[r.f](...r.a);
  }
}

export function routeName(match) {
  if (!match) return "/";
  let name = match.pathname;
  for (const [key, value] of Object.entries(match.params || {})) {
    if (value) name = name.replace(value, key === "*" ? "*" : ":" + key);
  }
  return name;
}

export function markRendered(span, match) {
  span.updateName(routeName(match));
  span.setAttribute(NAME_SOURCE, "route");
  span.setAttribute("lookout.route_id", match ? match.id : "");
  span.setAttribute("lookout.rendered", true);
}

// Whether a span started with a given `spanId` gets it (checked on a span never ended, hence never sent).
function spanIdOptionWorks() {
  const probe = "10b5a1d0c0ffee00";
  try {
    return startInactiveSpan({ name: "lookout.span_id_probe", spanId: probe }).spanContext().spanId === probe;
  } catch {
    return false;
  }
}

let tracing = false;
// The page-load transaction, continuing the loader's trace: its trace id and span id are the ones
// Reflex's first events carried (the span id through the options: see the design notes).
export function startTracing(firstRoute) {
  const client = getClient();
  if (tracing || !client) return;
  tracing = true;
  const spanIdWorks = spanIdOptionWorks(); // before the integration watches spans
  client.addIntegration(browserTracingIntegration({
    instrumentNavigation: false,
    instrumentPageLoad: false,
    idleTimeout: C.idleTimeoutMs,
    finalTimeout: C.finalTimeoutMs,
    childSpanTimeout: C.childSpanTimeoutMs,
  }));
  const t = L._trace;
  const baggage = `sentry-trace_id=${t.t},sentry-sample_rand=${t.r},sentry-sample_rate=${C.tracesSampleRate},sentry-sampled=${t.p}`;
  const attributes = { [NAME_SOURCE]: "url", "sentry.origin": "auto.pageload.browser" };
  // The page load's span is the loader's span S, which Reflex's first events named as their parent.
  // `spanId` is not a documented option of 11.12 (it reaches the span through the options' spread);
  // if a later SDK ignores it, the page load continues S instead (documented): then S is its parent,
  // and the backend's first transactions hang beside it, under S, in the same trace.
  const pageload = spanIdWorks
    ? startBrowserTracingPageLoadSpan(client, { name: window.location.pathname, attributes, spanId: t.s }, { sentryTrace: t.t, baggage })
    : startBrowserTracingPageLoadSpan(client, { name: window.location.pathname, attributes }, { sentryTrace: `${t.t}-${t.s}-${t.p ? 1 : 0}`, baggage });
  if (pageload) markRendered(pageload, firstRoute);
  L.tracing = true;
  window.__reflex_otel = Object.assign(window.__reflex_otel || {}, {
    onEventSend(event) {
      const span = startInactiveSpan({
        name: readableEvent(event.name), op: "ui.reflex.event", attributes: { "reflex.event.name": String(event.name) },
      });
      const { traceparent } = getTraceData({ span, propagateTraceparent: true });
      if (traceparent) event.traceparent = traceparent;
      span.end();
    },
  });
}

// Reflex names an event after its state's full path, each state "module___path____class_name"
// ("reflex___state____state.app___pages___try_errors____try_state.raise_error"): the span is named
// after the state's class and the handler, "TryState.raise_error", as the backend's `reflex.event`
// tag names it (reflex_lookout/event_tracing.py); the full name stays an attribute.
export function readableEvent(name) {
  const parts = String(name).split(".");
  if (parts.length < 2) return String(name);
  const handler = parts.pop();
  const state = parts.pop().split("____").pop();
  const words = state.split("_").filter(Boolean);
  return `${words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("")}.${handler}`;
}

export function startNavigation(pathname) {
  const client = getClient();
  return client && tracing
    ? startBrowserTracingNavigationSpan(client, { name: pathname, attributes: { [NAME_SOURCE]: "url" } })
    : undefined;
}
