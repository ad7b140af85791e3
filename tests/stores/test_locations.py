"""Where a folder memory's settings come from: one memdir.toml, its own or, for a tenant, its folder's."""

import re
from pathlib import Path

import pytest

import memdir
from memdir import InvalidArgument
from memdir.remember import capture
from memdir.search import semantic
from memdir.stores.locations import check_tenant, config_file

SETTINGS = """max_lines = 300

[semantic]
weight = 0.5
private = ["people/"]

[capture]
max_transcript_mb = 0.5
"""


def test_the_settings_of_a_folder_apply_to_every_tenant_it_holds(tmp_path: Path) -> None:
    (tmp_path / "memdir.toml").write_text(SETTINGS)
    with memdir.open(tmp_path, tenant="acme") as md:
        assert config_file(md.store) == tmp_path / "memdir.toml"
        assert md.limits.max_lines == 300
        sem = semantic.attach(md)
        assert (sem.settings.weight, sem.settings.private) == (0.5, ("people/",))  # people/ is never embedded
        assert capture.transcript_cap(md, {}) == 2**19
        semantic.close(md)
    with memdir.connect(tmp_path).tenant("globex") as md:  # a server's tenants read the same file
        assert md.limits.max_lines == 300 and semantic.attach(md).settings.private == ("people/",)
        semantic.close(md)


def test_a_tenant_with_a_file_of_its_own_reads_only_that_one(tmp_path: Path) -> None:
    (tmp_path / "memdir.toml").write_text(SETTINGS)
    own = tmp_path / "tenants" / "acme" / "memdir.toml"
    own.parent.mkdir(parents=True)
    own.write_text("max_lines = 120\n")
    with memdir.open(tmp_path, tenant="acme") as md:
        assert config_file(md.store) == own
        assert md.limits.max_lines == 120
        assert semantic.attach(md).settings.weight == semantic.Settings().weight  # not merged with the folder's
        semantic.close(md)
    with memdir.open(tmp_path) as md:  # the folder itself
        assert config_file(md.store) == tmp_path / "memdir.toml" and md.limits.max_lines == 300


def test_other_backends_have_no_settings_file(tmp_path: Path) -> None:
    (tmp_path / "memdir.toml").write_text(SETTINGS)
    with memdir.open(f"sqlite:///{tmp_path / 'm.db'}", tenant="acme") as md:
        assert config_file(md.store) is None and md.limits.max_lines != 300


@pytest.mark.parametrize("tenant", ["default", "acme\n", "Acme", ""])
def test_a_tenant_that_cannot_be_named_is_refused_in_one_line(tenant: str) -> None:
    with pytest.raises(InvalidArgument, match=f"tenant {re.escape(repr(tenant))} is (not valid|reserved)"):
        check_tenant(tenant)


def test_a_folder_refuses_the_tenant_default_as_the_other_backends_do(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "m") as md:
        md.write("mine.md", "the folder's own\n")
    with pytest.raises(InvalidArgument, match="tenant 'default' is reserved"):
        memdir.open(tmp_path / "m", tenant="default")
    assert not (tmp_path / "m" / "tenants").exists()  # the refusal made nothing


def test_a_folder_s_tenants_default_from_before_says_how_to_reach_it(tmp_path: Path) -> None:
    (tmp_path / "m" / "tenants" / "default" / ".memdir").mkdir(parents=True)
    with pytest.raises(InvalidArgument, match="tenants/default was written under that name before: move it to tenants/NAME"):
        memdir.open(tmp_path / "m", tenant="default")
