// Every fuzz target, for bench/fuzz/run-fuzz.ts.
import type { FuzzTarget } from './fuzz-target.ts';
import { HTTP_TARGETS } from './http-targets.ts';
import { createMessagesUnknownMembersTarget } from './messages-unknown-members-target.ts';
import { createOpenAIUnknownMembersTarget } from './openai-unknown-members-target.ts';
import { PARSER_TARGETS } from './parser-targets.ts';
import { STREAM_TARGETS } from './stream-targets.ts';

export const ALL_FUZZ_TARGETS: (() => FuzzTarget)[] = [...PARSER_TARGETS, ...STREAM_TARGETS, ...HTTP_TARGETS, createMessagesUnknownMembersTarget, createOpenAIUnknownMembersTarget];
