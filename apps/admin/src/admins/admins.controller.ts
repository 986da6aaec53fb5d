import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentActor, OWNERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiErrorResponse, ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import { IdParam } from '../common/id.pipe.js';
import { PageQuery } from '../common/pagination.js';
import { AdminPage, AdminResponse, CreateAdminDto, UpdateAdminDto } from './admins.dto.js';
import { AdminsService } from './admins.service.js';

@ApiTags('admins')
@Controller('api/admins')
@Roles(...OWNERS)
export class AdminsController {
  constructor(private readonly admins: AdminsService) {}

  @Get()
  @ApiOperation({ summary: 'List administrators' })
  @ApiOkResponse({ type: AdminPage })
  list(@Query() query: PageQuery): Promise<AdminPage> {
    return this.admins.list(query);
  }

  @Post()
  @ApiOperation({ summary: 'Create an administrator (must change the password at first login)' })
  @ApiCreatedResponse({ type: AdminResponse })
  @ApiValidationErrors()
  @ApiConflictResponse({ type: ApiErrorResponse, description: '`conflict`: the username is taken' })
  create(@CurrentActor() actor: Actor, @Body() dto: CreateAdminDto): Promise<AdminResponse> {
    return this.admins.create(actor, dto);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read an administrator' })
  @ApiOkResponse({ type: AdminResponse })
  @ApiNotFound('administrator')
  get(@IdParam() id: number): Promise<AdminResponse> {
    return this.admins.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change role, disable, or reset the password',
    description:
      'Ends every session of that administrator. The last enabled owner cannot be demoted or disabled.',
  })
  @ApiOkResponse({ type: AdminResponse })
  @ApiValidationErrors()
  @ApiNotFound('administrator')
  @ApiConflictResponse({ type: ApiErrorResponse, description: '`conflict`: the last owner' })
  update(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: UpdateAdminDto,
  ): Promise<AdminResponse> {
    return this.admins.update(actor, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an administrator (not yourself, not the last owner)' })
  @ApiNoContentResponse()
  @ApiNotFound('administrator')
  delete(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<void> {
    return this.admins.delete(actor, id);
  }
}
