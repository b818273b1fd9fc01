// The repository manager: which models exist, which versions are loaded, and Triton's control modes
// (none: load everything once; poll: rescan and reload what changed; explicit: only the load API).
// A model that fails keeps its reason and every other model keeps serving.
import { HerdError, toHerdError } from '../../core/errors.ts';
import type { BackendFactory } from '../backends/backend.ts';
import { readModelLabels } from './read-model-labels.ts';
import type { EnsembleStepRunner, EnsembleStepStreamer } from '../ensemble/ensemble-scheduler.ts';
import { listIgnoredFields } from '../model-config/audit-model-config.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import { listModelConfigWarnings } from '../model-config/validate-model-config.ts';
import type { RateLimiter } from '../scheduler/rate-limiter.ts';
import { createEnsembleVersions } from './create-ensemble-versions.ts';
import { loadModelConfig } from './load-model-config.ts';
import { loadModelVersion } from './load-model-version.ts';
import { pollFailure, validateModelName, type LoadParameters } from './load-parameters.ts';
import type { LoadedModel } from './loaded-model.ts';
import { localizeModelFiles, type LocalizedModelFiles } from './localize-model-files.ts';
import { fingerprintModelFolder } from './model-fingerprint.ts';
import { listVersionFolders, selectVersions } from './model-versions.ts';
import { createRepositoryPathRedactor, redactError } from './redact-repository-paths.ts';
import { scanRepositories, validateRepositoryPaths, type ModelLocation } from './scan-repositories.ts';

export type { LoadedModel } from './loaded-model.ts';

export type ModelControlMode = 'none' | 'poll' | 'explicit';
export type ModelState = 'LOADING' | 'READY' | 'UNLOADING' | 'UNAVAILABLE';

export interface RepositoryIndexEntry {
  name: string;
  version?: string;
  state?: ModelState;
  reason?: string;
}

interface ModelRecord {
  location: ModelLocation;
  state: ModelState;
  reason: string;
  versions: Map<number, LoadedModel>;
  fingerprint: string;
  /** Set while a JSON config override from the load API is in force. */
  overrideJson?: string;
  /** The temporary folder of a model built from the load API's files, removed when the model goes. */
  localized?: LocalizedModelFiles;
  loadSeconds?: number;
}

export interface RepositoryManagerOptions {
  repositories: string[];
  controlMode: ModelControlMode;
  backends: ReadonlyMap<string, BackendFactory>;
  /** Shared by every model when the server rate-limits executions (--rate-limit execution_count). */
  rateLimiter?: RateLimiter;
  /** Called with each model's load time, for nv_model_load_duration_secs. */
  onLoaded?: (model: LoadedModel, seconds: number) => void;
  /**
   * Told what a model's config allows but probably does not mean (listModelConfigWarnings), and which
   * fields it sets that are not honoured (listIgnoredFields).
   */
  onWarning?: (message: string) => void;
  /** Whether the server has a response cache (--cache-config); without one response_cache caches nothing. */
  hasResponseCache?: boolean;
  /** The serving side's inference path, which ensembles run their steps through; without it ensembles fail to load. */
  runEnsembleStep?: EnsembleStepRunner;
  /** The streaming inference path, which an ensemble's decoupled steps run through. */
  streamEnsembleStep?: EnsembleStepStreamer;
  /**
   * serving.allow_files_outside_model_dir: on-disk configs may name files outside their model's folder.
   * A load-API override never may (confineModelFile).
   */
  allowFilesOutsideModelDir?: boolean;
}

/**
 * One round of loads (start, a poll, a load call): ensembles load their step models first, as Triton's
 * dependency graph orders them; `stack` is the chain of ensembles being loaded, to catch cycles.
 */
interface LoadPass {
  scan: ReadonlyMap<string, ModelLocation>;
  /** Models already loaded (or attempted) in this round, or that the round leaves as they are. */
  done: Set<string>;
  stack: string[];
}

