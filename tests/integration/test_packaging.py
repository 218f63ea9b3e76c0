"""The distribution installs one importable root, `interlock`, and nothing else: the rooms
(`contracts/`, `projector/`, `relay/`, `services/`, `messaging/`, `otel/`, `simulators/`,
`tools/`, `console/`) live under it, so a user's own `services` or `contracts` package can
never shadow ours or be shadowed by it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROOMS = (
    "contracts",
    "projector",
    "relay",
    "services",
    "otel",
    "messaging",
    "simulators",
    "tools",
    "console",
)


def test_the_wheel_installs_interlock_as_its_only_top_level_name(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("interlock-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
        assert archive.read(top_level).decode().split() == ["interlock"]
    roots = {
        name.split("/", 1)[0] for name in names if not name.split("/", 1)[0].endswith(".dist-info")
    }
    assert roots == {"interlock"}
    for room in ROOMS:
        assert f"interlock/{room}/__init__.py" in names, room
    assert any(n.startswith("interlock/projector/store/migrations/versions/") for n in names)
    assert "interlock/tools/demo/fixtures/request_cases.json" in names
    for asset in ("templates/workflow.html", "templates/_diagram.html", "static/console.js"):
        assert f"interlock/console/{asset}" in names, asset
