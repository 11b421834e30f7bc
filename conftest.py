"""What both test trees get when run from this repository (tests/ and plugin/tests/, in one pytest
process under `make test`): one PostgreSQL server per process, the private cluster of tests/services.py.
The plugin's tests ask for it by name (plugin/tests/plugin_support/databases.py) and skip their
PostgreSQL cases where it is not offered, as when they run on their own (plugin/pytest.ini)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import services
from tests.conftest import need


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[services.Postgres]:
    need("PostgreSQL")
    with services.postgres() as server:
        yield server
