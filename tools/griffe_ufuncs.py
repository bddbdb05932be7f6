"""Griffe extension for the documentation site (mkdocs.yml): clnp's ufuncs on the reference
page of ``clnp``.

The ufuncs (``clnp.add``, ``clnp.sin``, ...) are instances of ``clnp.ufunc`` built from the op
table, not functions defined in a module, so griffe's inspection records each one as an
alias to ``clnp._array_api.ufunc.<name>``, which does not exist, and mkdocstrings leaves them out. This
extension replaces those aliases with functions carrying the ufunc's signature and generated
docstring (whose first line, the signature, is dropped: the page shows it separately).
"""
from __future__ import annotations

import inspect
from typing import Any

import griffe

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: griffe.ParameterKind.positional_only,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: griffe.ParameterKind.positional_or_keyword,
    inspect.Parameter.VAR_POSITIONAL: griffe.ParameterKind.var_positional,
    inspect.Parameter.KEYWORD_ONLY: griffe.ParameterKind.keyword_only,
    inspect.Parameter.VAR_KEYWORD: griffe.ParameterKind.var_keyword,
}


def _parameters(obj: Any) -> griffe.Parameters:
    params = []
    for p in inspect.signature(obj).parameters.values():
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        params.append(griffe.Parameter(p.name, kind=_KINDS[p.kind], default=default))
    return griffe.Parameters(*params)


def _docstring(name: str, obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    first, _, rest = doc.partition("\n")
    return rest.lstrip("\n") if first.startswith(f"{name}(") else doc


class ClnpUfuncs(griffe.Extension):
    """Turns the ``clnp`` package's unresolvable ufunc aliases into documented functions."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader,
                   **kwargs: Any) -> None:
        if pkg.path != "clnp":
            return
        import clnp
        from clnp._array_api.ufunc import ufunc
        for name, member in list(pkg.members.items()):
            obj = getattr(clnp, name, None)
            if not (isinstance(obj, ufunc) and member.is_alias):
                continue
            fn = griffe.Function(name, parameters=_parameters(obj), parent=pkg)
            fn.docstring = griffe.Docstring(_docstring(name, obj), parent=fn,
                                            parser=loader.docstring_parser,
                                            parser_options=loader.docstring_options)
            pkg.set_member(name, fn)
