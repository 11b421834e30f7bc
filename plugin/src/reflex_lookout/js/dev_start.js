// Lookout's dev overlay, the part in root.jsx: added by Monitoring under `reflex run` (dev mode) only,
// so a production build carries none of it (nor the overlay module it imports). It loads the overlay
// (lookout_dev_overlay.js, written beside the SDK chunk in dev), tells it which traces are this tab's,
// and, when the pages report to a DSN, sends the overlay a copy of each envelope the browser SDK sends
// (Sentry's own Spotlight integration, pointed at the overlay's route on this origin). Without a DSN,
// the SDK's tunnel is that route itself (the configuration says so), and no copy is needed.
const LOOKOUT_DEV_MAX_TRACES = 200;
const lookoutDevTraces = new Set(); // this tab's trace ids, oldest first
let lookoutDevSentry = null; // the SDK's module, once loaded

function lookoutDevKeep(traceId) {
  if (typeof traceId !== "string" || traceId.length !== 32) return;
  lookoutDevTraces.delete(traceId);
  lookoutDevTraces.add(traceId);
  while (lookoutDevTraces.size > LOOKOUT_DEV_MAX_TRACES) lookoutDevTraces.delete(lookoutDevTraces.values().next().value);
}

// The traces this tab started: the page load's (the loader's), each envelope's, and the current one
// (a handler's error is reported in the trace of the event that the page sent in it).
function lookoutDevTraceIds() {
  lookoutDevKeep(window.lookout && window.lookout._trace && window.lookout._trace.t);
  if (lookoutDevSentry) {
    try {
      lookoutDevKeep(lookoutDevSentry.getCurrentScope().getPropagationContext().traceId);
      const span = lookoutDevSentry.getActiveSpan();
      if (span) lookoutDevKeep(span.spanContext().traceId);
    } catch (error) {
      // the SDK is not started yet
    }
  }
  return [...lookoutDevTraces];
}

async function lookoutDevFollowSdk(config) {
  if (window.lookout._load) await window.lookout._load(); // in dev the SDK starts at once
  const sentry = await import("@sentry/react");
  const client = sentry.getClient();
  if (!client) return;
  lookoutDevSentry = sentry;
  client.on("beforeEnvelope", (envelope) => lookoutDevKeep(envelope && envelope[0] && envelope[0].trace && envelope[0].trace.trace_id));
  if (config.copy) {
    client.addIntegration(sentry.spotlightBrowserIntegration({ sidecarUrl: new URL(config.intake, window.location.origin).href }));
  }
}

function LookoutDevOverlay({ children }) {
  useEffect(() => {
    const config = window.lookout && window.lookout.config && window.lookout.config.dev;
    if (!config) return;
    import("$/app/lookout_dev_overlay.js").then((overlay) =>
      overlay.mount({ eventsUrl: config.events, clearUrl: config.clear, traces: lookoutDevTraceIds }));
    lookoutDevFollowSdk(config).catch((error) => console.warn("Lookout's dev overlay could not follow the SDK", error));
  }, []);
  return children;
}
