"""Sentry's own MCP server (@sentry/mcp-server 0.39.0, over stdio, no LLM key) against a Lookout on
loopback whose issues the real sentry-sdk made: every tool below passes the server's own validation of
Lookout's answers (no "problem communicating with the Sentry API"), and its changes are in the database."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import sqlalchemy

from tests.webapi.inbox import Inbox, inbox, on_loopback, served
from tests.webapi.mcp_client import McpServer

ORG = "lookout"
BROKEN = ("problem communicating", "Invalid", "could not parse")


@pytest.fixture(scope="module")
def lookout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inbox, str]]:
    found = inbox(tmp_path_factory.mktemp("mcp"))
    for host in on_loopback(served(found.engine)):
        yield found, host
    found.engine.dispose()


@pytest.fixture(scope="module")
def mcp(lookout: tuple[Inbox, str]) -> Iterator[McpServer]:
    found, host = lookout
    server = McpServer(host, found.tokens["ada"])
    yield server
    server.close()


def ok(mcp: McpServer, tool: str, **arguments: object) -> str:
    failed, text = mcp.call(tool, arguments)
    assert not failed and not any(word in text for word in BROKEN), f"{tool}: {text[:2000]}\n{''.join(mcp.stderr)[-2000:]}"
    return text


def run(mcp: McpServer, tool: str, **arguments: object) -> str:
    """A catalog tool, through execute_sentry_tool."""
    return ok(mcp, "execute_sentry_tool", name=tool, arguments=arguments)


def row(found: Inbox, sql: str, **params: object) -> tuple:
    with found.engine.connect() as connection:
        return tuple(connection.execute(sqlalchemy.text(sql), params).one())


def test_it_finds_the_organization_and_its_projects(mcp: McpServer) -> None:
    assert ORG in ok(mcp, "find_organizations")
    assert "web" in ok(mcp, "find_projects", organizationSlug=ORG)


def test_it_searches_issues_with_sentrys_query_syntax(mcp: McpServer) -> None:
    text = ok(mcp, "search_issues", organizationSlug=ORG, projectSlugOrId="web", query="is:unresolved level:error")
    assert "WEB-2" in text and "missing-cart" in text
    assert "WEB-3" in ok(mcp, "search_issues", organizationSlug=ORG, query="missing-user")
    counted = ok(mcp, "search_events", organizationSlug=ORG, dataset="errors", query="level:error", fields=["title", "count()"])
    assert "missing-cart" in counted


def test_it_reads_an_issue_with_its_latest_event_and_an_event_by_id(lookout: tuple[Inbox, str], mcp: McpServer) -> None:
    found, host = lookout
    text = ok(mcp, "get_sentry_resource", organizationSlug=ORG, resourceType="issue", resourceId="WEB-2")
    assert "missing-cart" in text and "_fail" in text  # the stack's frame
    permalink = f"http://{host}/organizations/lookout/issues/{found.issues['missing-cart']}/"
    assert "missing-cart" in ok(mcp, "get_sentry_resource", url=permalink)  # a permalink it can read back
    text = ok(mcp, "get_sentry_resource", organizationSlug=ORG, resourceType="event",
              resourceId=found.events["missing-user"])
    assert "missing-user" in text


def test_update_issue_changes_the_status_in_lookout(lookout: tuple[Inbox, str], mcp: McpServer) -> None:
    found, _host = lookout
    issue = found.issues["division by zero"]
    status = "SELECT status FROM inbox_issue WHERE id = :i"
    ok(mcp, "update_issue", organizationSlug=ORG, issueId="WEB-1", status="resolved")
    assert row(found, status, i=issue) == ("resolved",)
    ok(mcp, "update_issue", organizationSlug=ORG, issueId=str(issue), status="unresolved")
    assert row(found, status, i=issue) == ("unresolved",)
    ok(mcp, "update_issue", organizationSlug=ORG, issueId="WEB-1", status="ignored")
    assert row(found, status, i=issue) == ("ignored",)
    ok(mcp, "update_issue", organizationSlug=ORG, issueId="WEB-1", status="unresolved")
    text = ok(mcp, "update_issue", organizationSlug=ORG, issueId="WEB-1", status="ignored", ignoreMode="forDuration",
              ignoreDurationMinutes=30)
    assert "Forever" not in text
    (until,) = row(found, "SELECT ignored_until FROM inbox_issue WHERE id = :i", i=issue)
    assert 29 * 60 < until - time.time() <= 30 * 60


def test_update_issue_assigns_it_to_a_console_user(lookout: tuple[Inbox, str], mcp: McpServer) -> None:
    found, _host = lookout
    text = ok(mcp, "update_issue", organizationSlug=ORG, issueId="WEB-3", assignedTo="user:1")
    assert "ada" in text
    assert row(found, "SELECT assignee FROM inbox_issue WHERE id = :i", i=found.issues["missing-user"]) == ("ada",)


def test_notes_activity_and_tag_values(lookout: tuple[Inbox, str], mcp: McpServer) -> None:
    found, _host = lookout
    run(mcp, "add_issue_note", organizationSlug=ORG, issueId="WEB-2", text="Looking at the cart.")
    assert row(found, "SELECT author, body FROM inbox_comment WHERE issue_id = :i",
               i=found.issues["missing-cart"]) == ("ada", "Looking at the cart.")
    assert "Looking at the cart." in run(mcp, "get_issue_activity", organizationSlug=ORG, issueId="WEB-2")
    assert "production" in run(mcp, "get_issue_tag_values", organizationSlug=ORG, issueId="WEB-2", tagKey="environment")


def test_events_stack_releases_and_whoami(lookout: tuple[Inbox, str], mcp: McpServer) -> None:
    found, _host = lookout
    text = run(mcp, "search_issue_events", organizationSlug=ORG, issueId="WEB-2", query="environment:production")
    assert found.events["missing-cart"] in text
    assert "_fail" in run(mcp, "get_event_stacktrace", organizationSlug=ORG, issueId="WEB-2")
    assert "1.0.0" in run(mcp, "find_releases", organizationSlug=ORG)  # its short version
    assert "ada" in run(mcp, "whoami")
