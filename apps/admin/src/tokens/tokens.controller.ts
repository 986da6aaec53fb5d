import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentActor, EDITORS, READERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiNotFound, ApiValidationErrors, ApiVersionConflict } from '../common/api-docs.js';
import { IdParam } from '../common/id.pipe.js';
import {
  CreateTokenBundleDto,
  CreateTokenDto,
  CreatedTokenResponse,
  ListTokensQuery,
  TokenBundleResponse,
  TokenPage,
  TokenResponse,
  UpdateTokenDto,
} from './tokens.dto.js';
import { TokensService } from './tokens.service.js';

@ApiTags('tokens')
@Controller('api/tokens')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Get()
  @Roles(...READERS)
  @ApiOperation({ summary: 'List tokens (newest first)' })
  @ApiOkResponse({ type: TokenPage })
  @ApiValidationErrors()
  list(@Query() query: ListTokensQuery): Promise<TokenPage> {
    return this.tokens.list(query);
  }

  @Post()
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Create a token',
    description:
      'The response carries `key`, the full token, this once. Publishes `token.changed`.',
  })
  @ApiCreatedResponse({ type: CreatedTokenResponse })
  @ApiValidationErrors()
  create(@CurrentActor() actor: Actor, @Body() dto: CreateTokenDto): Promise<CreatedTokenResponse> {
    return this.tokens.create(actor, dto);
  }

  @Post('bundle')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Create the three tokens of a chat installation at once',
    description:
      'One for chat, one for drawing with the image model, one for the image-generation service, with the same settings, in one transaction. Each carries its `key` this once.',
  })
  @ApiCreatedResponse({ type: TokenBundleResponse })
  @ApiValidationErrors()
  createBundle(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateTokenBundleDto,
  ): Promise<TokenBundleResponse> {
    return this.tokens.createBundle(actor, dto);
  }

  @Get(':id')
  @Roles(...READERS)
  @ApiOperation({ summary: 'Read a token' })
  @ApiOkResponse({ type: TokenResponse })
  @ApiNotFound('token')
  get(@IdParam() id: number): Promise<TokenResponse> {
    return this.tokens.get(id);
  }

  @Patch(':id')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Change, disable (`enabled: false`) or enable a token',
    description: 'Only the fields given change. Publishes `token.changed`.',
  })
  @ApiOkResponse({ type: TokenResponse })
  @ApiValidationErrors()
  @ApiNotFound('token')
  @ApiVersionConflict()
  update(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: UpdateTokenDto,
  ): Promise<TokenResponse> {
    return this.tokens.update(actor, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Roles(...EDITORS)
  @ApiOperation({ summary: 'Delete a token', description: 'Publishes `token.changed`.' })
  @ApiNoContentResponse()
  @ApiNotFound('token')
  delete(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<void> {
    return this.tokens.delete(actor, id);
  }
}
