"""Fixtures for the tiers that need real NATS JetStream and real PostgreSQL.

Both servers come from the embedded packages, started once per session, unless
``INTERLOCK_NATS_URL`` / ``INTERLOCK_DATABASE_URL`` point at others. Every test gets a
fresh database cloned from a migrated template, and a NATS server without streams.
"""

import asyncio
import shutil
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path

import asyncpg
import nats
import pytest
from sqlalchemy.engine import make_url

# Shared suites (the store contract) assert in tests/support: show their failures in full.
pytest.register_assert_rewrite("tests.support")
# pytest keeps each test module with its asserts rewritten in a bytecode cache, and reads it
# back while the module is unchanged; where the environment says not to write bytecode
# (`PYTHONDONTWRITEBYTECODE`, set on CI machines) it rewrote all ~260 modules on every run,
# ~4 s of the unit tier. The test run writes it (only this process: its children keep the
# environment's setting, and read what `tests.support.bytecode` compiled for them).
sys.dont_write_bytecode = False

from interlock.app.embedded import EmbeddedNats, EmbeddedPostgres  # noqa: E402
from interlock.app.embedded.postgres import SUPERUSER  # noqa: E402
from interlock.config import access, natsconf  # noqa: E402
from interlock.config.secrets import Secrets  # noqa: E402
from interlock.config.settings import Settings, asyncpg_dsn  # noqa: E402
from interlock.messaging.permissions import ADMIN  # noqa: E402
from interlock.projector.store.migrate import upgrade  # noqa: E402
from interlock.tools.demo import demo_environment as demo_env  # noqa: E402
from tests.support.bytecode import compile_project  # noqa: E402
from tests.support.chaos_stack import SHARED_STACKS  # noqa: E402

_TIERS = ("unit", "integration", "e2e", "chaos")
_SERVER_TIERS = frozenset(_TIERS[1:])


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`pytest -m unit` does not import the other tiers' modules only to deselect them (~4 s
    of its start). A tier's folder is its tests' mark, so nothing of the unit tier is lost."""
    if config.option.markexpr != "unit":
        return None
    tests_dir = Path(__file__).parent
    if collection_path.parent == tests_dir and collection_path.name in _SERVER_TIERS:
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its tier, taken from the folder it lives in, and run the tiers
    from the fastest to the slowest: a broken unit test is reported in seconds, not after
    the chaos tier's stacks. A plugin's own tests (the hello fixture's, an example
    distribution's) are in-process and pure: unit. In the chaos tier, the modules asking for
    one kind of shared stack run one after another, from where the first of them is: they
    share its start-up (tests/chaos/conftest.py)."""
    tests_dir = Path(__file__).parent
    tiers: dict[int, str] = {}
    for item in items:
        parts = (
            item.path.relative_to(tests_dir).parts if item.path.is_relative_to(tests_dir) else ()
        )
        tier = parts[0] if parts and parts[0] in _TIERS else "unit"
        item.add_marker(getattr(pytest.mark, tier))
        tiers[id(item)] = tier
    places = _module_places([item for item in items if tiers[id(item)] == "chaos"])
    items.sort(  # stable: file order kept
        key=lambda item: (_TIERS.index(tiers[id(item)]), places.get(item.path, 0))
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """When the run starts processes (any tier but the unit one), compile the project's
    bytecode once for all of them (`tests.support.bytecode`)."""
    if any(item.get_closest_marker("unit") is None for item in session.items):
        compile_project(Path(__file__).parent.parent)


def _module_places(items: list[pytest.Item]) -> dict[Path, int]:
    """Each module's place in the order: its own (by its first test), or that of the first
    module asking for the same shared stack."""
    shared: dict[Path, str] = {}
    for item in items:
        names = getattr(item, "fixturenames", ())
        kind = next((name for name in SHARED_STACKS if name in names), None)
        if kind is not None:
            shared.setdefault(item.path, kind)
    places: dict[Path, int] = {}
    firsts: dict[str, int] = {}
    for item in items:
        if item.path not in places:
            place = len(places)
            kind = shared.get(item.path)
            places[item.path] = place if kind is None else firsts.setdefault(kind, place)
    return places


@pytest.fixture(scope="session")
def session_secrets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secrets]:
    """The credentials of the session's servers. Every process of the session (and every
    CLI subprocess, see `tests.support.cli`) finds them through INTERLOCK_SECRETS_DIR."""
    directory = tmp_path_factory.mktemp("secrets-home") / "secrets"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INTERLOCK_SECRETS_DIR", str(directory))
        yield Secrets(directory)


