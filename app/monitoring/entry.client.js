// Lookout's entry.client.js (Reflex's template plus React 19's root error callbacks): render
// errors reach Sentry, including those Reflex's error boundary catches and would otherwise keep.
// The handler is Sentry's reactErrorHandler, taken from window.lookout (browser.js, in root.jsx,
// which runs before hydration): importing it here would put Sentry's modules in a chunk shared by
// this file and root.jsx, two more files to fetch before the page is interactive.
import { startTransition, createElement } from "react";
import { hydrateRoot } from "react-dom/client";
import { HydratedRouter } from "react-router/dom";

function lookoutReactError(error, errorInfo) {
  if (window.lookout) window.lookout.reactErrorHandler(error, errorInfo);
  else console.error(error); // monitoring did not start: at least keep React's default
}

startTransition(() => {
  hydrateRoot(document, createElement(HydratedRouter), {
    onCaughtError: lookoutReactError,
    onUncaughtError: lookoutReactError,
    onRecoverableError: lookoutReactError,
  });
});
