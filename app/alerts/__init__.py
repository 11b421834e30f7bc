"""Alerts: new, regressed and spiking issues told to e-mail and webhooks, as durably as envelopes."""
