"""The type stubs (``.pyi``) say what the package has: every exported name, every
estimator's constructor (parameter names, order and defaults) and public methods, and
the calculator's functions. Editors and type checkers read only the stubs, so a name or
parameter missing there is missing for the user."""

import ast
import inspect
from pathlib import Path

import pytest

import dp_erm
import dp_erm._estimators as estimators_module
import dp_erm.accounting as accounting_module

PACKAGE = Path(dp_erm.__file__).parent


def _stub(name):
    path = PACKAGE / name
    assert path.exists(), f"{path} is not installed with the package"
    return ast.parse(path.read_text())


def _stub_classes(tree):
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _stub_functions(body):
    return {n.name: n for n in body if isinstance(n, ast.FunctionDef)}


def _signature_of(fn):
    """``[(name, default source or None)]`` of a stub function, ``self`` dropped."""
    args = fn.args.args
    defaults = [None] * (len(args) - len(fn.args.defaults)) + [
        ast.unparse(d) for d in fn.args.defaults
    ]
    out = [(a.arg, d) for a, d in zip(args, defaults)]
    kw = [(a.arg, None if d is None else ast.unparse(d))
          for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults)]
    return [(n, d) for n, d in out + kw if n != "self"]


def _runtime_signature(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self":
            continue
        d = None if p.default is inspect.Parameter.empty else repr(p.default)
        out.append((p.name, d))
    return out


def _stub_lookup(classes, cls_name, member):
    """The stub's definition of ``member`` on ``cls_name`` or its stub base classes."""
    node = classes.get(cls_name)
    while node is not None:
        found = _stub_functions(node.body).get(member)
        if found is not None:
            return found
        bases = [ast.unparse(b) for b in node.bases if ast.unparse(b) in classes]
        node = classes[bases[0]] if bases else None
    return None


def test_every_exported_name_is_in_the_package_stub():
    tree = _stub("__init__.pyi")
    names = set()
    for n in tree.body:
        if isinstance(n, ast.ImportFrom):
            names |= {a.asname or a.name for a in n.names}
    missing = sorted(set(dp_erm.__all__) - names)
    assert not missing, f"dp_erm exports {missing}, which __init__.pyi does not"


ESTIMATORS = [
    name
    for name in dp_erm.__all__
    if inspect.isclass(getattr(dp_erm, name))
    and not issubclass(getattr(dp_erm, name), Warning)
]
WARNINGS = [
    name
    for name in dp_erm.__all__
    if inspect.isclass(getattr(dp_erm, name)) and issubclass(getattr(dp_erm, name), Warning)
]


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimator_stub_matches_the_constructor_and_methods(name):
    classes = _stub_classes(_stub("_estimators.pyi"))
    assert name in classes, f"_estimators.pyi has no class {name}"
    cls = getattr(dp_erm, name)
    init = _stub_lookup(classes, name, "__init__")
    assert init is not None, f"no __init__ for {name} in the stubs"
    assert _signature_of(init) == _runtime_signature(cls.__init__), name
    # Public methods the package defines (scikit-learn's own are typed by scikit-learn).
    own = {
        m
        for klass in cls.__mro__
        if klass.__module__ == estimators_module.__name__
        for m, v in vars(klass).items()
        if callable(v) and not m.startswith("_")
    }
    for m in sorted(own):
        assert _stub_lookup(classes, name, m) is not None, f"{name}.{m} is not in the stubs"


@pytest.mark.parametrize("name", WARNINGS)
def test_warning_stub_has_the_same_base(name):
    classes = _stub_classes(_stub("_estimators.pyi"))
    assert name in classes, f"_estimators.pyi has no class {name}"
    base = getattr(dp_erm, name).__bases__[0].__name__
    assert [ast.unparse(b) for b in classes[name].bases] == [base], name


def test_accounting_stub_matches_the_functions():
    funcs = _stub_functions(_stub("accounting.pyi").body)
    public = [
        n
        for n, v in vars(accounting_module).items()
        if inspect.isfunction(v) and v.__module__ == accounting_module.__name__
        and not n.startswith("_")
    ]
    assert public, "no public functions found in dp_erm.accounting"
    for n in public:
        assert n in funcs, f"accounting.pyi has no {n}"
        assert _signature_of(funcs[n]) == _runtime_signature(getattr(accounting_module, n)), n


def test_the_comparison_sees_a_drifted_stub():
    """The checks above can fail: a stub with a parameter renamed is told apart."""
    src = "class A:\n    def __init__(self, epsilon: float = 1.0, delta=None) -> None: ...\n"
    fn = _stub_functions(_stub_classes(ast.parse(src))["A"].body)["__init__"]

    def init(self, epsilon=1.0, delta_=None):
        pass

    assert _signature_of(fn) != _runtime_signature(init)
