"""The control store: projects, keys (only digests kept), webhooks, where projects live."""

from __future__ import annotations

import pytest

from failcode import FailureError, redact
from failcode.service._control import RETENTION_FLOOR_DAYS, Control, check_project_name
from failcode.service._hooks import add_webhook, remove_webhook, shown_url, webhooks
from failcode.service._projects import ProjectStores, project_url
from failcode.store import open_store


def code_of(error: pytest.ExceptionInfo[FailureError]) -> str:
    return error.value.failure.code


@pytest.mark.parametrize("name", ["web", "web-agents", "a", "0ci", "x" * 40])
def test_project_names_that_are_accepted(name: str) -> None:
    assert check_project_name(name) == name


@pytest.mark.parametrize("name", ["", "Web", "web_agents", "-web", "x" * 41, "a b", "é",
                                  "web/../x", "web\n"])
def test_project_names_that_are_refused(name: str) -> None:
    with pytest.raises(FailureError) as refused:
        check_project_name(name)
    assert code_of(refused) == "FC-DATA-001"
    assert "project name" in refused.value.failure.message


def test_keys_are_kept_as_digests_only(store_url: str) -> None:
    with open_store(store_url) as store:
        control = Control(store)
        control.create_project("web")
        control.create_project("other")
        keys = {scope: control.create_key("web", scope)[0] for scope in ("ingest", "read",
                                                                         "admin")}
        everything = repr(store.fetch("SELECT * FROM svc_keys"))
        for key in keys.values():
            assert key not in everything
            assert key.split("_", 3)[3] not in everything  # nor its secret
            assert redact(key) != key  # and redaction knows the shape
        for scope, key in keys.items():
            found = control.authenticate(key)
            assert found is not None
            assert (found.project, found.scope) == ("web", scope)
        ingest = keys["ingest"]
        _fc, _scope, key_id, secret = ingest.split("_", 3)  # the secret may hold "_" too
        prefix = f"fc_ingest_{key_id}"
        wrong_secret = prefix + "_" + ("A" if secret[0] != "A" else "B") + secret[1:]
        wrong_scope = ingest.replace("fc_ingest_", "fc_admin_", 1)
        for presented in (wrong_secret, wrong_scope, "fc_read_" + "a" * 12 + "_" + "b" * 43,
                          "", "Bearer", ingest + "x", ingest.upper()):
            assert control.authenticate(presented) is None, presented
        revoked = control.revoke_key(key_id)
        assert revoked.revoked_us is not None
        assert control.authenticate(ingest) is None
        assert control.authenticate(keys["read"]) is not None
        with pytest.raises(FailureError) as unknown:
            control.revoke_key("nosuchkeyid0")
        assert code_of(unknown) == "FC-SVC-003"


def test_projects_and_retention(store_url: str) -> None:
    with open_store(store_url) as store:
        control = Control(store)
        made = control.create_project("web", retention_days=30)
        assert made.retention_days == 30
        with pytest.raises(FailureError) as taken:
            control.create_project("web")
        assert code_of(taken) == "FC-SVC-007"
        for days in (0, -1, RETENTION_FLOOR_DAYS - 1, 10**6):
            with pytest.raises(FailureError) as bad:
                control.set_retention("web", days)
            assert code_of(bad) == "FC-DATA-001"
        assert control.set_retention("web", 7).retention_days == 7
        with pytest.raises(FailureError) as missing:
            control.create_key("nope", "read")
        assert code_of(missing) == "FC-SVC-003"
        assert "failcode project create nope" in missing.value.failure.message
        with pytest.raises(FailureError) as scope:
            control.create_key("web", "write")
        assert code_of(scope) == "FC-DATA-001"


def test_each_project_has_its_own_store(store_url: str) -> None:
    from failcode import FC
    from failcode.events import failure_event

    with open_store(store_url) as store:
        Control(store).create_project("web")
        Control(store).create_project("ci")
        stores = ProjectStores(store, store_url)
        try:
            failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "x"})
            stores.get("web").append([failure_event(failure, event="command.failed")])
            assert stores.get("web").stats().events_stored == 1
            assert stores.get("ci").stats().events_stored == 0
            assert stores.url("web") != stores.url("ci") != store_url
        finally:
            stores.close()
        assert store.stats().events_stored == 0  # the control store holds no events


def test_where_projects_live() -> None:
    assert project_url("sqlite:///data/failcode.db", "web") == (
        "sqlite:///data/failcode.projects/web.db")
    url = project_url("postgresql://u@h/db?sslmode=disable", "web-agents")
    assert url == "postgresql://u@h/db?sslmode=disable&options=-csearch_path%3Dfailcode_web_agents"
    inside = project_url("postgresql://u@h/db?options=-csearch_path%3Dteam%20-cwork_mem%3D8MB",
                         "ci", control_schema="team")
    assert inside == "postgresql://u@h/db?options=-cwork_mem%3D8MB%20-csearch_path%3Dteam_ci"


def test_webhooks_are_checked_and_never_shown_with_their_secrets(store_url: str) -> None:
    with open_store(store_url) as store:
        Control(store)
        hook = add_webhook(store, "web", "https://user:pw@hooks.example/x?token=s3cr3t",
                           on=["regression", "new_finding"])
        assert webhooks(store, "web") == [hook]
        assert webhooks(store, "other") == []
        assert shown_url(hook.url) == "https://hooks.example/x"
        for url, on, extra in (
            ("ftp://x/y", ["new_finding"], {}), ("https:///nohost", ["new_finding"], {}),
            ("https://x/y", [], {}), ("https://x/y", ["sometimes"], {}),
            ("https://x/y", ["rate"], {}), ("https://x/y", ["rate"], {"rate_threshold": 0}),
            ("https://x/y", ["new_finding"], {"rate_window_s": 10}),
            ("https://x/y", ["new_finding"], {"throttle_s": -1}),
            ("https://x/y", ["new_finding"], {"format": "xml"}),
        ):
            with pytest.raises(FailureError) as bad:
                add_webhook(store, "web", url, on=on, **extra)
            assert code_of(bad) == "FC-DATA-001", (url, on, extra)
        remove_webhook(store, "web", hook.id)
        with pytest.raises(FailureError) as gone:
            remove_webhook(store, "web", hook.id)
        assert code_of(gone) == "FC-SVC-003"