@pytest.fixture(scope="session")
def stack_urls(
    tmp_path_factory: pytest.TempPathFactory, session_secrets: Secrets
) -> Iterator[tuple[str, str]]:
    """``(nats_url, postgres_server_url)`` for the whole session, both the administrator's
    (credentials included)."""
    settings = Settings()
    with ExitStack() as servers:
        nats_url = settings.nats_url
        if nats_url is None:
            store = tmp_path_factory.mktemp("nats")
            nats_server = EmbeddedNats(store, config=nats_config(settings, session_secrets, store))
            servers.callback(nats_server.stop)
            nats_url = nats_server.start()
        database_url = settings.database_url
        if database_url is None:
            # Outside pytest's temporary root: as root, PostgreSQL runs as another user, and
            # any other pytest session on the machine resets that root to mode 0700.
            pg_home = Path(tempfile.mkdtemp(prefix="interlock-test-pg-"))
            servers.callback(shutil.rmtree, pg_home, True)
            pg_server = EmbeddedPostgres(
                pg_home, password=session_secrets.postgres_password(SUPERUSER)
            )
            servers.callback(pg_server.stop)
            database_url = pg_server.start()
        yield (
            access.nats_url_as(nats_url, ADMIN, session_secrets),
            asyncpg_dsn(access.database_url_as(database_url, None, session_secrets)),
        )


def nats_config(settings: Settings, secrets: Secrets, store: Path) -> str:
    """The configuration the embedded stack runs its broker with, on the session's secrets."""
    permissions = access.broker_permissions(settings)
    return natsconf.render(
        host="127.0.0.1",
        port=-1,
        store_dir=store,
        passwords=secrets.nats_passwords(list(permissions)),
        permissions=permissions,
    )


@pytest.fixture(scope="session")
def identity_url(stack_urls: tuple[str, str], session_secrets: Secrets) -> Callable[[str], str]:
    """The session broker's URL with the credentials of a NATS identity (a component, a
    stage as `stage-<type>-<stage>`, or a client)."""
    server = access.without_credentials(stack_urls[0])
    return lambda identity: access.nats_url_as(server, identity, session_secrets)


@pytest.fixture(scope="session")
async def template_database(stack_urls: tuple[str, str]) -> AsyncIterator[str]:
    """Name of a database migrated to head once per session, cloned by ``database_url``."""
    server_url = stack_urls[1]
    name = f"t_template_{uuid.uuid4().hex[:12]}"
    await _execute(server_url, f'CREATE DATABASE "{name}"')
    try:
        # In a thread: migrations may run their own event loop.
        await asyncio.to_thread(upgrade, _with_database(server_url, name))
        yield name
    finally:
        await _execute(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@asynccontextmanager
async def fresh_database(server_url: str, template: str) -> AsyncIterator[str]:
    """A new database cloned from the migrated template, dropped afterwards."""
    name = f"t_{uuid.uuid4().hex}"
    await _execute(server_url, f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    try:
        yield _with_database(server_url, name)
    finally:
        # FORCE terminates whatever connections the test left open.
        await _execute(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def database_url(stack_urls: tuple[str, str], template_database: str) -> AsyncIterator[str]:
    """A fresh, migrated database for this test only, as a plain ``postgresql://`` URL."""
    async with fresh_database(stack_urls[1], template_database) as url:
        yield url


@pytest.fixture
async def nats_url(stack_urls: tuple[str, str]) -> str:
    """The session's NATS server with every stream deleted (KV buckets and object stores
    are streams too), so no test sees another's leftovers."""
    await clean_broker(stack_urls[0])
    return stack_urls[0]


async def clean_broker(url: str) -> None:
    """Delete every stream (KV buckets and object stores are streams too)."""
    client = await nats.connect(url)
    try:
        manager = client.jsm()
        while names := [info.config.name for info in await manager.streams_info()]:
            for name in filter(None, names):
                await manager.delete_stream(name)
    finally:
        await client.close()


async def _execute(server_url: str, statement: str) -> None:
    connection = await asyncpg.connect(server_url)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def _with_database(server_url: str, name: str) -> str:
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


# Whole-stack tiers (e2e, chaos): one fresh database and clean broker per module, and the
# demo's short timings inherited by component processes. (The chaos tier's shared stacks
# take theirs when they start: tests/chaos/conftest.py.)


@contextmanager
def demo_timings() -> Iterator[None]:
    """The demo's short timings in the environment, inherited by the component processes
    started meanwhile."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in demo_env().items():
            patch.setenv(key, value)
        yield


def installation(tmp_path_factory: pytest.TempPathFactory, secrets: Secrets) -> Settings:
    """An installation's settings with a home of its own and the session's secrets."""
    home: Path = tmp_path_factory.mktemp("home")
    return Settings(home=home, secrets_dir=secrets.directory)


@pytest.fixture(scope="module")
def demo_environment() -> Iterator[None]:
    """The demo's short timings, inherited by the component processes."""
    with demo_timings():
        yield


@pytest.fixture(scope="module")
async def module_database(
    stack_urls: tuple[str, str], template_database: str
) -> AsyncIterator[str]:
    async with fresh_database(stack_urls[1], template_database) as url:
        yield url


@pytest.fixture(scope="module")
async def module_nats(stack_urls: tuple[str, str]) -> str:
    await clean_broker(stack_urls[0])
    return stack_urls[0]


@pytest.fixture(scope="module")
def e2e_settings(
    tmp_path_factory: pytest.TempPathFactory, demo_environment: None, session_secrets: Secrets
) -> Settings:
    return installation(tmp_path_factory, session_secrets)
