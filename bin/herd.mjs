#!/usr/bin/env node
// The `herd` command: runs the TypeScript CLI through tsx's loader so no build step is needed.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/herd.ts');
