"""The alert tables (app/models.py), by the names the alert modules use (as app/inbox/tables.py
names the inbox's)."""

from __future__ import annotations

from app.alerts.models import Alert, AlertChannel, AlertDelivery, AlertRules
from app.tables import table_of

RULES = table_of(AlertRules)
CHANNELS = table_of(AlertChannel)
ALERTS = table_of(Alert)
DELIVERIES = table_of(AlertDelivery)
