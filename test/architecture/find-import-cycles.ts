// The file-level import graph of src/ and its circles: each strongly connected component of two or
// more files, reported as one concrete circle through it (test/architecture.test.ts asserts none).
import { posix } from 'node:path';
import { findImports, type SourceText } from './find-imports.ts';

/** A circle as the files it passes, the first repeated at the end: a → b → a. */
export type ImportCycle = readonly string[];

/** A strongly connected component: every file of it reaches every other; `cycle` is one circle through it. */
export interface ImportCircle {
  /** Sorted. */
  files: readonly string[];
  cycle: ImportCycle;
}

/** Every relative import of each file that names another file of `files`, type-only ones included. */
export function buildImportGraph(files: readonly SourceText[]): Map<string, string[]> {
  const known = new Set(files.map((f) => f.path));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const site of findImports(file)) {
      if (site.specifier === undefined || site.partial || !site.specifier.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(file.path), site.specifier));
      if (known.has(target) && target !== file.path) targets.add(target);
    }
    graph.set(file.path, [...targets].sort());
  }
  return graph;
}

/** One circle per strongly connected component of the graph (Tarjan), shortest from its first file. */
export function findImportCycles(files: readonly SourceText[]): ImportCircle[] {
  const graph = buildImportGraph(files);
  return stronglyConnected(graph)
    .filter((component) => component.length > 1)
    .map((component) => {
      const sorted = [...component].sort();
      return { files: sorted, cycle: shortestCycle(graph, new Set(component), sorted[0] as string) };
    });
}

export const formatCycle = (cycle: ImportCycle) => cycle.join(' → ');

function stronglyConnected(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  // Iterative, so a long import chain cannot overflow the call stack.
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; edge: number };
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++] as string;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(to) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}

/** Breadth-first from `start` back to itself inside one component: the shortest circle through it. */
function shortestCycle(graph: Map<string, string[]>, component: Set<string>, start: string): ImportCycle {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as string;
    for (const to of graph.get(node) ?? []) {
      if (!component.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = previous.get(at)) path.push(at);
        return [start, ...path.slice(1).reverse(), start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start];
}
