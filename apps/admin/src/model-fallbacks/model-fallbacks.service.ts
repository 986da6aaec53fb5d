import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type ModelFallback } from '@switchyard/db';
import { allowedByList } from '@switchyard/domain';
import { skipTake, type Page } from '@switchyard/service';
import { AuditService } from '../audit/audit.service.js';
import { type Actor } from '../common/actor.js';
import { ChangeEvents } from '../events/change-events.js';
import {
  type ListModelFallbacksQuery,
  type ModelFallbackResponse,
  type PutModelFallbackDto,
} from './model-fallbacks.dto.js';
import { type FallbackLists, ModelFallbacksRepository } from './model-fallbacks.repository.js';

// A model's fallback lists (docs/routing.md, "Fallbacks across models"). Every name must be
// one a channel serves, and no list may lead back to where it started, through its own
// model's lists or any other's: the edge tries a list once, in order, and a loop is an
// operator's mistake to be told now rather than a request's surprise later.

const LISTS = ['fallbacks', 'contextWindow', 'contentPolicy'] as const;

@Injectable()
export class ModelFallbacksService {
  constructor(
    private readonly repository: ModelFallbacksRepository,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  async list(query: ListModelFallbacksQuery): Promise<Page<ModelFallbackResponse>> {
    const { rows, total } = await this.repository.list(skipTake(query));
    return { items: rows.map(toResponse), total };
  }

  async put(actor: Actor, model: string, dto: PutModelFallbackDto): Promise<ModelFallbackResponse> {
    const lists: FallbackLists = {
      fallbacks: dto.fallbacks,
      contextWindow: dto.contextWindow ?? [],
      contentPolicy: dto.contentPolicy ?? [],
    };
    const { row, created } = await this.repository.transaction(async (db) => {
      const [channels, stored] = await Promise.all([
        this.repository.channelModels(db),
        this.repository.all(db),
      ]);
      checkLists(model, lists, channels, stored);
      const created = !stored.some((entry) => entry.model === model);
      const row = await this.repository.upsert(db, model, lists);
      await this.audit.record(
        {
          actor,
          action: 'model_fallback.update',
          target: { type: 'model_fallback', id: model },
          details: { ...lists },
        },
        db,
      );
      return { row, created };
    });
    await this.events.modelFallbackChanged(model, created ? 'created' : 'updated');
    return toResponse(row);
  }

  async delete(actor: Actor, model: string): Promise<void> {
    await this.repository.transaction(async (db) => {
      const removed = await this.repository.delete(db, model);
      if (!removed) throw new ApiError('not_found', `No fallbacks for the model "${model}"`);
      await this.audit.record(
        {
          actor,
          action: 'model_fallback.delete',
          target: { type: 'model_fallback', id: model },
          details: {
            fallbacks: removed.fallbacks,
            contextWindow: removed.contextWindow,
            contentPolicy: removed.contentPolicy,
          },
        },
        db,
      );
    });
    await this.events.modelFallbackChanged(model, 'deleted');
  }
}

/** Refuses, naming the field, a list that repeats, names an unserved model or loops. */
export function checkLists(
  model: string,
  lists: FallbackLists,
  channels: string[][],
  stored: Pick<ModelFallback, 'model' | keyof FallbackLists>[],
): void {
  const served = (name: string): boolean =>
    channels.some((models) => models.length > 0 && allowedByList(models, name));
  if (!served(model)) {
    refuse('model', `no channel serves the model "${model}"`);
  }
  // Every model's onward edges, this model's as they would be after the change.
  const edges = new Map<string, string[]>();
  for (const entry of stored) {
    if (entry.model !== model)
      edges.set(
        entry.model,
        LISTS.flatMap((list) => entry[list]),
      );
  }
  edges.set(
    model,
    LISTS.flatMap((list) => lists[list]),
  );
  for (const list of LISTS) {
    lists[list].forEach((name, index) => {
      const field = `${list}[${index}]`;
      if (name === model) refuse(field, `${field} names the model itself ("${model}")`);
      if (lists[list].indexOf(name) !== index)
        refuse(field, `${field} repeats "${name}", already in ${list}`);
      if (!served(name)) refuse(field, `${field} names "${name}", which no channel serves`);
      const path = pathTo(name, model, edges);
      if (path)
        refuse(
          field,
          `${field} ("${name}") loops back to "${model}": ${[model, ...path].join(' → ')}`,
        );
    });
  }
}

/** The models from `from` to `to` along the lists, both included; null when none leads there. */
function pathTo(from: string, to: string, edges: Map<string, string[]>): string[] | null {
  const seen = new Set<string>();
  const walk = (at: string): string[] | null => {
    if (at === to) return [at];
    if (seen.has(at)) return null;
    seen.add(at);
    for (const next of edges.get(at) ?? []) {
      const rest = walk(next);
      if (rest) return [at, ...rest];
    }
    return null;
  };
  return walk(from);
}

function refuse(field: string, message: string): never {
  throw new ApiError('validation_failed', message, [{ field, message }]);
}

function toResponse(row: ModelFallback): ModelFallbackResponse {
  return {
    model: row.model,
    fallbacks: row.fallbacks,
    contextWindow: row.contextWindow,
    contentPolicy: row.contentPolicy,
    updatedAt: row.updatedAt,
  };
}
