"""Pytrees (`omnistage.tree_util`): nested tuples, lists, dicts, None, namedtuples and
registered classes, flattened to leaves plus a hashable structure (`PyTreeDef`)."""
import collections
import functools

_registry = {}


class _Node:
    __slots__ = ("flatten", "unflatten", "keys")

    def __init__(self, flatten, unflatten, keys=None):
        self.flatten, self.unflatten, self.keys = flatten, unflatten, keys


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Register `nodetype`: `flatten_func(x) -> (children, aux)`, `unflatten_func(aux, children)`."""
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = _Node(flatten_func, unflatten_func)
    return nodetype


def register_pytree_node_class(cls):
    """Class decorator: the class provides `tree_flatten()` and classmethod `tree_unflatten`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _dict_flatten(d):
    keys = sorted(d.keys(), key=_sort_key)
    return [d[k] for k in keys], tuple(keys)


def _sort_key(k):
    return (type(k).__name__, k) if not isinstance(k, (int, float, str)) else ("", k) if isinstance(k, str) else (" ", k)


_registry[tuple] = _Node(lambda t: (list(t), None), lambda _, c: tuple(c), lambda t: range(len(t)))
_registry[list] = _Node(lambda t: (list(t), None), lambda _, c: list(c), lambda t: range(len(t)))
_registry[dict] = _Node(_dict_flatten, lambda keys, c: dict(zip(keys, c)), lambda aux: aux)
_registry[type(None)] = _Node(lambda _: ([], None), lambda _, c: None, lambda aux: ())
_registry[collections.OrderedDict] = _Node(
    lambda d: (list(d.values()), tuple(d.keys())),
    lambda keys, c: collections.OrderedDict(zip(keys, c)),
    lambda aux: aux,
)
_registry[collections.defaultdict] = _Node(
    lambda d: (_dict_flatten(d)[0], (d.default_factory, _dict_flatten(d)[1])),
    lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
    lambda aux: aux[1],
)


def registered_unflatten(node_type):
    """The unflatten function registered for `node_type` (the built-in containers included),
    or None: a namedtuple class (rebuilt by calling it) or no node."""
    node = _registry.get(node_type)
    return None if node is None else node.unflatten


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_for(x):
    node = _registry.get(type(x))
    if node is None and _is_namedtuple(x):
        t = type(x)
        node = _Node(lambda nt: (list(nt), None), lambda _, c, t=t: t(*c), lambda nt: t._fields)
    return node


def flatten_node(x):
    """(children, aux) of `x` when it is a pytree node (a registered class or a namedtuple),
    else None: one level of `tree_flatten`, for callers that key on the structure themselves."""
    node = _node_for(x)
    return None if node is None else node.flatten(x)


class PyTreeDef:
    """The structure of a pytree; hashable and comparable, so it can be a cache key."""

    __slots__ = ("node_type", "aux", "children", "num_leaves", "_hash", "_k")

    def __init__(self, node_type, aux, children):
        self.node_type, self.aux, self.children = node_type, aux, tuple(children)
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in self.children)
        self._hash = None
        self._k = None

    @property
    def num_nodes(self):
        return 1 + sum(c.num_nodes for c in self.children)

    def _key(self):
        if self._k is None:
            self._k = (self.node_type, _hashable_aux(self.aux), self.children)
        return self._k

    def __eq__(self, other):
        if self is other:
            return True
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def __repr__(self):
        return f"PyTreeDef({_structure_str(self)})"


def _hashable_aux(aux):
    try:
        hash(aux)
        return aux
    except TypeError:
        return repr(aux)


_LEAF = PyTreeDef(None, None, ())


def _structure_str(td):
    if td.node_type is None:
        return "*"
    inner = ", ".join(_structure_str(c) for c in td.children)
    if td.node_type is tuple:
        return f"({inner}{',' if len(td.children) == 1 else ''})"
    if td.node_type is list:
        return f"[{inner}]"
    if td.node_type is dict:
        return "{" + ", ".join(f"{k!r}: {_structure_str(c)}" for k, c in zip(td.aux, td.children)) + "}"
    if td.node_type is type(None):
        return "None"
    return f"{td.node_type.__name__}({inner})"


