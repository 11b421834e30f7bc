// Lookout's browser monitoring: runs at module scope of Reflex's root.jsx, before hydration.
// Every value comes from LOOKOUT_MONITORING, which app/monitoring/browser.py writes above this
// code from the Python settings; the same object is rendered into every page as JSON.
// Imports (named, for tree-shaking) are added by browser.py with the `Sentry_` prefix.

const LOOKOUT_BROWSER = typeof window !== "undefined"; // root.jsx also runs in Node to prerender
const LOOKOUT_NAME_SOURCE = "sentry.segment.name.source"; // the 11.x name of "sentry.source"

// Stack lines longer than the limit are skipped, never truncated into a bogus frame; at most
// `maxStackFrames` frames are kept (the innermost ones).
function lookoutStackParser(stack, skipFirstLines = 0, framesToPop = 0) {
  const lines = String(stack)
    .split("\n")
    .filter((line) => line.length <= LOOKOUT_MONITORING.maxStackLineLength);
  return Sentry_defaultStackParser(lines.join("\n"), skipFirstLines, framesToPop).slice(
    -LOOKOUT_MONITORING.maxStackFrames,
  );
}

// React Router signals a redirect by throwing a Response with a 3xx status (`redirect()`):
// that is control flow, not an error.
function lookoutIsRedirect(value) {
  return (
    typeof Response !== "undefined" &&
    value instanceof Response &&
    value.status >= 300 &&
    value.status < 400
  );
}

function lookoutBeforeSend(event, hint) {
  return lookoutIsRedirect(hint && hint.originalException) ? null : event;
}

// Transactions of the not-found route, and navigations that never rendered a route (left first,
// or abandoned for a newer navigation), are dropped.
function lookoutBeforeSendTransaction(event) {
  const trace = (event.contexts && event.contexts.trace) || {};
  const data = trace.data || {};
  if (data["lookout.route_id"] === LOOKOUT_MONITORING.notFoundRouteId) return null;
  if (trace.op === "navigation" && data["lookout.rendered"] !== true) return null;
  return event;
}

if (LOOKOUT_BROWSER) {
  Sentry_init({
    dsn: LOOKOUT_MONITORING.dsn,
    tunnel: LOOKOUT_MONITORING.tunnel,
    environment: LOOKOUT_MONITORING.environment,
    release: LOOKOUT_MONITORING.release || undefined,
    tracesSampleRate: LOOKOUT_MONITORING.tracesSampleRate,
    // Whole transactions, as the spec describes them: 11.x streams spans by default, and then
    // skips beforeSendTransaction (which implements the ignore rules below).
    traceLifecycle: "static",
    // 11.x always captures logs (the enableLogs option is gone): "off" drops them here.
    beforeSendLog: LOOKOUT_MONITORING.enableLogs ? undefined : () => null,
    debug: LOOKOUT_MONITORING.debug,
    maxBreadcrumbs: LOOKOUT_MONITORING.maxBreadcrumbs,
    transportOptions: { bufferSize: LOOKOUT_MONITORING.transportBufferSize },
    stackParser: lookoutStackParser,
    ignoreErrors: LOOKOUT_MONITORING.ignoreErrors.map((pattern) => new RegExp(pattern)),
    beforeSend: lookoutBeforeSend,
    beforeSendTransaction: lookoutBeforeSendTransaction,
  });
  // Reflex assigns window.onerror and window.onunhandledrejection once it has started, which
  // would replace Sentry's handlers: keep Sentry's and chain whatever is assigned later.
  for (const name of ["onerror", "onunhandledrejection"]) {
    const sentryHandler = window[name];
    let appHandler = null;
    const chained = function (...args) {
      const handledBySentry = sentryHandler ? sentryHandler.apply(this, args) : false;
      const handledByApp = appHandler ? appHandler.apply(this, args) : false;
      return handledBySentry === true || handledByApp === true;
    };
    Object.defineProperty(window, name, {
      configurable: true,
      get: () => chained,
      set: (handler) => {
        appHandler = handler;
      },
    });
  }
  // For the app's own code and `rx.call_script`: report with the SDK's API.
  window.lookout = {
    captureException: Sentry_captureException,
    captureMessage: Sentry_captureMessage,
    logger: Sentry_logger,
    lastEventId: Sentry_lastEventId,
    flush: Sentry_flush,
    reactErrorHandler: Sentry_reactErrorHandler(), // React's root error callbacks (entry.client.js)
    config: LOOKOUT_MONITORING,
    tracing: false, // true once the tracing chunk has arrived (after the first idle moment)
  };
}

function lookoutHref(location) {
  return location.pathname + location.search + location.hash;
}

// "/post/:id" for "/post/42": the pathname with each parameter's value replaced by its name.
function lookoutRouteName(match) {
  if (!match) return "/";
  let name = match.pathname;
  for (const [key, value] of Object.entries(match.params || {})) {
    if (value) name = name.replace(value, key === "*" ? "*" : ":" + key);
  }
  return name;
}

let lookoutFirstRoute = null; // the route match of the page load, once it has rendered
// Sentry's startBrowserTracingNavigationSpan, once tracing has arrived (imported from the tracing
// chunk: importing it here would put the whole tracing module back into root.jsx's chunk).
let lookoutStartNavigationSpan = () => undefined;

function lookoutMarkRendered(span, match) {
  span.updateName(lookoutRouteName(match)); // marks the name "custom": set the source after it
  span.setAttribute(LOOKOUT_NAME_SOURCE, "route");
  span.setAttribute("lookout.route_id", match ? match.id : "");
  span.setAttribute("lookout.rendered", true);
}

