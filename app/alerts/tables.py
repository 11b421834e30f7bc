"""The alert tables (app/models.py), by the names the alert modules use (as app/inbox/tables.py
names the inbox's)."""

from __future__ import annotations

from app.models import Alert, AlertChannel, AlertDelivery, AlertRules

RULES = AlertRules.__table__
CHANNELS = AlertChannel.__table__
ALERTS = Alert.__table__
DELIVERIES = AlertDelivery.__table__
