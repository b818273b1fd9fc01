// Triton's trace and logging extensions over HTTP: GET/POST /v2/trace/setting,
// /v2/models/{m}/trace/setting and /v2/logging, on the same serving-side stores the gRPC RPCs use.
// Only the JSON form is converted here, with Triton's HTTP messages for wrongly typed values.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError, internal, invalidArg } from '../core/errors.ts';
import type { InferenceService } from '../serving/inference-service.ts';
import type { LogSettings, LogSettingUpdate } from '../serving/log-settings.ts';
import { parseTraceSettingUpdate, type TraceSettingEntries, type TraceSettings, UPDATABLE_TRACE_SETTINGS } from '../serving/trace-settings.ts';
import { sendJson } from './send-body.ts';

export interface TraceAndLoggingDeps {
  inference: InferenceService;
  traceSettings: TraceSettings;
  logSettings: LogSettings;
}

type ModelParams = { model?: string };
type Allow = (url: string, methods: string[]) => void;

const LOG_KEYS = ['log_info', 'log_warning', 'log_error', 'log_verbose_level', 'log_format'] as const;

export function registerTraceAndLoggingRoutes(app: FastifyInstance, deps: TraceAndLoggingDeps, allow: Allow): void {
  const trace = (req: FastifyRequest<{ Params: ModelParams }>, reply: FastifyReply) => {
    const model = req.params.model;
    if (model !== undefined && !deps.inference.isModelReady(model)) throw invalidArg(`Request for unknown model : ${model}`);
    const settings =
      req.method === 'POST' ? deps.traceSettings.update(parseTraceSettingUpdate(convertTraceRequest(parseBody(req.body)), 'http'), model) : deps.traceSettings.get(model);
    return reply.code(200).header('Content-Type', 'application/json').send(writeTraceSettings(settings));
  };
  for (const url of ['/v2/trace/setting', '/v2/models/:model/trace/setting']) {
    app.get<{ Params: ModelParams }>(url, trace);
    app.post<{ Params: ModelParams }>(url, trace);
    allow(url, ['GET', 'HEAD', 'POST']);
  }

  const logging = (req: FastifyRequest, reply: FastifyReply) => {
    const settings = req.method === 'POST' ? deps.logSettings.update(convertLogRequest(parseBody(req.body))) : deps.logSettings.get();
    return sendJson(reply, 200, settings);
  };
  app.get('/v2/logging', logging);
  app.post('/v2/logging', logging);
  allow('/v2/logging', ['GET', 'HEAD', 'POST']);
}

/** An empty body is an empty update (Triton's EVRequestToJsonAllowsEmpty). */
function parseBody(body: unknown): Record<string, unknown> {
  if (!Buffer.isBuffer(body) || body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HerdError('INVALID_ARG', `failed to parse the request JSON buffer: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
  return parsed as Record<string, unknown>;
}

/**
 * To the wire form both transports share (key to values, [] clears): `null` clears a setting, `trace_level`
 * is a list of names (an empty one changes nothing over HTTP), the others are numbers written as strings.
 */
function convertTraceRequest(body: Record<string, unknown>): Record<string, string[]> {
  const update: Record<string, string[]> = {};
  if ('trace_file' in body) update['trace_file'] = [];
  for (const key of UPDATABLE_TRACE_SETTINGS) {
    if (!(key in body)) continue;
    const value = body[key];
    if (value === null) update[key] = [];
    else if (key === 'trace_level') {
      if (!Array.isArray(value)) throw internal('attempt to access JSON non-array as array');
      const names = value.map((v) => {
        if (typeof v !== 'string') throw internal('attempt to access JSON non-string as string');
        return v;
      });
      if (names.length > 0) update[key] = names;
    } else {
      if (typeof value !== 'string') throw internal('attempt to access JSON non-string as string');
      update[key] = [value];
    }
  }
  return update;
}

/** Single values as strings and trace_level as a list, in Triton's key order; a repeated key (resource) is written each time, as Triton's JSON writer does. */
function writeTraceSettings(settings: TraceSettingEntries): string {
  const members = settings.map(([key, values]) => `${JSON.stringify(key)}:${JSON.stringify(key === 'trace_level' ? values : (values[0] ?? ''))}`);
  return `{${members.join(',')}}`;
}

/** `null` leaves a setting as it is; wrongly typed values get TritonJson's messages. */
function convertLogRequest(body: Record<string, unknown>): LogSettingUpdate {
  const logFile = body['log_file'];
  if (logFile !== undefined && logFile !== null) throw new HerdError('UNSUPPORTED', 'log file location can not be updated through network protocol');
  const update: LogSettingUpdate = {};
  for (const key of LOG_KEYS) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (key === 'log_verbose_level') {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw internal('attempt to access JSON non-unsigned-integer as unsigned-integer');
    } else if (key === 'log_format') {
      if (typeof value !== 'string') throw internal('attempt to access JSON non-string as string');
      // Triton's HTTP answer for this one differs from its gRPC answer (UNAVAILABLE, and the flag's name).
      if (value !== 'default' && value !== 'ISO8601') throw new HerdError('UNAVAILABLE', `invalid argument for --log_format, got: ${value}`);
    } else if (typeof value !== 'boolean') {
      throw internal('attempt to access JSON non-boolean as boolean');
    }
    update[key] = value as string | number | boolean;
  }
  return update;
}
