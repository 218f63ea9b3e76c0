"""What `up` checks before it starts: a folder that would shadow the installed package."""

from __future__ import annotations

from pathlib import Path

import interlock
from interlock.app.startup import shadowing_directory

INSTALLED = Path(interlock.__file__).parent


def test_a_folder_named_interlock_in_the_working_directory_is_a_shadow(tmp_path: Path) -> None:
    (tmp_path / "interlock").mkdir()

    assert shadowing_directory(INSTALLED, tmp_path) == tmp_path / "interlock"


def test_the_installed_package_itself_or_no_folder_is_no_shadow(tmp_path: Path) -> None:
    assert shadowing_directory(INSTALLED, INSTALLED.parent) is None
    assert shadowing_directory(INSTALLED, tmp_path) is None