export class ModelRepositoryManager {
  private readonly models = new Map<string, ModelRecord>();
  private serial: Promise<unknown> = Promise.resolve();
  private pollTimer: NodeJS.Timeout | undefined;
  private pass: LoadPass | undefined;
  /** What should be loaded, for strict readiness: the start's models (explicit mode: --load-model, '*' every one). */
  private readonly expected = new Set<string>();
  /** Repository-level problems seen by the last scan. */
  repositoryErrors: string[] = [];

  private readonly redact: (message: string) => string;

  constructor(private readonly options: RepositoryManagerOptions) {
    this.redact = createRepositoryPathRedactor(options.repositories);
  }

  get controlMode(): ModelControlMode {
    return this.options.controlMode;
  }

  /** Loads what the control mode says to load at start: all models, or those named (`*` = all). */
  start(loadModels: readonly string[]): Promise<void> {
    validateRepositoryPaths(this.options.repositories);
    return this.exclusive(async () => {
      const scan = this.rescan();
      const names = this.options.controlMode === 'explicit' ? (loadModels.includes('*') ? [...scan.keys()] : [...loadModels]) : [...scan.keys()];
      this.pass = { scan, done: new Set(), stack: [] };
      for (const name of names) this.expected.add(name);
      try {
        for (const name of names) {
          const location = scan.get(name);
          if (!location) {
            this.models.set(name, {
              location: { name, path: '' },
              state: 'UNAVAILABLE',
              reason: `failed to load '${name}': model not found in any model repository`,
              versions: new Map(),
              fingerprint: '',
            });
            continue;
          }
          await this.loadInPass(location, undefined);
        }
      } finally {
        this.pass = undefined;
      }
    });
  }

  /** Starts rescanning every `seconds` (poll mode). */
  startPolling(seconds: number): void {
    if (seconds <= 0) return;
    this.pollTimer = setInterval(() => void this.poll(), seconds * 1000);
    this.pollTimer.unref();
  }

  /** Rescans: loads new models, unloads removed ones, reloads changed ones (a failed reload keeps the old version). */
  poll(): Promise<void> {
    return this.exclusive(async () => {
      const scan = this.rescan();
      for (const [name, record] of this.models) {
        if (scan.has(name)) continue;
        await this.unloadRecord(name, record, 'model was removed from the repository');
        this.models.delete(name);
      }
      const unchanged = [...scan.values()].filter((l) => this.models.get(l.name)?.fingerprint === fingerprintModelFolder(l.path));
      this.pass = { scan, done: new Set(unchanged.map((l) => l.name)), stack: [] };
      try {
        for (const location of scan.values()) await this.loadInPass(location, undefined);
      } finally {
        this.pass = undefined;
      }
    });
  }

  /**
   * The load API (explicit mode only): `config` replaces config.pbtxt; `files` build the model in a temporary
   * folder instead of the repository's, as Triton's load with file overrides. What Triton cannot poll (no such
   * model, files it refuses) is INTERNAL with its words, followed by the reason Triton only logs.
   */
  load(name: string, parameters: LoadParameters = {}): Promise<void> {
    this.requireControl();
    validateModelName(name);
    return this.exclusive(async () => {
      const scan = this.rescan();
      const { config, files } = parameters;
      let localized: LocalizedModelFiles | undefined;
      try {
        localized = files === undefined ? undefined : await localizeModelFiles(name, files, config !== undefined);
      } catch (err) {
        throw pollFailure(name, toHerdError(err).message);
      }
      const location = localized ? { name, path: localized.modelPath } : scan.get(name);
      if (!location) throw pollFailure(name, ['model not found in any model repository', ...this.repositoryErrors.map(this.redact)].join('; '));
      // An ensemble's step models load with it unless they are serving already.
      const ready = [...this.models.entries()].filter(([n, r]) => n !== name && r.state === 'READY').map(([n]) => n);
      this.pass = { scan, done: new Set(ready), stack: [name] };
      let error: HerdError | undefined;
      try {
        this.pass.done.add(name);
        error = await this.loadRecord(location, config, true, localized);
      } finally {
        this.pass = undefined;
      }
      // Whatever failed, the load request is answered INVALID_ARG, as Triton's LoadUnloadModels does.
      if (error) throw new HerdError('INVALID_ARG', `failed to load '${name}': ${error.message}`, { cause: error });
    });
  }

