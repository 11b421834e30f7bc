// Sentry's user feedback widget in the app's pages (Monitoring(feedback=True); written as
// .web/app/lookout_feedback.js, and as an empty module when it is off, so that the SDK chunk carries none
// of it). Part of the SDK chunk (sdk.js imports it), started once the SDK runs: a "Report a Bug" button in the corner, its
// form bundled (no script fetched from elsewhere), no screenshot. A feedback sent after an error on this
// page names that error (`associated_event_id`), so Lookout shows it on the error's issue.
import { feedbackIntegration } from "@sentry/react";

export function start(client) {
  let lastError = "";
  client.on("preprocessEvent", (event) => {
    if (!event.type && event.exception) lastError = event.event_id || lastError;
    const feedback = event.type === "feedback" && event.contexts && event.contexts.feedback;
    if (feedback && !feedback.associated_event_id && lastError) feedback.associated_event_id = lastError;
  });
  client.addIntegration(feedbackIntegration({ enableScreenshot: false, showBranding: false, colorScheme: "system" }));
}