def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef) of `tree`."""
    leaves = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _children(x):
    """(children, aux) of a pytree node, or None for a leaf. The built-in containers are read
    directly (what their registered flatten does, without its call): eager vmap and grad
    flatten arguments, axes and outputs a dozen times per call."""
    t = type(x)
    if t is tuple or t is list:
        return x, None
    if t is dict:
        return _dict_flatten(x)
    node = _node_for(x)
    return None if node is None else node.flatten(x)


def _flatten(x, is_leaf, leaves):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    node = _children(x)
    if node is None:
        leaves.append(x)
        return _LEAF
    children, aux = node
    first = len(leaves)
    td = PyTreeDef.__new__(PyTreeDef)  # PyTreeDef(...) without its sum over the children
    td.node_type, td.aux, td._hash, td._k = type(x), aux, None, None
    td.children = tuple([_flatten(c, is_leaf, leaves) for c in children])
    td.num_leaves = len(leaves) - first
    return td


def _leaves(x, is_leaf, leaves):
    """`_flatten` without the PyTreeDef (tree_leaves)."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return
    node = _children(x)
    if node is None:
        leaves.append(x)
        return
    for c in node[0]:
        _leaves(c, is_leaf, leaves)


def tree_unflatten(treedef, leaves):
    it = iter(leaves)
    out = _unflatten(treedef, it)
    rest = list(it)
    if rest:
        raise ValueError(f"Too many leaves for PyTreeDef; expected {treedef.num_leaves}, got {treedef.num_leaves + len(rest)}.")
    return out


def _unflatten(td, it):
    if td.node_type is None:
        try:
            return next(it)
        except StopIteration:
            raise ValueError("Too few leaves for PyTreeDef.") from None
    children = [_unflatten(c, it) for c in td.children]
    if td.node_type is tuple:  # the common containers without their registered unflatten's call
        return tuple(children)
    if td.node_type is list:
        return children
    if td.node_type not in _registry:  # a namedtuple class
        return td.node_type(*children)
    return _registry[td.node_type].unflatten(td.aux, children)


def tree_leaves(tree, is_leaf=None):
    leaves = []
    _leaves(tree, is_leaf, leaves)
    return leaves


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef):
    return treedef.node_type is None


def treedef_children(treedef):
    return list(treedef.children)


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply `f` leafwise; `rest` trees must have `tree`'s structure (or extend it)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves = [leaves] + [_flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(*all_leaves)])


def _flatten_up_to(treedef, tree):
    if treedef.node_type is None:
        return [tree]
    node = _node_for(tree)
    if node is None or type(tree) is not treedef.node_type:
        raise ValueError(f"Tree structure mismatch: expected {treedef}, got {tree_structure(tree)}")
    children, aux = node.flatten(tree)
    if len(children) != len(treedef.children) or _hashable_aux(aux) != _hashable_aux(treedef.aux):
        raise ValueError(f"Tree structure mismatch: expected {treedef}, got {tree_structure(tree)}")
    out = []
    for c, td in zip(children, treedef.children):
        out.extend(_flatten_up_to(td, c))
    return out


def flatten_up_to(treedef, tree):
    """Leaves of `tree` cut at `treedef`'s leaves (its subtrees there are returned whole)."""
    return _flatten_up_to(treedef, tree)


def tree_reduce(function, tree, initializer=None, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is None:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree):
    return all(tree_leaves(tree))


def all_leaves(iterable):
    return all(treedef_is_leaf(tree_structure(x)) for x in iterable)


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    flat = _flatten_up_to(outer_treedef, pytree_to_transpose)
    inner = [_flatten_up_to(inner_treedef, x) for x in flat]
    transposed = [tree_unflatten(outer_treedef, list(col)) for col in zip(*inner)]
    return tree_unflatten(inner_treedef, transposed)


def keystr(path):
    return "".join(f"[{k!r}]" if isinstance(k, str) else f"[{k}]" for k in path)


def tree_flatten_with_path(tree, is_leaf=None):
    """([(path, leaf)], treedef); a path is a tuple of keys (indices, dict keys, field names)."""
    out = []

    def walk(x, path):
        if is_leaf is not None and is_leaf(x):
            out.append((path, x))
            return
        node = _node_for(x)
        if node is None:
            out.append((path, x))
            return
        children, aux = node.flatten(x)
        if node.keys is not None:
            keys = list(node.keys(aux if type(x) in (dict, collections.OrderedDict, collections.defaultdict, type(None)) else x))
        else:
            keys = list(range(len(children)))
        for k, c in zip(keys, children):
            walk(c, path + (k,))

    walk(tree, ())
    return out, tree_structure(tree, is_leaf)


__all__ = [
    "PyTreeDef", "register_pytree_node", "register_pytree_node_class", "tree_flatten",
    "tree_unflatten", "tree_leaves", "tree_structure", "tree_map", "tree_reduce", "tree_all",
    "treedef_is_leaf", "treedef_children", "all_leaves", "tree_transpose", "tree_flatten_with_path",
    "keystr", "flatten_up_to",
]
