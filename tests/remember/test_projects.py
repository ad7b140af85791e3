"""A project's memory by its repository's identity; the team's memory in the project; sync when a session
starts and ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from gitmachines import bare, git, isolate, remote_texts
from serving import Served, call

import memdir
from memdir.faces.cli import main
from memdir.recall import hooks
from memdir.remember import gitsync, projects


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(tmp_path / "home", monkeypatch.setenv)


def project_upstream(tmp_path: Path, url: str | None = None) -> Path:
    """A project pushed to a bare repository (its "GitHub"), with `url` as the remote others clone from."""
    up = bare(tmp_path / "upstream.git")
    work = tmp_path / "seed"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "app.py").write_text("print('flock')\n")
    git(work, "add", "app.py")
    git(work, "commit", "-qm", "first")
    git(work, "push", "-q", str(up), "main")
    return up


def clone(up: Path, where: Path, url: str) -> Path:
    git(up.parent, "clone", "-q", str(up), str(where))
    git(where, "remote", "set-url", "origin", url)
    return where


@pytest.mark.parametrize("url", ["git@github.com:Acme/flock.git", "https://github.com/Acme/flock",
                                 "ssh://git@github.com/Acme/flock.git", "https://user:pw@GitHub.com/Acme/flock.git/",
                                 "ssh://git@github.com:22/Acme/flock"])
def test_one_project_however_its_url_is_spelled(url: str) -> None:
    assert projects.normal_url(url) == "github.com/Acme/flock"


@pytest.mark.parametrize("url", ["/srv/git/flock.git", "../flock", "file:///srv/git/flock.git", "~/flock.git"])
def test_a_remote_on_this_disk_names_no_project(url: str) -> None:
    assert projects.normal_url(url) is None


def test_two_paths_and_a_worktree_reach_one_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    up = project_upstream(tmp_path)
    one = clone(up, tmp_path / "laptop" / "flock", "git@github.com:acme/flock.git")
    two = clone(up, tmp_path / "elsewhere" / "flock-copy", "https://github.com/acme/flock")
    tree = tmp_path / "flock-hotfix"
    git(one, "worktree", "add", "-q", "-b", "hotfix", str(tree))
    tenants = {projects.tenant_for(p) for p in (one, two, tree, one / "sub" if (one / "sub").mkdir() is None else one)}
    assert tenants == {projects.identity(one).tenant} and len(tenants) == 1
    assert projects.identity(tree).value == "github.com/acme/flock"
    personal = tmp_path / "memory"
    runner = CliRunner()
    monkeypatch.chdir(one)
    done = runner.invoke(main, ["--root", str(personal), "--tenant", "@project", "write", "notes/release.md",
                                "--body", "Flock ships on Fridays."])
    assert done.exit_code == 0, done.output
    for where in (two, tree):
        monkeypatch.chdir(where)
        got = runner.invoke(main, ["--root", str(personal), "--tenant", "@project", "read", "notes/release.md"])
        assert got.exit_code == 0 and "Flock ships on Fridays." in got.output
    assert (personal / "tenants" / projects.tenant_for(one) / "notes" / "release.md").is_file()


def test_a_repository_without_a_remote_is_known_by_its_first_commit(tmp_path: Path) -> None:
    up = project_upstream(tmp_path)
    local = tmp_path / "local"
    git(tmp_path, "clone", "-q", str(up), str(local))  # its origin is a path on this disk: no identity
    first = git(local, "rev-list", "--max-parents=0", "HEAD").strip()
    copy = tmp_path / "copy-of-local"
    git(tmp_path, "clone", "-q", str(local), str(copy))
    assert projects.identity(local) == projects.Identity("first commit", first, local)
    assert projects.tenant_for(copy) == projects.tenant_for(local) == f"project-{first[:12]}"


def test_a_folder_outside_any_repository_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    got = CliRunner().invoke(main, ["--root", str(tmp_path / "m"), "--tenant", "@project", "ls"])
    assert got.exit_code == 1 and "is not inside a git repository" in got.stderr and got.stderr.count("\n") == 1


def test_the_project_command_says_how_it_knows_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    up = project_upstream(tmp_path)
    one = clone(up, tmp_path / "flock", "git@gitlab.example.org:team/flock.git")
    monkeypatch.chdir(one)
    got = CliRunner().invoke(main, ["--root", str(tmp_path / "memory"), "project", "--json"])
    data = json.loads(got.output)
    assert data["kind"] == "remote" and data["value"] == "gitlab.example.org/team/flock"
    assert data["tenant"].startswith("team-flock-") and data["team"] is None


def test_the_server_started_in_a_project_serves_its_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code starts `memdir serve` in the project's folder: --tenant @project there is the project's memory."""
    up = project_upstream(tmp_path)
    one = clone(up, tmp_path / "flock", "git@github.com:acme/flock.git")
    monkeypatch.chdir(one)
    personal = tmp_path / "memory"
    assert CliRunner().invoke(main, ["--root", str(personal), "--tenant", "@project", "write", "notes/ci.md",
                                     "--description", "CI runs on every push", "--body", "CI."]).exit_code == 0
    with Served(personal, "--tenant", "@project") as srv:
        reply = call("GET", srv.url + "/v1/index")
    assert reply.status == 200 and "CI runs on every push" in reply.text


