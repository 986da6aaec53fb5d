import type { RoutedChannel, RoutedKey } from '@switchyard/contracts';

// Routing state as specs build it: a channel or account with every field filled, to which
// each spec adds only what it is about.

export function routedKey(id: number, overrides: Partial<RoutedKey> = {}): RoutedKey {
  return {
    id,
    secretCiphertext: `sealed-${id}`,
    rpm: null,
    tpm: null,
    concurrency: null,
    coolingUntil: null,
    ...overrides,
  };
}

/** One model (`gpt-4o` unless given), the default group, one key with id `id * 10`. */
export function routedChannel(id: number, overrides: Partial<RoutedChannel> = {}): RoutedChannel {
  return {
    id,
    name: `channel ${id}`,
    kind: 'single',
    provider: 'openai',
    settings: {},
    baseUrl: `http://upstream-${id}`,
    models: ['gpt-4o'],
    modelMapping: {},
    priority: 0,
    weight: 1,
    groups: ['default'],
    keys: [routedKey(id * 10)],
    ...overrides,
  };
}
