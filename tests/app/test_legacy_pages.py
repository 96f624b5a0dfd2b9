"""Why ui/common/frame/legacy_pages.py exists: on the installed Streamlit, a ``pages/`` folder
beside the main script starts the legacy pages-folder mode, no config option turns it off, and in
that mode a request runs a page file without the main script (so ``st.navigation`` in ``app.py``,
the supported switch, comes too late). When one of these stops holding, the workaround can go."""

from __future__ import annotations

import inspect

import streamlit  # noqa: F401 - loads the config module fully
from streamlit import config
from streamlit.runtime.pages_manager import PagesManager


def test_no_config_option_turns_the_pages_folder_mode_off():
    options = [k for k in config.get_config_options()
               if "page" in k.lower() or "navigation" in k.lower()]
    assert options == ["client.showSidebarNavigation"]
    assert "only applies when app's pages are defined by the" in \
        config.get_config_options()["client.showSidebarNavigation"].description


def test_a_pages_folder_beside_the_main_script_starts_the_legacy_mode(tmp_path, monkeypatch):
    (tmp_path / "app.py").write_text("")
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    PagesManager(str(tmp_path / "app.py"))
    assert PagesManager.uses_pages_directory is False
    (tmp_path / "pages").mkdir()
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    PagesManager(str(tmp_path / "app.py"))
    assert PagesManager.uses_pages_directory is True


def test_the_legacy_mode_runs_a_page_without_the_main_script():
    from streamlit.commands import navigation
    from streamlit.runtime.scriptrunner import script_runner

    run = inspect.getsource(script_runner.ScriptRunner)
    assert "if PagesManager.uses_pages_directory:\n" in run and "_mpa_v1(" in run
    # _mpa_v1 runs the page the URL names (pages/<name>.py) through its own navigation
    assert "page.run()" in inspect.getsource(script_runner._mpa_v1)
    # the supported switch is st.navigation, which runs only inside app.py
    assert "PagesManager.uses_pages_directory = False" in inspect.getsource(navigation.navigation)


def test_the_workaround_switches_the_mode_off_once(monkeypatch):
    import ui.common.frame.legacy_pages as legacy

    reruns = []
    monkeypatch.setattr(legacy.st, "rerun", lambda: reruns.append(1))
    monkeypatch.setattr(PagesManager, "uses_pages_directory", True)
    legacy.leave_legacy_navigation()
    legacy.leave_legacy_navigation()
    assert PagesManager.uses_pages_directory is False and reruns == [1]
