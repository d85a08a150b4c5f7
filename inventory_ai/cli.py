"""flask seed, flask create-user, flask rebuild-search-index, flask mcp."""

from __future__ import annotations

import click
from flask import Flask, current_app

from inventory_ai.extensions import db
from inventory_ai.models import ROLES, User


def init_cli(app: Flask) -> None:
    @app.cli.command("seed")
    def seed_command() -> None:
        """Load seed_data/ and the demo users; running it twice changes nothing."""
        from inventory_ai.services.seeding import DEFAULT_DEMO_PASSWORD, seed

        config = current_app.extensions["inventory_ai.config"]
        password = config.demo_password
        if not password:
            password = DEFAULT_DEMO_PASSWORD
            click.secho(
                f"warning: INVENTORY_AI_DEMO_PASSWORD is not set; demo users get the development "
                f"password {password!r}. Set it before exposing this server.",
                fg="yellow",
                err=True,
            )
        report = seed(db.session, password)
        click.echo(f"seed: {report}")

    @app.cli.command("create-user")
    @click.argument("username")
    @click.option("--role", type=click.Choice(ROLES), required=True)
    @click.option(
        "--warehouses", default=None, help="warehouse codes they work in, e.g. WH02,WH03 (default: all)"
    )
    @click.password_option()
    def create_user(username: str, role: str, password: str, warehouses: str | None) -> None:
        """Create a user (the password is prompted, never echoed)."""
        _create_user(username, role, password, warehouses)

    @app.cli.command("rebuild-search-index")
    def rebuild_search_index() -> None:
        """Recompute every material's search terms (after a bulk import or a change of rules)."""
        from inventory_ai.services.search_index import rebuild_index

        count = rebuild_index(db.session)
        click.echo(f"indexed {count} materials")

    @app.cli.command("mcp")
    def mcp_command() -> None:
        """Serve the warehouse tools over MCP on stdin/stdout as the user whose API token is in
        INVENTORY_AI_MCP_TOKEN (docs/mcp.md). Exit 2 when the token is missing or unusable, lacks
        the `chat` scope, or has `decide` or `admin` (an agent must not book without a person)."""
        from inventory_ai.auth import TokenRefused, agent_user
        from inventory_ai.mcp.stdio import serve_stdio

        token = current_app.extensions["inventory_ai.config"].mcp_token
        if not token:
            click.echo(
                "error: set INVENTORY_AI_MCP_TOKEN to an API token (POST /api/v1/auth/tokens) of the "
                "user the MCP client acts as",
                err=True,
            )
            raise SystemExit(2)
        try:
            user = agent_user(token)
        except TokenRefused as exc:
            click.echo(f"error: INVENTORY_AI_MCP_TOKEN: {exc}; issue a new one", err=True)
            raise SystemExit(2) from None
        click.echo(f"MCP on stdio as {user.username} ({user.role})", err=True)
        db.session.remove()  # each request opens its own session
        serve_stdio(current_app._get_current_object(), token)


def _create_user(username: str, role: str, password: str, warehouses: str | None) -> None:
    from inventory_ai.errors import InvalidInput
    from inventory_ai.services.sites import clean_codes

    if db.session.query(User).filter_by(username=username).first():
        raise click.ClickException(f"user {username!r} already exists")
    codes = [c for c in warehouses.split(",") if c.strip()] if warehouses is not None else None
    try:
        codes = clean_codes(db.session, codes)
    except InvalidInput as exc:
        raise click.ClickException(exc.message) from exc
    user = User(username=username, role=role, warehouses=codes)
    try:
        user.set_password(password)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    db.session.add(user)
    db.session.commit()
    where = ", ".join(codes) if codes is not None else "all warehouses"
    click.echo(f"created {username} ({role}; {where})")
