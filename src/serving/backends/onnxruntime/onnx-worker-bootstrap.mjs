// Entry file of an ONNX Runtime instance's worker thread (see load-thread-entry.mjs for why it is plain JS).
import { loadThreadEntry } from '../../../core/load-thread-entry.mjs';

await loadThreadEntry(import.meta.url, 'onnx-worker-entry');
