"""A scripted candidate for the CS201 example: answers per node, in the order they are given
(the last repeats). Shared by the bot tests and bench/bot.py."""

from __future__ import annotations

ANSWERS: dict[str, list[str]] = {
    "warmup": ["I enjoyed graph algorithms most, especially shortest paths."],
    "q-dijkstra": [
        "Dijkstra repeatedly settles the unvisited vertex with the smallest tentative distance "
        "and relaxes its outgoing edges.",
        "With a binary heap priority queue the running time is O((V+E) log V).",
        "A negative edge can invalidate an already settled distance, so Bellman-Ford is the "
        "alternative.",
        "That is everything I can say about it.",
    ],
    "scn-delivery-routes": [
        "I would model the shops and the depot as vertices and the roads as weighted edges.",
        "I would pick Dijkstra, a single-source shortest-path algorithm, because the travel "
        "times are non-negative.",
        "With negative costs I would need Bellman-Ford instead.",
    ],
    "scn-network-latency": [
        "I would model the offices as vertices and the links as weighted edges.",
        "I would pick Dijkstra, a single-source shortest-path algorithm, because the latencies "
        "are non-negative.",
        "With negative costs I would need Bellman-Ford instead.",
    ],
    "wrapup": ["No, I have nothing to add. Thank you."],
}
