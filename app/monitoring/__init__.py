"""This app's own reporting: SDK set-up (loader, browser SDK, server), the tunnel, outbox and forwarder."""
