import { Controller, Get, Param, Req } from '@nestjs/common';
import { GatewayError } from '@switchyard/contracts';
import { allowedByList } from '@switchyard/domain';
import { type FastifyRequest } from 'fastify';
import { TokenAuthenticator } from '../../auth/token-authenticator.js';
import { RoutingState } from '../../routing/routing-state.js';
import { geminiCredential } from './gemini-shape.js';

/** One of Gemini's `Model` resources (https://ai.google.dev/api/models#Model). */
export interface GeminiModel {
  name: string;
  baseModelId: string;
  version: string;
  displayName: string;
  supportedGenerationMethods: string[];
}

/**
 * The methods a model may be called with here. The routing snapshot does not say which
 * models embed: every method is listed, and the channel judges.
 */
const METHODS = [
  'generateContent',
  'streamGenerateContent',
  'countTokens',
  'embedContent',
  'batchEmbedContents',
];

/** A Google client: its key in `x-goog-api-key` or `?key=`, where OpenAI's are Bearer. */
export function isGoogleCaller(request: FastifyRequest): boolean {
  const query = request.query as Record<string, unknown> | null;
  return request.headers['x-goog-api-key'] !== undefined || typeof query?.key === 'string';
}

/** Model ids as Gemini's `Model` resources. */
export function geminiModelsOf(ids: string[]): GeminiModel[] {
  return ids.map((id) => ({
    name: `models/${id}`,
    baseModelId: id,
    version: '001',
    displayName: id,
    supportedGenerationMethods: METHODS,
  }));
}

/**
 * Gemini's models.list and models.get under `/v1beta`, answered from the routing snapshot
 * (models.api.ts). `/v1/models` is OpenAI's list, which answers Google's clients (the
 * `@google/genai` SDK lists there) in this shape.
 */
@Controller('v1beta')
export class GeminiModelsController {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly routing: RoutingState,
  ) {}

  /** The models this token may use and some channel serves, on one page. */
  @Get('models')
  async models(@Req() request: FastifyRequest): Promise<{ models: GeminiModel[] }> {
    return { models: await this.visibleModels(request) };
  }

  @Get('models/:model')
  async model(@Req() request: FastifyRequest, @Param('model') model: string): Promise<GeminiModel> {
    const name = `models/${model.replace(/^models\//, '')}`;
    const found = (await this.visibleModels(request)).find((m) => m.name === name);
    if (!found)
      throw new GatewayError(
        'unknown_url',
        `${name} is not found, or you do not have access to it.`,
        'model',
      );
    return found;
  }

  private async visibleModels(request: FastifyRequest): Promise<GeminiModel[]> {
    const token = await this.authenticator.authenticate(
      geminiCredential(request.headers, request),
      request.ip,
    );
    return geminiModelsOf(
      (this.routing.table?.modelsFor(token.group) ?? []).filter((id) =>
        allowedByList(token.models, id),
      ),
    );
  }
}
