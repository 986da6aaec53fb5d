import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentActor, EDITORS, READERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { arrayBodyPipe } from '../common/array-body.pipe.js';
import { ApiNotFound, ApiValidationErrors, ApiVersionConflict } from '../common/api-docs.js';
import { IdParam } from '../common/id.pipe.js';
import {
  ChannelKeyResponse,
  ChannelPage,
  ChannelResponse,
  ChannelTestResult,
  CreateChannelDto,
  DisableChannelDto,
  ListChannelsQuery,
  MAX_IMPORT_CHANNELS,
  TestChannelDto,
  UpdateChannelDto,
  UpdateChannelKeyDto,
  UpstreamModelsDto,
  UpstreamModelsResult,
} from './channels.dto.js';
import { ChannelsService } from './channels.service.js';

@ApiTags('channels')
@Controller('api/channels')
export class ChannelsController {
  constructor(private readonly channels: ChannelsService) {}

  @Get()
  @Roles(...READERS)
  @ApiOperation({ summary: 'List channels (highest priority first)' })
  @ApiOkResponse({ type: ChannelPage })
  @ApiValidationErrors()
  list(@Query() query: ListChannelsQuery): Promise<ChannelPage> {
    return this.channels.list(query);
  }

  @Post()
  @Roles(...EDITORS)
  @ApiOperation({ summary: 'Create a channel', description: 'Publishes `channel.changed`.' })
  @ApiCreatedResponse({ type: ChannelResponse })
  @ApiValidationErrors()
  create(@CurrentActor() actor: Actor, @Body() dto: CreateChannelDto): Promise<ChannelResponse> {
    return this.channels.create(actor, dto);
  }

  @Post('import')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Create many channels from a JSON array of channel bodies',
    description: `All or nothing; at most ${MAX_IMPORT_CHANNELS}. A bad field is named by position, e.g. \`[2].baseUrl\`. Publishes one \`channel.changed\` without a channel id.`,
  })
  @ApiBody({ type: [CreateChannelDto] })
  @ApiCreatedResponse({ type: ChannelPage })
  @ApiValidationErrors()
  import(
    @CurrentActor() actor: Actor,
    @Body(arrayBodyPipe(CreateChannelDto, MAX_IMPORT_CHANNELS)) dtos: CreateChannelDto[],
  ): Promise<ChannelPage> {
    return this.channels.import(actor, dtos);
  }

  @Post('upstream-models')
  @HttpCode(200)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: "List an upstream's models before the channel is saved",
    description:
      "Asks `<baseUrl>/v1/models` with the key given. Answers 200 either way; `ok` tells, and `error` carries the upstream's.",
  })
  @ApiOkResponse({ type: UpstreamModelsResult })
  @ApiValidationErrors()
  upstreamModels(@Body() dto: UpstreamModelsDto): Promise<UpstreamModelsResult> {
    return this.channels.upstreamModels(dto);
  }

  @Get(':id')
  @Roles(...READERS)
  @ApiOperation({ summary: 'Read a channel' })
  @ApiOkResponse({ type: ChannelResponse })
  @ApiNotFound('channel')
  get(@IdParam() id: number): Promise<ChannelResponse> {
    return this.channels.get(id);
  }

  @Patch(':id')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Change a channel',
    description:
      'Only the fields given change. `keys` replaces the set of keys: keys already present (same secret) keep their id, limits and statistics. Publishes `channel.changed`.',
  })
  @ApiOkResponse({ type: ChannelResponse })
  @ApiValidationErrors()
  @ApiNotFound('channel')
  @ApiVersionConflict()
  update(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: UpdateChannelDto,
  ): Promise<ChannelResponse> {
    return this.channels.update(actor, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Delete a channel and its keys',
    description: 'Publishes `channel.changed`.',
  })
  @ApiNoContentResponse()
  @ApiNotFound('channel')
  delete(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<void> {
    return this.channels.delete(actor, id);
  }

  @Post(':id/enable')
  @HttpCode(200)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Enable a channel (also one the router disabled)',
    description: 'Clears the status reason.',
  })
  @ApiOkResponse({ type: ChannelResponse })
  @ApiNotFound('channel')
  enable(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<ChannelResponse> {
    return this.channels.enable(actor, id);
  }

  @Post(':id/disable')
  @HttpCode(200)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Disable a channel',
    description: 'An administrator’s disable is `disabled`: the router never re-enables it.',
  })
  @ApiBody({ type: DisableChannelDto, required: false })
  @ApiOkResponse({ type: ChannelResponse })
  @ApiNotFound('channel')
  disable(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: DisableChannelDto,
  ): Promise<ChannelResponse> {
    return this.channels.disable(actor, id, dto);
  }

  @Patch(':id/keys/:keyId')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: "Change one key's status or limits",
    description: 'Publishes `channel.changed`.',
  })
  @ApiOkResponse({ type: ChannelKeyResponse })
  @ApiValidationErrors()
  @ApiNotFound('channel or key')
  @ApiVersionConflict()
  updateKey(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('keyId') keyId: number,
    @Body() dto: UpdateChannelKeyDto,
  ): Promise<ChannelKeyResponse> {
    return this.channels.updateKey(actor, id, keyId, dto);
  }

  @Post(':id/upstream-models')
  @HttpCode(200)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: "List the models a channel's upstream offers",
    description: 'Asks `<baseUrl>/v1/models` with the first enabled key. Answers 200 either way.',
  })
  @ApiOkResponse({ type: UpstreamModelsResult })
  @ApiNotFound('channel')
  upstreamModelsOf(@IdParam() id: number): Promise<UpstreamModelsResult> {
    return this.channels.upstreamModelsOf(id);
  }

  @Post(':id/test')
  @HttpCode(200)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Send a minimal chat request through the channel',
    description:
      'Sends `{"model", "messages":[{"role":"user","content":"ping"}], "max_tokens":8}` to `<baseUrl>/v1/chat/completions` with one key (the model mapping applied) and reports status, latency and the reply or the error. A channel of another provider than openai gets the same request in its own format, converted as the edge does (docs/providers.md); its reply and errors are reported in OpenAI\'s words, `unsupported_provider` when no conversion exists yet. Answers 200 either way; `ok` tells.',
  })
  @ApiOkResponse({ type: ChannelTestResult })
  @ApiValidationErrors()
  @ApiNotFound('channel or key')
  test(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: TestChannelDto,
  ): Promise<ChannelTestResult> {
    return this.channels.test(actor, id, dto);
  }
}
