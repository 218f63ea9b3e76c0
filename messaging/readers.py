"""Who may read which announcements: a client reads its own tenants' and types' only.

Every announcement goes out twice (the same envelope): on `wf.out.<type>.<event>`, every
tenant's (the stable subject), and on `wf.tenant.<tenant>.<type>.<event>`. A client allowed
every tenant reads the first (and the second); a client limited to some tenants reads only the
second, for its own tenants and types.

On the announcements stream a client may create consumers only under its own names
(`<client>-out-0` … `-7`, so it holds eight at most) and only with a filter it may read: the
broker takes the filter from the create subject `$JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>`
(and refuses a request whose configuration differs from it). Reading, acknowledging and deleting
work on its own names only, so no client reads through, drains or deletes another's consumer. A
client allowed every type and every tenant may also make unnamed consumers (what `js.subscribe`
without a name does: any filter is its own), bounded by the stream's `max_consumers`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from interlock.contracts import subjects
from interlock.contracts.clients import ANY, ClientPolicy

_JS_API = "$JS.API"


@dataclass(frozen=True)
class Reads:
    publish: tuple[str, ...]
    """The JetStream API and acknowledgement subjects reading needs."""
    subscribe: tuple[str, ...]
    """The announcement subjects themselves (plain subscriptions)."""


def announcement_filters(policy: ClientPolicy, installed: Iterable[str]) -> list[str]:
    """The announcement subjects a client may read (each may end in `>`)."""
    types = policy.published_types(installed)
    if ANY in policy.types and ANY in policy.tenants:
        return [f"{subjects.OUT_PREFIX}.>", f"{subjects.TENANT_OUT_PREFIX}.>"]
    if ANY in policy.tenants:
        return [
            *(subjects.out(t, ">") for t in types),
            *(f"{subjects.TENANT_OUT_PREFIX}.*.{t}.>" for t in types),
        ]
    return [subjects.tenant_out(n, t, ">") for n in sorted(policy.tenants) for t in types]


def announcement_reads(name: str, policy: ClientPolicy, installed: Iterable[str]) -> Reads:
    """What client `name` needs to read its announcements, plainly or through consumers."""
    filters = announcement_filters(policy, installed)
    out = subjects.STREAM_OUT
    publish = [f"{_JS_API}.STREAM.NAMES"]
    for consumer in subjects.out_consumers(name):
        publish += [f"{_JS_API}.CONSUMER.CREATE.{out}.{consumer}.{f}" for f in filters]
        publish += [
            f"{_JS_API}.CONSUMER.INFO.{out}.{consumer}",
            f"{_JS_API}.CONSUMER.DELETE.{out}.{consumer}",
            f"{_JS_API}.CONSUMER.MSG.NEXT.{out}.{consumer}",
            f"$JS.ACK.{out}.{consumer}.>",
            f"$JS.FC.{out}.{consumer}.>",
        ]
    if ANY in policy.types and ANY in policy.tenants:
        publish += [
            f"{_JS_API}.STREAM.INFO.{out}",
            f"{_JS_API}.CONSUMER.CREATE.{out}",
            f"$JS.FC.{out}.>",
        ]
    return Reads(publish=tuple(publish), subscribe=tuple(filters))
