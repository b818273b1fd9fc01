// Where Triton's example model repository lives for the tests: HERD_TESTDATA, else ../shared/testdata
// beside the checkout (as the project ships it). Suites that serve it fail without it; scripts/run-tests.mjs
// says so before they run.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const TRITON_TESTDATA = resolve(process.env.HERD_TESTDATA ?? resolve(checkout, '../shared/testdata'));
export const TRITON_MODEL_REPOSITORY = resolve(TRITON_TESTDATA, 'triton_model_repository');
