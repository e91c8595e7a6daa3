#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""listsearch.py DAGFILE CORES [TRIES] - how close list schedules get

Each DAG of a pto-hws-sim DAG file (pto-hws-sim --dump, or a recording)
runs alone on CORES identical cores with no latencies, its tasks' real
costs, one core each: first as a list schedule by upward rank (what the
HWS does with one DAG), then TRIES more times with every rank multiplied
by 1 + U(-f, f), f drawn per try from U(0, 0.3), keeping the shortest.
Prints the means over the DAGs of makespan / max(critical path,
work / CORES) for both: whether a target on that bound is within reach
of any list schedule on these DAGs. Seeded (1): runs repeat.
"""
import heapq
import random
import re
import sys

UNITS = {'ns': 1, 'us': 1e3, 'ms': 1e6, 's': 1e9}


def duration(text):
    m = re.fullmatch(r'([0-9.]+)(ns|us|ms|s)?', text)
    if not m:
        sys.exit(f'listsearch.py: bad time {text!r}')
    return float(m.group(1)) * UNITS[m.group(2) or 'ns']


def load(path):
    """The DAGs of @path: per DAG a list of (cost, predecessor ids)."""
    dags = []
    with open(path) as f:
        for line in f:
            w = line.split('#')[0].split()
            if not w:
                continue
            if w[0] == 'dag':
                dags.append([])
            elif w[0] == 'task':
                if not dags or int(w[1]) != len(dags[-1]):
                    sys.exit('listsearch.py: task ids must be 0, 1, ... per dag')
                cost = duration(w[w.index('cost') + 1])
                pred = []
                if 'pred' in w:
                    pred = [int(x) for x in w[w.index('pred') + 1].split(',')]
                if any(p < 0 or p >= len(dags[-1]) for p in pred):
                    sys.exit(f'listsearch.py: task {w[1]}: a predecessor is not an earlier task')
                dags[-1].append((cost, pred))
    return dags


def successors(dag):
    succ = [[] for _ in dag]
    for i, (_, pred) in enumerate(dag):
        for p in pred:
            succ[p].append(i)
    return succ


def upward_ranks(dag, succ):
    rank = [0.0] * len(dag)
    for i in range(len(dag) - 1, -1, -1):
        rank[i] = dag[i][0] + max((rank[s] for s in succ[i]), default=0)
    return rank


def list_schedule(dag, succ, prio, cores):
    """Makespan of the list schedule: a free core takes the ready task of
    the highest priority."""
    waiting = [len(pred) for _, pred in dag]
    ready = [(-prio[i], i) for i in range(len(dag)) if not waiting[i]]
    heapq.heapify(ready)
    running, now, free, done = [], 0.0, cores, 0
    while done < len(dag):
        while free and ready:
            _, i = heapq.heappop(ready)
            heapq.heappush(running, (now + dag[i][0], i))
            free -= 1
        now, i = heapq.heappop(running)
        ended = [i]
        while running and running[0][0] == now:
            ended.append(heapq.heappop(running)[1])
        for i in ended:
            free += 1
            done += 1
            for s in succ[i]:
                waiting[s] -= 1
                if not waiting[s]:
                    heapq.heappush(ready, (-prio[s], s))
    return now


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split('\n')[0])
    try:
        cores = int(sys.argv[2])
        tries = int(sys.argv[3]) if len(sys.argv) == 4 else 100
    except ValueError:
        sys.exit('listsearch.py: CORES and TRIES are integers')
    if cores < 1 or tries < 0:
        sys.exit('listsearch.py: CORES must be at least 1, TRIES at least 0')
    try:
        dags = load(sys.argv[1])
    except OSError as e:
        sys.exit(f'listsearch.py: {sys.argv[1]}: {e.strerror}')
    if not dags or not all(dags):
        sys.exit(f'listsearch.py: {sys.argv[1]}: no DAG, or a DAG without tasks')
    rng = random.Random(1)
    by_rank = best = 0.0
    for dag in dags:
        succ = successors(dag)
        rank = upward_ranks(dag, succ)
        bound = max(max(rank), sum(c for c, _ in dag) / cores)
        first = list_schedule(dag, succ, rank, cores)
        shortest = first
        for _ in range(tries):
            f = rng.uniform(0, 0.3)
            prio = [r * (1 + rng.uniform(-f, f)) for r in rank]
            shortest = min(shortest, list_schedule(dag, succ, prio, cores))
        by_rank += first / bound
        best += shortest / bound
    n = len(dags)
    print(f'{n} DAGs on {cores} cores, makespan / max(critical path, work / cores): '
          f'upward rank {by_rank / n:.4f}, best of {tries} perturbed ranks {best / n:.4f}')


if __name__ == '__main__':
    main()
