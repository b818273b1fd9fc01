// Creating gateway keys in tests the short way: the real key store (SQLite file or postgres://), acting
// as an admin at a terminal, with the limits tests used to pass as flat fields (budgetDayMicros …).
import type { ChangeContext, CreatedKey, KeyFields, KeyStore, RevokeResult } from '../../src/gateway/keys/key-store.ts';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';

export const TEST_CHANGE: ChangeContext = { actor: { id: 'cli@test', name: 'test', role: 'admin' } };

export interface TestKeyInput extends Omit<KeyFields, 'budgets'> {
  budgetDayMicros?: number;
  budgetMonthMicros?: number;
}

export class TestKeys {
  readonly store: KeyStore;

  static async open(location: string): Promise<TestKeys> {
    return new TestKeys(await openKeyStore(location));
  }

  private constructor(store: KeyStore) {
    this.store = store;
  }

  create(input: TestKeyInput): Promise<CreatedKey> {
    const { budgetDayMicros, budgetMonthMicros, ...fields } = input;
    const budgets = [
      ...(budgetDayMicros === undefined ? [] : [{ period: 'day' as const, amountMicros: budgetDayMicros }]),
      ...(budgetMonthMicros === undefined ? [] : [{ period: 'month' as const, amountMicros: budgetMonthMicros }]),
    ];
    return this.store.createKey({ ...fields, budgets }, TEST_CHANGE);
  }

  revoke(ref: string): Promise<RevokeResult> {
    return this.store.revokeKey(ref, TEST_CHANGE);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
