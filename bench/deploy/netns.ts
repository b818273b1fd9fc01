// Network namespaces for the rolling-restart test: one per replica, each joined by a veth pair to a
// bridge on a private subnet, as pods on one node; created by the run and always removed at its end.
import { execFileSync } from 'node:child_process';

export interface ReplicaNet {
  /** The namespace's name (`ip netns exec <ns> …`). */
  ns: string;
  /** The replica's address inside it. */
  ip: string;
}

export interface TestNetwork {
  /** 'netns': namespaces on the subnet; 'loopback': namespaces unavailable, every replica on 127.0.0.1. */
  mode: 'netns' | 'loopback';
  /** The host's address on the bridge (where the shared services are forwarded); 127.0.0.1 on loopback. */
  hostIp: string;
  replicas: ReplicaNet[];
  /** Why namespaces were not used (loopback mode). */
  reason?: string;
  remove(): void;
}

const NS_PREFIX = 'herd-rr-';

function ip(args: string[]): string {
  return execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

function tryIp(args: string[]): void {
  try {
    ip(args);
  } catch {
    // Already gone: removal is idempotent.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Namespaces and bridges an earlier run left behind when it was SIGKILLed (its pid is in the name). */
export function removeStale(): string[] {
  const removed: string[] = [];
  let list = '';
  try {
    list = ip(['netns', 'list']);
  } catch {
    return removed;
  }
  for (const line of list.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const m = new RegExp(`^${NS_PREFIX}(\\d+)-(\\d+)$`).exec(name);
    if (!m || alive(Number(m[1]))) continue;
    tryIp(['netns', 'del', name]);
    tryIp(['link', 'del', `hrb${(Number(m[1]) % 0xffff).toString(16)}`]);
    removed.push(name);
  }
  return removed;
}

/**
 * `count` namespaces on `subnet` (a /24 written as its first three octets, e.g. 10.213.0): the host is .1 on
 * a bridge, replica i is .(11 + i). Falls back to loopback (and says why) when `ip netns` is unavailable.
 */
export function createTestNetwork(count: number, subnet: string, forceLoopback = false): TestNetwork {
  const loopback = (reason: string): TestNetwork => ({
    mode: 'loopback',
    hostIp: '127.0.0.1',
    replicas: Array.from({ length: count }, () => ({ ns: '', ip: '127.0.0.1' })),
    reason,
    remove: () => undefined,
  });
  if (forceLoopback) return loopback('--loopback asked for it');
  const tag = (process.pid % 0xffff).toString(16);
  const bridge = `hrb${tag}`;
  const names = Array.from({ length: count }, (_, i) => `${NS_PREFIX}${process.pid}-${i}`);
  const remove = () => {
    for (const ns of names) tryIp(['netns', 'del', ns]);
    tryIp(['link', 'del', bridge]);
  };
  try {
    ip(['link', 'add', bridge, 'type', 'bridge']);
    ip(['addr', 'add', `${subnet}.1/24`, 'dev', bridge]);
    ip(['link', 'set', bridge, 'up']);
    const replicas = names.map((ns, i) => {
      const host = `hrh${tag}${i}`;
      const inside = `hrn${tag}${i}`;
      const addr = `${subnet}.${11 + i}`;
      ip(['netns', 'add', ns]);
      ip(['link', 'add', host, 'type', 'veth', 'peer', 'name', inside]);
      ip(['link', 'set', inside, 'netns', ns]);
      ip(['link', 'set', host, 'master', bridge]);
      ip(['link', 'set', host, 'up']);
      ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      ip(['-n', ns, 'addr', 'add', `${addr}/24`, 'dev', inside]);
      ip(['-n', ns, 'link', 'set', inside, 'up']);
      ip(['-n', ns, 'route', 'add', 'default', 'via', `${subnet}.1`]);
      return { ns, ip: addr };
    });
    return { mode: 'netns', hostIp: `${subnet}.1`, replicas, remove };
  } catch (err) {
    remove();
    const e = err as Error & { stderr?: Buffer };
    return loopback(`ip netns failed (${(e.stderr?.toString() || e.message).trim().split('\n')[0]}); replicas on loopback ports instead`);
  }
}
