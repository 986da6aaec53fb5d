import { Controller, Get, Param, Req } from '@nestjs/common';
import { GatewayError, type ModelList, type ModelObject } from '@switchyard/contracts';
import { allowedByList } from '@switchyard/domain';
import { type FastifyRequest } from 'fastify';
import { TokenAuthenticator } from '../auth/token-authenticator.js';
import { RoutingState } from '../routing/routing-state.js';

/** The model list of the OpenAI-compatible API; the forwarded endpoints are in proxy.routes.ts. */
@Controller('v1')
export class OpenAIController {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly routing: RoutingState,
  ) {}

  /** The models this token may use and some channel serves. */
  @Get('models')
  async models(@Req() request: FastifyRequest): Promise<ModelList> {
    return { object: 'list', data: await this.visibleModels(request) };
  }

  @Get('models/:model')
  async model(@Req() request: FastifyRequest, @Param('model') model: string): Promise<ModelObject> {
    const found = (await this.visibleModels(request)).find((m) => m.id === model);
    if (!found)
      throw new GatewayError(
        'unknown_url',
        `The model \`${model}\` does not exist or you do not have access to it.`,
        'model',
      );
    return found;
  }

  private async visibleModels(request: FastifyRequest): Promise<ModelObject[]> {
    const token = await this.authenticator.authenticate(request.headers.authorization, request.ip);
    const table = this.routing.table;
    const created = Math.floor((table?.snapshot.generatedAt ?? Date.now()) / 1000);
    return (table?.modelsFor(token.group) ?? [])
      .filter((id) => allowedByList(token.models, id))
      .map((id) => ({ id, object: 'model', created, owned_by: 'switchyard' }));
  }
}
