import type { RoutedChannel, RoutedKey, RoutingSnapshot } from '@switchyard/contracts';
import { MAX_MODEL_LENGTH, isWildcard, matchesModel } from '@switchyard/domain';

// The selection policy, shared by the router and every edge: among the channels that serve
// the model for the token's group and may take traffic, the highest priority tier first;
// inside a tier, a weighted random order; inside a channel (an account pool), a random
// order of the accounts that are not cooling down. Callers then take the first candidate
// whose account has room (see AccountLimiter).

export interface Candidate {
  channel: RoutedChannel;
  key: RoutedKey;
  /** The model name to send upstream, after the channel's mapping. */
  upstreamModel: string;
}

export interface CandidateQuery {
  model: string;
  group: string;
  now: number;
  /** Channels already tried for this request. */
  excludedChannels?: ReadonlySet<number>;
  /** Accounts already tried (or refused) for this request. */
  excludedKeys?: ReadonlySet<number>;
  random?: () => number;
}

interface IndexedChannel {
  channel: RoutedChannel;
  groups: ReadonlySet<string>;
  /** When the first of its accounts is out of its cool-down (-Infinity: one never was in it). */
  firstWarmAt: number;
}

export type Unavailability = 'no_channel' | 'none_healthy';

/**
 * Model names whose channels, found by the patterns, a table keeps: clients may name any
 * model, so the names kept are dropped together once there are this many, and a name
 * longer than any model's (MAX_MODEL_LENGTH) is matched again each time, never kept.
 */
const PATTERN_MATCHES_KEPT = 4_096;

export class RoutingTable {
  private readonly exact = new Map<string, IndexedChannel[]>();
  private readonly wildcards: { entry: string; channel: IndexedChannel }[] = [];
  /**
   * Each name's channels once the patterns were tried on it: every pattern is tried once a
   * name, not on every request for it (a table is made again at each routing change).
   */
  private readonly matched = new Map<string, IndexedChannel[]>();

  constructor(readonly snapshot: RoutingSnapshot) {
    for (const channel of snapshot.channels) {
      const indexed = {
        channel,
        groups: new Set(channel.groups),
        firstWarmAt: channel.keys.reduce(
          (earliest, key) => Math.min(earliest, key.coolingUntil ?? -Infinity),
          Infinity,
        ),
      };
      for (const entry of new Set(channel.models)) {
        if (isWildcard(entry)) {
          this.wildcards.push({ entry, channel: indexed });
        } else {
          const list = this.exact.get(entry) ?? [];
          list.push(indexed);
          this.exact.set(entry, list);
        }
      }
    }
  }

  get version(): number {
    return this.snapshot.version;
  }

  private channelsFor(model: string): IndexedChannel[] {
    const found = this.exact.get(model) ?? [];
    if (this.wildcards.length === 0) return found;
    const known = this.matched.get(model);
    if (known) return known;
    const seen = new Set(found.map((c) => c.channel.id));
    const all = [...found];
    for (const { entry, channel } of this.wildcards) {
      if (!seen.has(channel.channel.id) && matchesModel(entry, model)) {
        seen.add(channel.channel.id);
        all.push(channel);
      }
    }
    if (model.length > MAX_MODEL_LENGTH) return all;
    if (this.matched.size >= PATTERN_MATCHES_KEPT) this.matched.clear();
    this.matched.set(model, all);
    return all;
  }

  /**
   * Whether any channel serves the model for the group at all, able to take traffic now or
   * resting (breaker open, disabled automatically).
   */
  serves(model: string, group: string): boolean {
    return (
      this.channelsFor(model).some((c) => c.groups.has(group)) ||
      (this.snapshot.resting ?? []).some(
        (channel) =>
          channel.groups.includes(group) &&
          channel.models.some((entry) =>
            isWildcard(entry) ? matchesModel(entry, model) : entry === model,
          ),
      )
    );
  }

  /** Every model name (exact entries only) some channel serves for the group. */
  modelsFor(group: string): string[] {
    const models: string[] = [];
    for (const [model, channels] of this.exact) {
      if (channels.some((c) => c.groups.has(group) && c.channel.keys.length > 0))
        models.push(model);
    }
    return models.sort();
  }

  /**
   * The names the channels serving the model for the group would send upstream, after
   * their mappings: what a request may be billed as when its own name has no price.
   */
  upstreamModels(model: string, group: string): string[] {
    const names = new Set<string>();
    for (const { channel, groups } of this.channelsFor(model)) {
      if (groups.has(group)) names.add(channel.modelMapping[model] ?? model);
    }
    return [...names];
  }

  /** Candidates in the order the policy tries them; lazily, since pools can be large. */
  *candidates(query: CandidateQuery): Generator<Candidate> {
    const random = query.random ?? Math.random;
    const tiers = new Map<number, RoutedChannel[]>();
    for (const { channel, groups, firstWarmAt } of this.channelsFor(query.model)) {
      if (!groups.has(query.group) || query.excludedChannels?.has(channel.id)) continue;
      // Every account cooling down: nothing to offer, and nothing to draw.
      if (firstWarmAt > query.now) continue;
      const tier = tiers.get(channel.priority) ?? [];
      tier.push(channel);
      tiers.set(channel.priority, tier);
    }
    for (const priority of [...tiers.keys()].sort((a, b) => b - a)) {
      for (const channel of weightedOrder(tiers.get(priority)!, random)) {
        const upstreamModel = channel.modelMapping[query.model] ?? query.model;
        for (const key of inRandomOrder(channel.keys, random)) {
          if (query.excludedKeys?.has(key.id)) continue;
          if (key.coolingUntil !== null && key.coolingUntil > query.now) continue;
          yield { channel, key, upstreamModel };
        }
      }
    }
  }
}

/**
 * A random order in which each channel comes first with probability proportional to its
 * weight (Efraimidis–Spirakis: sort by u^(1/w), largest first). Weight 0 never leads
 * while others can, but still serves as a last resort.
 */
export function weightedOrder<T extends { weight: number }>(items: T[], random: () => number): T[] {
  if (items.length < 2) return items;
  return items
    .map((item) => ({
      item,
      score: item.weight > 0 ? Math.pow(random(), 1 / item.weight) : -random(),
    }))
    .sort((a, b) => b.score - a.score)
    .map((entry) => entry.item);
}

/**
 * The items in a uniformly random order, drawn as they are asked for: a Fisher–Yates
 * shuffle that keeps only the positions its swaps moved. A request takes its first account
 * of a pool and fails over to a few more at most, so a relay of thousands of accounts costs
 * it a few draws, not a copy and a shuffle of the whole pool on every request.
 */
export function* inRandomOrder<T>(items: readonly T[], random: () => number): Generator<T> {
  /** Position → index of the item a swap left there; unlisted positions hold their own. */
  let moved: Map<number, number> | undefined;
  for (let drawn = 0; drawn < items.length; drawn += 1) {
    const left = items.length - drawn;
    const at = left > 1 ? drawn + Math.floor(random() * left) : drawn;
    const index = moved?.get(at) ?? at;
    if (at !== drawn) (moved ??= new Map()).set(at, moved.get(drawn) ?? drawn);
    yield items[index]!;
  }
}
