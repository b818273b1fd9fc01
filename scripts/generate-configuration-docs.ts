// Writes docs/configuration.md from the herd.yaml schema (zod, with its .describe() texts), the
// `herd` command tree (commander) and the hand-written parts in scripts/configuration-docs-template.md.
// `npm run docs:config` regenerates it; test/scripts/configuration-docs.test.ts fails when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command, Option } from 'commander';
import { z } from 'zod';
import { createHerdProgram } from '../src/cli/create-herd-program.ts';
import { herdConfigSchema } from '../src/config/herd-config-schema.ts';
import { usageProfileSchema } from '../src/gateway/billing/usage-profile.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CONFIGURATION_DOCS_PATH = resolve(ROOT, 'docs/configuration.md');
const TEMPLATE_PATH = resolve(ROOT, 'scripts/configuration-docs-template.md');

/** The subset of JSON Schema that z.toJSONSchema produces for Herd's schemas. */
interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  minItems?: number;
  pattern?: string;
  format?: string;
}

interface KeyRow {
  path: string;
  type: string;
  value: string;
  description: string;
}

export interface ConfigurationDocs {
  text: string;
  /** Keys and flags without a description: the generator still writes the file, and says which. */
  undescribed: string[];
}

export function generateConfigurationDocs(): ConfigurationDocs {
  const undescribed: string[] = [];
  const template = readFileSync(TEMPLATE_PATH, 'utf8');
  const sections: Record<string, string> = {
    'herd.yaml': renderKeyTables(toJsonSchema(herdConfigSchema), undescribed),
    cli: renderCommands(createHerdProgram(), undescribed),
    'cost-profile': renderKeyTable(flattenKeys(toJsonSchema(usageProfileSchema), '', new Set(), 'profile', undescribed)),
  };
  const text = template.replace(/<!-- generated: ([a-z.-]+) -->\n/g, (_marker, name: string) => {
    const section = sections[name];
    if (section === undefined) throw new Error(`${TEMPLATE_PATH}: unknown section marker '${name}'`);
    return `${section}\n`;
  });
  return { text, undescribed };
}

function toJsonSchema(schema: z.ZodType): JsonSchema {
  // Cross-field checks (superRefine) are not representable and do not change the keys.
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/** One table per top-level section of herd.yaml. */
function renderKeyTables(root: JsonSchema, undescribed: string[]): string {
  const parts: string[] = [];
  for (const [name, section] of Object.entries(root.properties ?? {})) {
    parts.push(`### \`${name}\`\n`);
    if (section.description) parts.push(`${escapeCell(section.description)}\n`);
    else undescribed.push(`herd.yaml ${name}`);
    parts.push(renderKeyTable(flattenKeys(section, name, new Set(root.required ?? []).has(name) ? new Set([name]) : new Set(), 'herd.yaml', undescribed, true)));
  }
  return parts.join('\n');
}

function renderKeyTable(rows: KeyRow[]): string {
  const lines = ['| key | type | default | description |', '| --- | --- | --- | --- |'];
  for (const row of rows) lines.push(`| \`${row.path}\` | ${row.type} | ${row.value} | ${escapeCell(row.description)} |`);
  return `${lines.join('\n')}\n`;
}

/**
 * Rows for every key under `node`: objects list their children, maps (`<name>`) and lists (`[]`) of
 * objects list the fields of one entry. `skipSelf` leaves out the row of the section itself.
 */
function flattenKeys(node: JsonSchema, path: string, required: Set<string>, where: string, undescribed: string[], skipSelf = path === ''): KeyRow[] {
  const rows: KeyRow[] = [];
  if (!skipSelf) {
    rows.push({ path, type: describeType(node), value: describeDefault(node, required.has(path)), description: node.description ?? '' });
    if (!node.description) undescribed.push(`${where} ${path}`);
  }
  const entry = entryOf(node);
  if (entry !== undefined) {
    const childPath = `${path}${entry.suffix}`;
    rows.push(...flattenKeys(entry.schema, childPath, new Set(), where, undescribed, true));
    return rows;
  }
  if (node.properties === undefined) return rows;
  const requiredChildren = new Set(node.required ?? []);
  for (const [key, child] of Object.entries(node.properties)) {
    const childPath = path === '' ? key : `${path}.${key}`;
    rows.push(...flattenKeys(child, childPath, requiredChildren.has(key) ? new Set([childPath]) : new Set(), where, undescribed, false));
  }
  return rows;
}

/** A map or list whose entries are objects: their fields get rows of their own. */
function entryOf(node: JsonSchema): { schema: JsonSchema; suffix: string } | undefined {
  const additional = node.additionalProperties;
  if (typeof additional === 'object' && additional.properties !== undefined) return { schema: additional, suffix: '.<name>' };
  if (node.items?.properties !== undefined) return { schema: node.items, suffix: '[]' };
  return undefined;
}

function describeType(node: JsonSchema): string {
  if (node.enum !== undefined) return node.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (node.anyOf !== undefined) {
    const kinds = new Set(node.anyOf.map((n) => n.type));
    // Decimals are written as numbers (7.3) or strings ("7.3") and read exactly.
    if (kinds.has('number') && kinds.has('string')) return node.anyOf.some((n) => n.pattern) ? 'decimal' : 'number or text (250k, 1.5M)';
    return node.anyOf.map(describeType).join(' or ');
  }
  if (Array.isArray(node.type)) return node.type.includes('number') && node.type.includes('string') ? 'number or text (250k, 1.5M)' : node.type.join(' or ');
  if (node.type === 'array') return `list of ${describeType(node.items ?? {})}`;
  if (node.type === 'object') {
    const additional = node.additionalProperties;
    if (typeof additional === 'object' && additional.properties === undefined) return `map of name → ${describeType(additional)}`;
    if (typeof additional === 'object') return 'map of name → object';
    return 'object';
  }
  if (node.type === 'integer' || node.type === 'number') return describeNumber(node);
  if (node.type === 'string') return node.format === 'uri' ? 'URL' : 'string';
  if (node.type === 'boolean') return 'boolean';
  return 'any';
}

function describeNumber(node: JsonSchema): string {
  const kind = node.type === 'integer' ? 'integer' : 'number';
  const max = node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER ? node.maximum : undefined;
  if (node.minimum !== undefined && max !== undefined) return `${kind} ${node.minimum}–${max}`;
  const bounds: string[] = [];
  if (node.exclusiveMinimum !== undefined) bounds.push(`> ${node.exclusiveMinimum}`);
  if (node.minimum !== undefined) bounds.push(`≥ ${node.minimum}`);
  if (max !== undefined) bounds.push(`≤ ${max}`);
  return [kind, ...bounds].join(' ');
}

function describeDefault(node: JsonSchema, required: boolean): string {
  if (node.default === undefined) return required ? '**required**' : '—';
  if (node.type === 'object' && node.additionalProperties === false) return '';
  const value = node.default;
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 0) return Array.isArray(value) ? '`[]`' : '`{}`';
  return `\`${escapeCell(typeof value === 'string' ? value : JSON.stringify(value))}\``;
}

