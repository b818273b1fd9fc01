// Entry file of the SQLite ledger's row-writer thread (see load-thread-entry.mjs for why it is plain JS).
import { loadThreadEntry } from '../../core/load-thread-entry.mjs';

await loadThreadEntry(import.meta.url, 'sqlite-row-writer-entry');
