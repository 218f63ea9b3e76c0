"""An import-linter contract type that lists what a room MAY import; everything else is
forbidden, so a new room, a new stage package or a new library is refused until someone
adds it to the list of the rooms that need it.

Configured in pyproject.toml (`contract_types`), one contract per room:

    source_modules   the room: packages, each with everything below it
    exclude_modules  packages below the sources that are rooms of their own (optional)
    allowed_modules  packages the room may import; an external package by its top-level name
    allowed_exactly  modules the room may import but not what lies below them (optional; e.g.
                     `interlock`, the public API, for a plugin)
    ignore_imports   single imports let through, each with its reason beside it (optional)

A module may always import the standard library and anything in its own source package
(outside the excluded ones). Only direct imports are checked: an indirect one is some other
room's direct import, checked by that room's contract.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from grimp import ImportGraph
from importlinter.application import contract_utils, output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck
from importlinter.domain.helpers import module_expressions_to_modules

STANDARD_LIBRARY = frozenset(sys.stdlib_module_names) | {"__future__"}


@dataclass(frozen=True, order=True)
class Refused:
    """One direct import the room is not allowed."""

    importer: str
    imported: str
    lines: tuple[int, ...]


def within(module: str, packages: frozenset[str]) -> bool:
    """`module` is one of `packages` or lies below one of them."""
    return any(module == p or module.startswith(f"{p}.") for p in packages)


class AllowedImportsContract(Contract):
    type_name = "allowed"

    source_modules = fields.SetField(subfield=fields.ModuleExpressionField())
    exclude_modules = fields.SetField(subfield=fields.ModuleExpressionField(), required=False)
    allowed_modules = fields.SetField(subfield=fields.ModuleExpressionField())
    allowed_exactly = fields.SetField(subfield=fields.ModuleExpressionField(), required=False)
    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        removal = contract_utils.remove_ignored_imports_and_report(
            graph=graph,
            ignore_imports=sorted(self._option("ignore_imports"), key=str),
            unmatched_alerting=contract_utils.AlertLevel.ERROR,
        )
        sources = self._packages(graph, "source_modules")
        excluded = self._packages(graph, "exclude_modules")
        allowed = self._packages(graph, "allowed_modules", must_exist=False)
        exactly = self._packages(graph, "allowed_exactly")
        refused: list[Refused] = []
        for source in sorted(sources):
            for importer in sorted({source, *graph.find_descendants(source)}):
                if within(importer, excluded):
                    continue
                output.verbose_print(verbose, f"Checking what {importer} imports...")
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    own = within(imported, frozenset({source})) and not within(imported, excluded)
                    if (
                        own
                        or imported in STANDARD_LIBRARY
                        or imported in exactly
                        or within(imported, allowed)
                    ):
                        continue
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = tuple(sorted(d["line_number"] for d in details))
                    refused.append(Refused(importer, imported, lines))
        return ContractCheck(
            kept=not refused,
            warnings=list(removal.warnings),
            ignored_import_count=removal.ignored_import_count,
            metadata={"refused": sorted(refused), "allowed": sorted(allowed | exactly)},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        for refusal in check.metadata["refused"]:
            lines = ", ".join(f"l.{n}" for n in refusal.lines) or "?"
            output.print_error(
                f"{refusal.importer} is not allowed to import {refusal.imported} ({lines})",
                bold=False,
            )
        output.new_line()
        output.print_error(f"Allowed: {', '.join(check.metadata['allowed'])}", bold=False)

    def _option(self, field: str) -> set[Any]:
        """A field's parsed value (import-linter sets them on the instance; None if absent)."""
        value: set[Any] | None = getattr(self, field)
        return value or set()

    def _packages(
        self, graph: ImportGraph, field: str, *, must_exist: bool = True
    ) -> frozenset[str]:
        """The modules `field` names (wildcards expanded); an internal one must exist."""
        expressions = sorted(self._option(field), key=str)
        found = {m.name for m in module_expressions_to_modules(graph, expressions)}
        roots = set(self.session_options["root_packages"])
        missing = sorted(
            m for m in found if m not in graph.modules and (must_exist or m.split(".")[0] in roots)
        )
        if missing:
            raise ValueError(f"{self.name}: {field} names modules that do not exist: {missing}")
        return frozenset(found)
