import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentActor, EDITORS, READERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import {
  ListModelFallbacksQuery,
  ModelFallbackPage,
  ModelFallbackResponse,
  PutModelFallbackDto,
} from './model-fallbacks.dto.js';
import { ModelFallbacksService } from './model-fallbacks.service.js';

@ApiTags('model-fallbacks')
@Controller('api/model-fallbacks')
export class ModelFallbacksController {
  constructor(private readonly fallbacks: ModelFallbacksService) {}

  @Get()
  @Roles(...READERS)
  @ApiOperation({ summary: "List models' fallback lists (by model name)" })
  @ApiOkResponse({ type: ModelFallbackPage })
  list(@Query() query: ListModelFallbacksQuery): Promise<ModelFallbackPage> {
    return this.fallbacks.list(query);
  }

  @Put(':model')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: "Set a model's fallback lists",
    description:
      'Replaces the lists of models the edge tries, in order, when every channel of the model failed before the first byte or none can take the request (docs/routing.md, "Fallbacks across models"). Every name must be one a channel serves; a list naming the model itself, repeating a name, or leading back to the model through other models\' lists is refused. Publishes `model-fallback.changed`.',
  })
  @ApiParam({ name: 'model', description: 'URL-encoded exact model name' })
  @ApiOkResponse({ type: ModelFallbackResponse })
  @ApiValidationErrors()
  put(
    @CurrentActor() actor: Actor,
    @Param('model') model: string,
    @Body() dto: PutModelFallbackDto,
  ): Promise<ModelFallbackResponse> {
    return this.fallbacks.put(actor, model, dto);
  }

  @Delete(':model')
  @HttpCode(204)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: "Remove a model's fallback lists",
    description: 'Publishes `model-fallback.changed`.',
  })
  @ApiParam({ name: 'model', description: 'URL-encoded exact model name' })
  @ApiNoContentResponse()
  @ApiNotFound('model fallback')
  delete(@CurrentActor() actor: Actor, @Param('model') model: string): Promise<void> {
    return this.fallbacks.delete(actor, model);
  }
}
