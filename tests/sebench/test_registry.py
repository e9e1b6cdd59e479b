"""``EntryPointRegistry``: one Mapping of name -> object over an entry-point group, which caches
nothing (a package installed while the process runs is seen at once, and gone once removed),
imports an entry only when asked for, and names the close ones when a name is unknown."""

from __future__ import annotations

import pytest

from sebench.errors import SebenchError
from sebench.registry import EntryPointRegistry, UnknownEntryError
from tests.packaging import install

GROUP = "sebench.test-widgets"
WIDGETS = "def small():\n    return 'small'\n\ndef large():\n    return 'large'\n"


class WidgetError(UnknownEntryError):
    """A family's own error class."""


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = install(tmp_path / "site", "acme-widgets", {"acme_widgets.shapes": WIDGETS, "acme_widgets.broken": "1/0\n"},
                   f"[{GROUP}]\nsmall = acme_widgets.shapes:small\nlarge = acme_widgets.shapes:large\n"
                   "broken = acme_widgets.broken:thing\n")
    monkeypatch.syspath_prepend(str(site))
    return site


def test_an_installed_group_is_a_mapping_of_loaded_objects(site):
    widgets = EntryPointRegistry(GROUP, kind="widget")
    assert list(widgets) == ["broken", "large", "small"] and len(widgets) == 3
    assert widgets["small"]() == "small" and "large" in widgets and "tiny" not in widgets
    assert widgets.target("large") == "acme_widgets.shapes:large"  # where it lives, not imported
    assert widgets.describe()["small"].origin == "acme_widgets.shapes:small (acme-widgets)"
    with pytest.raises(ZeroDivisionError):  # a broken entry breaks its own lookup only
        widgets["broken"]


def test_nothing_is_cached_between_lookups(tmp_path, monkeypatch):
    widgets = EntryPointRegistry(GROUP)
    assert list(widgets) == []
    site = install(tmp_path / "site", "acme-widgets", {"acme_widgets2": WIDGETS}, f"[{GROUP}]\nsmall = acme_widgets2:small\n")
    monkeypatch.syspath_prepend(str(site))
    assert list(widgets) == ["small"]  # the same instance sees the package installed after it was built
    monkeypatch.undo()
    assert list(widgets) == []


def test_an_unknown_name_raises_the_familys_error_with_the_close_ones(site):
    widgets = EntryPointRegistry(GROUP, kind="widget", error=WidgetError, listed="installed", advice=" (add one)")
    with pytest.raises(WidgetError) as caught:
        widgets["smal"]
    assert str(caught.value) == "unknown widget 'smal'; installed: broken, large, small; did you mean small? (add one)"
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, SebenchError)
    with pytest.raises(WidgetError, match="unknown widget 'zzz'; installed: broken, large, small \\(add one\\)"):
        widgets.target("zzz")


def test_extra_objects_sit_beside_the_group_and_win_over_it(site):
    widgets = EntryPointRegistry(GROUP, extra={"small": lambda: "mine", "own": lambda: "own"})
    assert widgets["small"]() == "mine" and widgets["own"]() == "own"
    assert list(widgets) == ["broken", "large", "own", "small"]
    assert widgets.target("own") == "registered in this process"


def test_an_empty_group_can_be_an_error(tmp_path):
    empty = EntryPointRegistry("sebench.test-nothing", error=WidgetError, when_empty="nothing installed: pip install")
    with pytest.raises(WidgetError, match="nothing installed"):
        list(empty)
    assert "anything" not in empty  # ``in`` answers, as a Mapping's does
    assert list(EntryPointRegistry("sebench.test-nothing")) == []  # without when_empty: just empty


def test_registries_compare_by_identity_without_importing_entries(site):
    one, other = EntryPointRegistry(GROUP), EntryPointRegistry(GROUP)
    assert one == one and one != other  # Mapping's __eq__ would import every entry (the broken one raises)
    assert len({one, other}) == 2