  /** The unload API (explicit mode only): in-flight requests finish first. */
  unload(name: string): Promise<void> {
    this.requireControl();
    return this.exclusive(async () => {
      const record = this.models.get(name);
      if (!record) {
        // Triton accepts unloading a model it never loaded.
        return;
      }
      await this.unloadRecord(name, record, 'unloaded');
    });
  }

  /**
   * The servable version: the one asked for, or the highest ready one. Codes as Triton's: a name it never
   * saw is INVALID_ARG (model_repository_manager.cc FindModelIdentifier); a known model without that
   * version, or without any ready one (failed load, unloaded), is NOT_FOUND; a version still loading or
   * unloading is UNAVAILABLE (model_lifecycle.cc GetModel). Herd adds the reason a model is unavailable.
   */
  get(name: string, version?: number): LoadedModel {
    const record = this.models.get(name);
    if (!record) throw new HerdError('INVALID_ARG', `Request for unknown model: '${name}' is not found`);
    if (version !== undefined) {
      const loaded = record.versions.get(version);
      if (!loaded) throw new HerdError('NOT_FOUND', `Request for unknown model: '${name}' version ${version} is not found`);
      if (record.state !== 'READY') throw new HerdError('UNAVAILABLE', `Request for unknown model: '${name}' version ${version} is not at ready state`);
      return loaded;
    }
    if (record.state !== 'READY' || record.versions.size === 0) {
      throw new HerdError('NOT_FOUND', `Request for unknown model: '${name}' has no available versions${record.reason ? ` (${record.reason})` : ''}`);
    }
    // The latest version, without copying the versions into an array: this runs several times per request.
    let latest: LoadedModel | undefined;
    for (const loaded of record.versions.values()) if (latest === undefined || loaded.version > latest.version) latest = loaded;
    return latest as LoadedModel;
  }

  /** True when the model exists in some state (used for readiness answers). */
  isModelReady(name: string, version?: number): boolean {
    const record = this.models.get(name);
    if (record?.state !== 'READY') return false;
    return version === undefined ? record.versions.size > 0 : record.versions.has(version);
  }

  /**
   * Every model that should be serving is READY (strict readiness). As Triton, a model that failed counts and one
   * unloaded through the API does not, unless it was one the start loaded (--load-model): the deployment declared
   * it, so a replica without it is not ready (Triton answers ready there; its users report that as a bug).
   */
  allReady(): boolean {
    for (const [name, record] of this.models) {
      if (record.state !== 'READY' && (record.reason !== 'unloaded' || this.expected.has(name))) return false;
    }
    return true;
  }

  loadedModels(): LoadedModel[] {
    return [...this.models.values()].flatMap((r) => (r.state === 'READY' ? [...r.versions.values()] : []));
  }

  /** POST /v2/repository/index: every model in the repositories, with its state where it has one. */
  index(readyOnly: boolean): RepositoryIndexEntry[] {
    const names = new Set([...this.rescanNames(), ...this.models.keys()]);
    const entries: RepositoryIndexEntry[] = [];
    for (const name of [...names].sort()) {
      const record = this.models.get(name);
      if (!record) {
        if (!readyOnly) entries.push({ name });
        continue;
      }
      if (readyOnly && record.state !== 'READY') continue;
      if (record.versions.size === 0) {
        entries.push({ name, state: record.state, reason: record.reason });
        continue;
      }
      for (const v of [...record.versions.keys()].sort((a, b) => a - b)) {
        entries.push({ name, version: String(v), state: record.state, reason: record.reason });
      }
    }
    return entries;
  }