def test_project_memories_travel_with_the_personal_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's memory is a tenant of the personal memory, so syncing that carries it to the other machine."""
    up = project_upstream(tmp_path)
    one = clone(up, tmp_path / "desk" / "flock", "git@github.com:acme/flock.git")
    two = clone(up, tmp_path / "laptop" / "src" / "flock", "git@github.com:acme/flock.git")
    remote = bare(tmp_path / "memory.git")
    runner = CliRunner()
    monkeypatch.chdir(one)
    assert runner.invoke(main, ["--root", str(tmp_path / "desk-memory"), "--tenant", "@project", "write", "n.md",
                                "--body", "Deploys need the VPN."]).exit_code == 0
    assert runner.invoke(main, ["--root", str(tmp_path / "desk-memory"), "sync", "--init", str(remote)]).exit_code == 0
    monkeypatch.chdir(two)
    assert runner.invoke(main, ["--root", str(tmp_path / "laptop-memory"), "sync", "--init", str(remote)]).exit_code == 0
    got = runner.invoke(main, ["--root", str(tmp_path / "laptop-memory"), "--tenant", "@project", "read", "n.md"])
    assert "Deploys need the VPN." in got.output


# ---------------------------------------------------------------- the team's memory


def test_recall_reads_the_team_memory_beside_the_personal_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    up = project_upstream(tmp_path)
    one = clone(up, tmp_path / "flock", "git@github.com:acme/flock.git")
    monkeypatch.chdir(one)
    runner = CliRunner()
    assert runner.invoke(main, ["--root", "@team", "write", "feedback/reviews.md", "--type", "feedback",
                                "--description", "Every change needs two reviews", "--body",
                                "Two reviews before a merge."]).exit_code == 0
    assert (one / "team-memory" / "feedback" / "reviews.md").is_file()
    assert git(one, "status", "--porcelain", "--untracked-files=all").splitlines() == [
        "?? team-memory/.gitattributes", "?? team-memory/MEMORY.md", "?? team-memory/feedback/reviews.md"
    ]  # .memdir/ keeps itself out of git
    with memdir.open(tmp_path / "personal") as md:
        md.write("feedback/tone.md", "Short answers.", type="feedback", description="Answer briefly")
        payload = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(one), "session_id": "s1"}
        text = hooks.session_start(md, payload)["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
        assert "Answer briefly" in text and "Every change needs two reviews" in text
        assert text.index("Answer briefly") < text.index("team-memory/ in its repository") < text.index("two reviews")
        asked = {"hook_event_name": "UserPromptSubmit", "prompt": "how many reviews does a merge need", "cwd": str(one)}
        hit = hooks.user_prompt_submit(md, asked)
        assert hit is not None and "team-memory" in hit["hookSpecificOutput"]["additionalContext"]
        elsewhere = {**payload, "cwd": str(tmp_path)}
        assert "two reviews" not in (hooks.session_start(md, elsewhere) or {}).get("hookSpecificOutput", {}).get(
            "additionalContext", "")


def test_the_personal_sync_never_touches_the_projects_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    up = project_upstream(tmp_path)
    one = clone(up, tmp_path / "flock", "git@github.com:acme/flock.git")
    monkeypatch.chdir(one)
    runner = CliRunner()
    assert runner.invoke(main, ["--root", "@team", "write", "notes/team.md", "--body", "shared"]).exit_code == 0
    before = (git(one, "rev-parse", "HEAD"), git(one, "status", "--porcelain"), git(up, "rev-parse", "main"))
    remote = bare(tmp_path / "memory.git")
    assert runner.invoke(main, ["--root", str(tmp_path / "memory"), "--tenant", "@project", "write", "mine.md",
                                "--body", "mine"]).exit_code == 0
    assert runner.invoke(main, ["--root", str(tmp_path / "memory"), "sync", "--init", str(remote)]).exit_code == 0
    assert (git(one, "rev-parse", "HEAD"), git(one, "status", "--porcelain"), git(up, "rev-parse", "main")) == before
    assert not [p for p in remote_texts(remote) if "team" in p.split("/")[0]]
    refused = runner.invoke(main, ["--root", "@team", "sync"])
    assert refused.exit_code == 1 and "inside the git repository at" in refused.stderr


def test_two_clones_merge_the_team_memory_without_merging_its_index(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    up = project_upstream(tmp_path)
    one = clone(up, tmp_path / "one", "git@github.com:acme/flock.git")
    monkeypatch.chdir(one)
    runner = CliRunner()
    assert runner.invoke(main, ["--root", "@team", "init"]).exit_code == 0
    assert "MEMORY.md merge=union" in (one / "team-memory" / ".gitattributes").read_text()
    git(one, "add", "team-memory")
    git(one, "commit", "-qm", "team memory")
    git(one, "push", "-q", str(up), "main")
    two = clone(up, tmp_path / "two", "git@github.com:acme/flock.git")
    for where, path, words in ((one, "project/release.md", "Release on Tuesdays."), (two, "project/ci.md", "CI runs on 3.12.")):
        monkeypatch.chdir(where)
        assert runner.invoke(main, ["--root", "@team", "write", path, "-d", words, "--body", words]).exit_code == 0
        git(where, "add", "team-memory")
        git(where, "commit", "-qm", f"remember {path}")
    git(one, "push", "-q", str(up), "main")
    git(two, "pull", "-q", "--no-rebase", "--no-edit", str(up), "main")  # both changed MEMORY.md at one place: no conflict
    merged = (two / "team-memory" / "MEMORY.md").read_text()
    assert "<<<<<<<" not in merged and "Release on Tuesdays" in merged and "CI runs on 3.12" in merged
    monkeypatch.chdir(two)
    assert runner.invoke(main, ["--root", "@team", "reconcile", "--fix"]).exit_code == 0
    index = (two / "team-memory" / "MEMORY.md").read_text()
    assert index.count("Release on Tuesdays") == 1 and index.count("CI runs on 3.12") == 1
    assert runner.invoke(main, ["--root", "@team", "init"]).exit_code == 0  # set up again: nothing added twice
    assert (two / "team-memory" / ".gitattributes").read_text().count("merge=union") == 1


# ---------------------------------------------------------------- automatic


def machines(tmp_path: Path, auto: str) -> tuple[memdir.Memdir, memdir.Memdir, Path]:
    remote = bare(tmp_path / "remote.git")
    a = memdir.open(tmp_path / "a", actor="cli:a")
    a.write("user/profile.md", "Prefers short answers.\n", type="user", description="the user")
    gitsync.init(a, str(remote))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "memdir.toml").write_text(auto, encoding="utf-8")
    b = memdir.open(tmp_path / "b", actor="hook:claude-code")
    gitsync.init(b, str(remote))
    return a, b, remote


def test_a_session_starts_after_a_pull_and_ends_with_a_push(tmp_path: Path) -> None:
    a, b, remote = machines(tmp_path, "[sync]\nauto = true\npull_timeout = 5\n")
    a.write("feedback/tests.md", "Run the tests first.", type="feedback", description="Tests before commits")
    gitsync.git_sync(a)
    payload = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(tmp_path), "session_id": "s1"}
    text = hooks.session_start(b, payload)["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert "Tests before commits" in text
    b.write("notes/from-b.md", "written in the session\n")
    pushing = gitsync.after_session(b)
    assert pushing is not None and pushing.wait(timeout=120) == 0
    assert "notes/from-b.md" in remote_texts(remote)
    assert "pushed to origin" in (tmp_path / "b" / ".memdir" / "sync.log").read_text()
    a.close()
    b.close()


def test_without_auto_a_session_touches_no_remote(tmp_path: Path) -> None:
    a, b, remote = machines(tmp_path, "")
    a.write("notes/x.md", "x\n")
    gitsync.git_sync(a)
    assert gitsync.before_session(b) is None and gitsync.after_session(b) is None
    assert not (tmp_path / "b" / "notes" / "x.md").exists()
    a.close()
    b.close()


def test_a_slow_network_costs_a_session_start_at_most_its_timeout(tmp_path: Path) -> None:
    """A remote that never answers (a command that sleeps): the pull gives up after pull_timeout, the session
    starts with what is here, and the failure waits in `memdir stats`."""
    _, b, _ = machines(tmp_path, "[sync]\nauto = true\npull_timeout = 0.5\n")
    never = tmp_path / "never-answers"
    never.write_text("#!/bin/sh\nexec sleep 600\n")
    never.chmod(0o755)
    git(tmp_path / "b", "config", "protocol.ext.allow", "always")
    git(tmp_path / "b", "remote", "set-url", "origin", f"ext::{never}")
    said = gitsync.before_session(b)
    assert said is not None and "did not finish within 0.5 s" in said
    payload = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(tmp_path), "session_id": "s1"}
    assert "the user" in hooks.session_start(b, payload)["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    state = gitsync.status(b)
    assert state is not None and "did not finish" in (state["error"] or "")
    b.close()


def test_a_bad_sync_setting_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "memdir.toml").write_text("[sync]\nauto = \"yes\"\n", encoding="utf-8")
    with memdir.open(tmp_path / "m") as md, pytest.raises(memdir.InvalidArgument, match=r"\[sync\] auto must be true"):
        gitsync.settings(md)
