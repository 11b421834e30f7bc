// Lookout's browser monitoring, the part in root.jsx (module scope, before hydration; added by
// BrowserMonitoring in browser.py): no Sentry code here.
// The loader (inline in <head>) records from the first byte; this part starts the SDK chunk
// (lookout_sdk.js) when the browser is first idle after the first route rendered, or at once when
// the loader has recorded an error, and follows React Router's navigations for the SDK.

const LOOKOUT_BROWSER = typeof window !== "undefined"; // root.jsx also runs in Node to prerender
let lookoutSdk = null; // the SDK chunk's exports, once started
let lookoutSdkPromise = null;

function lookoutLoadSdk() {
  if (!lookoutSdkPromise) {
    lookoutSdkPromise = import("$/app/lookout_sdk.js").then(
      (sdk) => {
        sdk.start();
        lookoutSdk = sdk;
        return sdk;
      },
      () => {
        // Not fetched (offline, or a deploy removed the chunk): the loader sends what it holds
        // itself, now, and stays in charge (a later error asks for the chunk again).
        lookoutSdkPromise = null;
        window.lookout.flush();
        return null;
      },
    );
  }
  return lookoutSdkPromise;
}

if (LOOKOUT_BROWSER && window.lookout) {
  window.lookout._load = lookoutLoadSdk;
  if (window.lookout._want) lookoutLoadSdk(); // an error was recorded already
}

function lookoutHref(location) {
  return location.pathname + location.search + location.hash;
}

function lookoutWhenIdle(callback) {
  if (window.requestIdleCallback) window.requestIdleCallback(callback, { timeout: 2000 });
  else setTimeout(callback, 1);
}

// Renders nothing of its own: names transactions after the route, and enforces the route asset
// loading timeout. Placed inside the router by an app wrap.
function LookoutMonitoring({ children }) {
  const navigation = useNavigation();
  const location = useLocation();
  const matches = useMatches();
  const pending = useRef(null); // {target, span, timer} of the navigation being loaded

  useEffect(() => {
    if (!LOOKOUT_BROWSER) return;
    if (navigation.state === "idle" || !navigation.location) {
      if (pending.current) clearTimeout(pending.current.timer);
      return;
    }
    const target = lookoutHref(navigation.location);
    if (pending.current && pending.current.target === target) return;
    if (pending.current) clearTimeout(pending.current.timer);
    const span = lookoutSdk ? lookoutSdk.startNavigation(navigation.location.pathname) : undefined;
    const timer = setTimeout(() => {
      const ms = window.lookout.config.routeLoadTimeoutMs;
      window.lookout.captureMessage(`Route assets for ${navigation.location.pathname} did not load within ${ms} ms`, {
        level: "warning",
        tags: { "lookout.route_timeout": navigation.location.pathname },
      });
      window.lookout.flush(2000).finally(() => window.location.assign(target));
    }, window.lookout.config.routeLoadTimeoutMs);
    pending.current = { target, span, timer };
  }, [navigation.state, navigation.location]);

  const handledKey = useRef(null);
  useEffect(() => {
    if (!LOOKOUT_BROWSER || handledKey.current === location.key) return;
    const firstRender = handledKey.current === null;
    handledKey.current = location.key;
    const match = matches[matches.length - 1] || null;
    let span;
    if (pending.current && pending.current.target === lookoutHref(location)) {
      span = pending.current.span;
    } else if (firstRender) {
      // The page is interactive: the SDK (and its page-load transaction) when the browser is idle.
      lookoutWhenIdle(() => lookoutLoadSdk().then((sdk) => sdk && sdk.startTracing(match)));
      return;
    } else {
      span = lookoutSdk ? lookoutSdk.startNavigation(location.pathname) : undefined;
    }
    if (pending.current) {
      clearTimeout(pending.current.timer);
      pending.current = null;
    }
    if (span) lookoutSdk.markRendered(span, match);
  }, [location.key]);

  return children;
}
