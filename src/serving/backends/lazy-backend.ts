// A backend whose module is imported on first use: ONNX Runtime's native library is tens of MB
// resident, which a gateway-only server (or a repository of JS models) should not pay for.
import type { BackendFactory } from './backend.ts';

export function createLazyBackend(name: string, importFactory: () => Promise<BackendFactory>): BackendFactory {
  let loaded: Promise<BackendFactory> | undefined;
  const factory = () => (loaded ??= importFactory());
  return {
    name,
    async autoCompleteConfig(config, modelPath, versionPath) {
      const real = await factory();
      return real.autoCompleteConfig ? real.autoCompleteConfig(config, modelPath, versionPath) : config;
    },
    async load(context) {
      return (await factory()).load(context);
    },
  };
}
