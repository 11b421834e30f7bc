// Lookout's entry.client.js (Reflex's template plus React 19's root error callbacks): render
// errors reach Sentry, including those Reflex's error boundary catches and would otherwise keep.
// The handler is taken from window.lookout: the loader's (loader.js, inline in <head>, which records
// the error and starts the SDK), then Sentry's reactErrorHandler once the SDK chunk has taken over
// (sdk.js). Importing Sentry here would put its modules before the page is interactive.
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
