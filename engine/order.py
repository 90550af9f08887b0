"""Orders and components of small dependency graphs, given as successor mappings.

The checker, the hasher and the compiler order declarations by what they use. These few
algorithms are all they need, so the commands that only lint, format or hash do not import
a graph library (importing networkx was a third of the start-up of `rulecheck lint`).
A graph is a mapping from each node to the nodes it points to; every successor must also
be a key. Orders follow the mapping's insertion order, so they are deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

N = TypeVar("N", bound=Hashable)


class CycleError(ValueError):
    """The graph has a cycle, so no topological order exists."""


def topological_order(
    successors: Mapping[N, Iterable[N]], key: Callable[[N], Any] | None = None
) -> list[N]:
    """Every node after all the nodes that point to it.

    Without `key`, generation by generation (Kahn's algorithm: the nodes nothing points to,
    in insertion order, then those freed by them, ...); with `key`, the order whose keys
    are smallest first wherever there is a choice.

    Raises:
        CycleError: when the graph has a cycle (a self-loop included).
    """
    children = {node: list(dict.fromkeys(targets)) for node, targets in successors.items()}
    indegree = dict.fromkeys(children, 0)
    for targets in children.values():
        for target in targets:
            indegree[target] += 1
    order: list[N] = []
    if key is None:
        generation = [node for node, count in indegree.items() if count == 0]
        while generation:
            order += generation
            freed: list[N] = []
            for node in generation:
                for child in children[node]:
                    indegree[child] -= 1
                    if indegree[child] == 0:
                        freed.append(child)
            generation = freed
    else:
        position = {node: index for index, node in enumerate(children)}
        heap = [(key(node), position[node], node) for node, n in indegree.items() if n == 0]
        heapq.heapify(heap)
        while heap:
            node = heapq.heappop(heap)[2]
            order.append(node)
            for child in children[node]:
                indegree[child] -= 1
                if indegree[child] == 0:
                    heapq.heappush(heap, (key(child), position[child], child))
    if len(order) != len(children):
        raise CycleError("the graph has a cycle")
    return order


def strong_components(successors: Mapping[N, Iterable[N]]) -> list[list[N]]:
    """The strongly connected components, each after every component it points to
    (Tarjan's algorithm, iterative so that a long chain cannot overflow the stack)."""
    children = {node: list(dict.fromkeys(targets)) for node, targets in successors.items()}
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    stack: list[N] = []
    on_stack: set[N] = set()
    components: list[list[N]] = []
    for root in children:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(children[root]))]
        while work:
            node, pending = work[-1]
            advanced = False
            for child in pending:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(children[child])))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[N] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def reachable(successors: Mapping[N, Iterable[N]], start: N) -> set[N]:
    """`start` and every node a path from it reaches."""
    seen = {start}
    pending = [start]
    while pending:
        for child in successors[pending.pop()]:
            if child not in seen:
                seen.add(child)
                pending.append(child)
    return seen
