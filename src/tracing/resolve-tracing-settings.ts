// herd.yaml's `tracing` section over the standard OpenTelemetry variables (OTEL_SDK_DISABLED, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT / _HEADERS / _PROTOCOL, OTEL_TRACES_SAMPLER[_ARG]):
// what herd.yaml sets wins, the environment fills in the rest.
import type { TracingConfig } from '../config/tracing-config-schema.ts';
import { invalidArg } from '../core/errors.ts';
import { HERD_VERSION } from '../core/herd-version.ts';
import type { SamplerSettings } from './sampler.ts';

export interface TracingSettings {
  enabled: boolean;
  /** The full traces URL. */
  url: string;
  /** Export request headers; values may be secrets: never log them. */
  headers: Record<string, string>;
  resource: Record<string, string>;
  sampler: SamplerSettings;
  captureContent: boolean;
  maxQueueSize: number;
  maxBatchSize: number;
  scheduleDelayMs: number;
  exportTimeoutMs: number;
  /** Settings Herd read but cannot honour, for the start-up log. */
  warnings: string[];
}

const DEFAULT_URL = 'http://localhost:4318/v1/traces';

export function resolveTracingSettings(config: TracingConfig, env: NodeJS.ProcessEnv, instanceId: string): TracingSettings {
  const warnings: string[] = [];
  const protocol = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'];
  if (protocol !== undefined && protocol !== '' && protocol !== 'http/protobuf') warnings.push(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: Herd exports http/protobuf only`);
  const enabled = isEnabled(config, env);
  return {
    enabled,
    url: resolveUrl(config, env, enabled),
    headers: resolveHeaders(config, env, warnings),
    resource: resolveResource(config, env, instanceId, warnings),
    sampler: resolveSampler(config, env, warnings),
    captureContent: config.capture_content,
    maxQueueSize: config.max_queue_size,
    maxBatchSize: config.max_export_batch_size,
    scheduleDelayMs: config.schedule_delay_ms,
    exportTimeoutMs: config.export_timeout_ms,
    warnings,
  };
}

const isSet = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

function isEnabled(config: TracingConfig, env: NodeJS.ProcessEnv): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  if (config.enabled !== undefined) return config.enabled;
  const exporter = env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return exporter === 'otlp' || isSet(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) || isSet(env['OTEL_EXPORTER_OTLP_ENDPOINT']);
}

/** The traces URL; a malformed one stops start-up only when tracing is on. */
function resolveUrl(config: TracingConfig, env: NodeJS.ProcessEnv, enabled: boolean): string {
  const signal = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  // The signal's own variable is the URL as written; the shared one is a base the signal's path is appended to.
  const url = config.endpoint ?? (isSet(signal) ? signal.trim() : isSet(base) ? `${base.trim().replace(/\/+$/, '')}/v1/traces` : DEFAULT_URL);
  if (enabled && (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url))) throw invalidArg('tracing: the OTLP endpoint is not an http:// or https:// URL');
  return url;
}

function resolveHeaders(config: TracingConfig, env: NodeJS.ProcessEnv, warnings: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const add = (from: string, text: string | undefined) => {
    for (const [key, value] of Object.entries(parseKeyValueList(text, from, warnings))) headers[key.toLowerCase()] = value;
  };
  for (const [key, value] of Object.entries(config.headers)) headers[key.toLowerCase()] = value;
  add('OTEL_EXPORTER_OTLP_HEADERS', env['OTEL_EXPORTER_OTLP_HEADERS']);
  add('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env['OTEL_EXPORTER_OTLP_TRACES_HEADERS']);
  if (config.headers_env !== undefined) add(config.headers_env, env[config.headers_env]);
  return headers;
}

function resolveResource(config: TracingConfig, env: NodeJS.ProcessEnv, instanceId: string, warnings: string[]): Record<string, string> {
  const resource: Record<string, string> = {
    'service.name': 'herd',
    'service.version': HERD_VERSION,
    'service.instance.id': instanceId,
    'telemetry.sdk.name': 'herd',
    'telemetry.sdk.language': 'nodejs',
    'telemetry.sdk.version': HERD_VERSION,
    ...parseKeyValueList(env['OTEL_RESOURCE_ATTRIBUTES'], 'OTEL_RESOURCE_ATTRIBUTES', warnings),
    ...config.resource_attributes,
  };
  const serviceName = config.service_name ?? (isSet(env['OTEL_SERVICE_NAME']) ? env['OTEL_SERVICE_NAME'].trim() : undefined);
  if (serviceName !== undefined) resource['service.name'] = serviceName;
  return resource;
}

const SAMPLERS: Record<string, (arg: number) => SamplerSettings> = {
  always_on: () => ({ ratio: 1, parentBased: false }),
  always_off: () => ({ ratio: 0, parentBased: false }),
  traceidratio: (ratio) => ({ ratio, parentBased: false }),
  parentbased_always_on: () => ({ ratio: 1, parentBased: true }),
  parentbased_always_off: () => ({ ratio: 0, parentBased: true }),
  parentbased_traceidratio: (ratio) => ({ ratio, parentBased: true }),
};

function resolveSampler(config: TracingConfig, env: NodeJS.ProcessEnv, warnings: string[]): SamplerSettings {
  if (config.sampler_ratio !== undefined) return { ratio: config.sampler_ratio, parentBased: true };
  const name = env['OTEL_TRACES_SAMPLER']?.trim().toLowerCase();
  if (!isSet(name)) return { ratio: 1, parentBased: true };
  const make = SAMPLERS[name];
  if (make === undefined) {
    warnings.push(`OTEL_TRACES_SAMPLER=${name} is not supported: parentbased_always_on is used`);
    return { ratio: 1, parentBased: true };
  }
  const argText = env['OTEL_TRACES_SAMPLER_ARG'];
  const arg = isSet(argText) ? Number(argText) : 1;
  if (!(arg >= 0 && arg <= 1)) {
    warnings.push(`OTEL_TRACES_SAMPLER_ARG=${argText} is not a ratio in [0, 1]: 1 is used`);
    return make(1);
  }
  return make(arg);
}

/**
 * `key=value,key2=value2` as OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS write them (values
 * percent-encoded). A malformed member is skipped with a warning that names the key only: values may be secrets.
 */
export function parseKeyValueList(text: string | undefined, from: string, warnings: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (text === undefined) return out;
  for (const member of text.split(',')) {
    if (member.trim() === '') continue;
    const eq = member.indexOf('=');
    const key = eq < 0 ? member.trim() : member.slice(0, eq).trim();
    if (eq <= 0 || key === '') {
      warnings.push(`${from}: a member without key=value was skipped`);
      continue;
    }
    try {
      out[key] = decodeURIComponent(member.slice(eq + 1).trim());
    } catch {
      warnings.push(`${from}: the value of ${key} is not valid percent-encoding and was skipped`);
    }
  }
  return out;
}
