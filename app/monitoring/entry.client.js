// Lookout's entry.client.js (Reflex's template plus React 19's root error callbacks): render
// errors reach Sentry, including those Reflex's error boundary catches and would otherwise keep.
import { startTransition, createElement } from "react";
import { hydrateRoot } from "react-dom/client";
import { HydratedRouter } from "react-router/dom";
import { reactErrorHandler } from "@sentry/react";

startTransition(() => {
  hydrateRoot(document, createElement(HydratedRouter), {
    onCaughtError: reactErrorHandler(),
    onUncaughtError: reactErrorHandler(),
    onRecoverableError: reactErrorHandler(),
  });
});
