"""Connecting from outside: the nats-server configuration to run Interlock on a NATS of your
own (`nats-config`), and a client's URL with its credentials (`client-url`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from interlock.app import terminal
from interlock.app.embedded import running_record
from interlock.app.options import load_settings
from interlock.config import access, natsconf


def nats_config(
    *,
    host: Annotated[str, typer.Option(help="Address the server listens on.")] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="Client port.", min=1, max=65535)] = 4222,
    store_dir: Annotated[
        Path | None,
        typer.Option(help="JetStream storage directory (default: <home>/nats-server)."),
    ] = None,
    cluster_node: Annotated[
        str | None,
        typer.Option(help="This node's unique server name: render one node of a NATS cluster."),
    ] = None,
    cluster_routes: Annotated[
        str,
        typer.Option(help="The cluster's nodes as comma-separated host:port route addresses."),
    ] = "",
    cluster_port: Annotated[
        int, typer.Option(help="Port this node listens on for routes.", min=1, max=65535)
    ] = 6222,
) -> None:
    """Print a complete nats-server configuration for Interlock: JetStream fsyncing before
    every acknowledgement, and every component and client with its own password and
    permissions (created under INTERLOCK_HOME if missing, so components and `client-url`
    started with the same home connect). It contains passwords: keep the file private.
    With --cluster-node, one node of a NATS cluster: render each node from the same home."""
    s = load_settings()
    permissions = access.broker_permissions(s)
    secrets = access.secrets_of(s)
    passwords = secrets.nats_passwords(list(permissions))
    routes = [r.strip() for r in cluster_routes.split(",") if r.strip()]
    if cluster_node is None and routes:
        terminal.errors.print("[red]--cluster-routes needs --cluster-node[/]")
        raise typer.Exit(2)
    cluster = natsconf.Cluster(cluster_node, routes, cluster_port) if cluster_node else None
    text = natsconf.render(
        host=host,
        port=port,
        store_dir=(store_dir or s.home / "nats-server").resolve(),
        passwords=passwords,
        permissions=permissions,
        cluster=cluster,
        route_password=secrets.nats_password(natsconf.ROUTE_IDENTITY) if cluster else "",
    )
    typer.echo(text, nl=False)


def client_url(name: Annotated[str, typer.Argument(help="A client of INTERLOCK_CLIENTS.")]) -> None:
    """Print a nats:// URL carrying the credentials of client NAME (for its publishers,
    which must also use the inbox prefix `_INBOX_<NAME>`)."""
    s = load_settings()
    known = access.external_clients(s)
    if name not in known:
        terminal.errors.print(f"[red]unknown client {name!r}[/]; one of: {', '.join(known)}")
        raise typer.Exit(2)
    if s.nats_url is not None:
        server = access.without_credentials(s.nats_url)
    elif (record := running_record(s.home)) is not None:
        server = record.nats_url
    else:
        terminal.errors.print(
            f"no NATS: set INTERLOCK_NATS_URL, or start the embedded stack (`interlock up`) "
            f"in {s.home}"
        )
        raise typer.Exit(1)
    typer.echo(access.nats_url_as(server, name, access.secrets_of(s)))