/** Every command and subcommand, with its arguments and flags. */
function renderCommands(program: Command, undescribed: string[]): string {
  const parts: string[] = [];
  const visit = (command: Command, prefix: string) => {
    for (const sub of command.commands) {
      const name = `${prefix} ${sub.name()}`;
      if (sub.commands.length > 0) {
        parts.push(`### \`${name}\`\n\n${sentence(sub.description())}\n`);
        visit(sub, name);
        continue;
      }
      parts.push(renderCommand(sub, name, undescribed));
    }
  };
  visit(program, program.name());
  return parts.join('\n');
}

function renderCommand(command: Command, name: string, undescribed: string[]): string {
  const args = command.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`));
  const lines = [`### \`${[name, ...args].join(' ')}\``, '', sentence(command.description()), ''];
  for (const arg of command.registeredArguments) lines.push(`- \`${arg.name()}\`: ${escapeCell(arg.description)}`);
  if (command.registeredArguments.length > 0) lines.push('');
  if (command.options.length === 0) {
    lines.push('No flags.');
    return `${lines.join('\n')}\n`;
  }
  lines.push('| flag | description | default |', '| --- | --- | --- |');
  for (const option of command.options as readonly Option[]) {
    if (!option.description) undescribed.push(`${name} ${option.flags}`);
    const value = option.mandatory ? '**required**' : option.defaultValue === undefined ? '' : `\`${String(option.defaultValue)}\``;
    lines.push(`| \`${option.flags.replace(/\|/g, '\\|')}\` | ${escapeCell(option.description)} | ${value} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Markdown table cell text: pipes escaped, `<name>` kept visible instead of read as HTML. */
function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, ' ');
}

function sentence(text: string): string {
  const trimmed = text.trim();
  return `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}${/[.!?]$/.test(trimmed) ? '' : '.'}`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { text, undescribed } = generateConfigurationDocs();
  writeFileSync(CONFIGURATION_DOCS_PATH, text);
  process.stdout.write(`wrote ${CONFIGURATION_DOCS_PATH}\n`);
  if (undescribed.length > 0) {
    process.stderr.write(`warning: ${undescribed.length} keys or flags have no description (add .describe() in src/config or a description in src/cli):\n`);
    for (const item of undescribed) process.stderr.write(`  ${item}\n`);
  }
}
