// The legacy Node client raven 2.6 (installed under .tools by `make setup`) sends one exception:
//   node raven_node.js <raven's directory> <DSN> <message>
// It prints the event id once the server has answered, and exits 1 if the server refused it.
const Raven = require(process.argv[2]);

Raven.config(process.argv[3], { captureUnhandledRejections: false });
Raven.captureException(new TypeError(process.argv[4]), (failure, eventId) => {
  if (failure) {
    console.error(String(failure));
    process.exit(1);
  }
  console.log(eventId);
});