// Tracing is ~40 % of the SDK's bytes and most of its start-up time (~40 of ~50 ms here), so it is
// a chunk of its own (lookout_tracing.js, written by BrowserMonitoringPlugin), loaded once the page
// is interactive. Its page-load span still starts when the navigation started (the time origin).
function lookoutStartTracing() {
  // Called once the first route has rendered (the page is interactive): load it when the
  // browser is next idle (2 s at the latest), out of hydration's way.
  if (window.requestIdleCallback) window.requestIdleCallback(lookoutLoadTracing, { timeout: 2000 });
  else setTimeout(lookoutLoadTracing, 1);
}

// Reflex's hook for each event the page sends to the backend: a span for it (a child of the open
// page load or navigation, else a transaction of its own), whose W3C traceparent rides on the
// event; the backend's transaction for the event continues that trace (event_tracing.py).
function lookoutTraceEvents({ startInactiveSpan, getTraceData }) {
  window.__reflex_otel = Object.assign(window.__reflex_otel || {}, {
    onEventSend(event) {
      const span = startInactiveSpan({ name: event.name, op: "ui.reflex.event" });
      const { traceparent } = getTraceData({ span, propagateTraceparent: true });
      if (traceparent) event.traceparent = traceparent;
      span.end();
    },
  });
}

function lookoutLoadTracing() {
  import("$/app/lookout_tracing.js").then((tracing) => {
    const { browserTracingIntegration, startBrowserTracingNavigationSpan } = tracing;
    const client = Sentry_getClient();
    if (!client) return;
    lookoutStartNavigationSpan = startBrowserTracingNavigationSpan;
    client.addIntegration(
      browserTracingIntegration({
        // Navigations are started by LookoutMonitoring below, when React Router starts loading
        // the target route, so their duration includes the route's assets.
        instrumentNavigation: false,
        idleTimeout: LOOKOUT_MONITORING.idleTimeoutMs,
        finalTimeout: LOOKOUT_MONITORING.finalTimeoutMs,
        childSpanTimeout: LOOKOUT_MONITORING.childSpanTimeoutMs,
      }),
    );
    const pageload = lookoutRootSpan(); // the first route has rendered by now: name it after it
    if (pageload && lookoutFirstRoute) lookoutMarkRendered(pageload, lookoutFirstRoute);
    window.lookout.tracing = true; // navigations from now on are traced
    lookoutTraceEvents(tracing);
  });
}

// A navigation span named after the URL until its route renders (undefined before tracing arrives).
function lookoutStartNavigation(pathname) {
  const client = Sentry_getClient();
  return client
    ? lookoutStartNavigationSpan(client, { name: pathname, attributes: { [LOOKOUT_NAME_SOURCE]: "url" } })
    : undefined;
}

function lookoutRootSpan() {
  const span = Sentry_getActiveSpan();
  return span ? Sentry_getRootSpan(span) : undefined;
}

// Renders the effective configuration as JSON, names transactions after the route, and enforces
// the route asset loading timeout. Placed inside the router by an app wrap.
function LookoutMonitoring({ children }) {
  const navigation = useNavigation();
  const location = useLocation();
  const matches = useMatches();
  const pending = useRef(null); // {target, span, timer} of the navigation being loaded

  // A navigation starts: React Router is loading the target route's modules.
  useEffect(() => {
    if (!LOOKOUT_BROWSER) return;
    if (navigation.state === "idle" || !navigation.location) {
      // Loading is over (or was cancelled): no deadline. The span stays for the render effect.
      if (pending.current) clearTimeout(pending.current.timer);
      return;
    }
    const target = lookoutHref(navigation.location);
    if (pending.current && pending.current.target === target) return;
    if (pending.current) clearTimeout(pending.current.timer);
    // Starting a navigation ends the previous one, which never rendered: it is dropped.
    const span = lookoutStartNavigation(navigation.location.pathname);
    const timer = setTimeout(() => {
      const ms = LOOKOUT_MONITORING.routeLoadTimeoutMs;
      Sentry_captureMessage(`Route assets for ${navigation.location.pathname} did not load within ${ms} ms`, {
        level: "warning",
        tags: { "lookout.route_timeout": navigation.location.pathname },
      });
      // The event must leave before the page does.
      Sentry_flush(2000).finally(() => window.location.assign(target));
    }, LOOKOUT_MONITORING.routeLoadTimeoutMs);
    pending.current = { target, span, timer };
  }, [navigation.state, navigation.location]);

  // A route rendered: the page load, or the end of a navigation.
  const handledKey = useRef(null);
  useEffect(() => {
    if (!LOOKOUT_BROWSER || handledKey.current === location.key) return; // StrictMode runs effects twice
    const firstRender = handledKey.current === null;
    handledKey.current = location.key;
    let span;
    if (pending.current && pending.current.target === lookoutHref(location)) {
      span = pending.current.span; // the navigation we saw start
    } else if (firstRender) {
      lookoutFirstRoute = matches[matches.length - 1] || null;
      lookoutStartTracing(); // its page-load span is named when it arrives
      return;
    } else {
      // A navigation that needed nothing loaded (or went back in history) rendered at once; one
      // still loading elsewhere was abandoned for it (starting this span ends that one).
      span = lookoutStartNavigation(location.pathname);
    }
    if (pending.current) {
      clearTimeout(pending.current.timer);
      pending.current = null;
    }
    if (span) lookoutMarkRendered(span, matches[matches.length - 1]);
  }, [location.key]);

  return jsx(
    Fragment,
    {},
    jsx("script", {
      type: "application/json",
      id: LOOKOUT_CONFIG_ELEMENT_ID,
      dangerouslySetInnerHTML: { __html: LOOKOUT_MONITORING_JSON },
    }),
    children,
  );
}
