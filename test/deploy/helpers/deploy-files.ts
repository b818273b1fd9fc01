// What the deploy tests read: the rendered kustomize overlays (through kubectl), the KServe runtime, and
// `herd <command> --help` from the real CLI, so manifests are checked against the flags that exist today.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

export const OVERLAYS = ['deploy/kubernetes/overlays/postgres', 'deploy/kubernetes/overlays/sqlite'] as const;
export const KSERVE_RUNTIME = 'deploy/kubernetes/kserve/cluster-serving-runtime.yaml';

/** A Kubernetes object as parsed YAML: only the fields every object has are typed; the rest is read by path. */
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; [k: string]: unknown }; [k: string]: unknown };

/** Why kubectl cannot render here, or undefined when it can. */
export function kubectlMissing(): string | undefined {
  const probe = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return "kubectl is not installed (a current kubectl; Debian 12's kubernetes-client 1.20 is too old)";
  // The overlays use kustomize components and `labels`: kustomize v4 and later (kubectl 1.21+).
  const kustomize = /Kustomize Version: v(\d+)/.exec(probe.stdout)?.[1];
  return kustomize !== undefined && Number(kustomize) < 4 ? `kubectl's kustomize v${kustomize} is too old for the overlays (needs v4+, kubectl 1.21+)` : undefined;
}

export function parseObjects(text: string, source: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as K8sObject | null;
    return value === null ? [] : [value];
  });
}

/** `kubectl kustomize <dir>`: the objects an overlay applies. */
export function renderOverlay(dir: string): K8sObject[] {
  const out = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (out.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${out.stderr}`);
  return parseObjects(out.stdout, dir);
}

export function readObjects(file: string): K8sObject[] {
  return parseObjects(readFileSync(file, 'utf8'), file);
}

const helpCache = new Map<string, Set<string> | undefined>();
/** The long flags `herd <command> --help` lists; undefined when the command does not exist. */
export function herdFlags(command: string): Set<string> | undefined {
  if (helpCache.has(command)) return helpCache.get(command);
  const out = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/herd.ts', command, '--help'], { encoding: 'utf8' });
  const exists = out.status === 0 && out.stdout.startsWith(`Usage: herd ${command}`);
  const flags = exists ? new Set([...out.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z0-9-]+)/gm)].map((m) => m[1] as string)) : undefined;
  helpCache.set(command, flags);
  return flags;
}

/** A container's command line as Herd sees it: `herd serve …`, `herd migrate …`, or `tritonserver …` (= herd serve). */
export function herdInvocation(args: readonly string[]): { command: string; flags: string[] } {
  const [first, second, ...rest] = args;
  if (first === 'tritonserver') return { command: 'serve', flags: flagNames([second ?? '', ...rest]) };
  if (first !== 'herd' || second === undefined) throw new Error(`container args must start with herd or tritonserver: ${args.join(' ')}`);
  return { command: second, flags: flagNames(rest) };
}

function flagNames(args: readonly string[]): string[] {
  return args.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0] as string);
}

/** The flags (or commands) of an invocation that `herd --help` does not know. */
export function unknownFlags(args: readonly string[]): string[] {
  const { command, flags } = herdInvocation(args);
  const known = herdFlags(command);
  if (known === undefined) return [`herd ${command}`];
  return flags.filter((f) => !known.has(f)).map((f) => `herd ${command} ${f}`);
}
