"""The exam graph: nodes, transition edges (through question pools), reachability, cycles.

Every computation is linear in nodes + transitions (pool targets expand to their members).
End nodes have no outgoing edges: the session ends there, whatever the document says.
"""

from __future__ import annotations

import weakref
from collections import deque
from functools import cached_property

from ioa.schema.enums import ConditionType
from ioa.validation.document import NodeView, PackageDocument, TransitionView


class ExamGraph:
    """Successor lists by node index, derived from a :class:`PackageDocument`."""

    def __init__(self, doc: PackageDocument) -> None:
        self._doc = doc
        self._targets: dict[str, tuple[int, ...]] = {}
        """``targetNodeId`` -> the node indexes it leads to (many transitions share one)."""
        self.successors: list[tuple[int, ...]] = []
        for node in doc.nodes:
            self.successors.append(self._successors_of(node))

    def _successors_of(self, node: NodeView) -> tuple[int, ...]:
        if node.is_end or not node.is_object:
            return ()
        seen: dict[int, None] = {}
        for transition in node.transitions:
            for index in self.targets_of(transition):
                seen.setdefault(index, None)
        return tuple(seen)

    def targets_of(self, transition: TransitionView) -> tuple[int, ...]:
        """Node indexes a transition leads to (a pool target leads to every member)."""
        target = transition.target
        if target is None:
            return ()
        indexes = self._targets.get(target)
        if indexes is None:
            indexes = tuple(node.index for node in self._doc.resolve_target(target))
            self._targets[target] = indexes
        return indexes

    def forced_exit(self, node: NodeView) -> TransitionView | None:
        """The transition a forced exit takes: the ``always`` transition, else the first."""
        for transition in node.transitions:
            if transition.effective_type == ConditionType.ALWAYS.value:
                return transition
        return node.transitions[0] if node.transitions else None

    @cached_property
    def start(self) -> int | None:
        """Index of the initial node, if ``initialNodeId`` names a node."""
        initial = self._doc.initial_node_id
        if initial is None:
            return None
        node = self._doc.node_by_id.get(initial)
        return node.index if node is not None else None

    @cached_property
    def reachable(self) -> frozenset[int]:
        """Indexes of nodes reachable from the initial node (including it)."""
        if self.start is None:
            return frozenset()
        seen = {self.start}
        queue = deque([self.start])
        while queue:
            for successor in self.successors[queue.popleft()]:
                if successor not in seen:
                    seen.add(successor)
                    queue.append(successor)
        return frozenset(seen)

    @cached_property
    def cycles(self) -> tuple[frozenset[int], ...]:
        """Strongly connected components that contain a cycle (size > 1, or a self-loop).

        Iterative Tarjan, so deep graphs cannot hit the recursion limit.
        """
        count = len(self.successors)
        index_of = [-1] * count
        low = [0] * count
        on_stack = [False] * count
        stack: list[int] = []
        components: list[frozenset[int]] = []
        counter = 0
        for root in range(count):
            if index_of[root] != -1:
                continue
            work: list[tuple[int, int]] = [(root, 0)]
            while work:
                node, position = work.pop()
                if position == 0:
                    index_of[node] = low[node] = counter
                    counter += 1
                    stack.append(node)
                    on_stack[node] = True
                successors = self.successors[node]
                if position < len(successors):
                    work.append((node, position + 1))
                    successor = successors[position]
                    if index_of[successor] == -1:
                        work.append((successor, 0))
                    elif on_stack[successor]:
                        low[node] = min(low[node], index_of[successor])
                    continue
                if low[node] == index_of[node]:
                    component: set[int] = set()
                    while True:
                        member = stack.pop()
                        on_stack[member] = False
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in self.successors[node]:
                        components.append(frozenset(component))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
        return tuple(sorted(components, key=min))


_SHARED: weakref.WeakKeyDictionary[PackageDocument, ExamGraph] = weakref.WeakKeyDictionary()


def exam_graph(doc: PackageDocument) -> ExamGraph:
    """``doc``'s exam graph, built on first use and then shared by all rules of the validation
    (kept while the document lives)."""
    graph = _SHARED.get(doc)
    if graph is None:
        graph = ExamGraph(doc)
        _SHARED[doc] = graph
    return graph
