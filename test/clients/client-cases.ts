// What the client suite asks of every client: a note file the tool round trip reads, the tool calls a local
// upstream makes for each client's tools, and the final text that proves the tool's output came back.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const NOTE_FILE = 'note.txt';
export const NOTE_TEXT = 'herd-note-4217';
export const FINAL_PREFIX = 'herd-final:';

/** Writes the note the tools read into a client's working folder. */
export function writeNote(dir: string): void {
  writeFileSync(join(dir, NOTE_FILE), `${NOTE_TEXT}\n`);
}

/**
 * Tool calls per client tool, all harmless in a temp folder: Claude Code's Read of the note; Codex's code-mode
 * `exec` (JavaScript in its V8 isolate, default model) and its `exec_command` (`cat`, read-only sandbox; other
 * models); the SDKs' own get_weather.
 */
export function toolCalls(dir: string): Record<string, Record<string, unknown> | string> {
  return {
    Read: { file_path: join(dir, NOTE_FILE) },
    exec: `const r = await tools.exec_command({ cmd: "cat ${NOTE_FILE}" }); text(r);`,
    exec_command: { cmd: `cat ${NOTE_FILE}` },
    get_weather: { city: 'Paris' },
  };
}

/** The final answer quotes the tool result, so a client's output shows the round trip happened. */
export const finalText = (toolResult: string | undefined): string => `${FINAL_PREFIX} ${toolResult ?? 'no tool was called'}`;

export const CLAUDE_PROMPT = `Read ${NOTE_FILE} and tell me what it says.`;
export const CODEX_PROMPT = `Print the contents of ${NOTE_FILE}.`;