  /** Load outcome per model, for the start-up report. */
  summary(): { name: string; state: ModelState; versions: number[]; reason: string }[] {
    return [...this.models.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, r]) => ({ name, state: r.state, versions: [...r.versions.keys()], reason: r.reason }));
  }

  /** Drains every queue, then unloads every model. */
  close(): Promise<void> {
    if (this.pollTimer) clearInterval(this.pollTimer);
    return this.exclusive(async () => {
      await Promise.all([...this.models.entries()].map(([name, record]) => this.unloadRecord(name, record, 'server shutting down')));
    });
  }

  private requireControl(): void {
    if (this.options.controlMode !== 'explicit') {
      throw new HerdError('UNAVAILABLE', 'explicit model load / unload is not allowed if polling is enabled');
    }
  }

  /** Load and unload never interleave (Triton serialises them too). */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.serial.then(work, work);
    this.serial = next.catch(() => undefined);
    return next;
  }

  private scanProblems = new Map<string, string>();

  private rescan(): Map<string, ModelLocation> {
    const scan = scanRepositories(this.options.repositories);
    this.repositoryErrors = scan.errors;
    this.scanProblems = scan.problems;
    return scan.models;
  }

  private rescanNames(): string[] {
    return [...scanRepositories(this.options.repositories).models.keys()];
  }

  /**
   * Loads (or reloads) one model. On failure a READY previous load keeps serving, as in Triton;
   * returns the failure so the load API can answer it. A model built from files owns `localized` from here on.
   */
  private async loadRecord(location: ModelLocation, overrideJson: string | undefined, fromApi = false, localized?: LocalizedModelFiles): Promise<HerdError | undefined> {
    const previous = this.models.get(location.name);
    const fingerprint = fingerprintModelFolder(location.path);
    const problem = localized ? undefined : this.scanProblems.get(location.name);
    const started = process.hrtime.bigint();
    let loaded: Map<number, LoadedModel>;
    try {
      if (problem) throw new HerdError('INVALID_ARG', problem);
      loaded = await this.loadVersions(location, overrideJson);
    } catch (err) {
      const error = redactError(redactError(toHerdError(err), localized?.redact ?? ((m) => m)), this.redact);
      localized?.remove();
      if (previous && previous.state === 'READY') {
        previous.fingerprint = fingerprint;
        if (!fromApi) previous.reason = `reload failed, still serving the previous version: ${error.message}`;
        return error;
      }
      if (previous) await this.unloadRecord(location.name, previous, error.message);
      this.models.set(location.name, { location, state: 'UNAVAILABLE', reason: error.message, versions: new Map(), fingerprint });
      return error;
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    // The new versions serve from here on; the old ones finish what they were given, so a reload has no gap.
    this.models.set(location.name, { location, state: 'READY', reason: '', versions: loaded, fingerprint, overrideJson, localized, loadSeconds: seconds });
    if (previous) await Promise.allSettled([...previous.versions.values()].map((m) => m.scheduler.close()));
    previous?.localized?.remove();
    for (const model of loaded.values()) this.options.onLoaded?.(model, seconds);
    return undefined;
  }

  /** loadRecord once per pass, with the model on the pass's stack while it loads. */
  private async loadInPass(location: ModelLocation, overrideJson: string | undefined): Promise<void> {
    const pass = this.pass;
    if (pass) {
      if (pass.done.has(location.name)) return;
      pass.done.add(location.name);
      pass.stack.push(location.name);
    }
    try {
      await this.loadRecord(location, overrideJson);
    } finally {
      pass?.stack.pop();
    }
  }

  private async loadVersions(location: ModelLocation, overrideJson: string | undefined): Promise<Map<number, LoadedModel>> {
    const allowOutside = this.options.allowFilesOutsideModelDir === true && overrideJson === undefined;
    const { config, factory } = await loadModelConfig(
      { modelName: location.name, modelPath: location.path, overrideJson, allowFilesOutsideModelDir: allowOutside },
      this.options.backends,
    );
    for (const warning of listModelConfigWarnings(config)) this.options.onWarning?.(warning);
    for (const warning of listIgnoredFields(config, { hasResponseCache: this.options.hasResponseCache === true })) {
      this.options.onWarning?.(`model '${location.name}': ${warning.message}`);
    }
    const versions = selectVersions(config.version_policy, listVersionFolders(location.path));
    if (versions.length === 0) {
      throw new HerdError('INVALID_ARG', `at least one version must be available under the version policy of model '${location.name}'`);
    }
    if (!factory) return this.loadEnsemble(location, config, versions, overrideJson !== undefined, allowOutside);
    const labels = readModelLabels(config, location.path, allowOutside);
    const loaded = new Map<number, LoadedModel>();
    try {
      for (const version of versions) {
        loaded.set(version, await loadModelVersion({ location, config, factory, version, labels, rateLimiter: this.options.rateLimiter }));
      }
    } catch (err) {
      await Promise.allSettled([...loaded.values()].map((m) => m.scheduler.close()));
      throw err;
    }
    return loaded;
  }

  /** Loads the step models first (Triton's dependency graph), checks the steps against them, then one scheduler per version. */
  private async loadEnsemble(location: ModelLocation, config: ModelConfig, versions: number[], overridden: boolean, allowFilesOutside: boolean): Promise<Map<number, LoadedModel>> {
    const name = config.name;
    const runStep = this.options.runEnsembleStep;
    if (!runStep) throw new HerdError('UNSUPPORTED', `ensemble '${name}' cannot be loaded: this server has no inference path for its steps`);
    const steps = config.ensemble_scheduling?.step ?? [];
    const missing = [...new Set(steps.map((s) => s.model_name))].filter((m) => !this.pass?.scan.has(m) && !this.models.has(m));
    if (missing.length > 0) throw new HerdError('INVALID_ARG', `ensemble ${name} contains models that are not available or ambiguous: ${missing.join(', ')}`);
    for (const step of steps) {
      const pass = this.pass;
      if (pass?.stack.includes(step.model_name)) {
        throw new HerdError('INVALID_ARG', `circular dependency between ensembles: ${step.model_name} -> ... -> ${name} -> ${step.model_name}`);
      }
      const dependency = pass?.scan.get(step.model_name);
      if (pass && dependency) await this.loadInPass(dependency, undefined);
    }
    const stepConfigs = steps.map((step) => {
      const record = this.models.get(step.model_name);
      if (!record || record.versions.size === 0) {
        const cause = record?.reason ? ` Model '${step.model_name}' loading failed with error: ${record.reason}` : '';
        throw new HerdError('INVALID_ARG', `ensemble '${name}' depends on '${step.model_name}' which has no loaded version.${cause}`);
      }
      if (step.model_version >= 0 && !record.versions.has(step.model_version)) {
        throw new HerdError('INVALID_ARG', `ensemble '${name}' depends on '${step.model_name}' whose required version ${step.model_version} is not loaded.`);
      }
      return this.get(step.model_name, step.model_version >= 0 ? step.model_version : undefined);
    });
    return createEnsembleVersions({
      location,
      config,
      versions,
      stepConfigs: stepConfigs.map((m) => m.config),
      stepSpending: stepConfigs.map((m) => m.spending),
      overridden,
      allowFilesOutside,
      runStep,
      ...(this.options.streamEnsembleStep ? { streamStep: this.options.streamEnsembleStep } : {}),
    });
  }

  /** Closes every version (in-flight work finishes), then deletes a model's temporary folder if it was built from files. */
  private async unloadRecord(name: string, record: ModelRecord, reason: string): Promise<void> {
    if (record.versions.size === 0) {
      if (reason === 'unloaded') this.models.set(name, { ...record, state: 'UNAVAILABLE', reason });
      return;
    }
    record.state = 'UNLOADING';
    await Promise.allSettled([...record.versions.values()].map((m) => m.scheduler.close()));
    record.localized?.remove();
    this.models.set(name, { ...record, state: 'UNAVAILABLE', reason, versions: new Map(), localized: undefined });
  }
}
