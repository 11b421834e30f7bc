// Sentry's JavaScript SDK (@sentry/core, the browser and Node SDKs' core; under .tools beside Sentry's
// MCP server) sends user feedback as its feedback widget does, through `captureFeedback`:
//   node sdk_feedback.js <@sentry/core's directory> <DSN> <JSON of captureFeedback's parameters>
// It prints the envelope the SDK would post (serialized by the SDK), with the release "shop@2.1".
const core = require(process.argv[2]);

const client = new core.ServerRuntimeClient({
  dsn: process.argv[3], release: "shop@2.1", integrations: [], stackParser: core.createStackParser(),
  transport: () => ({
    send: async (envelope) => {
      process.stdout.write(core.serializeEnvelope(envelope));
      return {};
    },
    flush: async () => true,
  }),
});
core.setCurrentClient(client);
client.init();
core.captureFeedback(JSON.parse(process.argv[4]));
client.flush(2000).then(() => process.exit(0));
