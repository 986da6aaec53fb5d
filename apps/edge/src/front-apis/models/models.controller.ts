import { Controller, Get, Param, Query, Req } from '@nestjs/common';
import { GatewayError, type ModelList, type ModelObject } from '@switchyard/contracts';
import { allowedByList } from '@switchyard/domain';
import { type FastifyRequest } from 'fastify';
import { TokenAuthenticator } from '../../auth/token-authenticator.js';
import { RoutingState } from '../../routing/routing-state.js';
import { anthropicCredential, isAnthropicCaller } from '../anthropic-shape.js';
import { geminiCredential } from '../gemini/gemini-shape.js';
import { geminiModelsOf, isGoogleCaller, type GeminiModel } from '../gemini/models.controller.js';
import { bearerCredential } from '../openai-shape.js';

/** Anthropic's model object (`GET /v1/models` from its SDKs). */
export interface AnthropicModel {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}

/** Anthropic's page of models: `after_id` / `before_id` cursors and `limit` (1–1000, default 20). */
export interface AnthropicModelPage {
  data: AnthropicModel[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

const ANTHROPIC_PAGE = { default: 20, max: 1000 };

interface PageQuery {
  limit?: string;
  after_id?: string;
  before_id?: string;
}

/**
 * The model list, answered from the routing snapshot (models.api.ts), in the shape of the
 * SDK that asks: OpenAI's, Anthropic's for a caller that sends `anthropic-version`, or
 * Gemini's for Google's clients, whose SDK lists at `/v1/models` too (docs/providers.md,
 * "Gemini's API in front").
 */
@Controller('v1')
export class ModelsController {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly routing: RoutingState,
  ) {}

  /** The models this token may use and some channel serves. */
  @Get('models')
  async models(
    @Req() request: FastifyRequest,
    @Query() page: PageQuery,
  ): Promise<ModelList | AnthropicModelPage | { models: GeminiModel[] }> {
    const visible = await this.visibleModels(request);
    if (isAnthropicCaller(request.headers)) return anthropicPage(visible, page);
    if (isGoogleCaller(request)) return { models: geminiModelsOf(visible.map((m) => m.id)) };
    return { object: 'list', data: visible };
  }

  @Get('models/:model')
  async model(
    @Req() request: FastifyRequest,
    @Param('model') model: string,
  ): Promise<ModelObject | AnthropicModel | GeminiModel> {
    const id = isGoogleCaller(request) ? model.replace(/^models\//, '') : model;
    const found = (await this.visibleModels(request)).find((m) => m.id === id);
    if (!found)
      throw new GatewayError(
        'model_not_found',
        `The model \`${model}\` does not exist or you do not have access to it.`,
        'model',
      );
    if (isAnthropicCaller(request.headers)) return anthropicModel(found);
    return isGoogleCaller(request) ? geminiModelsOf([found.id])[0]! : found;
  }

  private async visibleModels(request: FastifyRequest): Promise<ModelObject[]> {
    const credential = isAnthropicCaller(request.headers)
      ? anthropicCredential(request.headers)
      : isGoogleCaller(request)
        ? geminiCredential(request.headers, request)
        : bearerCredential(request.headers);
    const token = await this.authenticator.authenticate(credential, request.ip);
    const table = this.routing.table;
    const created = Math.floor((table?.snapshot.generatedAt ?? Date.now()) / 1000);
    return (table?.modelsFor(token.group) ?? [])
      .filter((id) => allowedByList(token.models, id))
      .map((id) => ({ id, object: 'model', created, owned_by: 'switchyard' }));
  }
}

function anthropicModel(model: ModelObject): AnthropicModel {
  return {
    type: 'model',
    id: model.id,
    display_name: model.id,
    created_at: new Date(model.created * 1000).toISOString(),
  };
}

function anthropicPage(models: ModelObject[], query: PageQuery): AnthropicModelPage {
  const limit = query.limit === undefined ? ANTHROPIC_PAGE.default : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > ANTHROPIC_PAGE.max)
    throw new GatewayError(
      'invalid_request',
      `'limit' must be an integer from 1 to ${ANTHROPIC_PAGE.max}.`,
      'limit',
    );
  const ids = models.map((model) => model.id);
  let start = 0;
  let end = models.length;
  if (query.after_id !== undefined) start = ids.indexOf(query.after_id) + 1;
  if (query.before_id !== undefined) {
    end = Math.max(0, ids.indexOf(query.before_id));
    start = Math.max(0, end - limit);
  }
  const data = models.slice(start, Math.min(end, start + limit)).map(anthropicModel);
  const hasMore = query.before_id !== undefined ? start > 0 : start + data.length < models.length;
  return {
    data,
    has_more: hasMore,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  };
}
