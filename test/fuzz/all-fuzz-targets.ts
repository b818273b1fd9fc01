// Every fuzz target, for bench/fuzz/run-fuzz.ts.
import type { FuzzTarget } from './fuzz-target.ts';
import { PARSER_TARGETS } from './parser-targets.ts';

export const ALL_FUZZ_TARGETS: (() => FuzzTarget)[] = [...PARSER_TARGETS];
