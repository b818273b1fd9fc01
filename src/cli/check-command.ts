// `herd check [herd.yaml]`: validates a config and prints what it resolves to — repositories,
// providers (enabled, or why not), models with their deployments and effective prices, routes.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { HerdConfig } from '../config/herd-config-schema.ts';
import { loadHerdConfigFile } from '../config/load-herd-config.ts';
import { HerdError } from '../core/errors.ts';
import { buildGatewayCatalog, type GatewayCatalog } from '../gateway/router/gateway-catalog.ts';

export function registerCheckCommand(program: Command, write: (text: string) => void = (t) => process.stdout.write(t)): void {
  program
    .command('check')
    .description('validate herd.yaml and print the models, providers and routes it resolves to')
    .argument('[config]', 'the file to check (default ./herd.yaml)')
    .option('--config <file>', 'the file to check, as `herd serve --config` takes it (the same as the argument)')
    .action((file: string | undefined, flags: { config?: string }) => {
      if (file !== undefined && flags.config !== undefined && file !== flags.config) {
        throw new HerdError('INVALID_ARG', `two config files given (${file} and --config ${flags.config}): give one`);
      }
      const path = file ?? flags.config ?? 'herd.yaml';
      if (!existsSync(path)) throw new HerdError('INVALID_ARG', `no config file at ${path}`);
      const { config } = loadHerdConfigFile(path);
      write(formatCheckReport(path, config, buildGatewayCatalog(config, process.env)));
    });
}

export function formatCheckReport(file: string, config: HerdConfig, catalog: GatewayCatalog): string {
  const out: string[] = [`${file}: OK`, ''];
  out.push(`server: http ${config.server.host}:${config.server.http_port}, grpc :${config.server.grpc_port}, metrics :${config.server.metrics_port}`);
  const limits = config.server.limits;
  out.push(
    `  limits: headers ${limits.headers_timeout_ms} ms, request ${limits.request_timeout_ms || 'no'} ms, keep-alive ${limits.keep_alive_timeout_ms} ms, connections ${limits.max_connections || 'unlimited'} (${limits.max_connections_per_address || 'unlimited'} per address)`,
  );
  out.push(`  trusted proxies: ${config.server.trusted_proxies.length > 0 ? config.server.trusted_proxies.join(', ') : 'none'}`);
  out.push(
    `serving: ${config.serving.model_repository.length > 0 ? config.serving.model_repository.join(', ') : '(no model repository)'}; control mode ${config.serving.model_control_mode}`,
  );
  const cache = config.serving.cache;
  if (cache?.local) out.push(`response cache: local, ${cache.local.size} bytes`);
  else if (cache?.redis) out.push(`response cache: redis ${cache.redis.host}:${cache.redis.port} db ${cache.redis.db}, keys under '${cache.redis.key_prefix}'`);
  if (catalog.providers.size > 0) {
    out.push('', 'providers:');
    for (const p of catalog.providers.values()) {
      const state = p.enabled ? 'enabled' : `disabled: ${p.disabledReason}`;
      const where = p.baseUrl ?? (p.type === 'triton' ? '(this Herd, in process)' : '-');
      out.push(`  ${p.name.padEnd(12)} ${p.type.padEnd(9)} ${where}  ×${p.settings.exchange_rate} per USD  key ${p.apiKeyEnv || '-'}  (${state})`);
    }
  }
  if (catalog.models.size > 0) {
    out.push('', "models (list: USD per million tokens, input / output; effective: settlement currency per million = list × the provider's exchange rate):");
    for (const m of catalog.models.values()) {
      const aliases = m.aliases.length > 0 ? ` (aliases: ${m.aliases.join(', ')})` : '';
      const available = m.enabledDeployments.length > 0 ? '' : '  UNAVAILABLE';
      out.push(`  ${m.name}${aliases} — ${m.strategy}${m.fallbacks.length > 0 ? `, falls back to ${m.fallbacks.join(' → ')}` : ''}${available}`);
      for (const d of m.deployments) {
        const rate = d.provider.settings.exchange_rate;
        const on = d.provider.enabled ? '' : `  [${d.provider.disabledReason}]`;
        out.push(
          `    via ${d.provider.name}/${d.upstreamModel}: list ${d.price.input} / ${d.price.output}, effective ${round(d.price.input * rate)} / ${round(d.price.output * rate)}${on}`,
        );
      }
    }
  }
  if (catalog.tiers.size > 0 || catalog.autoRules.length > 0) {
    out.push('', 'routes:');
    for (const [tier, model] of catalog.tiers) out.push(`  ${tier} → ${model}`);
    catalog.autoRules.forEach((r) => {
      out.push(`  auto: ${r.max_prompt_tokens === undefined ? 'otherwise' : `≤ ${r.max_prompt_tokens} prompt tokens`} → ${r.tier} (${catalog.tiers.get(r.tier) ?? 'unset'})`);
    });
  }
  return `${out.join('\n')}\n`;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;
